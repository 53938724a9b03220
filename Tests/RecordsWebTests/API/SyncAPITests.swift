import Foundation
import HTTPServer
import SQLiteStore
import SQLiteStoreSync
import TestSupport
import Testing

@testable import RecordsApp
@testable import RecordsWeb

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``SyncTransport`` that sends ``SyncWire`` bodies to the web app in
/// process, as ``HTTPSyncTransport`` sends them over a socket.
struct InProcessSyncTransport: SyncTransport {
    let site: APISite
    let token: String

    func push(_ request: PushRequest) async throws -> PushResponse {
        try SyncWire.pushResponse(try await send("/api/v1/sync/push", SyncWire.encode(request)))
    }

    func pull(_ request: PullRequest) async throws -> PullResponse {
        try SyncWire.pullResponse(try await send("/api/v1/sync/pull", SyncWire.encode(request)))
    }

    func uploadChunk(_ request: ChunkUpload) async throws -> ChunkUploadResponse {
        try SyncWire.chunkUploadResponse(try await send("/api/v1/sync/chunks/upload", SyncWire.encode(request)))
    }

    func downloadChunk(_ request: ChunkDownload) async throws -> ChunkDownloadResponse {
        try SyncWire.chunkDownloadResponse(try await send("/api/v1/sync/chunks/download", SyncWire.encode(request)))
    }

    /// The server's answer to `body` at `path`, whatever its status.
    func answer(_ path: String, _ body: Data, contentType: String = SyncWire.contentType) async -> APIAnswer {
        var request = Request(
            method: "POST", path: path,
            headers: ["authorization": "Bearer \(token)", "content-type": contentType], clientAddress: "127.0.0.1")
        request.body = Array(body)
        return APIAnswer(await site.app.respond(to: request))
    }

    func send(_ path: String, _ body: Data, contentType: String = SyncWire.contentType) async throws -> Data {
        let answer = await answer(path, body, contentType: contentType)
        guard answer.status == 200 else {
            throw HTTPSyncTransport.refusal(status: answer.status, problem: Data(answer.text.utf8), host: "test")
        }
        #expect(answer.header("Content-Type") == SyncWire.contentType)
        guard case .bytes(let bytes) = answer.response.body else { return Data() }
        return Data(bytes)
    }
}

extension APISite {
    /// Lets the server's database grow by at most `pages` pages from its
    /// size now (`max_page_count` on its one connection): SQLite then
    /// answers `SQLITE_FULL`, as when the disk is full.
    func fillDisk(leaving pages: Int = 0) throws {
        try database.writer.write { db in
            let count = try db.fetchOne(Int.self, "PRAGMA page_count") ?? 0
            _ = try db.fetchOne(Int.self, "PRAGMA max_page_count = \(unsafeLiteral: String(count + pages))")
        }
    }

    /// Room on the server's disk again.
    func makeRoom() throws {
        try database.writer.write { db in _ = try db.fetchOne(Int.self, "PRAGMA max_page_count = 1000000000") }
    }
}

/// Whether `answer` is the server's full-disk problem, whose detail starts
/// with `detail`.
func isFullDiskProblem(_ answer: APIAnswer, detail: String) -> Bool {
    answer.status == 507 && answer.isProblem && answer.json["code"] as? String == "storage-full"
        && answer.json["title"] as? String == "Insufficient Storage"
        && (answer.json["detail"] as? String)?.hasPrefix(detail) == true
}

/// `POST /api/v1/sync/push` and `/sync/pull`: devices sync through the
/// API's tokens, and every refusal is a problem document the client turns
/// back into the engine's error.
@Suite struct SyncAPITests {
    private static let people = AppDatabase.apps.first { $0.app == .people }!.sync!.table

    /// A device that writes peopleInfo with plain SQL, as any app could,
    /// bypassing the records stores' validation.
    private static func rawDevice() throws -> (DatabaseQueue, SyncClient) {
        let queue = try DatabaseQueue.inMemory()
        let schema = SyncSchema(tables: [people])
        try queue.write { db in
            try db.execute(
                "CREATE TABLE peopleInfo (peopleInfoID INTEGER PRIMARY KEY AUTOINCREMENT, firstname TEXT, lastname TEXT, age INTEGER)"
            )
            try schema.install(in: db)
        }
        return (queue, SyncClient(writer: queue, schema: schema))
    }

