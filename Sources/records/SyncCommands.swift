import Foundation
import RecordsApp
import SQLiteStore
import SQLiteStoreSync

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

private let tokenFileOption = Command.Option(
    name: "token-file", valueName: "FILE",
    help: "Read the API token from the first line of FILE (else from standard input, or asked on the terminal)")

/// `records remote set|show`: the server this database syncs with.
let remoteCommands = CommandFamily(
    app: nil,
    summary: "the server this database syncs with: set it, show it",
    commands: [
        Command(
            name: "set", summary: "Set the server and API token that records sync uses",
            positionals: [Command.Positional(name: "URL", help: "The server's address, such as http://host:8080")],
            options: [tokenFileOption],
            discussion: """
                The token is one made on the server with records token create (read-write, to send changes). \
                It is read from --token-file, or from the first line of standard input, or asked for on the \
                terminal, never from the command line, where other users could see it. It is kept in \
                DATABASE.remote beside the database, readable by its owner only (mode 0600), and never printed.
                """,
            examples: [
                "records remote set http://records.example.com:8080 --token-file ~/sync.token",
                "printf '%s\\n' \"$PW\" | records token create --email ada@example.com --name laptop --password-stdin "
                    + "| records remote set http://host:8080",
            ],
            run: { invocation in
                let url = invocation.arguments.positionals.first ?? ""
                let token = try readToken(invocation)
                let remote = try SyncRemote(url: url, token: token)
                let path = try invocation.databaseFilePath()
                try remote.save(forDatabaseAt: path)
                try invocation.afterChange("the remote was set") {
                    try Console.out(
                        "This database syncs with \(Terminal.clean(remote.description)) (token kept in "
                            + "\(Terminal.clean(SyncRemote.fileURL(forDatabaseAt: path).path))).")
                }
            }),
        Command(
            name: "show", summary: "Show the server this database syncs with (never the token)",
            options: [.json],
            examples: ["records remote show"],
            run: { invocation in
                let path = try invocation.databaseFilePath()
                guard let remote = try SyncRemote.load(forDatabaseAt: path) else {
                    throw CommandFailure(message: "no remote is set for \(path): set one with records remote set URL")
                }
                if invocation.wantsJSON {
                    try Console.json(RemoteSummary(url: remote.url.absoluteString, tokenSet: true))
                } else {
                    try Console.out("\(Terminal.clean(remote.description)) (token set)")
                }
            }),
    ],
    familyName: "remote")

private struct RemoteSummary: Encodable {
    let url: String
    let tokenSet: Bool
}

/// The token of `--token-file`, standard input or the terminal.
@MainActor
private func readToken(_ invocation: Invocation) throws -> String {
    if let file = invocation.arguments.value("token-file") {
        guard let data = FileManager.default.contents(atPath: file), let text = String(data: data, encoding: .utf8)
        else { throw CommandFailure(message: "cannot read the token file \(file)") }
        return String(text.prefix { $0 != "\n" && $0 != "\r\n" })
    }
    return try PasswordInput.read(["token"], fromStandardInput: isatty(STDIN_FILENO) != 1, path: invocation.path)[0]
}

