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
}
