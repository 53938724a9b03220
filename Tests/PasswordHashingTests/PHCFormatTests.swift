import TestSupport
import Testing

@testable import PasswordHashing

/// A stored value that must be rejected, and why.
struct MalformedCase: Sendable, CustomTestStringConvertible {
    let name: String
    let input: String
    let reason: MalformedHashReason
    var testDescription: String { name }

    init(_ name: String, _ input: String, _ reason: MalformedHashReason) {
        self.name = name
        self.input = input
        self.reason = reason
    }
}

let validSalt = "AAECAwQFBgcICQoLDA0ODw"  // 16 bytes
let validHash = "mp90zEQd5XGhjEv4WArVH4Z0XRSzkGWtJK2S/AXJlRU"  // 32 bytes

let malformedCases: [MalformedCase] = [
    // Shape
    MalformedCase("empty", "", .missingLeadingDollar),
    MalformedCase("the password itself", "hunter2", .missingLeadingDollar),
    MalformedCase("no leading $", "scrypt$ln=10,r=8,p=1$\(validSalt)$\(validHash)", .missingLeadingDollar),
    MalformedCase("only $", "$", .unsupportedAlgorithm("")),
    MalformedCase("only the algorithm", "$scrypt", .wrongFieldCount(2)),
    MalformedCase("no salt or hash", "$scrypt$ln=10,r=8,p=1", .wrongFieldCount(3)),
    MalformedCase("no hash", "$scrypt$ln=10,r=8,p=1$\(validSalt)", .wrongFieldCount(4)),
    MalformedCase("trailing $", "$scrypt$ln=10,r=8,p=1$\(validSalt)$\(validHash)$", .wrongFieldCount(6)),
    MalformedCase("version field", "$scrypt$v=1$ln=10,r=8,p=1$\(validSalt)$\(validHash)", .wrongFieldCount(6)),
    MalformedCase("too long", "$scrypt$" + String(repeating: "A", count: 300), .tooLong(308)),
    MalformedCase("space", "$scrypt$ln=10, r=8,p=1$\(validSalt)$\(validHash)", .invalidCharacters),
    MalformedCase("trailing newline", phc() + "\n", .invalidCharacters),
    MalformedCase("non-ASCII digit", "$scrypt$ln=\u{663}0,r=8,p=1$\(validSalt)$\(validHash)", .invalidCharacters),
    MalformedCase("NUL", phc() + "\u{0}", .invalidCharacters),
    // Algorithm
    MalformedCase(
        "argon2id", "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2g", .unsupportedAlgorithm("argon2id")),
    MalformedCase(
        "upper-case name", "$SCRYPT$ln=10,r=8,p=1$\(validSalt)$\(validHash)", .unsupportedAlgorithm("SCRYPT")),
    MalformedCase("empty name", "$$ln=10,r=8,p=1$\(validSalt)$\(validHash)", .unsupportedAlgorithm("")),
    MalformedCase(
        "long name is cut", "$" + String(repeating: "x", count: 40) + "$ln=10,r=8,p=1$\(validSalt)$\(validHash)",
        .unsupportedAlgorithm(String(repeating: "x", count: 32))),
    // Parameter list
    MalformedCase("no parameters", phc(params: ""), .malformedParameterList),
    MalformedCase("missing p", phc(params: "ln=10,r=8"), .malformedParameterList),
    MalformedCase("extra parameter", phc(params: "ln=10,r=8,p=1,x=1"), .malformedParameterList),
    MalformedCase("trailing comma", phc(params: "ln=10,r=8,p=1,"), .malformedParameterList),
    MalformedCase("wrong order", phc(params: "r=8,ln=10,p=1"), .malformedParameterList),
    MalformedCase("N instead of ln", phc(params: "N=1024,r=8,p=1"), .malformedParameterList),
    MalformedCase("upper-case name", phc(params: "LN=10,r=8,p=1"), .malformedParameterList),
    MalformedCase("missing =", phc(params: "ln10,r=8,p=1"), .malformedParameterList),
    MalformedCase("semicolons", phc(params: "ln=10;r=8;p=1"), .malformedParameterList),
    MalformedCase("duplicate", phc(params: "ln=10,ln=10,p=1"), .malformedParameterList),
    // Parameter values
    MalformedCase("empty value", phc(params: "ln=,r=8,p=1"), .invalidParameterValue("ln")),
    MalformedCase("leading zero", phc(params: "ln=010,r=8,p=1"), .invalidParameterValue("ln")),
    MalformedCase("plus sign", phc(params: "ln=10,r=+8,p=1"), .invalidParameterValue("r")),
    MalformedCase("negative", phc(params: "ln=10,r=8,p=-1"), .invalidParameterValue("p")),
    MalformedCase("exponent", phc(params: "ln=1e1,r=8,p=1"), .invalidParameterValue("ln")),
    MalformedCase("hexadecimal", phc(params: "ln=0xA,r=8,p=1"), .invalidParameterValue("ln")),
    MalformedCase("second =", phc(params: "ln=10,r=8=8,p=1"), .invalidParameterValue("r")),
    MalformedCase("ten digits", phc(params: "ln=10,r=8,p=1000000000"), .invalidParameterValue("p")),
    MalformedCase("overflowing", phc(params: "ln=99999999999999999999,r=8,p=1"), .invalidParameterValue("ln")),
    // Parameter ranges
    MalformedCase(
        "ln=0", phc(params: "ln=0,r=8,p=1"),
        .unacceptableParameters(.outOfRange(parameter: "ln", value: 0, allowed: 1...30))),
    MalformedCase(
        "r=0", phc(params: "ln=10,r=0,p=1"),
        .unacceptableParameters(.outOfRange(parameter: "r", value: 0, allowed: 1...64))),
    MalformedCase(
        "r=65", phc(params: "ln=10,r=65,p=1"),
        .unacceptableParameters(.outOfRange(parameter: "r", value: 65, allowed: 1...64))),
    MalformedCase(
        "p=0", phc(params: "ln=10,r=8,p=0"),
        .unacceptableParameters(.outOfRange(parameter: "p", value: 0, allowed: 1...16))),
    MalformedCase(
        "p=17", phc(params: "ln=10,r=8,p=17"),
        .unacceptableParameters(.outOfRange(parameter: "p", value: 17, allowed: 1...16))),
    MalformedCase(
        "N too big for r=1", phc(params: "ln=16,r=1,p=1"),
        .unacceptableParameters(.outOfRange(parameter: "ln", value: 16, allowed: 1...15))),
    MalformedCase(
        "ln=31", phc(params: "ln=31,r=8,p=1"),
        .unacceptableParameters(.outOfRange(parameter: "ln", value: 31, allowed: 1...30))),
    MalformedCase(
        "2 GiB", phc(params: "ln=21,r=8,p=1"),
        .unacceptableParameters(.memoryLimitExceeded(bytes: 2 << 30, limit: 1 << 30))),
    MalformedCase(
        "128 GiB", phc(params: "ln=30,r=1,p=1"),
        .unacceptableParameters(.outOfRange(parameter: "ln", value: 30, allowed: 1...15))),
    MalformedCase(
        "64 GiB", phc(params: "ln=24,r=32,p=1"),
        .unacceptableParameters(.memoryLimitExceeded(bytes: 64 << 30, limit: 1 << 30))),
    // Salt
    MalformedCase("empty salt", phc(salt: ""), .invalidBase64(.salt)),
    MalformedCase("padded salt", phc(salt: validSalt + "=="), .invalidBase64(.salt)),
    MalformedCase("URL-safe salt", phc(salt: "AAECAwQFBgcICQoLDA0-_w"), .invalidBase64(.salt)),
    MalformedCase("salt with dot", phc(salt: "AAECAwQFBgcICQoLDA0.Dw"), .invalidBase64(.salt)),
    MalformedCase("salt of impossible length", phc(salt: validSalt + "AAA"), .invalidBase64(.salt)),
    MalformedCase("non-canonical salt", phc(salt: "AAECAwQFBgcICQoLDA0ODx"), .invalidBase64(.salt)),
    MalformedCase(
        "8-byte salt", phc(salt: base64(repeating: 7, count: 8)), .invalidLength(.salt, found: 8, allowed: 16...64)),
    MalformedCase(
        "15-byte salt", phc(salt: base64(repeating: 7, count: 15)), .invalidLength(.salt, found: 15, allowed: 16...64)),
    MalformedCase(
        "65-byte salt", phc(salt: base64(repeating: 7, count: 65)), .invalidLength(.salt, found: 65, allowed: 16...64)),
    // Hash
    MalformedCase("empty hash", phc(hash: ""), .invalidBase64(.hash)),
    MalformedCase("padded hash", phc(hash: validHash + "="), .invalidBase64(.hash)),
    MalformedCase("URL-safe hash", phc(hash: "mp90zEQd5XGhjEv4WArVH4Z0XRSzkGWtJK2S_AXJlRU"), .invalidBase64(.hash)),
    MalformedCase(
        "non-canonical hash", phc(hash: "mp90zEQd5XGhjEv4WArVH4Z0XRSzkGWtJK2S/AXJlRV"), .invalidBase64(.hash)),
    MalformedCase(
        "hash with newline inside", phc(hash: "mp90zEQd5XGhjEv4WArV\nH4Z0XRSzkGWtJK2S/AXJlRU"), .invalidCharacters),
    MalformedCase(
        "15-byte hash", phc(hash: base64(repeating: 9, count: 15)), .invalidLength(.hash, found: 15, allowed: 16...64)),
    MalformedCase(
        "65-byte hash", phc(hash: base64(repeating: 9, count: 65)), .invalidLength(.hash, found: 65, allowed: 16...64)),
]

