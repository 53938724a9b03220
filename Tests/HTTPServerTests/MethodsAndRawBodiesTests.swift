import Foundation
import HTTPServer
import Testing

/// PUT, PATCH and DELETE routes, raw bodies, and ``MiddlewareBranch``,
/// through ``HTTPApplication/respond(to:)`` with no socket.
@Suite struct MethodsAndRawBodiesTests {
    typealias App = InProcessTests.App
    typealias Lines = InProcessTests.Lines

    static func text(_ text: String, status: Int = 200) -> Response { InProcessTests.text(text, status: status) }
    static func body(_ response: Response) -> String { InProcessTests.body(response) }

    /// The four methods of a JSON resource on one path.
    static let resource = Router([
        .get("/things/:id", access: .anyone) { request in text("get \(request.parameters["id"] ?? "")") },
        .put("/things/:id", access: .anyone) { request in text("put \(request.parameters["id"] ?? "")") },
        .patch("/things/:id", access: .anyone) { request in text("patch \(request.parameters["id"] ?? "")") },
        .delete("/things/:id", access: .anyone) { request in text("delete \(request.parameters["id"] ?? "")") },
    ])

    @Test(arguments: ["PUT", "PATCH", "DELETE"])
    func putPatchAndDeleteRoutesAnswerTheirOwnMethod(method: String) async {
        let response = await App(router: Self.resource).respond(to: Request(method: method, path: "/things/7"))
        #expect(response.status == 200)
        #expect(Self.body(response) == "\(method.lowercased()) 7")
    }

    @Test func aWrongMethodIs405WithAllowListingPutPatchAndDelete() async {
        let response = await App(router: Self.resource).respond(to: Request(method: "POST", path: "/things/7"))
        #expect(response.status == 405)
        #expect(response.header("Allow") == "GET, PUT, PATCH, DELETE, HEAD")
    }

    @Test func aPathWithoutAGetRouteDoesNotAllowHead() async {
        let app = App(router: Router([.delete("/things/:id", access: .anyone) { _ in Self.text("gone") }]))
        let response = await app.respond(to: Request(method: "HEAD", path: "/things/7"))
        #expect(response.status == 405)
        #expect(response.header("Allow") == "DELETE")
    }

    @Test func headStillAnswersAGetRouteBesidePutPatchAndDelete() async {
        let response = await App(router: Self.resource).respond(to: Request(method: "HEAD", path: "/things/7"))
        #expect(response.status == 200)
        #expect(Self.body(response) == "get 7")
    }

    @Test func putAndPatchTakeTheRawBodyByDefaultAndDeleteNone() {
        let handler: Route.Handler = { _ in Self.text("") }
        for route in [
            Route.put("/x", handler: handler), .patch("/x", handler: handler), Route("PUT", "/x", handler: handler),
        ] {
            guard case .bytes(let limit) = route.body else {
                Issue.record("\(route.method) takes \(route.body)")
                continue
            }
            #expect(limit == Route.defaultFormLimit)
        }
        guard case .none = Route.delete("/x", handler: handler).body else {
            Issue.record("DELETE takes a body")
            return
        }
        guard case .form = Route.post("/x", handler: handler).body else {
            Issue.record("POST takes no form")
            return
        }
    }

