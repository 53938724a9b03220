import Testing

@testable import RecordsWeb

@Suite struct HTMLTests {
    @Test func interpolatedTextIsEscaped() {
        let name = "<script>alert(\"x\")</script> & 'y'"
        let fragment: HTML = "<p title=\"\(name)\">\(name)</p>"
        #expect(
            fragment.markup
                == "<p title=\"&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;\">"
                + "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;</p>")
    }

    @Test func attributeBreakoutIsEscaped() {
        let value = "\"><img src=x onerror=alert(1)>"
        let fragment: HTML = "<input value=\"\(value)\">"
        #expect(!fragment.markup.contains("<img"))
        #expect(fragment.markup == "<input value=\"&quot;&gt;&lt;img src=x onerror=alert(1)&gt;\">")
    }

    @Test func fragmentsComposeWithoutDoubleEscaping() {
        let item: HTML = "<li>\("a<b")</li>"
        let list: HTML = "<ul>\([item, item])</ul>"
        #expect(list.markup == "<ul><li>a&lt;b</li><li>a&lt;b</li></ul>")
    }

    @Test func optionalsAndNumbers() {
        let missing: String? = nil
        let fragment: HTML = "\(missing)|\(Optional("<"))|\(42)|\(Int64(-7))"
        #expect(fragment.markup == "|&lt;|42|-7")
    }

    @Test func rawMarkupIsTheExplicitEscapeHatch() {
        let fragment: HTML = "\(raw: "<b>bold</b>")"
        #expect(fragment.markup == "<b>bold</b>")
    }

    @Test func unicodeTextIsKeptAsIs() {
        let text = "Zoë \u{202E}evil\u{200B} 日本"
        let fragment: HTML = "\(text)"
        #expect(fragment.markup == text)
    }

    @Test func pathsPercentEncodeSegmentsAndQueryValues() {
        #expect(HTML.path(["people", "7", "edit"]) == "/people/7/edit")
        #expect(
            HTML.path(["search"], query: [("q", "a b&c=d/é"), ("skip", nil)]) == "/search?q=a%20b%26c%3Dd%2F%C3%A9")
        #expect(HTML.path(["javascript:alert(1)"]) == "/javascript%3Aalert%281%29")
    }

    @Test func redirectsStayOnTheSite() {
        #expect(Response.sameSitePath("/people?page=2") == "/people?page=2")
        #expect(Response.sameSitePath("//evil.example/") == "/")
        #expect(Response.sameSitePath("https://evil.example/") == "/")
        #expect(Response.sameSitePath("/\\evil.example") == "/")
        #expect(Response.sameSitePath("/a\r\nSet-Cookie: x=y") == "/")
        #expect(Response.sameSitePath("") == "/")
        #expect(Response.sameSitePath("/") == "/")
        // A combining mark after the second slash makes "/\u{301}" one
        // Character; the check is on bytes, so it still sees "//".
        let combined = "//\u{301}evil.example/"
        #expect(Response.sameSitePath(combined) == "/")
        let onTheSite = "/\u{301}/people"
        #expect(Response.sameSitePath(onTheSite) == onTheSite)
    }

    @Test func fieldsLabelEveryInputAndKeepTheValue() {
        let field = Field.input("name", label: "Name", value: "<Ada>", error: "Name is required")
        #expect(field.markup.contains("<label for=\"field-name\">Name</label>"))
        #expect(field.markup.contains("value=\"&lt;Ada&gt;\""))
        #expect(field.markup.contains("aria-invalid=\"true\""))
        #expect(field.markup.contains("aria-describedby=\"field-name-error\""))
        #expect(field.markup.contains("<p class=\"error\" id=\"field-name-error\">Name is required</p>"))
    }

    @Test func passwordFieldsNeverEchoTheValue() {
        let field = Field.input("password", label: "Password", value: "hunter2", type: "password")
        #expect(!field.markup.contains("hunter2"))
    }

    @Test func tokensAre256RandomBits() {
        let a = WebApp.randomToken()
        let b = WebApp.randomToken()
        #expect(a != b)
        #expect(a.count == 43)
        #expect(WebApp.isWellFormedToken(a))
        #expect(!WebApp.isWellFormedToken("short"))
        #expect(!WebApp.isWellFormedToken(String(repeating: "!", count: 43)))
    }

    @Test func routerMatchesParametersAndReportsAllowedMethods() {
        let router = Router([
            .get("/people/:id") { _ in Response() }, .post("/people/:id") { _ in Response() },
            .get("/people") { _ in Response() },
        ])
        guard case .route(let route, let parameters) = router.match(method: "GET", path: "/people/12") else {
            Issue.record("no match")
            return
        }
        #expect(route.pattern == "/people/:id")
        #expect(parameters == ["id": "12"])
        guard case .route = router.match(method: "HEAD", path: "/people") else {
            Issue.record("HEAD does not use the GET route")
            return
        }
        guard case .methodNotAllowed(let allowed) = router.match(method: "DELETE", path: "/people/1") else {
            Issue.record("no 405")
            return
        }
        #expect(Set(allowed) == ["GET", "HEAD", "POST"])
        guard case .notFound = router.match(method: "GET", path: "/people/1/2") else {
            Issue.record("no 404")
            return
        }
    }
}