@Suite("PHC strings")
struct PHCFormatTests {
    @Test("A valid PHC string parses into its parts and formats back unchanged")
    func roundTrip() throws {
        let parsed = try ScryptPasswordHash(phcString: pythonHash)
        #expect(parsed.parameters == cheapParameters)
        #expect(parsed.salt == Array(0..<16))
        #expect(parsed.hash.count == 32)
        #expect(parsed.phcString == pythonHash)
    }

    @Test(
        "Every accepted shape round-trips",
        arguments: [
            phc(params: "ln=1,r=1,p=1"),
            phc(params: "ln=15,r=1,p=16"),
            phc(params: "ln=20,r=8,p=1"),
            phc(
                params: "ln=17,r=8,p=1", salt: base64(repeating: 0xFF, count: 64), hash: base64(repeating: 0, count: 64)
            ),
            phc(salt: base64(repeating: 1, count: 17), hash: base64(repeating: 2, count: 16)),
            phc(salt: base64(repeating: 1, count: 18), hash: base64(repeating: 2, count: 33)),
        ])
    func acceptedShapes(input: String) throws {
        #expect(try ScryptPasswordHash(phcString: input).phcString == input)
    }

    @Test("Every malformed form is rejected with its reason", arguments: malformedCases)
    func rejected(testCase: MalformedCase) {
        #expect(malformedReason(testCase.input) == testCase.reason)
    }

