import Dispatch
import Foundation
import RecordsApp
import RecordsWeb
import Replication
import SQLiteStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The apps' names, in order ("People", ...).
private let appNames = AppDatabase.App.allCases.map(\.displayName)

/// "A, B and C".
private func listed(_ names: [String]) -> String {
    names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " and " + (names.last ?? "")
}

/// `records serve`: the apps' screens in a browser, over the same database
/// as the other commands.
let serveCommand = Command(
    name: "serve", summary: "Serve the apps as a web site (\(appNames.joined(separator: ", ")))",
    options: [
        Command.Option(
            name: "listen", valueName: "HOST:PORT",
            help: "Address and port to listen on (default 127.0.0.1:8080; port 0 picks a free one)"),
        Command.Option(name: "tls-cert", valueName: "FILE", help: "Serve HTTPS with this PEM certificate chain"),
        Command.Option(name: "tls-key", valueName: "FILE", help: "The PEM private key of --tls-cert"),
        Command.Option(
            name: "registration", valueName: "POLICY",
            help:
                "Who may register: first-user (the default: anyone until the first account exists), open (anyone), "
                + "or closed (nobody; add accounts with records users register)"),
        Command.Option(
            name: "event-loop-threads", valueName: "N",
            help:
                "Threads serving all connections on epoll event loops, at most 64, so that waiting connections "
                + "and event streams hold no thread (for many open streams); 0, the default, gives each "
                + "connection a thread of its own"),
        Command.Option(
            name: "max-connections-per-client", valueName: "N",
            help:
                "The most connections one client address may hold open (default 128, at most "
                + "\(ServerOptions().maximumConnectionsPerClient) of the server's \(ServerOptions().connectionLimit)); "
                + "raise it behind a reverse proxy"),
        Command.Option(
            name: "synchronous", valueName: "MODE",
            help:
                "full (the default: every acknowledged write survives a power failure) or normal (writes several "
                + "times faster; survives the server being killed, not a power failure)"),
        Command.Option(
            name: "replicate", valueName: "URL",
            help:
                "Copy every commit continuously to a replica with Litestream: a directory, file:///PATH or "
                + "s3://BUCKET/PATH"),
        Command.Option(
            name: "litestream", valueName: "PATH", help: "The litestream program (default: on PATH, or .build/venv)"),
        .flag(
            "restore-if-missing",
            "With --replicate: when the database file is missing (a new disk), restore it from the replica first"),
        .flag(
            "durable",
            "With --replicate: acknowledge a write only once the replica holds it (concurrent writes share one "
                + "wait); a write that cannot be replicated within 5 seconds answers 503"),
    ] + readReplicaOptions,
    discussion: """
        Serves the \(listed(appNames)) apps as web pages, rendered on the
        server: every page works without JavaScript. The Users app's accounts are the way
        in: every page but log-in and registration needs a signed-in account. Since every
        account sees the same \(listed(appNames.filter { $0 != AppDatabase.App.users.displayName })) records,
        registration is open by default only until the first account exists (--registration).

        The server listens on the loopback address unless told otherwise, so only this
        machine can reach it. Listening on another address without --tls-cert and --tls-key
        sends passwords and session cookies in the clear, and prints a warning.

        One client address may hold at most 128 connections at once (a browser opens
        about six); more are closed at once, so that one client cannot take the
        server's 16384 and lock everyone else out. Behind a reverse proxy, or when many
        people share one address, raise it with --max-connections-per-client.

        It prints its address once it listens, logs one line per request on standard error
        (time in UTC, method, path, status, milliseconds taken; never passwords, cookies
        or form contents; control characters in a path escaped), and on Ctrl-C or SIGTERM
        stops accepting connections, lets the requests in flight finish (up to 10
        seconds), and closes the database.

        Every write is on disk before its page or API answer says it is done
        (SQLite's synchronous mode full); writes that finish together share one wait
        for the disk, which a request's answer then waits for (a reader may see a
        write a moment before it is on disk). With --synchronous normal, a write is
        acknowledged once it is in the database's write-ahead log: it survives the
        server crashing or being killed, but the last moment of writes before a power
        failure or an operating-system crash can be lost. It makes writes that each
        commit on their own several times faster.

        With --replicate, Litestream (scripts/bootstrap.sh installs it) runs beside the
        server as a managed child process and ships each commit to the replica within
        about a second: a disk that dies loses at most that last second. The server
        writes Litestream's configuration, starts it and waits for its first copy of
        the database before it listens, starts it again if it exits (logging why),
        reports how far behind the replica is in its log, and on stopping ships the
        last commits and waits for the replica to hold them.
        records restore brings the database back; --restore-if-missing does that on
        start when the database file is missing. An S3 replica's endpoint comes from
        AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, its credentials from AWS_ACCESS_KEY_ID
        and AWS_SECRET_ACCESS_KEY; for a plain http:// endpoint AWS_CA_BUNDLE is left
        out of Litestream's environment (its S3 client refuses to start with it).

        With --durable, a write's page or API answer waits until the replica holds it
        (concurrent writes share one wait). When Litestream is down or the replica does
        not confirm within 5 seconds, the write answers 503: it is saved on this server
        but not yet replicated, and the answer says so.

        If the database file is deleted or replaced while the server runs, the server
        notices (before each write's answer, and every 2 seconds), logs it, refuses
        every write from then on (503) and says so on /status; reads go on from the file
        as it was opened.

        With --read-replica URL, on another machine that can read the replica, the server
        serves a read-only copy that follows the primary's commits (a second or two
        behind) through Litestream's read-replica VFS, with no local copy to manage. Pages
        and the API's reads work with the primary's accounts and tokens; signing in,
        registering and every change answer 503 and name the primary (--primary).
        """,
    examples: [
        "records serve",
        "records serve --listen 0.0.0.0:8443 --tls-cert cert.pem --tls-key key.pem",
        "records serve --replicate /mnt/backup/records --restore-if-missing",
        "records serve --replicate /mnt/backup/records --durable",
    ],
    run: { invocation in
        // Every line logged is out before the command ends (its error, if
        // it fails, comes after them).
        defer { serveLogWriter.flush() }
        let arguments = invocation.arguments
        var options = ServerOptions()
        if let listen = arguments.value("listen") {
            (options.host, options.port) = try parseListenAddress(listen, path: invocation.path)
        }
        switch (arguments.value("tls-cert"), arguments.value("tls-key")) {
        case (let certificate?, let key?):
            do {
                options.tls = try TLSCredentials.load(certificate: certificate, key: key)
            } catch let error as ServerError {
                throw CommandFailure(message: error.message)
            }
        case (nil, nil):
            break
        default:
            throw UsageError(message: "--tls-cert and --tls-key go together", helpPath: invocation.path)
        }
        if let text = arguments.value("event-loop-threads") {
            guard let count = Int(text), (0...64).contains(count) else {
                throw UsageError(
                    message: "--event-loop-threads takes a number from 0 to 64, not '\(text)'",
                    helpPath: invocation.path)
            }
            options.eventLoopThreads = count
        }
        if let text = arguments.value("max-connections-per-client") {
            let most = options.maximumConnectionsPerClient
            guard let count = Int(text), (1...most).contains(count) else {
                throw UsageError(
                    message:
                        "--max-connections-per-client takes a number from 1 to \(most) (a quarter of the server's "
                        + "\(options.connectionLimit) connections stays for other clients), not '\(text)'",
                    helpPath: invocation.path)
            }
            options.connectionsPerClient = count
        }
        var registration = RegistrationPolicy.default
        if let text = arguments.value("registration") {
            guard let policy = RegistrationPolicy(argument: text) else {
                throw UsageError(
                    message: "--registration takes first-user, open or closed, not '\(text)'", helpPath: invocation.path
                )
            }
            registration = policy
        }
        var synchronous: SynchronousMode?
        if let text = arguments.value("synchronous") {
            guard let mode = SynchronousMode(rawValue: text.lowercased()), mode == .full || mode == .normal else {
                throw UsageError(
                    message: "--synchronous takes full or normal, not '\(text)'", helpPath: invocation.path)
            }
            synchronous = mode
        }
        let readReplica = try prepareReadReplica(invocation)
        let replication = try prepareReplication(invocation)
        // While Litestream replicates the database, it alone checkpoints
        // it: its documentation advises applications under write load not
        // to race it with their own.
        let database =
            try readReplica?.database
            ?? invocation.database(
                synchronous: synchronous, automaticCheckpoints: replication == nil, groupCommit: true)
        let supervisor = try replication.map { try startReplication($0) }
        var configuration = WebConfiguration()
        configuration.registration = registration
        configuration.secureCookies = options.tls != nil
        configuration.log = { line in serveLog(line) }
        if let supervisor {
            configuration.replicationStatus = { supervisor.status() }
            if invocation.arguments.flag("durable") {
                configuration.durability = DurabilityWaiter(timeout: .seconds(5)) {
                    try supervisor.syncAndWait(requireCaughtUp: false)
                }
                serveLog("durable: a write is acknowledged only once the replica holds it")
            }
        }
        configuration.readReplica = readReplica?.settings
        let app = WebApp(database: database, configuration: configuration)
        // Ctrl-C and SIGTERM stop the server rather than the process.
        let stop = try SignalWaiter(signals: [SIGINT, SIGTERM])
        // Each connection is an open file: idle kept-alive connections and
        // live pages' event streams may number in the thousands.
        HTTPServer.raiseOpenFileLimit()
        let server: HTTPServer
        do {
            server = try HTTPServer(application: app, options: options)
        } catch let error as ServerError {
            throw CommandFailure(message: error.message)
        }
        if options.tls == nil && !isLoopback(options.host) {
            serveLog(
                "warning: listening on \(options.host) without TLS: passwords and session "
                    + "cookies cross the network in the clear (use --tls-cert and --tls-key)")
        }
        try Console.out("Serving the Records apps at \(server.url) (Ctrl-C to stop)")
        let signal = await stop.wait()
        serveLog("\(signal == SIGINT ? "interrupted" : "terminated"), stopping")
        await server.stop()
        if let supervisor { finishReplication(supervisor) }
        database.close()
        supervisor?.stop()
    })

