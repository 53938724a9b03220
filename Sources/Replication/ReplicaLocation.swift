import Foundation

/// Where a database's replica lives: a directory on this machine (another
/// disk, a network mount) or a bucket of an S3-compatible store.
public enum ReplicaLocation: Sendable, Equatable, CustomStringConvertible {
    /// A directory, by absolute path.
    case directory(String)
    /// A bucket and the path inside it, at `endpoint` (nil: Amazon S3).
    case s3(bucket: String, path: String, endpoint: URL?)

    /// Reads a location as people write it: a directory path (relative to
    /// `workingDirectory`), a `file://` URL, or `s3://BUCKET/PATH`.
    ///
    /// An S3 location's endpoint comes from the environment, as the AWS
    /// tools read it: `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`; unset
    /// means Amazon S3 itself. Its credentials stay in the environment
    /// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`), where Litestream reads
    /// them: they are never written to a file.
    ///
    /// - Throws: ``ReplicationError`` naming what is wrong: an empty text,
    ///   another scheme, an S3 URL without a bucket, an endpoint that is not
    ///   an http(s) URL.
    public init(
        parsing text: String, workingDirectory: String = FileManager.default.currentDirectoryPath,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else {
            throw ReplicationError(
                "the replica's location is empty: give a directory, file:///PATH or s3://BUCKET/PATH")
        }
        if trimmed.hasPrefix("s3://") {
            let rest = trimmed.dropFirst("s3://".count)
            let bucket = String(rest.prefix { $0 != "/" })
            let path = rest.dropFirst(bucket.count).trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            guard !bucket.isEmpty, bucket.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." }) else {
                throw ReplicationError("'\(text)' names no bucket: write s3://BUCKET/PATH")
            }
            var endpoint: URL?
            if let value = environment["AWS_ENDPOINT_URL_S3"] ?? environment["AWS_ENDPOINT_URL"], !value.isEmpty {
                guard let url = URL(string: value), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                    url.host != nil
                else {
                    throw ReplicationError("the S3 endpoint '\(value)' (AWS_ENDPOINT_URL) is not an http or https URL")
                }
                endpoint = url
            }
            self = .s3(bucket: bucket, path: path, endpoint: endpoint)
            return
        }
        var path = trimmed
        if trimmed.hasPrefix("file://") {
            guard let url = URL(string: trimmed), url.isFileURL, !url.path.isEmpty else {
                throw ReplicationError("'\(text)' is not a file URL: write file:///ABSOLUTE/PATH")
            }
            path = url.path
        } else if let colon = trimmed.range(of: "://") {
            let scheme = trimmed[..<colon.lowerBound]
            throw ReplicationError(
                "replicas to \(scheme):// are not supported: give a directory, file:///PATH or s3://BUCKET/PATH")
        }
        if !path.hasPrefix("/") { path = workingDirectory + "/" + path }
        self = .directory(URL(fileURLWithPath: path).standardizedFileURL.path)
    }

    /// The URL Litestream's commands take.
    public var url: String {
        switch self {
        case .directory(let path): URL(fileURLWithPath: path).absoluteString
        case .s3(let bucket, let path, _): "s3://\(bucket)/\(path)"
        }
    }

    /// Whether Litestream reaches it over plain HTTP: then a certificate
    /// bundle in the environment (`AWS_CA_BUNDLE`) only makes its S3 client
    /// refuse to start, and is left out of the child's environment.
    public var isPlainHTTP: Bool {
        if case .s3(_, _, let endpoint?) = self { return endpoint.scheme?.lowercased() == "http" }
        return false
    }

    public var description: String {
        switch self {
        case .directory(let path): path
        case .s3(_, _, let endpoint?): "\(url) at \(endpoint.absoluteString)"
        case .s3: url
        }
    }
}

/// Why replication could not be set up, or a restore failed.
public struct ReplicationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, as a sentence fragment for "records: error: …".
    public var message: String
    /// An error with its message.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
