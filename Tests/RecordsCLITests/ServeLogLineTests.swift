import Foundation
import Testing

@testable import records

/// The server's log line: its time as Foundation's ISO 8601 style writes
/// it, and its message cleaned of control characters.
@Suite("records serve: log lines")
struct ServeLogLineTests {
    @Test(
        "The time is ISO 8601 in UTC with milliseconds, as Foundation writes it",
        arguments: [
            0.0, 0.1234, 59.9994, 951_782_400.5004,  // 2000-02-29, a leap day of a century year
            1_709_164_800.0014,  // 2024-02-29
            1_796_284_800.9994,  // 2026-12-03
            4_107_542_399.9994,  // 2100-02-28, the last second before a day a century skips
            4_107_542_400.0004, -1.2496,  // 1969-12-31T23:59:58.750
            -86_399.9996, -2_208_988_799.9996, 253_402_300_799.9994,  // 9999-12-31T23:59:59.999
        ])
    func timestamp(_ seconds: TimeInterval) {
        let date = Date(timeIntervalSince1970: seconds)
        #expect(logTimestamp(date) == date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
    }

    @Test("A message is one line: control characters and direction overrides are escaped, plain text kept")
    func message() {
        let date = Date(timeIntervalSince1970: 0)
        #expect(
            serveLogLine("GET /api/v1/people/5 200 0.4ms", at: date)
                == "1970-01-01T00:00:00.000Z records serve: GET /api/v1/people/5 200 0.4ms")
        #expect(
            serveLogLine("a\nb\tc\u{7F}\u{202E}é", at: date)
                == "1970-01-01T00:00:00.000Z records serve: a\\nb\\tc\\u{7F}\\u{202E}é")
    }
}