    @Test("The longest valid string fits the length limit, and one byte over is rejected before parsing")
    func lengthLimit() throws {
        let longest = phc(
            params: "ln=30,r=64,p=16", salt: base64(repeating: 1, count: 64), hash: base64(repeating: 2, count: 64))
        #expect(longest.utf8.count <= ScryptPasswordHash.maximumEncodedLength)
        let padded = phc() + String(repeating: "A", count: ScryptPasswordHash.maximumEncodedLength - phc().count + 1)
        #expect(malformedReason(padded) == .tooLong(ScryptPasswordHash.maximumEncodedLength + 1))
    }

    @Test("The description names the parameters and lengths but not the salt or hash")
    func descriptionHidesSecrets() throws {
        let parsed = try ScryptPasswordHash(phcString: pythonHash)
        #expect(parsed.description == "$scrypt$ln=10,r=8,p=1 (salt 16 bytes, hash 32 bytes)")
    }

    @Test("Errors say what is wrong without quoting the stored value")
    func errorDescriptions() {
        let error = PasswordHashingError.malformedStoredHash(.invalidBase64(.hash))
        #expect(error.description == "malformed stored password hash: hash is not unpadded standard base64")
        #expect(error.localizedDescription == error.description)
        for testCase in malformedCases {
            let text = PasswordHashingError.malformedStoredHash(testCase.reason).description
            #expect(text.hasPrefix("malformed stored password hash: "))
            #expect(!text.contains(validSalt))
            #expect(!text.contains(validHash))
        }
        #expect(
            MalformedHashReason.invalidLength(.salt, found: 8, allowed: 16...64).description
                == "salt is 8 bytes, expected 16...64")
        #expect(
            PasswordHashingError.openSSLFailure(function: "RAND_bytes", message: "no entropy").description
                == "OpenSSL RAND_bytes failed: no entropy")
    }
}

