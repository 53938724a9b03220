import Foundation
import Spawn

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `litestream restore`: a database as its replica holds it, the latest or
/// as it was at a moment, written to a new file.
public enum LitestreamRestore {
    /// What a restore found.
    public enum Outcome: Sendable, Equatable {
        /// The file was written.
        case restored
        /// The replica holds no copy yet (allowed by `ifReplicaExists`).
        case replicaEmpty
    }

    /// Restores the replica at `replica` into `output`, a path where
    /// nothing is: Litestream writes it and checks it with SQLite's quick
    /// integrity check.
    ///
    /// - Parameters:
    ///   - timestamp: The moment to restore to; nil for the latest.
    ///   - ifReplicaExists: Whether an empty replica is ``Outcome/replicaEmpty``
    ///     rather than an error (a server starting on a new disk with a new
    ///     replica).
    /// - Throws: ``ReplicationError`` with Litestream's own words when it
    ///   fails: no copy in the replica, no copy that old, an unreachable
    ///   store, a failed integrity check.
    public static func run(
        executable: String, replica: ReplicaLocation, output: String, timestamp: Date? = nil,
        ifReplicaExists: Bool = false, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> Outcome {
        // An unreachable store would be retried for about two minutes.
        if case .s3 = replica {
            try checkReachable(executable: executable, replica: replica, environment: environment)
        }
        var timestamp = timestamp
        if let moment = timestamp,
            let range = try? history(executable: executable, replica: replica, environment: environment)
        {
            // Litestream finds no copy for a moment after its newest file
            // ("timestamp does not exist"): the newest copy is the database
            // as it was then. One before the oldest has no copy at all.
            if moment >= range.upperBound {
                timestamp = nil
            } else if moment < range.lowerBound {
                throw ReplicationError(
                    "the replica \(replica) holds no copy from before "
                        + range.lowerBound.formatted(Date.ISO8601FormatStyle()))
            }
        }
        let outputPath = output
        var arguments = ["restore", "-no-expand-env", "-o", output, "-integrity-check", "quick"]
        if let timestamp {
            arguments += ["-timestamp", timestamp.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))]
        }
        if ifReplicaExists { arguments.append("-if-replica-exists") }
        arguments.append(replica.url)
        let (status, said) = try runLitestream(executable, arguments, replica: replica, environment: environment)
        let lines = said.split(separator: "\n").map(Self.message)
        if status == 0 {
            // With -if-replica-exists, an empty replica is a success that
            // writes nothing.
            return FileManager.default.fileExists(atPath: outputPath) ? .restored : .replicaEmpty
        }
        let reason = lines.suffix(3).joined(separator: "; ")
        throw ReplicationError(
            "cannot restore from \(replica)"
                + (reason.isEmpty ? " (litestream exited with status \(status))" : ": \(reason)")
                + LitestreamSupervisor.hint(said, environment: replica.isPlainHTTP ? [:] : environment))
    }

    /// When the replica's oldest and newest files were made
    /// (`litestream ltx -level all`), or nil when it holds none.
    ///
    /// - Throws: ``ReplicationError`` when Litestream cannot list them.
    public static func history(
        executable: String, replica: ReplicaLocation,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> ClosedRange<Date>? {
        let (status, said) = try runLitestream(
            executable, ["ltx", "-no-expand-env", "-level", "all", replica.url], replica: replica,
            environment: environment)
        guard status == 0 else {
            throw ReplicationError(
                "cannot list the replica \(replica): \(said.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        // level  min_txid  max_txid  size  created
        let dates = said.split(separator: "\n").dropFirst().compactMap { line -> Date? in
            guard let last = line.split(separator: " ").last else { return nil }
            return try? Date.ISO8601FormatStyle().parse(String(last))
        }
        guard let earliest = dates.min(), let latest = dates.max() else { return nil }
        return earliest...latest
    }

    /// Checks that the replica can be written: a directory is made if
    /// missing and a file written in it and removed; an S3 store is listed
    /// by Litestream (`litestream ltx`). A path under a file, a directory
    /// that cannot be written, a store that is unreachable, a bucket that
    /// does not exist or credentials it refuses are found here, before a
    /// server starts, rather than in its log while it serves without a
    /// replica (Litestream itself starts and only logs them).
    ///
    /// Litestream's S3 client retries an unreachable endpoint for about two
    /// minutes; the check gives up after `limit`.
    ///
    /// - Throws: ``ReplicationError`` with the reason (Litestream's words
    ///   for a store), or saying that the store did not answer in time.
    public static func checkReachable(
        executable: String, replica: ReplicaLocation, within limit: Duration = .seconds(20),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        if case .directory(let path) = replica {
            let probe = path + "/.records-probe-\(UUID().uuidString)"
            // Made as `mkdir -p` would, with the system's words for a
            // failure (Foundation's are a bare "error 512" here).
            var made = ""
            for component in path.split(separator: "/") {
                made += "/" + component
                if mkdir(made, 0o755) != 0 && errno != EEXIST {
                    throw ReplicationError(
                        "cannot make the replica directory \(made): \(String(cString: strerror(errno)))")
                }
            }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ReplicationError("the replica \(path) is a file, not a directory")
            }
            let descriptor = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            guard descriptor >= 0 else {
                throw ReplicationError(
                    "cannot write to the replica directory \(path): \(String(cString: strerror(errno)))")
            }
            close(descriptor)
            unlink(probe)
            return
        }
        let (status, said) = try runLitestream(
            executable, ["ltx", "-no-expand-env", "-level", "all", replica.url], replica: replica,
            environment: environment, limit: limit)
        guard let status else {
            throw ReplicationError(
                "the replica \(replica) did not answer within \(limit.components.seconds) s: "
                    + "check that the endpoint is reachable")
        }
        if status != 0 {
            let reason = said.split(separator: "\n").map(Self.message).suffix(2).joined(separator: "; ")
            throw ReplicationError(
                "cannot reach the replica \(replica): \(reason.isEmpty ? "litestream exited with status \(status)" : reason)"
                    + LitestreamSupervisor.hint(said, environment: replica.isPlainHTTP ? [:] : environment))
        }
    }

    /// Runs Litestream to its end: its status and output (both streams).
    static func runLitestream(
        _ executable: String, _ arguments: [String], replica: ReplicaLocation, environment: [String: String]
    ) throws -> (Int32, String) {
        let (status, said) = try runLitestream(
            executable, arguments, replica: replica, environment: environment, limit: nil)
        return (status ?? -1, said)
    }

    /// Runs Litestream to its end, or kills it after `limit`: its status
    /// (nil when it was killed for taking too long) and output.
    static func runLitestream(
        _ executable: String, _ arguments: [String], replica: ReplicaLocation, environment: [String: String],
        limit: Duration?
    ) throws -> (Int32?, String) {
        var childEnvironment = environment
        if replica.isPlainHTTP { childEnvironment["AWS_CA_BUNDLE"] = nil }
        let output = Pipe()
        let child: SpawnedProcess
        do {
            child = try SpawnedProcess(
                executable: executable, arguments: arguments, environment: childEnvironment,
                standardInput: .nullDevice, standardOutput: .pipe(output), standardError: .pipe(output),
                ownProcessGroup: true)
        } catch {
            throw ReplicationError("cannot run \(executable): \(error.localizedDescription)")
        }
        let watch = ChildDeadline()
        if let limit {
            let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { watch.expire(child) }
        }
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let termination = child.waitUntilExit()
        return (watch.finish() ? nil : termination.status, said)
    }

    /// A log line's message: the `msg="…"` of Litestream's structured
    /// lines (with its `error=` when there is one), else the line.
    static func message(_ line: Substring) -> String {
        func field(_ name: String) -> String? {
            guard let start = line.range(of: " \(name)=") else { return nil }
            let rest = line[start.upperBound...]
            if rest.hasPrefix("\"") {
                var value = ""
                var escaped = false
                for character in rest.dropFirst() {
                    if escaped {
                        value.append(character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        break
                    } else {
                        value.append(character)
                    }
                }
                return value
            }
            return String(rest.prefix { $0 != " " })
        }
        guard let message = field("msg") else { return line.trimmingCharacters(in: .whitespaces) }
        return field("error").map { "\(message): \($0)" } ?? message
    }
}

/// Kills a child process that runs past its deadline, unless it has
/// finished first.
private final class ChildDeadline: @unchecked Sendable {
    private let lock = NSLock()
    private var finished = false
    private var expired = false

    /// The deadline has come: kills `child` unless ``finish()`` came first.
    func expire(_ child: SpawnedProcess) {
        lock.withLock {
            guard !finished else { return }
            expired = true
            child.kill()
        }
    }

    /// The child has ended: whether it was killed for its deadline.
    func finish() -> Bool {
        lock.withLock {
            finished = true
            return expired
        }
    }
}
