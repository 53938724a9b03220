import Foundation

@testable import RecordsApp
@testable import SQLiteStore

/// A clock the tests move by hand: sessions and the log-in throttle read
/// it instead of the system's, so expiry is tested without waiting.
final class TestClock: Sendable {
    private let current: Locked<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Locked(start)
    }

    var now: Date { current.withLock { $0 } }

    func advance(by duration: Duration) {
        current.withLock { $0 = $0.addingTimeInterval(Session.seconds(duration)) }
    }

    func advance(seconds: Int64) { advance(by: .seconds(seconds)) }

    /// The closure stores take.
    var closure: @Sendable () -> Date { { [self] in self.now } }
}

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
