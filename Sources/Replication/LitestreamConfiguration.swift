import Foundation

/// The configuration file `litestream replicate` reads, written by the
/// server so that nobody writes one by hand.
public struct LitestreamConfiguration: Sendable, Equatable {
    /// The database file to replicate, by absolute path.
    public var database: String
    /// Where its replica goes.
    public var replica: ReplicaLocation
    /// The control socket's path (`sync -wait`, the list of databases).
    public var socket: String
    /// The region an S3 endpoint is asked for, when the environment names
    /// none (`AWS_REGION`, `AWS_DEFAULT_REGION`).
    public var region: String

    /// A configuration for one database and one replica.
    public init(
        database: String, replica: ReplicaLocation, socket: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.database = database
        self.replica = replica
        self.socket = socket
        region = environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"] ?? "us-east-1"
    }

    /// The YAML text. Every path and URL is a double-quoted scalar with its
    /// quotes, backslashes and control characters escaped, so no file name
    /// can add a key; the server runs Litestream with `-no-expand-env`, so a
    /// `$` in a path stays a `$`. Credentials are never in it: Litestream's
    /// S3 client reads them from the environment.
    public var yaml: String {
        var lines = [
            "socket:",
            "  enabled: true",
            "  path: \(Self.quoted(socket))",
            "dbs:",
            "  - path: \(Self.quoted(database))",
            "    replica:",
            "      url: \(Self.quoted(replica.url))",
        ]
        if case .s3(_, _, let endpoint?) = replica {
            lines += [
                "      endpoint: \(Self.quoted(endpoint.absoluteString))",
                "      region: \(Self.quoted(region))",
                // A self-hosted store (MinIO, a test's moto) names buckets
                // in the path, not the host name.
                "      force-path-style: true",
            ]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` as a YAML double-quoted scalar.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += String(format: "\\x%02X", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
