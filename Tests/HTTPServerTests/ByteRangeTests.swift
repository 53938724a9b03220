import HTTPServer
import Testing

/// `Range` headers (RFC 9110, section 14.2) against a resource's size.
@Suite struct ByteRangeTests {
    @Test(arguments: [
        ("bytes=0-99", 0...99),
        ("bytes=100-", 100...999),
        ("bytes=-50", 950...999),
        ("bytes=900-2000", 900...999),
        ("bytes=999-999", 999...999),
        ("bytes=-5000", 0...999),
        ("Bytes = 10-19 ", 10...19),
        ("bytes=10-19,", 10...19),
        ("bytes=0-99999999999999999999999", 0...999),
        ("bytes=-99999999999999999999999", 0...999),
    ])
    func aSingleRangeIsTheBytesItNamesWithinTheResource(header: String, expected: ClosedRange<Int>) {
        #expect(ByteRange.parse(header, size: 1000) == .partial(expected))
    }

    @Test(arguments: [
        ("bytes=1000-", 1000),
        ("bytes=1000-2000", 1000),
        ("bytes=5000-5001", 1000),
        ("bytes=99999999999999999999999-", 1000),
        ("bytes=-0", 1000),
        ("bytes=0-", 0),
        ("bytes=0-0", 0),
        ("bytes=-10", 0),
    ])
    func aRangeStartingAtOrPastTheEndIsUnsatisfiable(header: String, size: Int) {
        #expect(ByteRange.parse(header, size: size) == .unsatisfiable)
    }

    @Test(arguments: [
        nil, "", "bytes", "bytes=", "bytes=-", "bytes=a-b", "bytes=5-1", "bytes=+1-5", "bytes=1-+5", "bytes=0x10-",
        "bytes=1 -5", "bytes=1-2-3", "bytes=--5", "items=0-10", "bytes 0-10", "bytes=0-10,20-30", "bytes=-5,0-1",
        "bytes=0-10, 5000-",
    ])
    func aMalformedOrMultipleRangeHeaderIsIgnored(header: String?) {
        #expect(ByteRange.parse(header, size: 1000) == .whole)
    }

    @Test func aNegativeSizeCountsAsEmpty() {
        #expect(ByteRange.parse("bytes=0-", size: -1) == .unsatisfiable)
    }
}