/// What `--replicate` asks for, checked before the database is opened.
struct ReplicationPlan {
    let replica: ReplicaLocation
    let executable: String
    let database: String
}

/// Reads `--replicate`, `--litestream` and `--restore-if-missing`, and
/// restores a missing database when asked: nil without `--replicate`.
@MainActor
private func prepareReplication(_ invocation: Invocation) throws -> ReplicationPlan? {
    let arguments = invocation.arguments
    guard let text = arguments.value("replicate") else {
        for name in ["litestream", "restore-if-missing", "durable"]
        where arguments.value(name) != nil || arguments.flag(name) {
            throw UsageError(message: "--\(name) goes with --replicate", helpPath: invocation.path)
        }
        return nil
    }
    let replica = try replicaLocation(text, path: invocation.path)
    let executable = try litestreamExecutable(arguments.value("litestream"))
    let database = try invocation.databaseFilePath()
    // Litestream itself starts and runs on without a replica it can write,
    // only logging its failures: a server must not.
    do {
        try LitestreamRestore.checkReachable(executable: executable, replica: replica)
    } catch let error as ReplicationError {
        throw CommandFailure(message: error.message)
    }
    if arguments.flag("restore-if-missing") && !FileManager.default.fileExists(atPath: database) {
        serveLog("the database \(database) is missing: restoring it from \(replica)")
        let restored = try restoreDatabase(
            from: replica, to: database, timestamp: nil, force: false, executable: executable, ifReplicaExists: true)
        serveLog(
            restored
                ? "restored \(database) from \(replica)"
                : "the replica holds no copy yet: starting with a new database")
    }
    return ReplicationPlan(replica: replica, executable: executable, database: database)
}

