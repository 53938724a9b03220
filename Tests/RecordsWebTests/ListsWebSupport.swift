import Foundation
import RecordsApp
import RecordsWeb
import Testing

/// What the People and Contacts page tests share.
enum ListsWeb {
    /// Text that must come back escaped (or, for the invisible characters,
    /// as it was) wherever a page shows it.
    static let script = "<script>alert(1)</script>"
    static let attribute = "\"><img src=x onerror=alert(1)>"
    static let rightToLeft = "abc\u{202E}fed"
    static let zeroWidth = "zero\u{200B}width"

    /// A server whose visitor is signed in as Ada (see `FixedSessions`).
    static func server() throws -> TestServer {
        try TestServer(authenticator: FixedSessions.ada)
    }

    /// A client of `server` signed in as Ada.
    static func signedIn(_ server: TestServer) -> WebClient {
        let client = server.client()
        client.setCookie(WebApp.sessionCookie, "ada-token")
        return client
    }

    /// The page a redirect sends the client to.
    static func follow(_ response: WebResponse, with client: WebClient) async throws -> WebResponse {
        let location = try #require(response.location)
        return try await client.get(location)
    }

    /// Whether `body` holds none of the hostile markup unescaped.
    static func holdsNoHostileMarkup(_ body: String) -> Bool {
        !body.contains("<script>alert") && !body.contains("<img src=x") && !body.contains("\"><img")
    }

    /// The escaped forms of the hostile markup.
    static let escapedScript = "&lt;script&gt;alert(1)&lt;/script&gt;"
    static let escapedAttribute = "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"

    /// The `value` attribute of the input with this id, as sent.
    static func value(of id: String, in body: String) -> String? {
        guard let tag = body.firstMatch(of: try! Regex("<input id=\"\(id)\"[^>]*>")) else { return nil }
        return body[tag.range].firstMatch(of: /value="([^"]*)"/).map { String($0.1) }
    }

    /// How many rows the list's table holds (`<tr id="PREFIX-ID">`).
    static func itemCount(in body: String, prefix: String) -> Int {
        rowIDs(in: body, prefix: prefix).count
    }

    /// The IDs of the list's rows, in the order the page shows them.
    static func rowIDs(in body: String, prefix: String) -> [Int64] {
        body.matches(of: try! Regex<(Substring, Substring)>("<tr id=\"\(prefix)-([0-9]+)\"")).compactMap {
            Int64($0.output.1)
        }
    }
}
