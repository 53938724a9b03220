// Fuzz target: the PHC string parser of stored password hashes
// (Sources/PasswordHashing/ScryptPasswordHash.swift).
//
// Input: the stored hash, as text.
// Invariants: parsing never traps; a string that parses is canonical, so
// formatting the parsed value gives the very same string back; a parsed
// hash's description never shows its salt or hash; `needsRehash` agrees
// with the parser. A parsed hash whose parameters are cheap is verified,
// which must not trap either.

import Foundation
import PasswordHashing

private let hasher = PasswordHasher()
private let cheap = try! ScryptParameters(logN: 4, blockSize: 1, parallelism: 1)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let parsed: ScryptPasswordHash
    do {
        parsed = try ScryptPasswordHash(phcString: text)
    } catch let error as PasswordHashingError {
        guard case .malformedStoredHash = error else {
            require(false, "unexpected error kind for \(text.debugDescription): \(error)")
            return 0
        }
        _ = error.description
        require((try? hasher.needsRehash(text)) == nil, "needsRehash accepted what the parser refused")
        return 0
    } catch {
        require(false, "unexpected error type \(type(of: error)): \(error)")
        return 0
    }
    require(parsed.phcString == text, "not canonical: \(text.debugDescription) -> \(parsed.phcString.debugDescription)")
    require(
        ScryptPasswordHash.saltLengthRange.contains(parsed.salt.count)
            && ScryptPasswordHash.hashLengthRange.contains(parsed.hash.count), "lengths out of range")
    let fields = text.split(separator: "$")
    let description = parsed.description
    for secret in fields.suffix(2) {
        require(!description.contains(secret), "description shows the salt or hash: \(description)")
    }
    require((try? hasher.needsRehash(text)) != nil, "needsRehash refused what the parser accepted")
    if parsed.parameters.memoryBytes <= cheap.memoryBytes * 4 && parsed.parameters.parallelism <= 2 {
        let matches = try? PasswordHasher(parameters: cheap).verify("fuzz", against: text)
        require(matches != nil, "verification failed on a valid hash")
    }
    return 0
}
