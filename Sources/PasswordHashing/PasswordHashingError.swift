import Foundation

/// An error from ``PasswordHasher`` or ``ScryptPasswordHash``.
///
/// Descriptions never contain a password, a salt or a hash, so they can be
/// logged:
///
/// ```text
/// malformed stored password hash: salt is not unpadded standard base64
/// ```
public enum PasswordHashingError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The stored value is not a PHC string this library can verify against.
    case malformedStoredHash(MalformedHashReason)
    /// Scrypt parameters given in code are out of the accepted range.
    case invalidParameters(ScryptParameters.Problem)
    /// OpenSSL reported a failure (out of memory, no entropy source...).
    ///
    /// - Parameters:
    ///   - function: the OpenSSL function that failed.
    ///   - message: OpenSSL's error text, or a generic one when its error
    ///     queue was empty.
    case openSSLFailure(function: String, message: String)

    public var description: String {
        switch self {
        case .malformedStoredHash(let reason):
            return "malformed stored password hash: \(reason)"
        case .invalidParameters(let problem):
            return "invalid scrypt parameters: \(problem)"
        case .openSSLFailure(let function, let message):
            return "OpenSSL \(function) failed: \(message)"
        }
    }

    public var errorDescription: String? { description }
}

/// Why a stored value was rejected by ``ScryptPasswordHash/init(phcString:)``.
public enum MalformedHashReason: Error, Sendable, Equatable, CustomStringConvertible {
    /// One of the two base64 fields of a PHC string.
    public enum Field: String, Sendable, Equatable {
        /// The salt (fourth field).
        case salt
        /// The derived hash (fifth field).
        case hash
    }

    /// The value is longer than any valid scrypt PHC string (the length found).
    case tooLong(Int)
    /// The value contains a space, a control character or a character
    /// outside ASCII.
    case invalidCharacters
    /// The value does not start with `$`.
    case missingLeadingDollar
    /// The value does not have exactly the five `$`-separated fields
    /// `""`, algorithm, parameters, salt, hash (the number found).
    case wrongFieldCount(Int)
    /// The algorithm identifier is not `scrypt`. The name is cut to 32
    /// characters.
    case unsupportedAlgorithm(String)
    /// The parameter field is not exactly `ln=<n>,r=<n>,p=<n>` in that order.
    case malformedParameterList
    /// A parameter's value is not a canonical decimal number (digits only, no
    /// sign, no leading zero, at most 9 digits): the parameter's name.
    case invalidParameterValue(String)
    /// The parameters are well-formed numbers but out of the accepted range.
    case unacceptableParameters(ScryptParameters.Problem)
    /// A field is empty, contains characters outside the standard base64
    /// alphabet, has padding, or is not the canonical encoding of its bytes.
    case invalidBase64(Field)
    /// A field decodes to a number of bytes outside the accepted range.
    case invalidLength(Field, found: Int, allowed: ClosedRange<Int>)

    public var description: String {
        switch self {
        case .tooLong(let length):
            return "\(length) bytes long, more than the \(ScryptPasswordHash.maximumEncodedLength) of any valid value"
        case .invalidCharacters:
            return "contains spaces, control characters or characters outside ASCII"
        case .missingLeadingDollar:
            return "does not start with \"$\""
        case .wrongFieldCount(let count):
            return "has \(count) \"$\"-separated fields, expected $scrypt$<parameters>$<salt>$<hash>"
        case .unsupportedAlgorithm(let name):
            return "algorithm \"\(name)\" is not supported, expected \"scrypt\""
        case .malformedParameterList:
            return "parameters are not of the form ln=<n>,r=<n>,p=<n>"
        case .invalidParameterValue(let name):
            return "parameter \(name) is not a canonical decimal number"
        case .unacceptableParameters(let problem):
            return problem.description
        case .invalidBase64(let field):
            return "\(field.rawValue) is not unpadded standard base64"
        case .invalidLength(let field, let found, let allowed):
            return "\(field.rawValue) is \(found) bytes, expected \(allowed.lowerBound)...\(allowed.upperBound)"
        }
    }
}
