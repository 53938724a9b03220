import Foundation

/// Hashes and verifies passwords with scrypt from OpenSSL 3, storing them as
/// PHC strings that name the algorithm and its parameters.
///
/// ```swift
/// let hasher = PasswordHasher()                      // OWASP's scrypt minimum
/// var stored = try hasher.hash(password)             // "$scrypt$ln=17,r=8,p=1$…$…"
/// if try hasher.verify(attempt, against: stored) {
///     if try hasher.needsRehash(stored) { stored = try hasher.hash(attempt) }
/// }
/// ```
///
/// - Each hash gets a fresh 16-byte salt from OpenSSL's CSPRNG (`RAND_bytes`)
///   and a 32-byte scrypt output (`EVP_PBE_scrypt`); the comparison when
///   verifying is constant-time (`CRYPTO_memcmp`).
/// - **Unicode:** a `String` password is normalised to NFC before it is
///   encoded as UTF-8, so the same characters typed as precomposed `é` or as
///   `e` + combining accent give the same hash (as RFC 8265's OpaqueString
///   profile recommends); nothing else is changed: no case folding, no
///   trimming. The `passwordBytes:` variants hash the given bytes unchanged,
///   for passwords that are not text or were hashed elsewhere without
///   normalisation.
/// - As in every scrypt (its PBKDF2 step zero-pads HMAC keys), passwords of
///   up to 64 bytes that differ only by trailing NUL bytes hash alike: `""`
///   and `"\0"` are the same password. Reject control characters when
///   validating new passwords if that matters.
/// - Passwords are never logged, stored or put in an error. The UTF-8 copies
///   the hasher makes are overwritten after use (best effort: a `String` the
///   caller holds cannot be wiped).
/// - Each call blocks for the duration of one scrypt derivation (see
///   ``ScryptParameters``); call it off the main actor in an app.
public struct PasswordHasher: Sendable {
    /// The parameters new hashes are made with, and that ``needsRehash(_:)``
    /// compares stored hashes to.
    public let parameters: ScryptParameters

    /// The salt length of new hashes, in bytes.
    public static let saltLength = 16
    /// The derived hash length of new hashes, in bytes.
    public static let hashLength = 32

    /// A stored hash with this hasher's parameters and lengths that no password
    /// matches in practice, verified against for unknown accounts.
    let dummyStoredHash: String

    /// Creates a hasher.
    ///
    /// - Parameter parameters: the cost of new hashes; the default is OWASP's
    ///   minimum for scrypt (`N = 2^17`, `r = 8`, `p = 1`, 128 MiB). Use
    ///   cheaper parameters only in tests.
    public init(parameters: ScryptParameters = .owaspMinimum) {
        self.parameters = parameters
        // The salt and hash only need the right lengths: a derived key equal to
        // 32 fixed bytes is as likely as guessing a random 256-bit key.
        dummyStoredHash =
            ScryptPasswordHash(
                parameters: parameters,
                salt: [UInt8](repeating: 0x5A, count: Self.saltLength),
                hash: [UInt8](repeating: 0xA5, count: Self.hashLength)
            ).phcString
    }

    /// Hashes a password (normalised to NFC, then UTF-8) with a fresh salt.
    ///
    /// - Returns: the PHC string to store.
    /// - Throws: ``PasswordHashingError/openSSLFailure(function:message:)``
    ///   if OpenSSL cannot produce random bytes or allocate scrypt's memory.
    public func hash(_ password: String) throws -> String {
        var bytes = Self.normalizedBytes(password)
        defer { OpenSSL.cleanse(&bytes) }
        return try hash(passwordBytes: bytes)
    }

    /// Hashes password bytes, used as given, with a fresh salt.
    ///
    /// - Returns: the PHC string to store.
    /// - Throws: ``PasswordHashingError/openSSLFailure(function:message:)``
    ///   if OpenSSL cannot produce random bytes or allocate scrypt's memory.
    public func hash(passwordBytes: [UInt8]) throws -> String {
        let salt = try OpenSSL.randomBytes(count: Self.saltLength)
        let key = try OpenSSL.scrypt(
            password: passwordBytes, salt: salt, parameters: parameters, length: Self.hashLength)
        return ScryptPasswordHash(parameters: parameters, salt: salt, hash: key).phcString
    }

    /// Whether a password (normalised to NFC, then UTF-8) matches a stored
    /// hash, derived with the stored parameters, which may differ from this
    /// hasher's.
    ///
    /// - Returns: false for a wrong password.
    /// - Throws: ``PasswordHashingError/malformedStoredHash(_:)`` when the
    ///   stored value is not a valid scrypt PHC string, and
    ///   ``PasswordHashingError/openSSLFailure(function:message:)`` if OpenSSL
    ///   fails (such as being out of memory); never for a wrong password.
    public func verify(_ password: String, against storedHash: String) throws -> Bool {
        var bytes = Self.normalizedBytes(password)
        defer { OpenSSL.cleanse(&bytes) }
        return try verify(passwordBytes: bytes, against: storedHash)
    }

    /// Whether password bytes, used as given, match a stored hash.
    ///
    /// - Returns: false for a wrong password.
    /// - Throws: as ``verify(_:against:)``.
    public func verify(passwordBytes: [UInt8], against storedHash: String) throws -> Bool {
        let stored = try ScryptPasswordHash(phcString: storedHash)
        var key = try OpenSSL.scrypt(
            password: passwordBytes, salt: stored.salt, parameters: stored.parameters, length: stored.hash.count)
        defer { OpenSSL.cleanse(&key) }
        return OpenSSL.constantTimeEqual(key, stored.hash)
    }

    /// Spends the time of one verification without an account, so a login
    /// for an unknown account takes as long as a wrong password for a known
    /// one and its timing does not reveal which accounts exist.
    ///
    /// It runs ``verify(_:against:)`` against a fixed stored hash with this
    /// hasher's parameters and lengths, and discards the result:
    ///
    /// ```swift
    /// guard let user = try store.user(email: email) else {
    ///     hasher.performDummyVerification(password)
    ///     throw LoginError.invalidCredentials
    /// }
    /// guard try hasher.verify(password, against: user.passwordHash) else {
    ///     throw LoginError.invalidCredentials
    /// }
    /// ```
    ///
    /// The cost matches accounts whose hashes use the current ``parameters``;
    /// rehash old ones on login (``needsRehash(_:)``) to keep it so.
    public func performDummyVerification(_ password: String) {
        _ = try? verify(password, against: dummyStoredHash)
    }

    /// ``performDummyVerification(_:)`` for callers of the `passwordBytes:`
    /// variants.
    public func performDummyVerification(passwordBytes: [UInt8]) {
        _ = try? verify(passwordBytes: passwordBytes, against: dummyStoredHash)
    }

    /// Whether a stored hash was made with other parameters or lengths than
    /// this hasher uses, so it should be replaced by a new hash of the password
    /// the next time the user logs in successfully.
    ///
    /// - Throws: ``PasswordHashingError/malformedStoredHash(_:)`` when the
    ///   stored value is not a valid scrypt PHC string.
    public func needsRehash(_ storedHash: String) throws -> Bool {
        let stored = try ScryptPasswordHash(phcString: storedHash)
        return stored.parameters != parameters || stored.salt.count != Self.saltLength
            || stored.hash.count != Self.hashLength
    }

    /// The bytes hashed for a `String` password: its NFC form in UTF-8.
    static func normalizedBytes(_ password: String) -> [UInt8] {
        Array(password.precomposedStringWithCanonicalMapping.utf8)
    }
}