/// `records sync`: push this database's changes to its server, pull the others'.
let syncCommand = Command(
    name: "sync", summary: "Send this database's changes to its server and get everyone else's",
    options: [
        Command.Option(
            name: "server", valueName: "URL", help: "Sync with URL this once, instead of the remote that is set"),
        tokenFileOption,
        .flag("watch", "Keep syncing as changes happen, here or on the server, until Ctrl-C or SIGTERM"),
        .json,
    ],
    discussion: """
        People, contacts and coffees (names and prices; pictures stay where they were set) sync; user \
        accounts never do. Changes made offline on several devices merge column by column: the later edit of a \
        value wins, and every value that lost is kept in the server's conflict log (records conflicts, on the \
        server's database). A sync that is stopped, even killed, resumes where it stopped with nothing applied \
        twice. Without --server, the remote set by records remote set is used. Prints what was sent, received \
        and lost in conflicts; on a terminal, progress goes to standard error. With --watch it syncs again \
        whenever the server's event stream tells of a change and whenever a synced record is changed here \
        (by records or any other program), printing a line for each sync that moved something.
        """,
    examples: [
        "records sync", "records sync --server http://host:8080 --token-file ~/sync.token", "records sync --watch",
    ],
    run: { invocation in
        let watches = invocation.arguments.flag("watch")
        // A watcher commits only the sync's own bookkeeping and what it
        // pulled, all of which a sync recovers after a power failure (the
        // server answers a lost acknowledgement as a replay; a lost pull
        // is asked again): its commits need not wait for the disk.
        let database = try invocation.database(synchronous: watches ? .normal : nil)
        let remote = try syncRemote(invocation, path: database.path)
        if watches {
            try await watchSync(database, remote: remote, json: invocation.wantsJSON)
            return
        }
        let transport = HTTPSyncTransport(baseURL: remote.apiURL, token: remote.token)
        let showsProgress = isatty(STDERR_FILENO) == 1
        let report: SyncReport
        do {
            report = try await database.syncClient().sync(over: transport) { progress in
                guard showsProgress else { return }
                let line: String
                switch progress {
                case .batch(let counts): line = "Syncing: sent \(counts.sent), received \(counts.received)"
                case .uploading(let value):
                    line =
                        "Sending a picture: \(ByteCount.text(Int(value.received))) of \(ByteCount.text(Int(value.reference.size)))"
                case .downloading(let value):
                    line =
                        "Receiving a picture: \(ByteCount.text(Int(value.received))) of \(ByteCount.text(Int(value.reference.size)))"
                }
                _ = StandardStream.write("\r\u{1B}[K" + line, to: STDERR_FILENO)
            }
            if showsProgress { _ = StandardStream.write("\r\u{1B}[K", to: STDERR_FILENO) }
        } catch let error as SyncValidationError {
            let id = try await database.localID(ofSynced: error.globalID, in: error.table)
            let app = AppDatabase.app(syncing: error.table)?.rawValue ?? error.table
            let problems = error.problems.map(\.message).joined(separator: " ")
            throw CommandFailure(
                message: "the server refused the sync, nothing of it was applied: \(app) \(id.map(String.init) ?? "?") "
                    + "is not valid there: \(problems) Fix it (records \(app) edit ...) and sync again.")
        }
        if invocation.wantsJSON {
            try Console.json(SyncSummary(report))
        } else {
            try Console.out(
                "Synced with \(Terminal.clean(remote.description)): sent \(report.sent), received \(report.received), "
                    + "conflicts \(report.conflicts)"
                    + (report.largeBytesSent + report.largeBytesReceived > 0
                        ? "; pictures: \(ByteCount.text(Int(report.largeBytesSent))) sent, "
                            + "\(ByteCount.text(Int(report.largeBytesReceived))) received." : "."))
        }
    })

/// The remote of `--server` and a token, or the one set.
@MainActor
private func syncRemote(_ invocation: Invocation, path: String) throws -> SyncRemote {
    if let server = invocation.arguments.value("server") {
        return try SyncRemote(url: server, token: try readToken(invocation))
    }
    guard let remote = try SyncRemote.load(forDatabaseAt: path) else {
        throw CommandFailure(
            message: "no remote is set for \(path): set one with records remote set URL, or give --server URL")
    }
    return remote
}

