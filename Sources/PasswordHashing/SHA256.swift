/// SHA-256 (FIPS 180-4) from OpenSSL 3's libcrypto, for values that are
/// already random and long, such as session tokens: storing their digest
/// instead of the value means a copy of the database does not hand out
/// working tokens.
///
/// Never use it for passwords: a fast digest of a guessable value is
/// guessed quickly. Passwords go through ``PasswordHasher`` (scrypt).
///
/// ```swift
/// let stored = try SHA256.digest(Array(token.utf8))   // 32 bytes
/// ```
public enum SHA256 {
    /// The digest's length in bytes.
    public static let byteCount = 32

    /// The 32-byte digest of `bytes`.
    ///
    /// - Throws: ``PasswordHashingError/openSSLFailure(function:message:)``
    ///   when OpenSSL cannot compute it (out of memory, a FIPS provider
    ///   without SHA-256).
    public static func digest(_ bytes: [UInt8]) throws -> [UInt8] {
        try OpenSSL.sha256(bytes)
    }
}
