import TestSupport

@testable import PasswordHashing

/// A valid stored hash made by Python's `hashlib.scrypt` (an independent
/// scrypt) for "correct horse battery staple", salt bytes 0...15, ln=10, r=8,
/// p=1, 32 bytes.
let pythonHash = "$scrypt$ln=10,r=8,p=1$AAECAwQFBgcICQoLDA0ODw$mp90zEQd5XGhjEv4WArVH4Z0XRSzkGWtJK2S/AXJlRU"

/// The same for "Pässwörd" in NFC.
let pythonNFCHash = "$scrypt$ln=10,r=8,p=1$AAECAwQFBgcICQoLDA0ODw$KDkyeU3LbSOVePGhNm++TgWHtY9bszjZNDcB51+LExY"

/// The reason a stored value was rejected, or nil if it was accepted.
func malformedReason(_ phcString: String) -> MalformedHashReason? {
    do {
        _ = try ScryptPasswordHash(phcString: phcString)
        return nil
    } catch PasswordHashingError.malformedStoredHash(let reason) {
        return reason
    } catch {
        return nil
    }
}

/// A PHC string for ``cheapParameters`` with the given fields.
func phc(
    params: String = "ln=10,r=8,p=1", salt: String = "AAECAwQFBgcICQoLDA0ODw",
    hash: String = "mp90zEQd5XGhjEv4WArVH4Z0XRSzkGWtJK2S/AXJlRU"
) -> String {
    "$scrypt$\(params)$\(salt)$\(hash)"
}

/// Unpadded standard base64 of `count` bytes of value `byte`.
func base64(repeating byte: UInt8, count: Int) -> String {
    Base64.encode([UInt8](repeating: byte, count: count))
}
