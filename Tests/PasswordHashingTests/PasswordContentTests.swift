import TestSupport
import Testing

@testable import PasswordHashing

@Suite("Passwords as text and bytes")
struct PasswordContentTests {
    let composed = "P\u{E4}ssw\u{F6}rd"  // "Pässwörd" with precomposed ä and ö (NFC)
    let decomposed = "Pa\u{308}sswo\u{308}rd"  // the same characters as a/o + combining diaeresis (NFD)

    @Test("Composed and decomposed forms of a password are the same password (NFC)")
    func normalisedToNFC() throws {
        #expect(Array(composed.utf8) != Array(decomposed.utf8))
        let stored = try cheapHasher.hash(decomposed)
        #expect(try cheapHasher.verify(composed, against: stored))
        #expect(try cheapHasher.verify(decomposed, against: stored))
        #expect(try !cheapHasher.verify("Passwords", against: stored))
    }

    @Test("A String password is hashed as its NFC form in UTF-8, as an independent scrypt of those bytes")
    func nfcBytesMatchIndependentHash() throws {
        #expect(PasswordHasher.normalizedBytes(decomposed) == Array(composed.utf8))
        #expect(try cheapHasher.verify(decomposed, against: pythonNFCHash))
        #expect(try cheapHasher.verify(passwordBytes: Array(composed.utf8), against: pythonNFCHash))
    }

    @Test("The bytes variants use the bytes unchanged: NFD bytes do not match an NFC hash")
    func bytesAreNotNormalised() throws {
        #expect(try !cheapHasher.verify(passwordBytes: Array(decomposed.utf8), against: pythonNFCHash))
        let stored = try cheapHasher.hash(passwordBytes: Array(decomposed.utf8))
        #expect(try cheapHasher.verify(passwordBytes: Array(decomposed.utf8), against: stored))
        #expect(try !cheapHasher.verify(composed, against: stored))
    }

    @Test("Non-text bytes, including NUL and invalid UTF-8, are hashed whole")
    func arbitraryBytes() throws {
        let bytes: [UInt8] = [0xFF, 0x00, 0xFE, 0x00, 0x80]
        let stored = try cheapHasher.hash(passwordBytes: bytes)
        #expect(try cheapHasher.verify(passwordBytes: bytes, against: stored))
        #expect(try !cheapHasher.verify(passwordBytes: [0xFF], against: stored))
        #expect(try !cheapHasher.verify(passwordBytes: Array(bytes.dropLast()), against: stored))
    }

    @Test("A NUL inside a password does not cut it short")
    func embeddedNUL() throws {
        let stored = try cheapHasher.hash("abc\u{0}def")
        #expect(try cheapHasher.verify("abc\u{0}def", against: stored))
        #expect(try !cheapHasher.verify("abc", against: stored))
        #expect(try !cheapHasher.verify("abc\u{0}deg", against: stored))
    }

    @Test(
        "Unicode passwords beyond Latin verify and differ from near neighbours",
        arguments: [
            ("\u{5BC6}\u{7801}\u{5B89}\u{5168}", "\u{5BC6}\u{7801}\u{5B89}"),  // CJK
            ("\u{1F512}\u{1F511}\u{1F468}\u{200D}\u{1F4BB}", "\u{1F512}\u{1F511}\u{1F468}"),  // emoji, ZWJ sequence
            ("\u{43F}\u{430}\u{440}\u{43E}\u{43B}\u{44C}", "\u{43F}\u{430}\u{440}\u{43E}\u{43B}"),  // Cyrillic
            ("\u{645}\u{631}\u{648}\u{631}", "\u{645}\u{631}\u{648}"),  // Arabic
        ])
    func unicodePasswords(password: String, neighbour: String) throws {
        let stored = try cheapHasher.hash(password)
        #expect(try cheapHasher.verify(password, against: stored))
        #expect(try !cheapHasher.verify(neighbour, against: stored))
    }

    @Test("Case and compatibility forms are not folded: only canonical equivalence is")
    func noCaseOrCompatibilityFolding() throws {
        let stored = try cheapHasher.hash("\u{FB01}le")  // "ﬁle" with the fi ligature
        #expect(try !cheapHasher.verify("file", against: stored))
        #expect(try !cheapHasher.verify("\u{FB01}LE", against: stored))
    }

    @Test("The empty password can be hashed and matches only itself")
    func emptyPassword() throws {
        let stored = try cheapHasher.hash("")
        #expect(try cheapHasher.verify("", against: stored))
        #expect(try cheapHasher.verify(passwordBytes: [], against: stored))
        #expect(try !cheapHasher.verify(" ", against: stored))
        let other = try cheapHasher.hash("x")
        #expect(try !cheapHasher.verify("", against: other))
    }

    @Test("Trailing NUL bytes do not change a password shorter than 64 bytes, as in any scrypt (HMAC pads keys)")
    func trailingNULsAreScryptEquivalent() throws {
        // Documented on PasswordHasher; Python's hashlib.scrypt agrees.
        let stored = try cheapHasher.hash("")
        #expect(try cheapHasher.verify("\u{0}", against: stored))
        #expect(try cheapHasher.verify(passwordBytes: [0, 0], against: stored))
        #expect(try !cheapHasher.verify("\u{0}x", against: stored))
        let short = try cheapHasher.hash("abc")
        #expect(try cheapHasher.verify("abc\u{0}", against: short))
        // Past HMAC's 64-byte block the key is hashed first, so NULs count.
        let long = String(repeating: "a", count: 64)
        let longStored = try cheapHasher.hash(long)
        #expect(try !cheapHasher.verify(long + "\u{0}", against: longStored))
    }

    @Test("A very long password verifies, and a change in its last byte is noticed")
    func longPassword() throws {
        let password = String(repeating: "0123456789", count: 100_000) + "!"  // 1 MB
        let stored = try cheapHasher.hash(password)
        #expect(try cheapHasher.verify(password, against: stored))
        #expect(try !cheapHasher.verify(String(password.dropLast()) + "?", against: stored))
        #expect(try !cheapHasher.verify(String(password.dropLast()), against: stored))
    }
}
