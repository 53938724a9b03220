import Foundation
import HTTPServer
import Testing

/// The server's answers through ``HTTPApplication/respond(to:)``, with no
/// socket: routing, middleware, route groups, the typed context and
/// refused forms.
@Suite struct InProcessTests {
    /// An application with the routes and middleware a test gives.
    struct App: HTTPApplication {
        var router: Router
        var middleware: [any Middleware] = []
        let logged = Lines()
        func log(_ message: String) { logged.append(message) }
    }

    final class Lines: Sendable {
        private let stored = Locked<[String]>([])
        func append(_ line: String) { stored.withLock { $0.append(line) } }
        var all: [String] { stored.withLock { $0 } }
    }

    /// Middleware that records its name on the way in and out.
    struct Tracing: Middleware {
        let name: String
        let trace: Lines
        func respond(to request: Request, next: Responder) async throws -> Response {
            trace.append("\(name) in")
            let response = try await next(request)
            trace.append("\(name) out")
            return response
        }
    }

    static func text(_ text: String, status: Int = 200) -> Response {
        Response(status: status, headers: [("Content-Type", "text/plain")], body: .bytes(Array(text.utf8)))
    }

    static func body(_ response: Response) -> String {
        guard case .bytes(let bytes) = response.body else { return "" }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func middlewareRunsOutermostFirstAroundTheRoutesOwn() async {
        let trace = Lines()
        let group = RouteGroup(middleware: [Tracing(name: "group", trace: trace)])
        let app = App(
            router: Router(
                group.routes([
                    .get("/x", access: .anyone) { _ in
                        trace.append("handler")
                        return Self.text("x")
                    }
                ])),
            middleware: [Tracing(name: "outer", trace: trace), Tracing(name: "inner", trace: trace)])
        let response = await app.respond(to: Request(method: "GET", path: "/x"))
        #expect(response.status == 200)
        #expect(trace.all == ["outer in", "inner in", "group in", "handler", "group out", "inner out", "outer out"])
    }

    @Test func middlewareThatAnswersItselfRunsNoHandler() async {
        let ran = Lines()
        let refuse = MiddlewareFunction { _, _ in Self.text("no", status: 403) }
        let app = App(
            router: Router([
                .get("/x", access: .anyone) { _ in
                    ran.append("handler")
                    return Self.text("x")
                }
            ]), middleware: [refuse])
        let response = await app.respond(to: Request(method: "GET", path: "/x"))
        #expect(response.status == 403)
        #expect(ran.all.isEmpty)
    }

    @Test func theFirstRouteThatMatchesWinsWhateverItsFirstSegment() {
        func named(_ method: String, _ pattern: String) -> Route {
            Route(method, pattern, access: .anyone) { _ in Self.text(pattern) }
        }
        func found(_ router: Router, _ method: String, _ path: String) -> String? {
            if case .route(let route, _) = router.match(method: method, path: path) { return route.pattern }
            return nil
        }
        let router = Router([
            named("GET", "/:kind/new"), named("GET", "/people/new"), named("GET", "/people/:id"),
            named("POST", "/people/:id"), named("GET", "/"), named("GET", "/:page"), named("DELETE", "/about"),
        ])
        // A parameter first, listed before a literal: it comes first.
        #expect(found(router, "GET", "/people/new") == "/:kind/new")
        #expect(found(router, "GET", "/people/7") == "/people/:id")
        #expect(found(router, "POST", "/people/7") == "/people/:id")
        #expect(found(router, "GET", "/") == "/")
        #expect(found(router, "GET", "/about") == "/:page")
        #expect(found(router, "HEAD", "/anything") == "/:page")
        #expect(found(router, "DELETE", "/about") == "/about")
        // The methods allowed are gathered from routes of both kinds.
        guard case .methodNotAllowed(let allowed) = router.match(method: "PUT", path: "/about") else {
            Issue.record("PUT /about is not a 405")
            return
        }
        #expect(Set(allowed) == ["GET", "HEAD", "DELETE"])
        guard case .notFound = router.match(method: "GET", path: "/people/7/edit") else {
            Issue.record("a path of three segments matched")
            return
        }
    }

    @Test func aRouteGroupPutsItsPrefixBeforeEachPattern() async {
        let group = RouteGroup("/admin/")
        let app = App(
            router: Router(
                group.routes([
                    .get("/users/:id", access: .anyone) { request in Self.text(request.parameters["id"] ?? "") }
                ])
            ))
        let response = await app.respond(to: Request(method: "GET", path: "/admin/users/7"))
        #expect(response.status == 200)
        #expect(Self.body(response) == "7")
        #expect(await app.respond(to: Request(method: "GET", path: "/users/7")).status == 404)
    }

    @Test func middlewareSeesTheMatchedRoute() async {
        let seen = Lines()
        let app = App(
            router: Router([.post("/form", access: .anyone) { _ in Self.text("ok") }]),
            middleware: [
                MiddlewareFunction { request, next in
                    seen.append(request.route?.pattern ?? "none")
                    return try await next(request)
                }
            ])
        _ = await app.respond(to: Request(method: "POST", path: "/form"))
        _ = await app.respond(to: Request(method: "GET", path: "/nothing"))
        #expect(seen.all == ["/form", "none"])
    }

    enum Greeting: RequestContextKey {
        static let defaultValue = "nobody"
    }

    @Test func theContextCarriesTypedValuesFromMiddlewareToTheHandler() async {
        let app = App(
            router: Router([.get("/", access: .anyone) { request in Self.text(request.context[Greeting.self]) }]),
            middleware: [
                MiddlewareFunction { request, next in
                    var request = request
                    request.context[Greeting.self] = "hello " + (request.query["name"] ?? "")
                    return try await next(request)
                }
            ])
        #expect(
            Self.body(await app.respond(to: Request(method: "GET", path: "/", query: ["name": "ada"]))) == "hello ada")
        #expect(Request(method: "GET", path: "/").context[Greeting.self] == "nobody")
    }

