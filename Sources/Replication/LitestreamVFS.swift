import Foundation

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

    /// The value of ``replicaVariable`` for `replica`.
    ///
    /// - Throws: ``ReplicationError`` for an S3 replica, which this
    ///   version does not serve.
    public static func replicaURL(for replica: ReplicaLocation) throws -> String {
        guard case .directory = replica else {
            throw ReplicationError(
                "read replicas are served from a directory or file:// replica; an S3 replica is not supported "
                    + "yet: restore it (records restore) or mount the bucket")
        }
        return replica.url
    }
}
