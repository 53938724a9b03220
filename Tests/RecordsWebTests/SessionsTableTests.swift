import Foundation
import Testing

@testable import RecordsApp
@testable import RecordsWeb

@Suite("Accounts: the sessions table's browser names and times")
struct SessionsTableTests {
    static let agents: [(agent: String, name: String)] = [
        (
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
            "Chrome on Linux"
        ),
        (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
                + "Safari/537.36 Edg/131.0.2903.86", "Edge on Windows"
        ),
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox on Windows"),
        (
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 "
                + "Safari/605.1.15", "Safari on macOS"
        ),
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                + "Version/18.1 Mobile/15E148 Safari/604.1", "Safari on iOS"
        ),
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                + "CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1", "Chrome on iOS"
        ),
        (
            "Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 "
                + "Mobile/15E148 Safari/604.1", "Safari on iPadOS"
        ),
        (
            "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.81 "
                + "Mobile Safari/537.36", "Chrome on Android"
        ),
        (
            "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) "
                + "SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36", "Samsung Internet on Android"
        ),
        ("Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0", "Firefox on Android"),
        (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
                + "Safari/537.36 OPR/115.0.0.0", "Opera on Windows"
        ),
        (
            "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
                + "Safari/537.36", "Chrome on ChromeOS"
        ),
        ("Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox on Linux"),
        ("curl/8.5.0", "curl"),
    ]

    @Test("The common browsers and systems are named as people call them", arguments: agents)
    func commonBrowsersAreNamed(agent: String, name: String) {
        #expect(BrowserName(agent).description == name)
    }

    @Test(
        "A header that names no known browser is an unknown browser", arguments: ["", "SomeBot", "%%%", "Mozilla/5.0"])
    func unknownHeadersAreAnUnknownBrowser(agent: String) {
        #expect(BrowserName(agent).description == "Unknown browser")
    }

    @Test func noHeaderIsAnUnknownBrowser() {
        #expect(BrowserName(nil).description == "Unknown browser")
    }

    @Test func aKnownSystemWithAnUnknownBrowserKeepsTheSystem() {
        #expect(BrowserName("MyApp/1.0 (Windows NT 10.0)").description == "Unknown browser on Windows")
    }

    @Test func relativeTimesUseTheLargestWholeUnit() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        #expect(relativeTime(now, now: now) == "just now")
        #expect(relativeTime(now.addingTimeInterval(-59), now: now) == "just now")
        #expect(relativeTime(now.addingTimeInterval(-60), now: now) == "1 minute ago")
        #expect(relativeTime(now.addingTimeInterval(-7_200), now: now) == "2 hours ago")
        #expect(relativeTime(now.addingTimeInterval(-86_400 * 3 - 5), now: now) == "3 days ago")
    }

    @Test func aMomentInTheFutureIsJustNow() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        #expect(relativeTime(now.addingTimeInterval(3_600), now: now) == "just now")
    }

    static func session(userAgent: String?, address: String? = "192.0.2.7") -> Session {
        Session(
            id: 4, userID: 1, createdAt: Date(timeIntervalSince1970: 1_700_000_000),
            lastSeenAt: Date(timeIntervalSince1970: 1_700_003_600), userAgent: userAgent, clientAddress: address)
    }

    @Test func aRowShowsTheNameWithTheRawHeaderInItsTitle() {
        let agent = "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0.0.0 Safari/537.36"
        let row = AccountPageHandlers.sessionRow(
            Self.session(userAgent: agent), current: false, now: Date(timeIntervalSince1970: 1_700_007_200)
        ).markup
        #expect(row.contains("<span class=\"browser\" title=\"\(agent)\">Chrome on Linux</span>"))
        // The address wraps only where a line must (main's break-word), never
        // letter by letter: it is no `long-value`.
        #expect(row.contains("<td data-label=\"Address\">192.0.2.7</td>"))
        #expect(row.contains(">2 hours ago</time><span class=\"absolute\">2023-11-14 22:13:20 UTC</span>"))
        #expect(row.contains(">1 hour ago</time><span class=\"absolute\">2023-11-14 23:13:20 UTC</span>"))
        #expect(row.contains("datetime=\"2023-11-14T22:13:20Z\""))
        #expect(row.contains(">End</a>"))
    }

    @Test func aHostileHeaderIsEscapedInTheTitle() {
        let agent = "\"><script>alert(1)</script>"
        let row = AccountPageHandlers.sessionRow(
            Self.session(userAgent: agent), current: true, now: Date(timeIntervalSince1970: 1_700_007_200)
        ).markup
        #expect(!row.contains("<script>"))
        #expect(row.contains("title=\"&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\">Unknown browser</span>"))
        #expect(row.contains(" (this browser)") && row.contains(">Log out</a>"))
    }

    @Test func aRowWithoutHeaderOrAddressSaysSo() {
        let row = AccountPageHandlers.sessionRow(
            Self.session(userAgent: nil, address: nil), current: false, now: Date(timeIntervalSince1970: 1_700_007_200)
        ).markup
        #expect(row.contains("<span class=\"browser\">Unknown browser</span>"))
        #expect(!row.contains("title=\"\">"))
        #expect(row.contains(">unknown</td>"))
    }

    @Test func theStyleBreaksLongValuesOnlyWhereAsked() throws {
        // The style sheet as the source has it (the server sends it as it is).
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/RecordsWeb/Resources/style.css")
        let css = try String(contentsOf: path, encoding: .utf8)
        let main = try #require(css.split(separator: "\n").first { $0.hasPrefix("main {") })
        #expect(!main.contains("anywhere"))
        #expect(css.contains(".long-value"))
        #expect(css.contains("table.stacked"))
    }
}
