import Foundation
import Testing

@testable import SQLiteStore

/// Dates as SQLite compares them: stored in the form of its own date
/// functions, read from every form written before.
@Suite("Dates compare correctly in SQL")
struct DateStorageTests {
    let db: Database

    init() throws {
        db = try makeMemoryDatabase()
        try db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, created)")
    }

    /// The instant of UTC text `YYYY-MM-DD HH:MM:SS.SSS`, computed by SQLite
    /// itself, so that no test repeats the conversion it checks.
    func date(_ text: String) throws -> Date {
        let milliseconds = try #require(
            try db.fetchOne(
                Int64.self, "SELECT CAST(round((julianday(?) - 2440587.5) * 86400000) AS INTEGER)", arguments: [text]))
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    func insert(_ dates: [Date]) throws {
        for (index, date) in dates.enumerated() {
            try db.execute("INSERT INTO notes (id, created) VALUES (?, ?)", arguments: [index + 1, date])
        }
    }

    @Test("A date is stored as SQLite's own UTC text with milliseconds")
    func storedForm() throws {
        try insert([try date("2026-12-01 06:02:02.418")])
        #expect(try db.fetchOne(SQLiteValue.self, "SELECT created FROM notes") == .text("2026-12-01 06:02:02.418"))
        #expect(
            try db.fetchOne(
                Bool.self, "SELECT created = strftime('%Y-%m-%d %H:%M:%f', '2026-12-01 06:02:02.418') FROM notes")
                == true)
    }

    @Test("On the boundary day, only dates after datetime(..., '-1 day') are newer")
    func boundaryDayComparison() throws {
        // "now" is 2026-12-01 06:02:02, so the cutoff is 2026-11-30 06:02:02:
        // the first date is on the cutoff's day but before it.
        try insert([
            try date("2026-11-30 03:00:00.000"), try date("2026-11-30 09:00:00.000"),
            try date("2026-12-01 01:00:00.500"), try date("2026-11-29 23:59:59.999"),
        ])
        let newer = try db.fetchAll(
            Int.self, "SELECT id FROM notes WHERE created > datetime('2026-12-01 06:02:02', '-1 day') ORDER BY id")
        #expect(newer == [2, 3])
        let olderThanDay = try db.fetchAll(
            Int.self, "SELECT id FROM notes WHERE created < datetime('2026-12-01 00:00:00', '-1 day') ORDER BY id")
        #expect(olderThanDay == [4])
    }

    @Test("A date on the very second datetime() gives sorts after it, as the longer text (documented)")
    func sameSecondAsDatetime() throws {
        try insert([try date("2026-11-30 06:02:02.000"), try date("2026-11-30 06:02:01.999")])
        let after = try db.fetchAll(
            Int.self, "SELECT id FROM notes WHERE created > datetime('2026-12-01 06:02:02', '-1 day')")
        #expect(after == [1])
        let exact = try db.fetchAll(
            Int.self,
            "SELECT id FROM notes WHERE created > strftime('%Y-%m-%d %H:%M:%f', '2026-12-01 06:02:02', '-1 day')")
        #expect(exact.isEmpty)
    }

    @Test("A Julian day converted as documented reads as its date")
    func julianDayConversion() throws {
        let expected = try date("2026-12-01 06:00:00.000")
        #expect(try db.fetchOne(Date.self, "SELECT unixepoch(2461375.75, 'julianday')") == expected)
        #expect(try db.fetchOne(Date.self, "SELECT datetime(2461375.75)") == expected)
    }

    @Test("ORDER BY a date column is chronological, before 1970 and across milliseconds")
    func ordering() throws {
        let chronological = [
            try date("0000-01-01 00:00:00.000"), try date("1969-07-20 20:17:40.000"),
            try date("1969-12-31 23:59:59.999"), try date("1970-01-01 00:00:00.000"),
            try date("2026-11-30 23:59:59.999"), try date("2026-12-01 00:00:00.000"),
            try date("2026-12-01 00:00:00.001"), try date("9999-12-31 23:59:59.999"),
        ]
        try insert(chronological.reversed())
        let sorted = try db.fetchAll(Date.self, "SELECT created FROM notes ORDER BY created")
        #expect(sorted == chronological)
        #expect(try db.fetchAll(Int.self, "SELECT id FROM notes ORDER BY created") == Array((1...8).reversed()))
    }

    @Test("Dates before 1970 are stored as their calendar day and time")
    func beforeEpoch() throws {
        let landing = Date(timeIntervalSince1970: -14_182_940)
        #expect(try landing.sqliteValue == .text("1969-07-20 20:17:40.000"))
        #expect(try roundTrip(landing, in: db) == landing)
        #expect(try Date(timeIntervalSince1970: -0.001).sqliteValue == .text("1969-12-31 23:59:59.999"))
    }

    @Test("Text in the former ISO-8601 form, with T and Z, is still read, with or without a fraction")
    func formerFormIsRead() throws {
        let expected = try date("2026-12-01 06:02:02.418")
        #expect(try Date(sqliteValue: .text("2026-12-01T06:02:02.418Z")) == expected)
        #expect(try Date(sqliteValue: .text("2026-12-01T06:02:02Z")) == expected.addingTimeInterval(-0.418))
        #expect(try Date(sqliteValue: .text("2026-12-01T06:02Z")) == expected.addingTimeInterval(-2.418))
        try db.execute("INSERT INTO notes (id, created) VALUES (1, '2026-12-01T06:02:02.418Z')")
        #expect(try db.fetchOne(Date.self, "SELECT created FROM notes") == expected)
    }

    @Test("The documented UPDATE rewrites former text into exactly the stored form")
    func formerFormRewrite() throws {
        let dates = [try date("2026-12-01 06:02:02.418"), try date("1969-12-31 23:59:59.999")]
        for (index, date) in dates.enumerated() {
            let former = ISO8601Text.format(
                millisecondsSince1970: Int64((date.timeIntervalSince1970 * 1000).rounded()), style: .iso8601)
            try db.execute("INSERT INTO notes (id, created) VALUES (?, ?)", arguments: [index + 1, former])
        }
        try db.execute("UPDATE notes SET created = strftime('%Y-%m-%d %H:%M:%f', created)")
        let stored = try db.fetchAll(SQLiteValue.self, "SELECT created FROM notes ORDER BY id")
        #expect(stored == (try dates.map { try $0.sqliteValue }))
    }

    @Test("What SQLite's date functions return is read as a date")
    func sqliteFunctionResults() throws {
        let expected = try date("2026-12-01 06:02:02.000")
        #expect(try db.fetchOne(Date.self, "SELECT datetime('2026-12-01 06:02:02')") == expected)
        #expect(try db.fetchOne(Date.self, "SELECT unixepoch('2026-12-01 06:02:02')") == expected)
        #expect(
            try db.fetchOne(Date.self, "SELECT strftime('%Y-%m-%d %H:%M:%f', '2026-12-01 06:02:02.250')")
                == expected.addingTimeInterval(0.25))
        #expect(
            try db.fetchOne(Date.self, "SELECT date('2026-12-01 06:02:02')") == expected.addingTimeInterval(-21_722))
    }

    @Test("Sub-millisecond parts are rounded to the nearest millisecond, not truncated")
    func subMillisecondRounding() throws {
        let base = try date("2026-12-01 06:02:02.000")
        let cases: [(offset: Double, stored: String)] = [
            (0.000_4, "2026-12-01 06:02:02.000"), (0.000_6, "2026-12-01 06:02:02.001"),
            (0.249_6, "2026-12-01 06:02:02.250"), (0.999_6, "2026-12-01 06:02:03.000"),
            (-0.000_6, "2026-12-01 06:02:01.999"),
        ]
        for (offset, stored) in cases {
            #expect(try base.addingTimeInterval(offset).sqliteValue == .text(stored), "\(offset)")
        }
        #expect(try Date(timeIntervalSince1970: -0.000_6).sqliteValue == .text("1969-12-31 23:59:59.999"))
        #expect(try Date(timeIntervalSince1970: -0.000_4).sqliteValue == .text("1970-01-01 00:00:00.000"))
    }

    @Test("A date round-trips to its millisecond; finer parts come back rounded")
    func millisecondRoundTrip() throws {
        let exact = try date("2026-12-01 06:02:02.418")
        #expect(try roundTrip(exact, in: db) == exact)
        #expect(try roundTrip(exact.addingTimeInterval(0.000_7), in: db) == (try date("2026-12-01 06:02:02.419")))
        #expect(try roundTrip(exact.addingTimeInterval(0.000_3), in: db) == exact)
        let early = try date("1969-07-20 20:17:40.123")
        #expect(try roundTrip(early, in: db) == early)
    }

    @Test("A fraction longer than milliseconds is read to the microsecond")
    func longFractionIsRead() throws {
        let read = try Date(sqliteValue: .text("2026-12-01 06:02:02.418999"))
        let expected = try date("2026-12-01 06:02:02.000").addingTimeInterval(0.418_999)
        #expect(abs(read.timeIntervalSince(expected)) < 0.000_001)
        #expect(try read.sqliteValue == .text("2026-12-01 06:02:02.419"))
        let nine = try Date(sqliteValue: .text("1970-01-01 00:00:00.9999996"))
        #expect(nine == Date(timeIntervalSince1970: 1))
    }

    @Test("Years 0000 and 9999 are stored; a date outside them throws, even by rounding")
    func range() throws {
        let first = try date("0000-01-01 00:00:00.000")
        let last = try date("9999-12-31 23:59:59.999")
        #expect(try first.sqliteValue == .text("0000-01-01 00:00:00.000"))
        #expect(try last.sqliteValue == .text("9999-12-31 23:59:59.999"))
        let outsides = [
            first.addingTimeInterval(-0.001), last.addingTimeInterval(0.000_6),
            Date.distantFuture.addingTimeInterval(1e12),
            Date(timeIntervalSince1970: -1e12),
        ]
        for outside in outsides {
            #expect(throws: ValueConversionError.self, "\(outside.timeIntervalSince1970)") { try outside.sqliteValue }
            #expect(throws: ValueConversionError.self) {
                try db.execute("INSERT INTO notes (id, created) VALUES (1, ?)", arguments: [outside])
            }
        }
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM notes") == 0)
    }

    @Test("Text that is no date, and numbers that are no time, throw")
    func badInput() throws {
        for bad in ["2026-12-01X06:02", "2026-12-01 06:02:02.", "2026-11-31 00:00:00.000", "10000-01-01 00:00:00"] {
            #expect(throws: ValueConversionError.self, "\(bad)") { try Date(sqliteValue: .text(bad)) }
        }
        #expect(throws: ValueConversionError.self) { try Date(sqliteValue: .real(.infinity)) }
        #expect(throws: ValueConversionError.self) { try Date(sqliteValue: .null) }
    }
}
