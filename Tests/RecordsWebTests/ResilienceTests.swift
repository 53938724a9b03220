import Foundation
import RecordsApp
import TestSupport
import Testing

@testable import RecordsWeb

/// A live page's quiet event stream outlives the header timeout. (The
/// server's own resilience tests are HTTPServerTests' TransportTests.)
@Suite struct ResilienceTests {
    @Test func aQuietEventStreamOutlivesTheHeaderTimeout() async throws {
        let server = try TestServer(
            authenticator: FixedSessions.ada, options: { $0.headerTimeout = .milliseconds(500) })
        defer { server.stopInBackground() }
        let socket = try await LiveTests.openStream(server, topics: "people")
        try await Task.sleep(for: .milliseconds(1500))
        try await LiveTests.addPerson(server.database)
        let text = try await onOwnThread { try socket.read(until: "data: people") }
        #expect(text.contains("event: change"))
        #expect(server.server.slowConnectionsDropped == 0)
        socket.close()
    }
}
