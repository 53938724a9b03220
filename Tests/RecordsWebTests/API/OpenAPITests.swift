import Foundation
import RecordsApp
import TestSupport
import Testing

@testable import RecordsWeb

/// `/api/v1/openapi.json` describes exactly the API's routes (the browser
/// tests' `test_api.py` checks it with openapi-spec-validator).
@Suite struct OpenAPITests {
    private func document(_ site: APISite) async throws -> [String: Any] {
        let answer = await site.send("GET", "/api/v1/openapi.json", token: nil)
        #expect(answer.status == 200)
        #expect(answer.header("Content-Type") == "application/json")
        return answer.json
    }

    @Test func itIsServedWithoutAToken() async throws {
        let site = try await APISite()
        let document = try await document(site)
        #expect(document["openapi"] as? String == "3.1.0")
    }

    @Test func itListsEveryRouteOfTheAPIAndNoOther() async throws {
        let site = try await APISite()
        let paths = try #require(try await document(site)["paths"] as? [String: [String: Any]])
        var described = Set<String>()
        for (path, item) in paths {
            for method in item.keys { described.insert("\(method.uppercased()) \(path)") }
        }
        let routes = Set(
            site.app.router.routes.filter { $0.pattern.hasPrefix("/api/") }.map {
                "\($0.method) \(OpenAPI.openAPIPath(String($0.pattern)))"
            })
        #expect(!routes.isEmpty)
        #expect(described == routes)
        #expect(routes.contains("PATCH /api/v1/people/{id}"))
        #expect(routes.contains("GET /api/v1/coffee/{id}/picture"))
    }
}