    @Test func aPushTheServersFullDiskCannotKeepIsA507ProblemAndIsAppliedOnceThereIsRoom() async throws {
        let site = try await APISite()
        let (queue, client) = try Self.rawDevice()
        try await queue.write { db in
            for index in 0..<200 {
                try db.execute(
                    "INSERT INTO peopleInfo (firstname, lastname, age) VALUES (\("Ada \(index)"), \("Byron"), \(36))")
            }
        }
        let transport = InProcessSyncTransport(site: site, token: site.writer)
        let request = try #require(try client.makePush())
        try site.fillDisk()

        let answer = await transport.answer("/api/v1/sync/push", SyncWire.encode(request))
        #expect(
            isFullDiskProblem(
                answer, detail: "The server's disk is full: the push was refused, nothing of it was applied."),
            "\(answer.status) \(answer.text)")
        // Through the transport: the engine's error, with the server's words.
        await #expect {
            _ = try await client.sync(over: transport)
        } throws: { error in
            guard let error = error as? SyncError, error.kind == .storageFull else { return false }
            return error.message.hasPrefix("The server's disk is full")
        }
        #expect(try await PeopleStore(database: site.database).all().isEmpty)
        #expect(try client.makePush() == request, "the device still has all of it to send")

        try site.makeRoom()
        let report = try await client.sync(over: transport)
        #expect(report.sent == 200 * 3)
        #expect(try await PeopleStore(database: site.database).all().count == 200)
        #expect(try client.makePush() == nil)
        #expect(try await client.sync(over: transport).sent == 0)
        #expect(try await PeopleStore(database: site.database).all().count == 200, "none twice")
    }

    @Test func aPersonMadeOnADeviceReachesTheServerSearchableAndOnItsChangeTopic() async throws {
        let site = try await APISite()
        let device = try AppDatabase.inMemory()
        _ = try await PeopleStore(database: device).add(PersonDraft(firstName: "Zoë", lastName: "Åkesson", age: 31))
        let before = try await site.database.recordChanges(after: 0, apps: [.people], limit: 100).latest

        let report = try await device.syncClient().sync(over: InProcessSyncTransport(site: site, token: site.writer))

        #expect(report.sent == 3)
        let people = try await PeopleStore(database: site.database).all()
        #expect(people.map(\.fullName) == ["Zoë Åkesson"])
        let found = try await PeopleStore(database: site.database).fullTextSearch("akesson")
        #expect(found.matches.map(\.record.id) == [people[0].id], "the folded search index has the synced row")
        let changes = try await site.database.recordChanges(after: before, apps: [.people], limit: 100)
        #expect(changes.changes.map(\.id) == [people[0].id], "the people topic carries the synced insert")
    }

    @Test func aContactAndACoffeeMadeOnADeviceArriveSearchableWithThePicture() async throws {
        let site = try await APISite()
        let device = try AppDatabase.inMemory()
        _ = try await ContactsStore(database: device).add(
            ContactDraft(name: "Søren Kierkegaard", address: "Nytorv 2, København", contact: "+45 33 12 34 56"))
        let coffee = try await CoffeeStore(database: device).add(CoffeeDraft(name: "Cortado", price: 3.1))
        try await CoffeeStore(database: device).setPicture(id: coffee.id, from: .data(WebPictures.make(count: 100)))
        let before = try await site.database.recordChanges(after: 0, apps: [.contacts, .coffee], limit: 100).latest

        _ = try await device.syncClient().sync(over: InProcessSyncTransport(site: site, token: site.writer))

        let contacts = try await ContactsStore(database: site.database).fullTextSearch("soren")
        #expect(contacts.matches.map(\.record.name) == ["Søren Kierkegaard"])
        let mine = try await CoffeeStore(database: device).fullTextSearch("cortado", hydrated: true)
        #expect(mine.matches.first?.record.picture != nil)
        let coffees = try await CoffeeStore(database: site.database).fullTextSearch("cortado", hydrated: true)
        #expect(coffees.matches.map(\.record.name) == ["Cortado"])
        #expect(coffees.matches.first?.record.price == 3.1)
        #expect(coffees.matches.first?.record.picture == CoffeePicture(size: 100, format: .png))
        let changes = try await site.database.recordChanges(after: before, apps: [.contacts, .coffee], limit: 100)
        #expect(Set(changes.changes.map(\.app)) == [.contacts, .coffee])
    }

    @Test func twoDevicesConvergeThroughTheServerAndTheConflictIsLogged() async throws {
        let site = try await APISite()
        let first = try AppDatabase.inMemory()
        let second = try AppDatabase.inMemory()
        let transport = InProcessSyncTransport(site: site, token: site.writer)
        let ada = try await PeopleStore(database: first).add(PersonDraft(firstName: "Ada", lastName: "L", age: 36))
        _ = try await first.syncClient().sync(over: transport)
        _ = try await second.syncClient().sync(over: transport)
        let there = try #require(try await PeopleStore(database: second).all().first)
        _ = try await PeopleStore(database: first).update(id: ada.id, with: PersonChanges(age: 37))
        _ = try await PeopleStore(database: second).update(id: there.id, with: PersonChanges(age: 38))

        _ = try await first.syncClient().sync(over: transport)
        let report = try await second.syncClient().sync(over: transport)
        _ = try await first.syncClient().sync(over: transport)

        #expect(report.conflicts == 1)
        #expect(try await PeopleStore(database: first).all().map(\.age) == [38])
        #expect(try await PeopleStore(database: second).all().map(\.age) == [38])
        let conflicts = try await site.database.syncConflicts()
        #expect(conflicts.map(\.conflict.losingValue) == [.integer(37)])
        #expect(conflicts.map(\.app) == [.people])
        let listed = await site.send("GET", "/api/v1/sync/conflicts", token: site.reader)
        #expect(listed.status == 200)
        let items = listed.json["items"] as? [[String: Any]] ?? []
        #expect(items.map { $0["losingValue"] as? String } == ["37"])
        #expect(items.map { $0["winningValue"] as? String } == ["38"])
        #expect(items.map { $0["column"] as? String } == ["age"])
        #expect(await site.send("GET", "/api/v1/sync/conflicts", token: nil).status == 401)
    }

    @Test func aReadOnlyTokenPullsButCannotPush() async throws {
        let site = try await APISite()
        let device = try AppDatabase.inMemory()
        _ = try await PeopleStore(database: device).add(PersonDraft(firstName: "Ada", lastName: "L", age: 36))
        let transport = InProcessSyncTransport(site: site, token: site.reader)
        let pull = try await transport.pull(try device.syncClient().makePull())
        #expect(pull.hasMore == false)
        await #expect(throws: HTTPSyncError.self) { try await device.syncClient().sync(over: transport) }
        let push = try #require(try device.syncClient().makePush())
        do {
            _ = try await transport.push(push)
            Issue.record("a read-only token pushed")
        } catch let error as HTTPSyncError {
            #expect(error.kind == .forbidden)
            #expect(error.status == 403)
        }
        #expect(try await PeopleStore(database: site.database).count() == 0)
    }

    @Test func aRevokedTokenIsRefusedWith401() async throws {
        let site = try await APISite()
        let made = try await site.tokens.create(userID: site.user.id, name: "phone", scope: .readWrite, expiresAt: nil)
        try await site.tokens.revoke(id: made.token.id, userID: site.user.id)
        let device = try AppDatabase.inMemory()
        do {
            _ = try await device.syncClient().sync(over: InProcessSyncTransport(site: site, token: made.secret))
            Issue.record("a revoked token synced")
        } catch let error as HTTPSyncError {
            #expect(error.kind == .unauthorized)
        }
    }

    @Test func aReplayedPushIsRefusedWithWhereToResume() async throws {
        let site = try await APISite()
        let device = try AppDatabase.inMemory()
        _ = try await PeopleStore(database: device).add(PersonDraft(firstName: "Ada", lastName: "L", age: 36))
        let transport = InProcessSyncTransport(site: site, token: site.writer)
        let push = try #require(try device.syncClient().makePush())
        let accepted = try await transport.push(push)
        // The acknowledgement was lost: the device sends the same push again.
        do {
            _ = try await transport.push(push)
            Issue.record("a replayed push was applied")
        } catch let error as SyncError {
            #expect(error.kind == .replayedPush(acknowledgedThrough: accepted.acknowledgedThrough))
        }
        let report = try await device.syncClient().sync(over: transport)
        #expect(report.sent == 0)
        #expect(try await PeopleStore(database: site.database).count() == 1)
    }

    @Test func aPushOfAnInvalidPersonIsRefusedWholeNamingTheRecordAndField() async throws {
        let site = try await APISite()
        let (device, client) = try Self.rawDevice()
        try await device.write { db in
            try db.execute("INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('Ada', 'Lovelace', 36)")
            try db.execute("INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('', 'Nobody', 200)")
        }
        let invalidID = try await device.read { db in
            try SyncConflict.globalID(ofRow: 2, in: "peopleInfo", db)
        }
        do {
            _ = try await client.sync(over: InProcessSyncTransport(site: site, token: site.writer))
            Issue.record("an invalid person was accepted")
        } catch let error as SyncValidationError {
            #expect(error.table == "peopleInfo")
            #expect(error.globalID == invalidID)
            #expect(
                error.problems == [
                    .init(column: "age", message: "Age must be a whole number from 0 to 150."),
                    .init(column: "firstname", message: "First name is required."),
                ])
        }
        #expect(try await PeopleStore(database: site.database).count() == 0, "nothing of the push was applied")

        // Fixed on the device, the same changes go through.
        try await device.write { db in
            try db.execute("UPDATE peopleInfo SET firstname = 'Grace', age = 85 WHERE peopleInfoID = 2")
        }
        let report = try await client.sync(over: InProcessSyncTransport(site: site, token: site.writer))
        #expect(report.sent > 0)
        #expect(
            try await PeopleStore(database: site.database).all().map(\.fullName).sorted() == [
                "Ada Lovelace", "Grace Nobody",
            ])
    }

    @Test func theRefusalOfAnInvalidRecordIsAProblemDocumentWithItsFields() async throws {
        let site = try await APISite()
        let (device, client) = try Self.rawDevice()
        try await device.write { db in
            try db.execute("INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('Ada', '', 36)")
        }
        let push = try #require(try client.makePush())
        let row = try await device.read { db in try SyncConflict.globalID(ofRow: 1, in: "peopleInfo", db) }
        let answer = await site.sendSync("/api/v1/sync/push", SyncWire.encode(push), token: site.writer)
        #expect(answer.status == 422)
        #expect(answer.isProblem)
        #expect(answer.json["code"] as? String == "invalid-record")
        #expect(answer.json["app"] as? String == "people")
        #expect(answer.json["globalID"] as? String == row?.uuidString)
        #expect(answer.errors == ["lastname": "Last name is required."])
    }

    @Test func aTableTheServerDoesNotSyncIsRefused() async throws {
        let site = try await APISite()
        let queue = try DatabaseQueue.inMemory()
        let schema = SyncSchema(tables: [SyncedTable("secrets", columns: ["value"])])
        try await queue.write { db in
            try db.execute("CREATE TABLE secrets (id INTEGER PRIMARY KEY, value TEXT)")
            try schema.install(in: db)
            try db.execute("INSERT INTO secrets (value) VALUES ('hush')")
        }
        let push = try #require(try SyncClient(writer: queue, schema: schema).makePush())
        let answer = await site.sendSync("/api/v1/sync/push", SyncWire.encode(push), token: site.writer)
        #expect(answer.status == 422)
        #expect(answer.json["code"] as? String == "unknown-table")
        #expect(answer.json["table"] as? String == "secrets")
    }

    @Test func aColumnTheServerDoesNotSyncIsRefused() async throws {
        let site = try await APISite()
        let queue = try DatabaseQueue.inMemory()
        let schema = SyncSchema(tables: [
            SyncedTable("coffee", primaryKey: "coffeeID", columns: ["coffeeName", "origin"])
        ])
        try await queue.write { db in
            try db.execute("CREATE TABLE coffee (coffeeID INTEGER PRIMARY KEY, coffeeName TEXT, origin TEXT)")
            try schema.install(in: db)
            try db.execute("INSERT INTO coffee (coffeeName, origin) VALUES ('Latte', 'Kenya')")
        }
        let push = try #require(try SyncClient(writer: queue, schema: schema).makePush())
        let answer = await site.sendSync("/api/v1/sync/push", SyncWire.encode(push), token: site.writer)
        #expect(answer.status == 422)
        #expect(answer.json["code"] as? String == "unknown-column")
        #expect(answer.json["column"] as? String == "origin")
        #expect(try await CoffeeStore(database: site.database).count() == 0)
    }

    @Test func aChangeFromTheFutureIsRefusedForClockSkew() async throws {
        let site = try await APISite()
        let (device, client) = try Self.rawDevice()
        try await device.write { db in
            // The device's clock is a day ahead.
            let ahead = (Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000) << 16
            try db.execute("UPDATE sqlitestore_sync_state SET clock = \(ahead)")
            try db.execute("INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('Ada', 'Lovelace', 36)")
        }
        let push = try #require(try client.makePush())
        let answer = await site.sendSync("/api/v1/sync/push", SyncWire.encode(push), token: site.writer)
        #expect(answer.status == 422)
        #expect(answer.json["code"] as? String == "clock-skew")
        #expect(try await PeopleStore(database: site.database).count() == 0)
    }

    @Test func aTruncatedOrForeignBodyIsRefusedAs400Or415() async throws {
        let site = try await APISite()
        let device = try AppDatabase.inMemory()
        _ = try await PeopleStore(database: device).add(PersonDraft(firstName: "Ada", lastName: "L", age: 36))
        let push = SyncWire.encode(try #require(try device.syncClient().makePush()))
        let truncated = await site.sendSync("/api/v1/sync/push", push.dropLast(3), token: site.writer)
        #expect(truncated.status == 400)
        #expect(truncated.json["code"] as? String == "malformed-batch")
        let garbage = await site.sendSync("/api/v1/sync/pull", Data("hello".utf8), token: site.writer)
        #expect(garbage.status == 400)
        let json = await site.sendSync("/api/v1/sync/push", push, token: site.writer, contentType: "application/json")
        #expect(json.status == 415)
        #expect(json.isProblem)
        #expect(try await PeopleStore(database: site.database).count() == 0)
    }

    @Test func theHTTPTransportSyncsOverASocketAndAPushOverTheLimitIs413() async throws {
        let server = try TestServer()
        let user = try await UsersStore(database: server.database, hasher: cheapHasher).register(
            RegistrationForm(
                firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", password: "correct horse",
                passwordConfirmation: "correct horse", mobile: "9876543210", state: "Surrey", city: "London",
                pincode: "110001", address: "12 St James's Sq", gender: "female", dateOfBirth: "1990-12-10",
                imageName: "ada.png"))
        let secret = try await APITokenStore(database: server.database).create(
            userID: user.id, name: "phone", scope: .readWrite, expiresAt: nil
        ).secret
        let api = server.baseURL.appendingPathComponent("api").appendingPathComponent("v1")
        let device = try AppDatabase.inMemory()
        _ = try await PeopleStore(database: device).add(PersonDraft(firstName: "Ada", lastName: "Byron", age: 36))

        let report = try await device.syncClient().sync(over: HTTPSyncTransport(baseURL: api, token: secret))
        #expect(report.sent == 3)
        #expect(try await PeopleStore(database: server.database).all().map(\.fullName) == ["Ada Byron"])

        var request = URLRequest(url: api.appendingPathComponent("sync").appendingPathComponent("push"))
        request.httpMethod = "POST"
        request.httpBody = Data(count: SyncAPI.pushLimit + 1)
        request.setValue(SyncWire.contentType, forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer \(secret)", forHTTPHeaderField: "Authorization")
        let status = try await withCheckedThrowingContinuation { (done: CheckedContinuation<Int, any Error>) in
            URLSession.shared.dataTask(with: request) { _, response, error in
                if let error {
                    done.resume(throwing: error)
                } else {
                    done.resume(returning: (response as? HTTPURLResponse)?.statusCode ?? 0)
                }
            }.resume()
        }
        #expect(status == 413)
        await server.stopAndWait()
    }

    @Test func anUnreachableServerIsAClearError() async throws {
        let device = try AppDatabase.inMemory()
        let transport = HTTPSyncTransport(baseURL: URL(string: "http://127.0.0.1:9/api/v1")!, token: "rst_x")
        do {
            _ = try await device.syncClient().sync(over: transport)
            Issue.record("synced with no server")
        } catch let error as HTTPSyncError {
            #expect(error.kind == .unreachable)
            #expect(error.message.contains("cannot reach the server at 127.0.0.1"))
        }
    }
}

extension APISite {
    /// The answer to a sync request with `body` as it is.
    func sendSync(_ path: String, _ body: Data, token: String, contentType: String = SyncWire.contentType) async
        -> APIAnswer
    {
        var request = Request(
            method: "POST", path: path, headers: ["authorization": "Bearer \(token)", "content-type": contentType],
            clientAddress: "127.0.0.1")
        request.body = Array(body)
        return APIAnswer(await app.respond(to: request))
    }
}
