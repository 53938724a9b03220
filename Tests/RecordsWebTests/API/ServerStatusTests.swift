import Foundation
import RecordsApp
import Replication
import TestSupport
import Testing

@testable import RecordsWeb

/// `/status` and `GET /api/v1/status`: whether the database is replicated,
/// and how far behind the replica may be.
@Suite struct ServerStatusTests {
    /// A status whose last sync was `seconds` before the site's clock.
    private static func status(_ clock: TestClock, syncedSecondsAgo seconds: Double?, replica: String)
        -> ReplicationStatus
    {
        ReplicationStatus(
            replica: replica, state: .replicating, lastSyncAt: seconds.map { clock.now.addingTimeInterval(-$0) },
            restarts: 2, lastProblem: "Litestream was killed by signal 9")
    }

    @Test func withoutReplicationTheAPISaysSo() async throws {
        let site = try await APISite()
        let answer = await site.send("GET", "/api/v1/status", token: site.reader)
        #expect(answer.status == 200)
        #expect(answer.text == #"{"database":{"writable":true,"problem":null},"replication":null}"#)
        let anonymous = await site.send("GET", "/api/v1/status", token: nil)
        #expect(anonymous.status == 401)
        #expect(anonymous.isProblem)
    }

    @Test func theAPIGivesTheReplicaAndItsLag() async throws {
        let holder = Holder()
        let site = try await APISite { configuration in
            configuration.replicationStatus = { holder.status! }
        }
        holder.status = Self.status(site.clock, syncedSecondsAgo: 2.5, replica: "s3://bucket/records")
        let answer = await site.send("GET", "/api/v1/status", token: site.reader)
        #expect(answer.status == 200)
        let replication = try #require(answer.json["replication"] as? [String: Any])
        #expect(replication["replica"] as? String == "s3://bucket/records")
        #expect(replication["state"] as? String == "replicating")
        #expect(replication["durable"] as? Bool == false)
        #expect(replication["lagSeconds"] as? Double == 2.5)
        #expect(replication["restarts"] as? Int == 2)
        #expect(replication["lastProblem"] as? String == "Litestream was killed by signal 9")
        #expect((replication["lastSyncAt"] as? String)?.hasSuffix("Z") == true)

        // Before the first sync: no time, no lag.
        holder.status = Self.status(site.clock, syncedSecondsAgo: nil, replica: "/r")
        let early = await site.send("GET", "/api/v1/status", token: site.reader)
        let first = try #require(early.json["replication"] as? [String: Any])
        #expect(first["lastSyncAt"] is NSNull)
        #expect(first["lagSeconds"] is NSNull)
    }

    @Test func thePageNeedsASignInAndEscapesWhatItShows() async throws {
        let holder = Holder()
        let site = try await APISite { configuration in
            configuration.replicationStatus = { holder.status! }
        }
        holder.status = Self.status(
            site.clock, syncedSecondsAgo: 3 * 3600, replica: "/backup/<script>alert(1)</script>")
        let visitor = await site.app.respond(to: Request(method: "GET", path: "/status"))
        #expect(visitor.status == 303)
        #expect(visitor.header("Location")?.hasPrefix("/login") == true)

        let page = try await Self.statusPage(site)
        #expect(page.status == 200)
        #expect(page.text.contains("<title>Server status"))
        #expect(page.text.contains("/backup/&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!page.text.contains("<script>alert"))
        #expect(page.text.contains("3 hours ago"))
        #expect(page.text.contains(#"<dd id="replication-lag">10800.0 s</dd>"#))
        #expect(page.text.contains("Litestream was killed by signal 9"))
    }

    @Test func thePageWithoutReplicationSaysHowToStartIt() async throws {
        let site = try await APISite()
        let page = try await Self.statusPage(site)
        #expect(page.status == 200)
        #expect(page.text.contains("does not replicate its database"))
        #expect(page.text.contains("records serve --replicate"))
    }

    @Test func aReadReplicaSaysWhatItCopiesAndRefusesChanges() async throws {
        let site = try await APISite { configuration in
            configuration.readReplica = ReadReplicaSettings(
                replica: "/replica/<b>x</b>", primary: "https://primary.example/<i>")
        }
        let page = try await Self.statusPage(site)
        #expect(page.status == 200)
        #expect(page.text.contains("read-only copy of the database"))
        #expect(page.text.contains("/replica/&lt;b&gt;x&lt;/b&gt;"))
        #expect(page.text.contains(#"<dd id="replica-primary">https://primary.example/&lt;i&gt;</dd>"#))
        // A change, from the API or a page: 503 naming the primary, before
        // the route runs (the database could not take it).
        let created = await site.send(
            "POST", "/api/v1/people", json: #"{"firstName":"Lise","lastName":"Meitner"}"#, token: site.writer)
        #expect(created.status == 503)
        #expect(created.isProblem)
        #expect(created.json["code"] as? String == "read-only-replica")
        #expect(created.header("Retry-After") == nil)
        #expect(created.text.contains("primary server (https://primary.example/<i>)"))
        let form = await site.app.respond(to: Request(method: "POST", path: "/login"))
        #expect(form.status == 503)
        #expect(APIAnswer(form).text.contains("https://primary.example/&lt;i&gt;"))
        // Reads go on.
        let listed = await site.send("GET", "/api/v1/people", token: site.reader)
        #expect(listed.status == 200)
    }

    /// `/status` as a signed-in browser gets it.
    private static func statusPage(_ site: APISite) async throws -> APIAnswer {
        let session = try await site.app.context.accounts.sessions.create(
            userID: site.user.id, userAgent: "test", clientAddress: "127.0.0.1")
        return APIAnswer(
            await site.app.respond(
                to: Request(method: "GET", path: "/status", cookies: [WebApp.sessionCookie: session.token.value])))
    }

    private final class Holder: @unchecked Sendable {
        var status: ReplicationStatus?
    }
}
