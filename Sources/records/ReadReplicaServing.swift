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

/// The options of `records serve` for serving a read replica.
let readReplicaOptions: [Command.Option] = [
    Command.Option(
        name: "read-replica", valueName: "URL",
        help:
            "Serve a read-only copy that follows the database another records serve replicates to URL "
            + "(a directory, file:///PATH or s3://BUCKET/PATH), through Litestream's read-replica VFS"),
    Command.Option(
        name: "litestream-vfs", valueName: "PATH",
        help: "Litestream's read-replica VFS library (default: the one in .build/venv)"),
    Command.Option(
        name: "primary", valueName: "URL",
        help: "With --read-replica: the primary server's address, shown to whoever tries to change something"),
]

/// What `--read-replica` opened: the replica and how the site treats it.
struct ReadReplicaServing {
    let database: AppDatabase
    let settings: ReadReplicaSettings
}

/// Opens the replica `--read-replica` names through Litestream's VFS; nil
/// without `--read-replica`.
@MainActor
func prepareReadReplica(_ invocation: Invocation) throws -> ReadReplicaServing? {
    let arguments = invocation.arguments
    guard let text = arguments.value("read-replica") else {
        for name in ["litestream-vfs", "primary"] where arguments.value(name) != nil {
            throw UsageError(message: "--\(name) goes with --read-replica", helpPath: invocation.path)
        }
        return nil
    }
    for name in ["replicate", "litestream", "synchronous"] where arguments.value(name) != nil {
        throw UsageError(
            message: "--read-replica serves a copy that cannot be written: it does not go with --\(name)",
            helpPath: invocation.path)
    }
    if arguments.flag("restore-if-missing") {
        throw UsageError(message: "--restore-if-missing goes with --replicate", helpPath: invocation.path)
    }
    let replica = try replicaLocation(text, path: invocation.path)
    var primary: String?
    if let address = arguments.value("primary") {
        guard let url = URL(string: address), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
            url.host != nil
        else {
            throw UsageError(
                message: "--primary takes the primary server's http:// or https:// address, not '\(address)'",
                helpPath: invocation.path)
        }
        primary = address
    }
    do {
        let library = try LitestreamVFS.findLibrary(explicit: arguments.value("litestream-vfs"))
        if case .directory(let path) = replica {
            guard FileManager.default.fileExists(atPath: path) else {
                throw ReplicationError("the replica \(path) does not exist: start the primary with --replicate first")
            }
            // Litestream's VFS waits, silently, for a first copy.
            let files = FileManager.default.enumerator(atPath: path + "/ltx")?.allObjects as? [String] ?? []
            guard files.contains(where: { $0.hasSuffix(".ltx") }) else {
                throw ReplicationError(
                    "the replica \(path) holds no copy of a database yet: start the primary with --replicate "
                        + "and let it make its first copy (about a second)")
            }
        }
        if case .s3 = replica {
            // The VFS waits, silently, on a store it cannot reach or a
            // replica with no copy: Litestream lists it first.
            let executable = try LitestreamSupervisor.findExecutable(explicit: nil)
            try LitestreamRestore.checkReachable(executable: executable, replica: replica)
            guard try LitestreamRestore.history(executable: executable, replica: replica) != nil else {
                throw ReplicationError(
                    "the replica \(replica) holds no copy of a database yet: start the primary with --replicate "
                        + "and let it make its first copy (about a second)")
            }
        }
        let current = ProcessInfo.processInfo.environment
        let wanted = LitestreamVFS.environment(for: replica, from: current)
        if wanted != current { try restart(with: wanted, changing: current) }
        try LoadableExtension.loadForProcess(at: library, entryPoint: LitestreamVFS.entryPoint)
        let staleness = LitestreamVFS.staleConnectionCheck(replica: replica) { reason in
            serveLog("the read replica's connection stopped following the primary (\(reason)): opening a new one")
        }
        let database = try AppDatabase(
            readReplicaAt: "records-replica.sqlite", vfs: LitestreamVFS.name, staleConnectionCheck: staleness)
        serveLog("serving a read-only copy of the database replicated to \(replica), through \(library)")
        return ReadReplicaServing(
            database: database, settings: ReadReplicaSettings(replica: replica.description, primary: primary))
    } catch let error as ReplicationError {
        throw CommandFailure(message: error.message)
    } catch let error as ReadReplicaError {
        throw CommandFailure(message: error.message)
    } catch let error as SQLiteError {
        throw CommandFailure(message: "cannot read the replica \(replica): \(error.message)")
    }
}

/// Starts this program again, with the same arguments, and the
/// environment `wanted` (what differs from `current` is set or removed):
/// for a library that reads only the environment the process started
/// with. Returns only on failure.
private func restart(with wanted: [String: String], changing current: [String: String]) throws {
    for (name, value) in wanted where current[name] != value { setenv(name, value, 1) }
    for name in current.keys where wanted[name] == nil { unsetenv(name) }
    #if os(Linux)
        let program = "/proc/self/exe"
    #else
        let program = CommandLine.arguments[0]
    #endif
    var argv: [UnsafeMutablePointer<CChar>?] = CommandLine.arguments.map { strdup($0) }
    argv.append(nil)
    execv(program, argv)
    let reason = String(cString: strerror(errno))
    for pointer in argv { free(pointer) }
    throw CommandFailure(message: "cannot start records again with the environment the replica needs: \(reason)")
}