/// How long `records serve --replicate` waits for Litestream's first copy
/// of the database before it serves anyway.
private let firstSyncWait: Duration = .seconds(60)

/// Starts Litestream for the plan's database, waiting until it answers and
/// (up to ``firstSyncWait``) until the replica holds the database.
private func startReplication(_ plan: ReplicationPlan) throws -> LitestreamSupervisor {
    do {
        let supervisor = try LitestreamSupervisor(
            executable: plan.executable, database: plan.database, replica: plan.replica, log: { serveLog($0) })
        try supervisor.start()
        // Litestream answers before it has opened the database; it then
        // adds its own tables and takes the database's first copy. The
        // server waits for that first sync before it serves, so that no
        // `records` command is told it can run in that moment: one run then
        // read the database without its tables (see the --restore-if-missing
        // test of ReplicationCLITests). A large database's first copy, or a
        // starved machine, may take long: after a minute the server serves
        // anyway, and Litestream goes on.
        let described = "\(plan.database) to \(plan.replica) with \(plan.executable)"
        do {
            let first = try supervisor.syncAndWait(requireCaughtUp: false, within: firstSyncWait)
            serveLog("replicating \(described) (the replica holds transaction \(first.replicatedTxid))")
        } catch {
            serveLog(
                "replicating \(described); warning: the replica does not hold the database yet (\(error)): "
                    + "serving anyway while Litestream copies it")
        }
        return supervisor
    } catch let error as ReplicationError {
        throw CommandFailure(message: error.message)
    }
}

