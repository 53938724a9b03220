import TestSupport
import Testing

@testable import PasswordHashing

@Suite("Hashing and verifying passwords")
struct PasswordHasherTests {
    @Test("A hash verifies its own password and rejects a wrong one")
    func rightAndWrongPassword() throws {
        let stored = try cheapHasher.hash("hunter2hunter2")
        #expect(try cheapHasher.verify("hunter2hunter2", against: stored))
        #expect(try !cheapHasher.verify("hunter2hunter3", against: stored))
        #expect(try !cheapHasher.verify("Hunter2hunter2", against: stored))
        #expect(try !cheapHasher.verify("hunter2hunter2 ", against: stored))
        #expect(try !cheapHasher.verify("", against: stored))
    }

    @Test("The stored value is a PHC string with the hasher's parameters, a 16-byte salt and a 32-byte hash")
    func storedFormat() throws {
        let stored = try cheapHasher.hash("secret password")
        #expect(stored.hasPrefix("$scrypt$ln=10,r=8,p=1$"))
        let parsed = try ScryptPasswordHash(phcString: stored)
        #expect(parsed.parameters == cheapParameters)
        #expect(parsed.salt.count == 16)
        #expect(parsed.hash.count == 32)
        #expect(parsed.phcString == stored)
    }

    @Test("Two hashes of the same password differ in salt and hash, and both verify")
    func saltedHashesDiffer() throws {
        let first = try cheapHasher.hash("same password")
        let second = try cheapHasher.hash("same password")
        #expect(first != second)
        let a = try ScryptPasswordHash(phcString: first)
        let b = try ScryptPasswordHash(phcString: second)
        #expect(a.salt != b.salt)
        #expect(a.hash != b.hash)
        #expect(try cheapHasher.verify("same password", against: first))
        #expect(try cheapHasher.verify("same password", against: second))
    }

    @Test(
        "The stored value is not the password and does not contain it", arguments: ["password", "a", "AAAA", "scrypt"])
    func storedValueHidesPassword(password: String) throws {
        let stored = try cheapHasher.hash(password)
        #expect(stored != password)
        let parsed = try ScryptPasswordHash(phcString: stored)
        // The raw bytes must not be the password's, and the fields must not
        // hold it verbatim. A password of one to three bytes is two to four
        // base64 characters, which a random 32-byte hash holds by chance
        // ("YQ", for "a", about once in a hundred hashes): only longer ones
        // are looked for there.
        #expect(parsed.hash != Array(password.utf8))
        if password.utf8.count >= 4 {
            #expect(!Base64.encode(parsed.hash).contains(Base64.encode(Array(password.utf8))))
        }
        #expect(!parsed.description.contains(Base64.encode(parsed.salt)))
        #expect(!parsed.description.contains(Base64.encode(parsed.hash)))
    }

    @Test("A long password is stored in a value of fixed length and no part of it is found there")
    func longPasswordNotContained() throws {
        let password = String(repeating: "correct horse battery staple ", count: 40)
        let stored = try cheapHasher.hash(password)
        #expect(stored.count < 120)
        #expect(!stored.contains("correct"))
    }

    @Test("Verification uses the stored parameters, not the hasher's")
    func verifiesWithStoredParameters() throws {
        let other = PasswordHasher(parameters: try ScryptParameters(logN: 8, blockSize: 4, parallelism: 2))
        let stored = try other.hash("migrated")
        #expect(try cheapHasher.verify("migrated", against: stored))
        #expect(try !cheapHasher.verify("migrate", against: stored))
    }

    @Test("Hashes made by an independent scrypt (Python's hashlib) verify")
    func interoperates() throws {
        #expect(try cheapHasher.verify("correct horse battery staple", against: pythonHash))
        #expect(try !cheapHasher.verify("correct horse battery stapler", against: pythonHash))
    }

