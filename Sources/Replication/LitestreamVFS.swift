import Foundation
import SQLiteStore

/// Litestream's read-replica VFS (`pip install litestream-vfs`): a SQLite
/// loadable extension that serves a replica's database straight from
/// where Litestream replicates it, fetching pages as they are read and
/// following the primary's new commits.
///
/// Load it once for the process (SQLiteStore's
/// `LoadableExtension.loadForProcess(at:entryPoint:)`) after
/// ``configureEnvironment(for:)``, then open the database read-only with
/// the VFS named ``name``.
public enum LitestreamVFS {
    /// The name the extension registers its VFS under.
    public static let name = "litestream"
    /// The extension's initialisation function (named explicitly, so that
    /// the library may be renamed).
    public static let entryPoint = "sqlite3_litestreamvfs_init"

    /// The extension's shared library: `explicit` when given (it must be a
    /// file), else the one `scripts/bootstrap.sh` installs beside the
    /// build (`.build/venv/lib/python3.*/site-packages/litestream_vfs/`,
    /// found from the running program's directory).
    ///
    /// - Throws: ``ReplicationError`` saying where it looked.
    public static func findLibrary(explicit: String?, nextTo program: String = CommandLine.arguments.first ?? "")
        throws -> String
    {
        let manager = FileManager.default
        if let explicit {
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: explicit, isDirectory: &isDirectory), !isDirectory.boolValue else {
                throw ReplicationError("--litestream-vfs \(explicit) is not a file")
            }
            return explicit
        }
        for venv in virtualEnvironments(nextTo: program) {
            let lib = venv.appendingPathComponent("lib")
            let versions = ((try? manager.contentsOfDirectory(atPath: lib.path)) ?? [])
                .filter { $0.hasPrefix("python3") }.sorted()
            for version in versions {
                let path = lib.appendingPathComponent("\(version)/site-packages/litestream_vfs/litestream-vfs.so")
                    .standardizedFileURL.path
                if manager.fileExists(atPath: path) { return path }
            }
        }
        throw ReplicationError(
            "Litestream's read-replica VFS is not installed: scripts/bootstrap.sh installs it in .build/venv "
                + "(pip install litestream-vfs), or give its path with --litestream-vfs")
    }

    /// The environment variable the extension reads the replica's URL
    /// from. It reads the environment the process started with (a Go
    /// library's runtime copies it when it starts), so setting it later
    /// has no effect: a program sets it and starts itself again.
    public static let replicaVariable = "LITESTREAM_REPLICA_URL"

    /// The value of ``replicaVariable`` for `replica`: its URL, and for an
    /// S3 store with its own endpoint (MinIO, moto) the endpoint and path
    /// style as the URL's query, which the VFS's S3 client reads (it takes
    /// no configuration file).
    public static func replicaURL(for replica: ReplicaLocation) -> String {
        guard case .s3(_, _, let endpoint?) = replica else { return replica.url }
        var query = URLComponents()
        query.queryItems = [
            URLQueryItem(name: "endpoint", value: endpoint.absoluteString),
            URLQueryItem(name: "forcePathStyle", value: "true"),
        ]
        // `+` is a space in a query; the endpoint has none, but is kept exact.
        let text = (query.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        return replica.url + "?" + text
    }

    /// The environment the process serving `replica` through the VFS needs,
    /// made from `environment`: ``replicaVariable`` set, and for an S3 store
    /// reached over plain HTTP no `AWS_CA_BUNDLE`, with which Litestream's
    /// S3 client refuses to start (as ``LitestreamSupervisor`` leaves it out
    /// of Litestream's). Credentials stay where they are: the S3 client reads
    /// `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` itself.
    public static func environment(for replica: ReplicaLocation, from environment: [String: String])
        -> [String: String]
    {
        var wanted = environment
        wanted[replicaVariable] = replicaURL(for: replica)
        if replica.isPlainHTTP { wanted["AWS_CA_BUNDLE"] = nil }
        return wanted
    }

    /// How long without a successful poll of the replica before a
    /// connection counts as stale: the VFS polls once a second.
    public static let stalePollSeconds = 3

    /// Replaces a connection through the VFS that stopped following the
    /// replica (for ``SQLiteStore/Configuration/staleConnectionCheck``).
    ///
    /// Litestream 0.5.17's VFS does not follow the replica's level-1
    /// compactions reliably. Measured here (`scripts/replica-lag.py`):
    /// - a connection opened while level 1 is empty, or one whose level-1
    ///   position falls inside a later compaction's range, fails every
    ///   poll from the next compaction on ("non-contiguous ltx file") and
    ///   serves the same old commits;
    /// - a connection that polled a commit in the same second as a
    ///   compaction reported that commit's transaction ID and still did
    ///   not show its rows, while a new connection did.
    ///
    /// A new connection reads the replica correctly. So a connection is
    /// replaced:
    /// - when the replica's newest level-1 file is not the one it had when
    ///   the connection opened (a directory replica, checked by listing its
    ///   `ltx/1`: a compaction runs every 30 s);
    /// - for a replica that is not listed (an S3 store, where a listing is
    ///   a request), when a compaction is due since the connection opened:
    ///   Litestream runs them every 30 s of the clock (at :00 and :30), so
    ///   the connection is replaced 3 s after each;
    /// - whatever the replica, when `PRAGMA litestream_lag` says the last
    ///   successful poll is ``stalePollSeconds`` or more ago.
    ///
    /// - Parameters:
    ///   - replica: The replica the VFS follows.
    ///   - interval: The least time between two checks of a connection.
    ///   - onReplace: Told why, each time a connection is replaced.
    public static func staleConnectionCheck(
        replica: ReplicaLocation, every interval: Duration = .milliseconds(250),
        onReplace: (@Sendable (String) -> Void)? = nil
    ) -> StaleConnectionCheck {
        let levelOne: String? =
            if case .directory(let path) = replica { (path as NSString).appendingPathComponent("ltx/1") } else { nil }
        return StaleConnectionCheck(every: interval, onReplace: onReplace) {
            let opened = ContinuousClock.now
            let newestAtOpen = levelOne.flatMap { newestLTXFile(in: $0) }
            let compaction = levelOne == nil ? compactionSettled(after: Date()) : nil
            return { db in
                if let levelOne, newestLTXFile(in: levelOne) != newestAtOpen {
                    return "the replica's level-1 compaction ran after the connection opened, "
                        + "which Litestream's VFS does not follow reliably"
                }
                if let compaction, Date() >= compaction {
                    return "a level-1 compaction of the replica was due since the connection opened, "
                        + "which Litestream's VFS does not follow reliably"
                }
                // Another VFS ignores the pragma: no column, no answer.
                let statement = try db.cachedStatement(sql: "PRAGMA litestream_lag")
                guard statement.columnCount == 1,
                    let text = try statement.fetchOne()?.decode(String?.self, at: 0), let lag = Int(text)
                else { return nil }
                if lag >= stalePollSeconds { return "the last successful poll of the replica was \(lag) s ago" }
                if lag < 0 && ContinuousClock.now - opened >= .seconds(stalePollSeconds) {
                    return "no successful poll of the replica since the connection opened"
                }
                return nil
            }
        }
    }

    /// Litestream's level-1 compaction interval: its compactions run at
    /// multiples of it on the clock.
    static let compactionInterval: TimeInterval = 30
    /// The time a compaction's file takes to reach the replica, at most.
    static let compactionMargin: TimeInterval = 3

    /// When the first compaction that a connection opened at `opened` can
    /// have missed has reached the replica: a connection opened less than
    /// ``compactionMargin`` after a compaction may have missed that one.
    static func compactionSettled(after opened: Date) -> Date {
        let time = opened.timeIntervalSince1970 - compactionMargin
        let next = ((time / compactionInterval).rounded(.down) + 1) * compactionInterval
        return Date(timeIntervalSince1970: next + compactionMargin)
    }

    /// The name of the newest LTX file in `directory` (their names are
    /// fixed-width hexadecimal transaction IDs, so the greatest sorts
    /// last), or nil when it holds none.
    private static func newestLTXFile(in directory: String) -> String? {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".ltx") }.max()
    }
}