/// On stopping: ships the last commits and says whether the replica holds
/// them.
private func finishReplication(_ supervisor: LitestreamSupervisor) {
    do {
        let result = try supervisor.syncAndWait()
        serveLog("the replica holds every commit (transaction \(result.replicatedTxid))")
    } catch {
        serveLog("warning: the last commits may not be in the replica: \(error)")
    }
}

/// Writes a line of the server's log on standard error: the time (UTC,
/// ISO 8601 with milliseconds), then the message, whose control characters
/// (line breaks too) are escaped, so that a message is always one line and
/// cannot pass for another.
func serveLog(_ message: String, at date: Date = Date()) {
    serveLogWriter.write(Terminal.clean(message), at: date)
}

/// Where ``serveLog(_:at:)`` writes: standard error, from a thread of its
/// own (flushed before `records serve` ends). Each line begins with
/// ``appendServeLogLead(_:to:)``.
let serveLogWriter = ServeLogWriter(descriptor: STDERR_FILENO, lead: appendServeLogLead)

/// The text of ``serveLog(_:at:)``'s line.
func serveLogLine(_ message: String, at date: Date) -> String {
    var line: [UInt8] = []
    appendServeLogLead(date, to: &line)
    line.append(contentsOf: Terminal.clean(message).utf8)
    return String(decoding: line, as: UTF8.self)
}

/// What begins each line of the server's log: its time, then
/// `records serve: `.
func appendServeLogLead(_ date: Date, to bytes: inout [UInt8]) {
    appendLogTimestamp(date, to: &bytes)
    bytes.append(contentsOf: " records serve: ".utf8)
}

