import Foundation
import TestSupport

@testable import RecordsApp
@testable import SQLiteStore

/// A database with one registered user, a session store on it with the test clock, and the user.
func sessionFixture(policy: SessionPolicy = .standard) async throws -> (
    database: AppDatabase, sessions: SessionStore, clock: TestClock, user: User
) {
    let database = try emptyDatabase()
    let clock = TestClock()
    let user = try await usersStore(database).register(validForm())
    return (database, SessionStore(database: database, policy: policy, now: clock.closure), clock, user)
}

/// The rows of `User_Session`, read behind the store's back.
func sessionRows(_ database: AppDatabase) throws -> [Row] {
    try database.read { db in try db.fetchAll("SELECT * FROM User_Session ORDER BY SID") }
}