@Suite("Scrypt parameters")
struct ScryptParametersTests {
    @Test("Valid parameters are kept and described in PHC form")
    func valid() throws {
        let parameters = try ScryptParameters(logN: 14, blockSize: 8, parallelism: 2)
        #expect(parameters.logN == 14)
        #expect(parameters.cost == 16_384)
        #expect(parameters.memoryBytes == 16 << 20)
        #expect(parameters.description == "ln=14,r=8,p=2")
        #expect(ScryptParameters.owaspMinimum.description == "ln=17,r=8,p=1")
    }

    @Test("The memory limit admits exactly 1 GiB")
    func memoryLimitBoundary() throws {
        #expect(try ScryptParameters(logN: 20, blockSize: 8, parallelism: 1).memoryBytes == 1 << 30)
        #expect(throws: PasswordHashingError.invalidParameters(.memoryLimitExceeded(bytes: 1 << 31, limit: 1 << 30))) {
            try ScryptParameters(logN: 20, blockSize: 16, parallelism: 1)
        }
    }

    @Test(
        "Out-of-range parameters are refused with the parameter and its range",
        arguments: [
            (0, 8, 1, ScryptParameters.Problem.outOfRange(parameter: "ln", value: 0, allowed: 1...30)),
            (-3, 8, 1, .outOfRange(parameter: "ln", value: -3, allowed: 1...30)),
            (10, 0, 1, .outOfRange(parameter: "r", value: 0, allowed: 1...64)),
            (10, -1, 1, .outOfRange(parameter: "r", value: -1, allowed: 1...64)),
            (10, 8, 0, .outOfRange(parameter: "p", value: 0, allowed: 1...16)),
            (10, 8, 100, .outOfRange(parameter: "p", value: 100, allowed: 1...16)),
            (16, 1, 1, .outOfRange(parameter: "ln", value: 16, allowed: 1...15)),
            (Int.max, 8, 1, .outOfRange(parameter: "ln", value: Int.max, allowed: 1...30)),
            (30, 64, 16, .memoryLimitExceeded(bytes: 1 << 43, limit: 1 << 30)),
        ])
    func refused(logN: Int, blockSize: Int, parallelism: Int, problem: ScryptParameters.Problem) {
        #expect(throws: PasswordHashingError.invalidParameters(problem)) {
            try ScryptParameters(logN: logN, blockSize: blockSize, parallelism: parallelism)
        }
    }

    @Test("Problems read clearly")
    func problemDescriptions() {
        #expect(
            PasswordHashingError.invalidParameters(.outOfRange(parameter: "p", value: 0, allowed: 1...16)).description
                == "invalid scrypt parameters: p=0 is outside 1...16")
        #expect(
            ScryptParameters.Problem.memoryLimitExceeded(bytes: 2048, limit: 1024).description
                == "scrypt would need 2048 bytes of memory, more than the limit of 1024")
    }
}