    @Test func aCopiedRequestIsAValueChangingOneLeavesTheOtherAsItWas() async {
        let original = Request(
            method: "POST", path: "/people", query: ["q": "ada"], headers: ["accept": "text/html"],
            cookies: ["session": "one"])
        var copy = original
        copy.method = "PATCH"
        copy.path = "/people/1"
        copy.query["q"] = "grace"
        copy.headers["accept"] = "application/json"
        copy.cookies = [:]
        copy.parameters["id"] = "1"
        copy.body = Array("{}".utf8)
        copy.context[Greeting.self] = "hello"
        copy.uploadWithheld = true
        #expect(original.method == "POST" && original.path == "/people")
        #expect(original.query == ["q": "ada"] && original.headers == ["accept": "text/html"])
        #expect(original.cookies == ["session": "one"] && original.parameters.isEmpty && original.body.isEmpty)
        #expect(original.context[Greeting.self] == "nobody" && !original.uploadWithheld)
        #expect(copy.method == "PATCH" && copy.path == "/people/1" && copy.query == ["q": "grace"])
        #expect(copy.headers == ["accept": "application/json"] && copy.cookies.isEmpty)
        #expect(copy.parameters == ["id": "1"] && copy.body == Array("{}".utf8))
        #expect(copy.context[Greeting.self] == "hello" && copy.uploadWithheld)

        // Copies that cross tasks, each changed in its own, stay apart too.
        let changed = await withTaskGroup(of: Request.self) { group in
            for number in 0..<8 {
                group.addTask {
                    var mine = original
                    mine.parameters["n"] = String(number)
                    mine.context[Greeting.self] = "task \(number)"
                    return mine
                }
            }
            var all: [Request] = []
            for await request in group { all.append(request) }
            return all
        }
        #expect(Set(changed.compactMap { $0.parameters["n"] }) == Set((0..<8).map(String.init)))
        #expect(changed.allSatisfy { $0.context[Greeting.self] == "task \($0.parameters["n"] ?? "")" })
        #expect(original.parameters.isEmpty && original.context[Greeting.self] == "nobody")
    }

    @Test func anUnknownPathIs404AndAWrongMethod405WithAllow() async {
        let app = App(router: Router([.get("/x", access: .anyone) { _ in Self.text("x") }]))
        #expect(await app.respond(to: Request(method: "GET", path: "/y")).status == 404)
        let wrong = await app.respond(to: Request(method: "POST", path: "/x"))
        #expect(wrong.status == 405)
        #expect(wrong.header("Allow") == "GET, HEAD")
    }

    @Test func aResponsesHeaderIsFoundWhateverTheCaseOfItsLetters() {
        let response = Response(
            status: 200, headers: [("X-Up-2", "first"), ("content-TYPE", "text/plain"), ("x-up-2", "second")])
        #expect(response.header("x-UP-2") == "first")
        #expect(response.header("Content-Type") == "text/plain")
        #expect(response.header("CONTENT-TYPE") == "text/plain")
        // Only letters fold: "@" is not "`", "[" is not "{", and lengths must match.
        #expect(Response(status: 200, headers: [("a@b", "1")]).header("a`b") == nil)
        #expect(Response(status: 200, headers: [("a[b", "1")]).header("a{b") == nil)
        #expect(response.header("Content-Typ") == nil)
        #expect(response.header("Content-Types") == nil)
        #expect(Response(status: 200, headers: [("Zoë", "1")]).header("zoë") == "1")
    }

    @Test func aHandlersUnknownErrorIsA500ThatIsLogged() async {
        struct Broke: Error {}
        let app = App(router: Router([.get("/x", access: .anyone) { _ in throw Broke() }]))
        let response = await app.respond(to: Request(method: "GET", path: "/x"))
        #expect(response.status == 500)
        #expect(app.logged.all.contains { $0.hasPrefix("error: GET /x") })
    }

    @Test func aRefusedFormGoesToInvalidFormNotTheHandler() async {
        let ran = Lines()
        let app = App(
            router: Router([
                .post(
                    "/form", access: .anyone,
                    invalidForm: { _, problem in Self.text("again", status: problem.status) }
                ) { _ in
                    ran.append("handler")
                    return Self.text("saved")
                }
            ]))
        var request = Request(method: "POST", path: "/form")
        request.form = Form(["name": "x"])
        #expect(Self.body(await app.respond(to: request)) == "saved")
        request.formProblem = FormProblem(.duplicateField("name"))
        let refused = await app.respond(to: request)
        #expect(refused.status == 400)
        #expect(Self.body(refused) == "again")
        #expect(ran.all == ["handler"])
    }
}
