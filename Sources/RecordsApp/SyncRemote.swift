import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The server a device's database syncs with (`records remote set`): its
/// address and the API token that opens it.
///
/// It is kept beside the database, in `<database>.remote`, a file only its
/// owner may read or write (mode 0600), never in the database itself: a
/// backup or copy of the database does not carry the token. The token is
/// never printed or logged; ``description`` leaves it out.
public struct SyncRemote: Sendable, Equatable, CustomStringConvertible {
    /// The server's address, as given (`http://host:8080`).
    public let url: URL
    /// The API token.
    public let token: String

    /// A remote, checked.
    ///
    /// - Throws: ``ValidationError`` for an address that is not http(s)
    ///   with a host, or a token that is empty, over-long or holds spaces
    ///   or control characters.
    public init(url text: String, token: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let url = URL(string: trimmed), let scheme = url.scheme?.lowercased(),
            ["http", "https"].contains(scheme),
            url.host?.isEmpty == false
        else {
            throw ValidationError(
                field: "url", message: "The server's address must be an http or https URL, such as http://host:8080.")
        }
        let token = token.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, token.utf8.count <= 200,
            token.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else {
            throw ValidationError(
                field: "token",
                message: "The token must be one word of printable characters, as records token create printed it.")
        }
        self.url = url
        self.token = token
    }

    /// The API's base: the address with `/api/v1`, unless it ends so already.
    public var apiURL: URL {
        let path = url.path.hasSuffix("/") ? String(url.path.dropLast()) : url.path
        if path.hasSuffix("/api/v1") { return url }
        return url.appendingPathComponent("api").appendingPathComponent("v1")
    }

    /// The address, without the token.
    public var description: String { url.absoluteString }

    /// Where the remote of the database at `databasePath` is kept.
    public static func fileURL(forDatabaseAt databasePath: String) -> URL {
        URL(fileURLWithPath: databasePath + ".remote")
    }

    /// The remote of the database at `databasePath`, or nil when none is set.
    ///
    /// - Throws: ``SyncRemoteError`` when the file cannot be read or is
    ///   not one this version wrote.
    public static func load(forDatabaseAt databasePath: String) throws -> SyncRemote? {
        let file = fileURL(forDatabaseAt: databasePath)
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        do {
            let data = try Data(contentsOf: file)
            let stored = try JSONDecoder().decode(Stored.self, from: data)
            return try SyncRemote(url: stored.url, token: stored.token)
        } catch {
            throw SyncRemoteError(
                message: "cannot read the remote settings \(file.path): set them again with records remote set")
        }
    }

    /// Keeps the remote for the database at `databasePath`, replacing any:
    /// written to a new file of mode 0600, then renamed over the old one,
    /// so that a crash leaves the old settings or the new, and the token
    /// is never readable by others, not even for a moment.
    public func save(forDatabaseAt databasePath: String) throws {
        let file = Self.fileURL(forDatabaseAt: databasePath)
        let temporary = file.path + ".new-\(getpid())"
        let data = try JSONEncoder().encode(Stored(url: url.absoluteString, token: token))
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw SyncRemoteError(message: "cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        var written = 0
        let ok = data.withUnsafeBytes { buffer -> Bool in
            while written < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if count <= 0 { return false }
                written += count
            }
            return fchmod(descriptor, 0o600) == 0 && fsync(descriptor) == 0
        }
        let error = errno
        close(descriptor)
        guard ok, rename(temporary, file.path) == 0 else {
            unlink(temporary)
            throw SyncRemoteError(
                message: "cannot write \(file.path): \(String(cString: strerror(ok ? errno : error)))")
        }
    }

    private struct Stored: Codable {
        var url: String
        var token: String
    }
}

/// The remote settings cannot be read or written.
public struct SyncRemoteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, with the file's path.
    public let message: String

    /// The message.
    public var description: String { message }
}
