import Foundation
import HTTPServer
import PasswordHashing
import RecordsApp
import TestSupport
import Testing

@testable import RecordsWeb

/// The site's HTTP behaviour: routing, error pages, headers, sessions and
/// CSRF, form bodies; through real connections on a loopback port, or in
/// process (``InProcessSite``) where only the answer matters.
@Suite(.tags(.concurrency)) struct ServerTests {
    /// Counts handler runs, to show a refused request never reached one.
    final class Counter: Sendable {
        private let value = Locked(0)
        func increment() { value.withLock { $0 += 1 } }
        var count: Int { value.withLock { $0 } }
    }

    static func echoRoutes(_ counter: Counter) -> @Sendable (WebContext) -> [Route] {
        { _ in
            [
                Route.get("/echo", access: .anyone) { request in
                    Layout.page(
                        request, title: "Echo",
                        content: """
                            <form method="post" action="/echo">\(Layout.csrfField(request))</form>
                            <p id="q">\(request.query["q"])</p>
                            """)
                },
                Route.post(
                    "/echo", access: .anyone,
                    invalidForm: { request, problem in
                        Layout.page(
                            request, title: "Echo", status: problem.status,
                            content:
                                "<p class=\"form-error\">\(problem.description)</p><p id=\"kept\">\(request.form["name"])</p>"
                        )
                    }
                ) { request in
                    counter.increment()
                    return Layout.page(
                        request, title: "Echo", content: "<p id=\"name\">\(request.form.text("name"))</p>")
                },
                Route.get("/private") { request in
                    Layout.page(request, title: "Private", content: "<p>Hello \(request.session?.displayName)</p>")
                },
                Route.post("/private") { request in
                    counter.increment()
                    return Layout.redirect(to: "/private", flash: "Saved <it>", request: request)
                },
                Route.get("/things/:id", access: .anyone) { request in
                    let id = try request.id()
                    return Layout.page(request, title: "Thing", content: "<p>Thing \(id)</p>")
                },
                Route.get("/fail", access: .anyone) { _ in
                    struct Secret: Error, CustomStringConvertible {
                        var description: String { "disk /secret/path broke" }
                    }
                    throw Secret()
                },
            ]
        }
    }

    @Test func staticFilesHaveAnETagAndAnswer304() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = server.client()
        let first = try await client.get(StaticFiles.stylesheetPath)
        #expect(first.status == 200)
        #expect(first.header("content-type") == "text/css; charset=utf-8")
        let etag = try #require(first.header("etag"))
        let second = try await client.get(StaticFiles.stylesheetPath, headers: ["If-None-Match": etag])
        #expect(second.status == 304)
        #expect(second.data.isEmpty)
    }

    @Test func theStylesheetAndScriptAreServedUnderTheirContentsHashForAYear() async throws {
        let site = try InProcessSite()
        for (path, name, type) in [
            (StaticFiles.stylesheetPath, "style", "css"), (StaticFiles.liveScriptPath, "live", "js"),
        ] {
            let response = await site.answer(path)
            #expect(response.status == 200)
            let hash = try SHA256.digest(Array(response.body.utf8)).prefix(8).map {
                ($0 < 16 ? "0" : "") + String($0, radix: 16)
            }.joined()
            #expect(path == "/static/\(name)-\(hash).\(type)")
            #expect(response.header("cache-control") == "public, max-age=31536000, immutable")
        }
        #expect(await site.answer("/login").body.contains("href=\"\(StaticFiles.stylesheetPath)\""))
    }

    @Test func unknownPathsGetTheNotFoundPage() async throws {
        let site = try InProcessSite()
        let response = await site.answer("/no/such/page")
        #expect(response.status == 404)
        #expect(response.header("content-type") == "text/html; charset=utf-8")
        #expect(response.body.contains("Page not found"))
    }

    @Test func wrongMethodGets405WithAllow() async throws {
        let site = try InProcessSite(routes: Self.echoRoutes(Counter()))
        let response = await site.answer("/things/1", method: "POST")
        #expect(response.status == 405)
        #expect(response.header("allow") == "GET, HEAD")
    }

    @Test func everyAnswerCarriesTheSecurityHeaders() async throws {
        let server = try TestServer(routes: Self.echoRoutes(Counter()))
        defer { server.stop() }
        let client = server.client()
        for path in ["/echo", "/nothing", StaticFiles.stylesheetPath, "/private"] {
            let response = try await client.get(path)
            let policy = try #require(response.header("content-security-policy"), "\(path)")
            #expect(policy.contains("frame-ancestors 'none'"))
            #expect(policy.contains("script-src 'self'"))
            #expect(!policy.contains("unsafe-inline"))
            #expect(response.header("x-content-type-options") == "nosniff")
            #expect(response.header("referrer-policy") == "same-origin")
        }
    }

    @Test func signedInPagesSendVisitorsToLogInAndBack() async throws {
        let server = try TestServer(authenticator: FixedSessions.ada, routes: Self.echoRoutes(Counter()))
        defer { server.stop() }
        let visitor = server.client()
        let refused = try await visitor.get("/private?tab=a%20b")
        #expect(refused.status == 303)
        #expect(refused.location == "/login?next=%2Fprivate%3Ftab%3Da%2520b")
        let member = server.client()
        member.setCookie(WebApp.sessionCookie, "ada-token")
        let page = try await member.get("/private")
        #expect(page.status == 200)
        #expect(page.body.contains("Hello Ada Lovelace"))
        #expect(page.body.contains("action=\"/logout\""))
    }

    @Test func anUnknownSessionTokenIsNotSignedIn() async throws {
        let server = try TestServer(authenticator: FixedSessions.ada, routes: Self.echoRoutes(Counter()))
        defer { server.stop() }
        let client = server.client()
        client.setCookie(WebApp.sessionCookie, "forged-token")
        #expect(try await client.get("/private").status == 303)
    }

    @Test func postsWithoutTheCSRFTokenAreRefusedBeforeTheHandler() async throws {
        let counter = Counter()
        let server = try TestServer(authenticator: FixedSessions.ada, routes: Self.echoRoutes(counter))
        defer { server.stop() }
        let member = server.client()
        member.setCookie(WebApp.sessionCookie, "ada-token")
        let missing = try await member.post("/private", [("name", "x")], addCSRF: false)
        #expect(missing.status == 403)
        let wrong = try await member.post("/private", [("csrf", "guess"), ("name", "x")])
        #expect(wrong.status == 403)
        // A visitor's token does not pass on a session.
        let visitor = server.client()
        _ = try await visitor.get("/echo")
        let stolen = try await member.post("/private", [("csrf", visitor.csrf ?? ""), ("name", "x")])
        #expect(stolen.status == 403)
        #expect(counter.count == 0)
        _ = try await member.get("/private")
        let good = try await member.post("/private", [("name", "x")])
        #expect(good.status == 303)
        #expect(good.location == "/private")
        #expect(counter.count == 1)
    }

    @Test func visitorFormsUseADoubleSubmitCookie() async throws {
        let counter = Counter()
        let server = try TestServer(routes: Self.echoRoutes(counter))
        defer { server.stop() }
        let client = server.client()
        let page = try await client.get("/echo")
        let token = try #require(page.csrfToken)
        #expect(client.cookies[WebApp.csrfCookie] == token)
        #expect(
            page.setCookies.contains { $0.contains("HttpOnly") && $0.contains("SameSite=Lax") && $0.contains("Path=/") }
        )
        #expect(try await client.post("/echo", [("name", "ok")]).status == 200)
        // Another browser without the cookie cannot replay the token.
        let other = server.client()
        #expect(try await other.post("/echo", [("csrf", token), ("name", "ok")]).status == 403)
        #expect(counter.count == 1)
    }

    @Test func flashMessagesShowOnceAndEscaped() async throws {
        let server = try TestServer(authenticator: FixedSessions.ada, routes: Self.echoRoutes(Counter()))
        defer { server.stop() }
        let member = server.client()
        member.setCookie(WebApp.sessionCookie, "ada-token")
        _ = try await member.get("/private")
        _ = try await member.post("/private", [("name", "x")])
        let shown = try await member.get("/private")
        #expect(shown.body.contains("<p role=\"status\" class=\"flash\" id=\"flash\">Saved &lt;it&gt;</p>"))
        let again = try await member.get("/private")
        #expect(!again.body.contains("role=\"status\""))
    }

    @Test func hostileFormTextComesBackEscaped() async throws {
        let server = try TestServer(routes: Self.echoRoutes(Counter()))
        defer { server.stop() }
        let client = server.client()
        _ = try await client.get("/echo")
        for hostile in [
            "<script>alert(1)</script>", "\"><img src=x onerror=alert(1)>", "a\u{202E}b\u{200B}c", "&amp;",
        ] {
            let response = try await client.post("/echo", [("name", hostile)])
            #expect(response.status == 200)
            #expect(response.body.contains("<p id=\"name\">\(HTML.escape(hostile))</p>"))
            #expect(!response.body.contains("<script>alert(1)") && !response.body.contains("<img src=x"))
        }
        let query = try await client.get("/echo?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E")
        #expect(query.body.contains("<p id=\"q\">&lt;script&gt;alert(1)&lt;/script&gt;</p>"))
    }

    @Test func duplicatedFieldsAreRefusedWithTheFormRerendered() async throws {
        let counter = Counter()
        let server = try TestServer(routes: Self.echoRoutes(counter))
        defer { server.stop() }
        let client = server.client()
        _ = try await client.get("/echo")
        let response = try await client.post("/echo", [("name", "first"), ("name", "second")])
        #expect(response.status == 400)
        #expect(response.body.contains("more than once"))
        #expect(response.body.contains("<p id=\"kept\">first</p>"))
        #expect(counter.count == 0)
    }

    @Test func nonUTF8FieldsAreRefused() async throws {
        let counter = Counter()
        let server = try TestServer(routes: Self.echoRoutes(counter))
        defer { server.stop() }
        let client = server.client()
        _ = try await client.get("/echo")
        let body = "csrf=\(client.csrf ?? "")&name=%FF%FEabc"
        let response = try await client.post(
            "/echo", body: Data(body.utf8), contentType: "application/x-www-form-urlencoded")
        #expect(response.status == 400)
        #expect(response.body.contains("not valid text"))
        #expect(counter.count == 0)
    }

    @Test func oversizedFormsAreRefusedWith413() async throws {
        let counter = Counter()
        let server = try TestServer(routes: Self.echoRoutes(counter))
        defer { server.stop() }
        let client = server.client()
        _ = try await client.get("/echo")
        let big = String(repeating: "x", count: Route.defaultFormLimit + 10)
        let response = try await client.post("/echo", [("name", big)])
        #expect(response.status == 413)
        #expect(counter.count == 0)
    }

    @Test func bodiesOfAnotherTypeAreRefused() async throws {
        let counter = Counter()
        let server = try TestServer(routes: Self.echoRoutes(counter))
        defer { server.stop() }
        let client = server.client()
        _ = try await client.get("/echo")
        let response = try await client.post("/echo", body: Data("{\"name\":1}".utf8), contentType: "application/json")
        #expect(response.status == 400 || response.status == 403)
        #expect(counter.count == 0)
    }

    @Test func malformedIDsAreNotFound() async throws {
        let site = try InProcessSite(routes: Self.echoRoutes(Counter()))
        #expect(await site.answer("/things/12").status == 200)
        for bad in ["abc", "0", "-3", "012", "99999999999999999999"] {
            #expect(await site.answer("/things/\(bad)").status == 404, "\(bad)")
        }
    }

    @Test func serverErrorsShowNothingInternal() async throws {
        let site = try InProcessSite(routes: Self.echoRoutes(Counter()))
        let response = await site.answer("/fail")
        #expect(response.status == 500)
        #expect(!response.body.contains("secret"))
        #expect(response.body.contains("Something went wrong"))
        #expect(site.log.contains { $0.contains("disk /secret/path broke") })
    }

    @Test func headAnswersWithoutABody() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let response = try await server.client().head(StaticFiles.stylesheetPath)
        #expect(response.status == 200)
        #expect(response.data.isEmpty)
        #expect(response.header("content-length") == String(Stylesheet.text.utf8.count))
    }
}
