import TestSupport
import Testing

@testable import PasswordHashing

@Suite("Rehash checks, dummy verification and the default cost")
struct RehashAndDummyTests {
    @Test("A hash made with the hasher's own parameters does not need rehashing")
    func currentHashIsKept() throws {
        #expect(try !cheapHasher.needsRehash(try cheapHasher.hash("password")))
    }

    @Test(
        "A hash with any other parameter needs rehashing, whether weaker or stronger",
        arguments: ["ln=9,r=8,p=1", "ln=11,r=8,p=1", "ln=10,r=4,p=1", "ln=10,r=16,p=1", "ln=10,r=8,p=2"])
    func otherParametersNeedRehash(params: String) throws {
        #expect(try cheapHasher.needsRehash(phc(params: params)))
    }

    @Test("Raising the parameters marks old hashes, which still verify")
    func raisingParameters() throws {
        let old = try cheapHasher.hash("password")
        let raised = PasswordHasher(parameters: try ScryptParameters(logN: 11, blockSize: 8, parallelism: 1))
        #expect(try raised.needsRehash(old))
        #expect(try raised.verify("password", against: old))
        let renewed = try raised.hash("password")
        #expect(try !raised.needsRehash(renewed))
        #expect(try cheapHasher.needsRehash(renewed))
    }

    @Test("A hash with other salt or hash lengths needs rehashing")
    func otherLengthsNeedRehash() throws {
        #expect(try !cheapHasher.needsRehash(phc()))
        #expect(try cheapHasher.needsRehash(phc(salt: base64(repeating: 1, count: 32))))
        #expect(try cheapHasher.needsRehash(phc(hash: base64(repeating: 1, count: 64))))
        #expect(try cheapHasher.needsRehash(phc(hash: base64(repeating: 1, count: 16))))
    }

    @Test("The dummy hash has the hasher's parameters and lengths, so it costs what a real one does")
    func dummyMatchesRealCost() throws {
        let dummy = try ScryptPasswordHash(phcString: cheapHasher.dummyStoredHash)
        let real = try ScryptPasswordHash(phcString: try cheapHasher.hash("password"))
        #expect(dummy.parameters == real.parameters)
        #expect(dummy.salt.count == real.salt.count)
        #expect(dummy.hash.count == real.hash.count)
        #expect(try !cheapHasher.needsRehash(cheapHasher.dummyStoredHash))

        let raised = PasswordHasher(parameters: try ScryptParameters(logN: 12, blockSize: 4, parallelism: 2))
        #expect(try ScryptPasswordHash(phcString: raised.dummyStoredHash).parameters == raised.parameters)
    }

    @Test("No password matches the dummy hash", arguments: ["", "password", "\u{0}", "\u{1F511}"])
    func dummyMatchesNothing(password: String) throws {
        #expect(try !cheapHasher.verify(password, against: cheapHasher.dummyStoredHash))
        // The public entry point runs the same verification and returns normally.
        cheapHasher.performDummyVerification(password)
        cheapHasher.performDummyVerification(passwordBytes: Array(password.utf8))
    }

    @Test("The default parameters are OWASP's scrypt minimum and work end to end")
    func defaultCost() throws {
        let hasher = PasswordHasher()
        #expect(hasher.parameters == ScryptParameters.owaspMinimum)
        #expect(hasher.parameters.cost == 131_072)
        #expect(hasher.parameters.blockSize == 8)
        #expect(hasher.parameters.parallelism == 1)
        #expect(hasher.parameters.memoryBytes == 128 << 20)

        let stored = try hasher.hash("correct horse battery staple")
        #expect(stored.hasPrefix("$scrypt$ln=17,r=8,p=1$"))
        #expect(try hasher.verify("correct horse battery staple", against: stored))
        #expect(try !hasher.verify("correct horse battery stapl", against: stored))
        #expect(try !hasher.needsRehash(stored))
        #expect(try !hasher.verify("correct horse battery staple", against: hasher.dummyStoredHash))
        hasher.performDummyVerification("correct horse battery staple")
    }

    @Test("Parameters needing more than OpenSSL's default 32 MiB run: maxmem is raised to fit")
    func beyondOpenSSLDefaultMemory() throws {
        // OpenSSL needs 128·r·(N + 2 + p) bytes here, just over 32 MiB.
        let parameters = try ScryptParameters(logN: 15, blockSize: 8, parallelism: 1)
        #expect(parameters.memoryBytes == 32 << 20)
        let key = try OpenSSL.scrypt(password: [1], salt: [2], parameters: parameters, length: 16)
        #expect(key.count == 16)
    }
}
