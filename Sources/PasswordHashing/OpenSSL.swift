import COpenSSL

/// The few OpenSSL calls the hasher needs, each turning a failure into a
/// thrown ``PasswordHashingError/openSSLFailure(function:message:)``.
enum OpenSSL {
    /// Bytes from OpenSSL's CSPRNG.
    static func randomBytes(count: Int) throws -> [UInt8] {
        guard count >= 0, let length = Int32(exactly: count) else {
            throw PasswordHashingError.openSSLFailure(function: "RAND_bytes", message: "cannot produce \(count) bytes")
        }
        var bytes = [UInt8](repeating: 0, count: count)
        let status = bytes.withUnsafeMutableBufferPointer { buffer in
            RAND_bytes(buffer.baseAddress, length)
        }
        guard status == 1 else { throw failure("RAND_bytes") }
        return bytes
    }

    /// scrypt(password, salt, N, r, p) with an output of `length` bytes (dkLen).
    static func scrypt(
        password: [UInt8], salt: [UInt8], parameters: ScryptParameters, length: Int
    ) throws -> [UInt8] {
        var key = [UInt8](repeating: 0, count: length)
        let status = password.withUnsafeBufferPointer { passwordBuffer in
            salt.withUnsafeBufferPointer { saltBuffer in
                key.withUnsafeMutableBufferPointer { keyBuffer -> Int32 in
                    // A NULL key makes OpenSSL only check the parameters and
                    // report success, which must never pass for a derivation.
                    guard let keyAddress = keyBuffer.baseAddress, keyBuffer.count > 0 else { return 0 }
                    // OpenSSL treats a NULL password or salt as empty.
                    return passwordBuffer.withMemoryRebound(to: CChar.self) { passwordChars in
                        EVP_PBE_scrypt(
                            passwordChars.baseAddress, passwordChars.count,
                            saltBuffer.baseAddress, saltBuffer.count,
                            UInt64(parameters.cost), UInt64(parameters.blockSize), UInt64(parameters.parallelism),
                            parameters.openSSLMaxMemory,
                            keyAddress, keyBuffer.count)
                    }
                }
            }
        }
        guard status == 1 else { throw failure("EVP_PBE_scrypt") }
        return key
    }

    /// OpenSSL's SHA-256, fetched from its provider once. `EVP_sha256()`
    /// is fetched again on every digest (a name lookup under locks, most of
    /// the time a short message's digest takes); a fetched algorithm may be
    /// used by any number of threads at once. Nil when the fetch failed:
    /// each digest then falls back to `EVP_sha256()`.
    private nonisolated(unsafe) static let fetchedSHA256: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil)

    /// SHA-256 of `bytes` (EVP_Digest).
    static func sha256(_ bytes: [UInt8]) throws -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let algorithm = fetchedSHA256 ?? EVP_sha256()
        let status = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { output in
                // A NULL data pointer with a zero count is the empty message.
                EVP_Digest(input.baseAddress, input.count, output.baseAddress, &length, algorithm, nil)
            }
        }
        guard status == 1, length == 32 else { throw failure("EVP_Digest") }
        return digest
    }

    /// Whether two byte strings are equal, in time that depends only on their
    /// length (CRYPTO_memcmp). Strings of different lengths are unequal.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { aBuffer in
            b.withUnsafeBytes { bBuffer in
                CRYPTO_memcmp(aBuffer.baseAddress, bBuffer.baseAddress, aBuffer.count) == 0
            }
        }
    }

    /// Overwrites secret bytes in a way the compiler cannot drop. Best effort:
    /// copies Swift made earlier are out of reach.
    static func cleanse(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let address = buffer.baseAddress { OPENSSL_cleanse(address, buffer.count) }
        }
    }

    /// The error for a failed call, with the first entry of OpenSSL's
    /// thread-local error queue, which is then cleared for the next call.
    private static func failure(_ function: String) -> PasswordHashingError {
        defer { ERR_clear_error() }
        let code = ERR_get_error()
        guard code != 0 else {
            return .openSSLFailure(function: function, message: "no error reported")
        }
        var text = [CChar](repeating: 0, count: 256)
        let message = text.withUnsafeMutableBufferPointer { buffer -> String in
            ERR_error_string_n(code, buffer.baseAddress, buffer.count)
            return String(
                decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return .openSSLFailure(function: function, message: message)
    }
}