/// `date` as ISO 8601 in UTC with milliseconds, `2026-12-03T07:32:07.123Z`,
/// as `Date.ISO8601FormatStyle(includingFractionalSeconds: true)` writes
/// it, without a formatter: the server writes one for every request.
func logTimestamp(_ date: Date) -> String {
    var bytes: [UInt8] = []
    appendLogTimestamp(date, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
}

/// Appends ``logTimestamp(_:)``'s 24 characters to `bytes`, digit by
/// digit: no text is made on the way (this runs for every request).
func appendLogTimestamp(_ date: Date, to bytes: inout [UInt8]) {
    let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    let (days, inDay) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
    // A time before 1970 has a negative remainder: it belongs to the day before.
    let (day, time) = inDay < 0 ? (days - 1, inDay + 86_400_000) : (days, inDay)
    // Days since 1970-01-01 to a date of the proleptic Gregorian calendar
    // (H. Hinnant's civil_from_days).
    let shifted = day + 719_468
    let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let dayOfMonth = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    /// `value`'s decimal digits, at least `width` of them (zeros first).
    func digits(_ value: Int64, _ width: Int) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        let value = value.magnitude
        var divisor: UInt64 = 1
        for _ in 1..<width { divisor *= 10 }
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
    bytes.reserveCapacity(bytes.count + 24)
    digits(year, 4)
    bytes.append(UInt8(ascii: "-"))
    digits(month, 2)
    bytes.append(UInt8(ascii: "-"))
    digits(dayOfMonth, 2)
    bytes.append(UInt8(ascii: "T"))
    digits(time / 3_600_000, 2)
    bytes.append(UInt8(ascii: ":"))
    digits(time / 60_000 % 60, 2)
    bytes.append(UInt8(ascii: ":"))
    digits(time / 1000 % 60, 2)
    bytes.append(UInt8(ascii: "."))
    digits(time % 1000, 3)
    bytes.append(UInt8(ascii: "Z"))
}

/// `HOST:PORT`, `[IPv6]:PORT`, or `:PORT` for the loopback address.
func parseListenAddress(_ text: String, path: [String]) throws -> (String, UInt16) {
    let usage = UsageError(
        message: "--listen takes HOST:PORT, such as 127.0.0.1:8080 or [::1]:8080, not '\(text)'", helpPath: path)
    guard let colon = text.lastIndex(of: ":") else { throw usage }
    var host = String(text[..<colon])
    guard let port = UInt16(text[text.index(after: colon)...]) else { throw usage }
    if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    if host.isEmpty || host == "localhost" { host = "127.0.0.1" }
    return (host, port)
}

private func isLoopback(_ host: String) -> Bool { host == "::1" || host.hasPrefix("127.") }

/// Waits for one of some signals, which then no longer end the process.
///
/// The signals get a handler of their own that writes the signal's number
/// to a pipe, and a thread reads the pipe. Whichever thread of the process
/// the kernel delivers the signal to, the handler runs there, so no signal
/// is lost. (A dispatch signal source is not enough on Linux: it reads a
/// `signalfd`, which only sees a signal that every thread blocks, while
/// the signal was set to be ignored; delivered to a thread that does not
/// block it, a SIGTERM simply vanished and the server never stopped.)
final class SignalWaiter: Sendable {
    private let readEnd: Int32

    /// Installs the handlers; call it once, before the signals matter.
    ///
    /// - Throws: ``CommandFailure`` when the pipe cannot be made (no file
    ///   descriptors left), before any handler is installed.
    init(signals: [Int32]) throws {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) != 0 {
            throw CommandFailure(message: "cannot make a pipe for signals: \(String(cString: strerror(errno)))")
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        // A full pipe must not block the handler: one byte is enough.
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        readEnd = ends[0]
        signalPipeWriteEnd = ends[1]
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        for number in signals {
            signal(number, signalPipeHandler)
            sigaddset(&unblocked, number)
        }
        // Foundation's Process starts programs with these signals blocked
        // when it is called from a dispatch queue; threads started from
        // here on inherit this thread's mask.
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
    }

    /// The first signal that arrives.
    func wait() async -> Int32 {
        let readEnd = readEnd
        return await withCheckedContinuation { continuation in
            // A blocking read on a thread of its own, not on one of Swift's
            // few concurrency threads.
            let thread = Thread {
                var byte: UInt8 = 0
                while true {
                    let count = read(readEnd, &byte, 1)
                    if count == 1 { break }
                    if count < 0 && errno == EINTR { continue }
                    byte = UInt8(SIGTERM)  // The pipe cannot fail; if it did, stop.
                    break
                }
                continuation.resume(returning: Int32(byte))
            }
            thread.name = "records-signals"
            thread.start()
        }
    }
}

/// The pipe's write end, for the handler (which can capture nothing).
/// Set once, before any handler is installed, and only read after.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// Writes the signal's number to the pipe: `write` is async-signal-safe.
private let signalPipeHandler: @convention(c) (Int32) -> Void = { received in
    let savedErrno = errno
    var byte = UInt8(truncatingIfNeeded: received)
    _ = write(signalPipeWriteEnd, &byte, 1)
    errno = savedErrno
}