    @Test("The scrypt derivation matches RFC 7914's test vectors")
    func rfc7914Vectors() throws {
        let second = try OpenSSL.scrypt(
            password: Array("password".utf8), salt: Array("NaCl".utf8),
            parameters: try ScryptParameters(logN: 10, blockSize: 8, parallelism: 16), length: 64)
        #expect(
            hex(second) == """
                fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162\
                2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640
                """)
        let third = try OpenSSL.scrypt(
            password: Array("pleaseletmein".utf8), salt: Array("SodiumChloride".utf8),
            parameters: try ScryptParameters(logN: 14, blockSize: 8, parallelism: 1), length: 64)
        #expect(
            hex(third) == """
                7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2\
                d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887
                """)
    }

    @Test("Parameters OpenSSL refuses are reported as an OpenSSL failure with its message")
    func openSSLFailureIsThrown() throws {
        // ln=16 with r=1 breaks N < 2^(16r); ScryptParameters never allows it.
        let refused = ScryptParameters(uncheckedLogN: 16, blockSize: 1, parallelism: 1)
        #expect(ScryptParameters.problem(logN: 16, blockSize: 1, parallelism: 1) != nil)
        do {
            _ = try OpenSSL.scrypt(password: [1], salt: [2], parameters: refused, length: 32)
            Issue.record("OpenSSL accepted N = 2^16 with r = 1")
        } catch PasswordHashingError.openSSLFailure(let function, let message) {
            #expect(function == "EVP_PBE_scrypt")
            #expect(!message.isEmpty)
        }
        // The largest ln allowed for r=1 is one OpenSSL accepts.
        let accepted = try ScryptParameters(logN: 15, blockSize: 1, parallelism: 1)
        #expect(try OpenSSL.scrypt(password: [1], salt: [2], parameters: accepted, length: 16).count == 16)
    }

    @Test("Comparison: equal bytes match, any difference or length mismatch does not")
    func constantTimeComparison() {
        #expect(OpenSSL.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(OpenSSL.constantTimeEqual([], []))
        #expect(!OpenSSL.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!OpenSSL.constantTimeEqual([0, 2, 3], [1, 2, 3]))
        #expect(!OpenSSL.constantTimeEqual([1, 2, 3], [1, 2]))
        #expect(!OpenSSL.constantTimeEqual([], [0]))
    }

    @Test("Random salts come from OpenSSL and are not constant")
    func randomBytes() throws {
        let a = try OpenSSL.randomBytes(count: 16)
        let b = try OpenSSL.randomBytes(count: 16)
        #expect(a.count == 16)
        #expect(a != b)
        #expect(try OpenSSL.randomBytes(count: 0).isEmpty)
        #expect(throws: PasswordHashingError.openSSLFailure(function: "RAND_bytes", message: "cannot produce -1 bytes"))
        {
            try OpenSSL.randomBytes(count: -1)
        }
    }

    @Test("A malformed stored value throws from verify and needsRehash, with the reason")
    func malformedStoredValueThrows() throws {
        #expect(throws: PasswordHashingError.malformedStoredHash(.missingLeadingDollar)) {
            try cheapHasher.verify("password", against: "password")
        }
        #expect(throws: PasswordHashingError.malformedStoredHash(.unsupportedAlgorithm("argon2id"))) {
            try cheapHasher.verify("password", against: "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA")
        }
        #expect(throws: PasswordHashingError.malformedStoredHash(.wrongFieldCount(2))) {
            try cheapHasher.needsRehash("$scrypt")
        }
        #expect(throws: PasswordHashingError.malformedStoredHash(.missingLeadingDollar)) {
            try cheapHasher.needsRehash("")
        }
    }

    @Test("Many hashes and verifications run concurrently from one shared hasher")
    func concurrentUse() async throws {
        let hasher = cheapHasher
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<8 {
                group.addTask {
                    let stored = try hasher.hash("password \(index)")
                    return try hasher.verify("password \(index)", against: stored)
                        && !hasher.verify("password \(index + 1)", against: stored)
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 8))
    }
}

/// Lower-case hexadecimal, two digits a byte.
func hex(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}
