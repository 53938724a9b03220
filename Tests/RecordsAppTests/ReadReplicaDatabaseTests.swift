import Foundation
import TestSupport
import Testing

@testable import RecordsApp
@testable import SQLiteStore

/// A read replica opened over an ordinary file with SQLite's own VFS
/// ("unix"), as `records serve --read-replica` opens one through
/// Litestream's.
@Suite("A records database as a read replica")
struct ReadReplicaDatabaseTests {
    @Test("Sessions are read without the writes a primary makes: no touch, no removal of an expired one")
    func sessionsOnAReplica() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.fileURL("primary.sqlite")
        let clock = TestClock()
        let primary = try AppDatabase(url: url, start: .empty)
        let user = try await usersStore(primary).register(validForm())
        let created = try await SessionStore(database: primary, now: clock.closure).create(userID: user.id)
        _ = try await PeopleStore(database: primary).add(PersonDraft(firstName: "Hedy", lastName: "Lamarr", age: 36))
        primary.close()

        let replica = try AppDatabase(readReplicaAt: url.path, vfs: "unix")
        #expect(replica.isReadOnly)
        let sessions = SessionStore(database: replica, now: clock.closure)
        // Past the touch interval: a primary would write the last use.
        clock.advance(by: .seconds(3_600))
        let found = try await sessions.signedIn(token: created.token)
        #expect(found?.user.id == user.id)
        #expect(found?.session.lastSeenAt == created.session.lastSeenAt)
        // Past the idle timeout: not signed in, and the row is left for the
        // primary to remove.
        clock.advance(by: .seconds(8 * 86_400))
        #expect(try await sessions.signedIn(token: created.token) == nil)
        #expect(try replica.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM User_Session") } == 1)
        // Lists and searches read what the primary folded.
        #expect(
            try await PeopleStore(database: replica).fullTextSearch("lamarr").matches.map(\.record.lastName) == [
                "Lamarr"
            ])
        // Every write fails with SQLite's read-only error.
        let error = await #expect(throws: SQLiteError.self) {
            _ = try await PeopleStore(database: replica).add(
                PersonDraft(firstName: "Emmy", lastName: "Noether", age: nil))
        }
        #expect(error?.code == .readOnly)
        replica.close()
    }

    @Test("A replica whose schema lacks this version's migrations is refused, saying to upgrade the primary first")
    func olderSchema() throws {
        let directory = try TemporaryDirectory()
        let url = directory.fileURL("primary.sqlite")
        try AppDatabase(url: url, start: .empty).close()
        let db = try Database(path: url.path)
        let last = try #require(AppDatabase.migrator.identifiers.last)
        try db.execute("DELETE FROM sqlitestore_migrations WHERE identifier = ?", arguments: [last])
        db.close()
        let error = #expect(throws: ReadReplicaError.self) {
            _ = try AppDatabase(readReplicaAt: url.path, vfs: "unix")
        }
        #expect(error?.message.contains(last) == true)
        #expect(error?.message.contains("upgrade and start the primary first") == true)
        // Nothing was changed: the primary still has its pending migration.
        let check = try Database(path: url.path)
        #expect(try AppDatabase.migrator.pendingIdentifiers(in: check) == [last])
    }
}
