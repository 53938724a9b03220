import Foundation

/// A stored scrypt password hash, parsed from and formatted as a PHC string:
///
/// ```text
/// $scrypt$ln=17,r=8,p=1$<salt>$<hash>
/// ```
///
/// The salt and hash are standard base64 without padding, as the PHC string
/// format specifies. Parsing is strict: exactly these five fields, the
/// parameters in this order as canonical decimals within
/// ``ScryptParameters``' limits, canonical base64, and salt and hash lengths
/// in ``saltLengthRange`` and ``hashLengthRange``. Anything else throws
/// ``PasswordHashingError/malformedStoredHash(_:)``; nothing crashes.
///
/// The description shows only the parameters and lengths, never the salt or
/// hash; ``phcString`` is the value to store.
public struct ScryptPasswordHash: Sendable, CustomStringConvertible {
    /// The parameters the hash was derived with.
    public let parameters: ScryptParameters
    /// The random salt.
    public let salt: [UInt8]
    /// The derived key; its length is the length to derive when verifying.
    public let hash: [UInt8]

    /// The accepted salt lengths in bytes.
    public static let saltLengthRange: ClosedRange<Int> = 16...64
    /// The accepted hash lengths in bytes.
    public static let hashLengthRange: ClosedRange<Int> = 16...64
    /// An upper bound on the length of any valid PHC string, checked before
    /// any other parsing so huge inputs are rejected at once.
    public static let maximumEncodedLength = 256

    /// The PHC algorithm identifier.
    static let algorithm = "scrypt"

    /// Creates a value from parts the caller has already validated.
    init(parameters: ScryptParameters, salt: [UInt8], hash: [UInt8]) {
        self.parameters = parameters
        self.salt = salt
        self.hash = hash
    }

    /// Parses a stored PHC string.
    ///
    /// - Throws: ``PasswordHashingError/malformedStoredHash(_:)`` with the
    ///   first problem found.
    public init(phcString: String) throws {
        do {
            self = try Self.parse(phcString)
        } catch {
            throw PasswordHashingError.malformedStoredHash(error)
        }
    }

    /// The PHC string to store: `$scrypt$ln=17,r=8,p=1$<salt>$<hash>`.
    public var phcString: String {
        "$\(Self.algorithm)$\(parameters)$\(Base64.encode(salt))$\(Base64.encode(hash))"
    }

    public var description: String {
        "$\(Self.algorithm)$\(parameters) (salt \(salt.count) bytes, hash \(hash.count) bytes)"
    }

    private static func parse(_ text: String) throws(MalformedHashReason) -> ScryptPasswordHash {
        let utf8 = text.utf8
        guard utf8.count <= maximumEncodedLength else { throw .tooLong(utf8.count) }
        // Printable ASCII without space: what the PHC format allows.
        guard utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else { throw .invalidCharacters }
        guard text.first == "$" else { throw .missingLeadingDollar }
        let fields = text.split(separator: "$", omittingEmptySubsequences: false)
        // The leading "$" makes at least two fields. The algorithm comes first:
        // other algorithms' strings have other shapes.
        guard fields[1] == algorithm else { throw .unsupportedAlgorithm(String(fields[1].prefix(32))) }
        guard fields.count == 5 else { throw .wrongFieldCount(fields.count) }
        let parameters = try parseParameters(fields[2])
        let salt = try decode(fields[3], as: .salt, allowed: saltLengthRange)
        let hash = try decode(fields[4], as: .hash, allowed: hashLengthRange)
        return ScryptPasswordHash(parameters: parameters, salt: salt, hash: hash)
    }

    private static func parseParameters(_ text: Substring) throws(MalformedHashReason) -> ScryptParameters {
        let pairs = text.split(separator: ",", omittingEmptySubsequences: false)
        let names = ["ln", "r", "p"]
        guard pairs.count == names.count else { throw .malformedParameterList }
        var values: [Int] = []
        for (pair, name) in zip(pairs, names) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == name else { throw .malformedParameterList }
            guard let value = canonicalDecimal(parts[1]) else { throw .invalidParameterValue(name) }
            values.append(value)
        }
        if let problem = ScryptParameters.problem(logN: values[0], blockSize: values[1], parallelism: values[2]) {
            throw .unacceptableParameters(problem)
        }
        return ScryptParameters(uncheckedLogN: values[0], blockSize: values[1], parallelism: values[2])
    }

    /// A decimal with no sign, no leading zero (except "0" itself) and at
    /// most 9 digits, as the PHC format requires; nil otherwise.
    private static func canonicalDecimal(_ text: Substring) -> Int? {
        let digits = text.utf8
        guard (1...9).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        guard digits.first != 0x30 || digits.count == 1 else { return nil }
        return Int(text)
    }

    private static func decode(
        _ text: Substring, as field: MalformedHashReason.Field, allowed: ClosedRange<Int>
    ) throws(MalformedHashReason) -> [UInt8] {
        guard let bytes = Base64.decode(text) else { throw .invalidBase64(field) }
        guard allowed.contains(bytes.count) else { throw .invalidLength(field, found: bytes.count, allowed: allowed) }
        return bytes
    }
}

/// Standard base64 without padding, as in PHC strings.
enum Base64 {
    static func encode(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        while text.last == "=" { text.removeLast() }
        return text
    }

    /// The bytes of a canonical unpadded encoding; nil for anything else
    /// (empty, padding, other characters, impossible length, or non-zero
    /// unused bits, which would let two strings stand for the same bytes).
    static func decode(_ text: Substring) -> [UInt8]? {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count % 4 != 1 else { return nil }
        guard utf8.allSatisfy(isAlphabet) else { return nil }
        let padded = String(text) + String(repeating: "=", count: (4 - utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: padded) else { return nil }
        let bytes = [UInt8](data)
        guard encode(bytes).utf8.elementsEqual(utf8) else { return nil }
        return bytes
    }

    private static func isAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }
}