    @Test func aRequestMadeInMemoryCarriesItsRawBodyToTheHandler() async {
        let app = App(
            router: Router([
                .post("/json", access: .anyone, body: .bytes(limit: 1024)) { request in
                    Self.text("\(request.body.count) bytes: " + String(decoding: request.body, as: UTF8.self))
                }
            ]))
        var request = Request(method: "POST", path: "/json", headers: ["content-type": "application/json"])
        request.body = Array(#"{"a":1}"#.utf8)
        #expect(Self.body(await app.respond(to: request)) == #"7 bytes: {"a":1}"#)
    }

    @Test func aRequestWithoutABodyHasAnEmptyOne() {
        #expect(Request(method: "PUT", path: "/x").body.isEmpty)
    }

    @Test func aRawBodyRefusedAsTooLargeIs413NamingTheLimitAndRunsNoHandler() async {
        let ran = Lines()
        let app = App(
            router: Router([
                .put("/json", access: .anyone, body: .bytes(limit: 1000)) { _ in
                    ran.append("handler")
                    return Self.text("saved")
                }
            ]))
        var request = Request(method: "PUT", path: "/json")
        request.formProblem = FormProblem(.tooLarge)
        let response = await app.respond(to: request)
        #expect(response.status == 413)
        #expect(Self.body(response).contains("at most 1000 bytes"), "\(Self.body(response))")
        #expect(ran.all.isEmpty)
    }

    @Test func theApplicationsMiddlewareSeesARawBodysRefusalAsAFormProblem() async {
        let app = App(
            router: Router([.put("/json", access: .anyone, body: .bytes(limit: 10)) { _ in Self.text("saved") }]),
            middleware: [
                MiddlewareFunction { request, next in
                    let received = try await request.receivingBody()
                    if let problem = received.formProblem { return Self.text("problem \(problem.kind)", status: 422) }
                    return try await next(received)
                }
            ])
        var request = Request(method: "PUT", path: "/json")
        request.formProblem = FormProblem(.tooLarge)
        let response = await app.respond(to: request)
        #expect(response.status == 422)
        #expect(Self.body(response) == "problem tooLarge")
    }

    // MARK: - MiddlewareBranch

    /// Middleware that turns a thrown ``HTTPError`` into a page marked
    /// with `name`.
    struct Errors: Middleware {
        let name: String
        func respond(to request: Request, next: Responder) async throws -> Response {
            do {
                return try await next(request)
            } catch let error as HTTPError {
                var response = MethodsAndRawBodiesTests.text("\(name) \(error.status)", status: error.status)
                for (header, value) in error.headers { response.headers.append((header, value)) }
                return response
            }
        }
    }

    static func branchedApp(trace: Lines) -> App {
        App(
            router: Router([
                .get("/api/things", access: .anyone) { _ in Self.text("things") },
                .get("/page", access: .anyone) { _ in Self.text("page") },
            ]),
            middleware: [
                InProcessTests.Tracing(name: "outer", trace: trace),
                MiddlewareBranch(
                    when: { $0.path.hasPrefix("/api/") },
                    then: [Errors(name: "api"), InProcessTests.Tracing(name: "api", trace: trace)],
                    otherwise: [Errors(name: "pages"), InProcessTests.Tracing(name: "pages", trace: trace)]),
            ])
    }

    @Test func aBranchRunsTheStackItsPredicatePicksAroundTheRoute() async {
        let trace = Lines()
        let app = Self.branchedApp(trace: trace)
        #expect(Self.body(await app.respond(to: Request(method: "GET", path: "/api/things"))) == "things")
        #expect(trace.all == ["outer in", "api in", "api out", "outer out"])
    }

    @Test func aBranchRunsTheOtherStackWhenItsPredicateFails() async {
        let trace = Lines()
        let app = Self.branchedApp(trace: trace)
        #expect(Self.body(await app.respond(to: Request(method: "GET", path: "/page"))) == "page")
        #expect(trace.all == ["outer in", "pages in", "pages out", "outer out"])
    }

    @Test func anUnknownPathGoesThroughTheBranchItsPathPicks() async {
        let app = Self.branchedApp(trace: Lines())
        let api = await app.respond(to: Request(method: "GET", path: "/api/nothing"))
        #expect(api.status == 404)
        #expect(Self.body(api) == "api 404")
        let page = await app.respond(to: Request(method: "GET", path: "/nothing"))
        #expect(page.status == 404)
        #expect(Self.body(page) == "pages 404")
    }

    @Test func aWrongMethodGoesThroughTheBranchItsPathPicksWithItsAllowHeader() async {
        let app = Self.branchedApp(trace: Lines())
        let api = await app.respond(to: Request(method: "DELETE", path: "/api/things"))
        #expect(api.status == 405)
        #expect(Self.body(api) == "api 405")
        #expect(api.header("Allow") == "GET, HEAD")
        let page = await app.respond(to: Request(method: "PUT", path: "/page"))
        #expect(Self.body(page) == "pages 405")
    }
}
