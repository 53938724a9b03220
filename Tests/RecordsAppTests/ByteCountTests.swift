import RecordsApp
import Testing

@Suite("ByteCount: one size format, in binary units")
struct ByteCountTests {
    @Test func smallSizesAreExactBytes() {
        #expect(ByteCount.text(0) == "0 bytes")
        #expect(ByteCount.text(1) == "1 byte")
        #expect(ByteCount.text(1023) == "1,023 bytes")
    }

    @Test func largerSizesUseBinaryMultiplesWithTheExactCount() {
        #expect(ByteCount.text(1024) == "1.0 KiB (1,024 bytes)")
        #expect(ByteCount.text(200_704) == "196.0 KiB (200,704 bytes)")
        #expect(ByteCount.text(30 << 20) == "30.0 MiB (31,457,280 bytes)")
        #expect(ByteCount.text(3 << 30) == "3.0 GiB (3,221,225,472 bytes)")
    }

    @Test func aPicturesSizeIsTheSameFormat() {
        #expect(CoffeePicture.sizeText(12_345) == ByteCount.text(12_345))
    }
}
