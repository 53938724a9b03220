import Foundation

/// A short name for the browser and system a `User-Agent` header names,
/// such as "Chrome on Linux", for the account page's list of sessions.
///
/// People recognise their devices by browser and system; the raw header
/// ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 …") tells them
/// little and is long. Only the common browsers and systems are told
/// apart, by the tokens their headers carry; anything else is "Unknown
/// browser". The name is a hint, not proof: any program can send any
/// header.
///
/// ```swift
/// BrowserName("Mozilla/5.0 (Windows NT 10.0; Win64; x64) … Firefox/128.0").description
/// // "Firefox on Windows"
/// ```
struct BrowserName: Sendable, Equatable, CustomStringConvertible {
    /// The browser ("Chrome"), or nil when it is not one of those known.
    let browser: String?
    /// The operating system ("Linux"), or nil when it is not one of those
    /// known.
    let system: String?

    /// Reads the browser and system from a `User-Agent` header; nil or an
    /// empty header names neither.
    init(_ userAgent: String?) {
        let agent = userAgent ?? ""
        browser = Self.first(Self.browsers, in: agent)
        system = Self.first(Self.systems, in: agent)
    }

    /// "Chrome on Linux", "Chrome" when the system is unknown, "Unknown
    /// browser" when the browser is, with " on Linux" when the system is
    /// known.
    var description: String {
        let name = browser ?? "Unknown browser"
        return system.map { "\(name) on \($0)" } ?? name
    }

    /// A name and the tokens, any of which names it.
    private typealias Rule = (name: String, tokens: [String])

    /// Browsers, most specific first: Edge, Opera and Samsung Internet
    /// also say "Chrome/" and "Safari/", Chrome also says "Safari/", so
    /// each must be tried before those it imitates.
    private static let browsers: [Rule] = [
        ("Edge", ["Edg/", "EdgA/", "EdgiOS/", "Edge/"]),
        ("Opera", ["OPR/", "OPX/", "Opera/", "Opera "]),
        ("Samsung Internet", ["SamsungBrowser/"]),
        ("Vivaldi", ["Vivaldi/"]),
        ("Firefox", ["Firefox/", "FxiOS/"]),
        ("Chromium", ["Chromium/"]),
        ("Chrome", ["CriOS/", "Chrome/", "HeadlessChrome/"]),
        ("Safari", ["Version/"]),
        ("curl", ["curl/"]),
        ("Wget", ["Wget/"]),
    ]

    /// Systems, most specific first: Android says "Linux", iOS says "like
    /// Mac OS X", ChromeOS says "X11".
    private static let systems: [Rule] = [
        ("Android", ["Android"]),
        ("iOS", ["iPhone", "iPod"]),
        ("iPadOS", ["iPad"]),
        ("ChromeOS", ["CrOS"]),
        ("Windows", ["Windows"]),
        ("macOS", ["Macintosh", "Mac OS X"]),
        ("Linux", ["Linux", "X11"]),
    ]

    private static func first(_ rules: [Rule], in agent: String) -> String? {
        rules.first { rule in rule.tokens.contains { agent.contains($0) } }?.name
    }
}

/// How long ago a moment was, in the largest whole unit: "just now",
/// "1 minute ago", "3 hours ago", "12 days ago"; a moment in the future
/// (a clock set differently) is "just now".
func relativeTime(_ date: Date, now: Date) -> String {
    let seconds = Int(now.timeIntervalSince(date))
    let units: [(name: String, seconds: Int)] = [("day", 86_400), ("hour", 3_600), ("minute", 60)]
    for unit in units where seconds >= unit.seconds {
        let count = seconds / unit.seconds
        return "\(count) \(unit.name)\(count == 1 ? "" : "s") ago"
    }
    return "just now"
}