/// `records conflicts`: the values that lost a merge.
let conflictsCommand = Command(
    name: "conflicts", summary: "List the values that lost when synced edits collided",
    options: [
        .flag("remote", "List the server's log instead, through the remote that is set (or --server)"),
        Command.Option(
            name: "server", valueName: "URL", help: "With --remote: ask URL instead of the remote that is set"),
        tokenFileOption, .json,
    ],
    discussion: """
        The server keeps every value that lost to a concurrent edit or delete, with the value that beat it and \
        the replicas (devices) that wrote each; run it on the server's database (records --database FILE \
        conflicts), or from a device with --remote, which asks the server. ID is the \
        record's ID in this database, '-' when it is not here (deleted); TIME is when the losing value was \
        written (UTC).
        """,
    examples: ["records conflicts", "records --database server.sqlite conflicts --json"],
    run: { invocation in
        let database = try invocation.database()
        let conflicts: [ConflictSummary]
        if invocation.arguments.flag("remote") {
            let remote = try syncRemote(invocation, path: database.path)
            var summaries: [ConflictSummary] = []
            for conflict in try await RemoteConflicts.fetch(from: remote) {
                var id: Int64?
                if let globalID = UUID(uuidString: conflict.globalID) {
                    id = try await database.localID(ofSynced: globalID, in: conflict.table)
                }
                summaries.append(ConflictSummary(conflict, localID: id))
            }
            conflicts = summaries
        } else {
            conflicts = try await database.syncConflicts().map(ConflictSummary.init)
        }
        let list = StreamingList<ConflictSummary>(
            [
                .init(title: "APP"), .init(title: "ID", alignment: .right), .init(title: "COLUMN"),
                .init(title: "LOST"), .init(title: "TO"), .init(title: "TIME"), .init(title: "LOSER"),
                .init(title: "WINNER"),
            ], json: invocation.wantsJSON
        ) { conflict in
            [
                conflict.app, conflict.id.map(String.init) ?? "-", conflict.column, conflict.lost,
                conflict.winnerDeleted ? "(deleted)" : conflict.won, conflict.time,
                String(conflict.losingReplica.prefix(8)), String(conflict.winningReplica.prefix(8)),
            ]
        }
        try list.print(conflicts, empty: "No conflicts: no synced value has lost a merge here.", noun: "conflicts")
    })

/// A conflict as `records conflicts` lists it.
private struct ConflictSummary: Encodable, Sendable {
    let app: String
    let id: Int64?
    let globalID: String
    let column: String
    let lost: String
    let won: String
    let winnerDeleted: Bool
    let time: String
    let losingReplica: String
    let winningReplica: String

    init(_ remote: RemoteConflicts.Conflict, localID: Int64?) {
        app = remote.app ?? remote.table
        id = localID
        globalID = remote.globalID
        column = remote.column
        lost = remote.losingValue ?? "NULL"
        won = remote.winningValue ?? "NULL"
        winnerDeleted = remote.winnerIsDelete
        time = Date(timeIntervalSince1970: Double(remote.losingVersion.clock >> 16) / 1000).formatted(.iso8601)
        losingReplica = remote.losingVersion.replica
        winningReplica = remote.winningVersion.replica
    }

    init(_ entry: AppSyncConflict) {
        let conflict = entry.conflict
        app = entry.app?.rawValue ?? conflict.table
        id = entry.localID
        globalID = conflict.globalID.uuidString
        column = conflict.column
        lost = entry.losingText ?? "NULL"
        won = entry.winningText ?? "NULL"
        winnerDeleted = conflict.winnerIsDelete
        time = Date(timeIntervalSince1970: Double(conflict.losingVersion.milliseconds) / 1000).formatted(.iso8601)
        losingReplica = conflict.losingVersion.replica.uuidString
        winningReplica = conflict.winningVersion.replica.uuidString
    }
}

/// The server's conflict log, `GET /api/v1/sync/conflicts`.
enum RemoteConflicts {
    struct Conflict: Decodable, Sendable {
        struct Version: Decodable, Sendable {
            let clock: Int64
            let replica: String
        }
        let app: String?
        let table: String
        let globalID: String
        let column: String
        let losingValue: String?
        let losingVersion: Version
        let winningValue: String?
        let winningVersion: Version
        let winnerIsDelete: Bool
    }

    private struct List: Decodable {
        let items: [Conflict]
    }

    static func fetch(from remote: SyncRemote) async throws -> [Conflict] {
        var request = URLRequest(url: remote.apiURL.appendingPathComponent("sync/conflicts"), timeoutInterval: 60)
        request.setValue("Bearer \(remote.token)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let host = remote.url.host ?? remote.description
        let (data, status) = try await withCheckedThrowingContinuation {
            (done: CheckedContinuation<(Data, Int), any Error>) in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error {
                    done.resume(
                        throwing: CommandFailure(
                            message: "cannot reach the server at \(host): \(error.localizedDescription)"))
                } else {
                    done.resume(returning: (data ?? Data(), (response as? HTTPURLResponse)?.statusCode ?? 0))
                }
            }.resume()
        }
        guard status == 200 else { throw HTTPSyncTransport.refusal(status: status, problem: data, host: host) }
        do {
            return try JSONDecoder().decode(List.self, from: data).items
        } catch {
            throw CommandFailure(message: "the server at \(host) answered with a conflict log this version cannot read")
        }
    }
}
