import PasswordHashing

/// Scrypt parameters cheap enough (1 MiB, about a millisecond) for tests
/// that do not test the cost itself.
public let cheapParameters: ScryptParameters = {
    do {
        return try ScryptParameters(logN: 10, blockSize: 8, parallelism: 1)
    } catch {
        fatalError("the cheap test parameters are valid: \(error)")
    }
}()

/// A hasher with ``cheapParameters``.
public let cheapHasher = PasswordHasher(parameters: cheapParameters)
