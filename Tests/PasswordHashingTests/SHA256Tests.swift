import Testing

@testable import PasswordHashing

@Suite("SHA-256")
struct SHA256Tests {
    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }

    // FIPS 180-4's examples (empty, "abc", a million "a"), cross-checked with Python's hashlib.
    @Test(
        "The digest matches the published test vectors",
        arguments: [
            ([UInt8](), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            (Array("abc".utf8), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                [UInt8](repeating: 0x61, count: 1_000_000),
                "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
            ),
            ((0...255).map { UInt8($0) }, "40aff2e9d2d8922e47afd4648e6967497158785fbd1da870e7110266bf944880"),
        ])
    func vectors(input: [UInt8], expected: String) throws {
        let digest = try SHA256.digest(input)
        #expect(digest.count == SHA256.byteCount)
        #expect(hex(digest) == expected)
    }

    @Test("Inputs that differ in one bit have unrelated digests")
    func oneBitChanges() throws {
        let a = try SHA256.digest([0x00])
        let b = try SHA256.digest([0x01])
        #expect(a != b)
        #expect(zip(a, b).filter { $0 == $1 }.count < 8)
    }
}
