import Foundation
import RecordsApp
import Replication
import SQLiteStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `records restore URL`: the database from its replica, into a new file.
let restoreCommand = Command(
    name: "restore", summary: "Restore the database from its replica (records serve --replicate)",
    positionals: [
        Command.Positional(name: "URL", help: "The replica: a directory, file:///PATH or s3://BUCKET/PATH")
    ],
    options: [
        Command.Option(
            name: "timestamp", valueName: "TIME",
            help: "Restore the database as it was at this moment (ISO 8601, such as 2026-12-01T09:30:00Z)"),
        Command.Option(
            name: "to", valueName: "FILE",
            help: "Write the restored database here (default: the database, as --database or RECORDS_DATABASE name it)"),
        .flag("force", "Replace FILE if it is already there"),
        Command.Option(
            name: "litestream", valueName: "PATH", help: "The litestream program (default: on PATH, or .build/venv)"),
    ],
    discussion: """
        Restores the latest copy the replica holds, or with --timestamp the database as
        it was at that moment, into a new file beside FILE; it appears at FILE only once
        it is complete and has passed SQLite's integrity check, so a failed restore
        leaves nothing behind. An existing FILE is never replaced without --force. With
        --force, stop any records serve using FILE first.

        An S3 replica's endpoint comes from AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (unset:
        Amazon S3), its credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
        The restore is done by Litestream (scripts/bootstrap.sh installs it).
        """,
    examples: [
        "records restore /mnt/backup/records --to restored.sqlite",
        "records restore s3://my-bucket/records --timestamp 2026-12-01T09:30:00Z --to yesterday.sqlite",
    ],
    run: { invocation in
        let arguments = invocation.arguments
        let replica = try replicaLocation(arguments.positionals.first ?? "", path: invocation.path)
        var timestamp: Date?
        if let text = arguments.value("timestamp") {
            timestamp = try parseTimestamp(text, path: invocation.path)
        }
        let destination: String
        if let to = arguments.value("to") {
            guard !to.isEmpty, to != "-" else {
                throw UsageError(message: "--to must name a file", helpPath: invocation.path)
            }
            destination = URL(fileURLWithPath: to).standardizedFileURL.path
        } else {
            destination = try invocation.databaseFilePath()
        }
        let executable = try litestreamExecutable(arguments.value("litestream"))
        try restoreDatabase(
            from: replica, to: destination, timestamp: timestamp, force: arguments.flag("force"),
            executable: executable, ifReplicaExists: false)
        try invocation.afterChange("the database was restored to \(destination)", lost: "the summary") {
            try Console.out(
                "Restored \(Terminal.clean(destination)) from \(Terminal.clean(replica.description))"
                    + (timestamp.map { " as it was at \($0.formatted(Date.ISO8601FormatStyle()))" } ?? "")
                    + ": integrity check ok.")
        }
    })

/// The replica's location, or a usage error.
func replicaLocation(_ text: String, path: [String]) throws -> ReplicaLocation {
    do {
        return try ReplicaLocation(parsing: text)
    } catch let error as ReplicationError {
        throw UsageError(message: error.message, helpPath: path)
    }
}

/// The `litestream` program, or why there is none.
func litestreamExecutable(_ explicit: String?) throws -> String {
    do {
        return try LitestreamSupervisor.findExecutable(explicit: explicit)
    } catch let error as ReplicationError {
        throw CommandFailure(message: error.message)
    }
}

/// An ISO 8601 moment: with a time zone, or UTC when it has none.
private func parseTimestamp(_ text: String, path: [String]) throws -> Date {
    let withZone = text.hasSuffix("Z") || text.range(of: #"[+-]\d\d:?\d\d$"#, options: .regularExpression) != nil
    let full = withZone ? text : text + "Z"
    if let date = try? Date.ISO8601FormatStyle().parse(full) { return date }
    if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(full) { return date }
    throw UsageError(
        message: "--timestamp takes an ISO 8601 time such as 2026-12-01T09:30:00Z, not '\(text)'", helpPath: path)
}

/// Restores `replica` into a new file beside `destination`, checks it,
/// and moves it into place (replacing only with `force`, and then the old
/// file's `-wal` and `-shm` too, which belong to the old contents).
///
/// - Returns: false when `ifReplicaExists` and the replica holds nothing
///   (nothing was written).
@discardableResult
func restoreDatabase(
    from replica: ReplicaLocation, to destination: String, timestamp: Date?, force: Bool, executable: String,
    ifReplicaExists: Bool
) throws -> Bool {
    let manager = FileManager.default
    if manager.fileExists(atPath: destination) && !force {
        throw CommandFailure(message: "\(destination) is already there: it is kept (use --force to replace it)")
    }
    let directory = (destination as NSString).deletingLastPathComponent
    var isDirectory: ObjCBool = false
    guard manager.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
        throw CommandFailure(message: "the directory \(directory) does not exist")
    }
    let staging = directory + "/." + (destination as NSString).lastPathComponent + ".restoring-\(getpid())"
    func removeStaging() {
        for suffix in ["", "-wal", "-shm"] { try? manager.removeItem(atPath: staging + suffix) }
    }
    removeStaging()
    defer { removeStaging() }
    let outcome: LitestreamRestore.Outcome
    do {
        outcome = try LitestreamRestore.run(
            executable: executable, replica: replica, output: staging, timestamp: timestamp,
            ifReplicaExists: ifReplicaExists)
    } catch let error as ReplicationError {
        throw CommandFailure(message: error.message)
    }
    if outcome == .replicaEmpty { return false }
    // Litestream checked it; checked again here as SQLite sees the file
    // that will be used, before anything is replaced.
    switch AppDatabase.quickCheck(fileAt: staging) {
    case .success(let rows) where rows == ["ok"]:
        break
    case .success(let rows):
        throw CommandFailure(
            message: "the restored copy failed the integrity check (\(rows.prefix(3).joined(separator: "; "))): "
                + "nothing was replaced")
    case .failure(let error):
        throw CommandFailure(message: "the restored copy cannot be read (\(error.message)): nothing was replaced")
    }
    if force {
        for suffix in ["-wal", "-shm"] { try? manager.removeItem(atPath: destination + suffix) }
    }
    guard rename(staging, destination) == 0 else {
        throw CommandFailure(
            message: "cannot move the restored copy to \(destination): \(String(cString: strerror(errno)))")
    }
    return true
}
