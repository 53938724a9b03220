import Dispatch
import PasswordHashing

/// What ``UsersStore`` needs from a password hasher. ``PasswordHasher`` (scrypt
/// through OpenSSL 3) is the one the app uses; tests substitute cheaper
/// parameters, or wrap it to see which calls a login makes.
///
/// ## Why scrypt through OpenSSL 3
/// A password must be stored as a salted hash that is slow and memory-hard
/// to compute, made by a standard, maintained C library, never by
/// hand-written crypto. The two candidates were scrypt (RFC 7914) through
/// OpenSSL 3 and Argon2id through libsodium. Both are memory-hard and
/// recommended by OWASP. OpenSSL's `libssl-dev` is already installed on a
/// fresh machine here (and on most Linux systems), so building needs no extra
/// package, while libsodium would be a new dependency for every build and
/// for CI. The default cost is OWASP's minimum for scrypt (`N = 2^17`, `r = 8`,
/// `p = 1`: 128 MiB, about 0.4 s here). Hashes are PHC strings that name the
/// algorithm and its parameters, so the cost can be raised later: a login
/// with a hash made at another cost replaces it (``needsRehash(_:)``).
public protocol PasswordHashingService: Sendable {
    /// A PHC string for `password` with a fresh salt.
    func hash(_ password: String) throws -> String
    /// A PHC string for password bytes used as they are.
    func hash(passwordBytes: [UInt8]) throws -> String
    /// Whether `password` matches `storedHash`; false for a wrong password.
    func verify(_ password: String, against storedHash: String) throws -> Bool
    /// Whether `storedHash` was made at another cost than new hashes.
    func needsRehash(_ storedHash: String) throws -> Bool
    /// Spends the time of one ``verify(_:against:)`` without an account, so
    /// that an unknown email costs a login as much as a wrong password.
    func performDummyVerification(_ password: String)
}

extension PasswordHasher: PasswordHashingService {}

/// Runs password hashing, which is slow on purpose, on a dispatch thread of
/// its own: never on the caller's actor, nor on one of the few threads of
/// Swift concurrency, and outside any database access.
enum PasswordWork {
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try work() })
            }
        }
    }
}
