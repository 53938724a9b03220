/// The cost parameters of scrypt (RFC 7914): CPU/memory cost `N = 2^logN`,
/// block size `r` and parallelism `p`.
///
/// One derivation needs about `128 × r × N` bytes of memory and time
/// proportional to `N × r × p`. Every value is checked when it is created, so
/// a `ScryptParameters` is always safe to run: memory is capped at
/// ``maximumMemory`` (1 GiB) whether the parameters come from code or from a
/// stored hash someone may have tampered with.
///
/// ```swift
/// let fast = try ScryptParameters(logN: 10, blockSize: 8, parallelism: 1)  // tests only
/// let hasher = PasswordHasher(parameters: .owaspMinimum)
/// ```
public struct ScryptParameters: Sendable, Hashable, CustomStringConvertible {
    /// Why a set of parameters was refused.
    public enum Problem: Sendable, Equatable, CustomStringConvertible {
        /// A parameter (named as in the PHC string: `ln`, `r` or `p`) is outside
        /// its allowed range. The range of `ln` depends on `r`: scrypt needs
        /// `N < 2^(16r)`.
        case outOfRange(parameter: String, value: Int, allowed: ClosedRange<Int>)
        /// `128 × r × N` exceeds ``ScryptParameters/maximumMemory`` (both in bytes).
        case memoryLimitExceeded(bytes: Int, limit: Int)

        public var description: String {
            switch self {
            case .outOfRange(let parameter, let value, let allowed):
                return "\(parameter)=\(value) is outside \(allowed.lowerBound)...\(allowed.upperBound)"
            case .memoryLimitExceeded(let bytes, let limit):
                return "scrypt would need \(bytes) bytes of memory, more than the limit of \(limit)"
            }
        }
    }

    /// log2 of the CPU/memory cost `N` (the PHC parameter `ln`).
    public let logN: Int
    /// The block size `r`.
    public let blockSize: Int
    /// The parallelism `p`.
    public let parallelism: Int

    /// The accepted `ln`, before the `r`-dependent bound and the memory limit
    /// are applied.
    public static let logNRange: ClosedRange<Int> = 1...30
    /// The accepted block sizes `r`.
    public static let blockSizeRange: ClosedRange<Int> = 1...64
    /// The accepted parallelism `p`: enough for any sensible setting, small
    /// enough that a tampered hash cannot ask for hours of work.
    public static let parallelismRange: ClosedRange<Int> = 1...16
    /// The most memory (`128 × r × N` bytes) one derivation may use: 1 GiB,
    /// which admits RFC 7914's strongest example (`N = 2^20`, `r = 8`).
    public static let maximumMemory = 1 << 30

    /// OWASP's minimum recommendation for scrypt, and the default:
    /// `N = 2^17`, `r = 8`, `p = 1` (128 MiB per derivation).
    public static let owaspMinimum = ScryptParameters(uncheckedLogN: 17, blockSize: 8, parallelism: 1)

    /// Creates parameters, checking every value.
    ///
    /// - Throws: ``PasswordHashingError/invalidParameters(_:)`` when a value is
    ///   out of range or the memory needed exceeds ``maximumMemory``.
    public init(logN: Int, blockSize: Int, parallelism: Int) throws {
        if let problem = Self.problem(logN: logN, blockSize: blockSize, parallelism: parallelism) {
            throw PasswordHashingError.invalidParameters(problem)
        }
        self.init(uncheckedLogN: logN, blockSize: blockSize, parallelism: parallelism)
    }

    /// Creates parameters already checked with ``problem(logN:blockSize:parallelism:)``.
    init(uncheckedLogN logN: Int, blockSize: Int, parallelism: Int) {
        self.logN = logN
        self.blockSize = blockSize
        self.parallelism = parallelism
    }

    /// The first reason these values cannot be used, or nil when they can.
    static func problem(logN: Int, blockSize: Int, parallelism: Int) -> Problem? {
        guard blockSizeRange.contains(blockSize) else {
            return .outOfRange(parameter: "r", value: blockSize, allowed: blockSizeRange)
        }
        // RFC 7914 requires N < 2^(128 * r / 8); OpenSSL enforces it.
        let logNAllowed = logNRange.lowerBound...min(logNRange.upperBound, 16 * blockSize - 1)
        guard logNAllowed.contains(logN) else {
            return .outOfRange(parameter: "ln", value: logN, allowed: logNAllowed)
        }
        guard parallelismRange.contains(parallelism) else {
            return .outOfRange(parameter: "p", value: parallelism, allowed: parallelismRange)
        }
        // Cannot overflow: at most 128 * 64 * 2^30 = 2^43.
        let bytes = (128 * blockSize) << logN
        guard bytes <= maximumMemory else {
            return .memoryLimitExceeded(bytes: bytes, limit: maximumMemory)
        }
        return nil
    }

    /// The CPU/memory cost `N = 2^logN`.
    public var cost: Int { 1 << logN }

    /// The memory one derivation needs, `128 × r × N` bytes.
    public var memoryBytes: Int { (128 * blockSize) << logN }

    /// The `maxmem` given to OpenSSL: what its scrypt allocates for these
    /// parameters (`128·r·(N + 2)` for V plus `128·r·p` for B) with a margin.
    /// OpenSSL's own default (32 MiB) is too low for the OWASP parameters.
    var openSSLMaxMemory: UInt64 {
        UInt64(128 * blockSize * (cost + 2 + parallelism)) + (1 << 20)
    }

    /// The PHC parameter list: `ln=17,r=8,p=1`.
    public var description: String { "ln=\(logN),r=\(blockSize),p=\(parallelism)" }
}
