// Fuzz target: rows of fuzzed values and types decoded into records, through
// a cursor (rows read live from SQLite, the `Decodable` decoding cache kept
// from row to row) and from copied rows, which must agree.
//
// Input (read with FuzzReader): a row count (1-3), a column count (0-11),
// each column's name (from a vocabulary of the records' property names in
// several cases, or fuzzed text), then each value: its kind, then its
// payload (an integer, a real, text or bytes, or typical text for dates,
// UUIDs, decimals, JSON and URLs). The rows are produced by
// `SELECT ?1 AS "name", ... UNION ALL SELECT ...` with the values bound.
//
// Invariants: nothing traps; errors are the library's types; for each
// record type, the cursor and the copies decode the same rows into the same
// records and fail on the same rows; a row a record kept while the cursor
// moved on holds the values of its row.

import Foundation
import SQLiteStore

enum Mood: String, Codable {
    case happy, sad
}

enum Level: Int, Codable {
    case low = 1
    case high = 9
}

struct Nested: Codable {
    var a: Int?
    var b: String?
    var c: [Double]?
}

/// Every property type the `Decodable` support documents, all optional.
struct Lenient: Decodable, FetchableRecord {
    var id: Int64?
    var name: String?
    var age: Int8?
    var count: UInt64?
    var score: Double?
    var ratio: Float?
    var flag: Bool?
    var data: Data?
    var bytes: [UInt8]?
    var date: Date?
    var uuid: UUID?
    var price: Decimal?
    var link: URL?
    var mood: Mood?
    var level: Level?
    var nested: Nested?
    var list: [Int]?
    var map: [String: String]?
}

/// Non-optional properties: NULLs and missing columns must be errors.
struct Strict: Decodable, FetchableRecord {
    var id: Int64
    var name: String
    var flag: Bool
    var score: Double
    var date: Date
    var price: Decimal
    var mood: Mood
    var small: UInt8
}

/// A hand-written record that reads every column every way, and keeps its
/// row (so the cursor must freeze it before moving on).
struct ByHand: FetchableRecord {
    let row: Row
    let readings: [String]

    init(row: Row) throws {
        self.row = row
        var readings: [String] = []
        func read<T>(_ body: () throws -> T) {
            do {
                readings.append(String(reflecting: try body()))
            } catch let error as ValueConversionError {
                _ = error.description
                readings.append("error")
            } catch {
                require(false, "an error of an undocumented type: \(type(of: error)): \(error)")
            }
        }
        for index in -1...row.count {
            read { try row[index] as SQLiteValue }
            read { try row.decode(Int.self, at: index) }
            read { try row.decode(Int8?.self, at: index) }
            read { try row.decode(UInt64.self, at: index) }
            read { try row.decode(Double.self, at: index) }
            read { try row.decode(Float?.self, at: index) }
            read { try row.decode(Bool.self, at: index) }
            read { try row.decode(String.self, at: index) }
            read { try row.decode(Data?.self, at: index) }
            read { try row.decode([UInt8].self, at: index) }
            read { try row.decode(Date.self, at: index) }
            read { try row.decode(UUID.self, at: index) }
            read { try row.decode(Decimal.self, at: index) }
        }
        for name in ["id", "ID", "name", "date", "price", "", "missing"] {
            read { try row[name] as SQLiteValue }
            read { try row[name] as Int64? }
            read { try row[name] as String }
            read { row.index(ofColumn: name) }
        }
        self.readings = readings
    }
}

private let vocabulary = [
    "id", "ID", "Id", "name", "NAME", "age", "count", "score", "ratio", "flag", "data", "bytes", "date", "uuid",
    "price", "link", "mood", "level", "nested", "list", "map", "small", "other", "",
]

private let typicalText = [
    "2026-11-30T09:41:05.250Z", "2026-11-30T09:41:05Z", "2026-11-30", "1970-01-01T00:00:00Z",
    "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "19.99", "0.1", "-0",
    "1e400", "NaN", "{\"a\":1,\"b\":\"x\",\"c\":[1.5]}", "[1,2,3]", "{\"k\":\"v\"}", "[[[[[[[[[[]]]]]]]]]]",
    "https://example.com/a?b#c", "happy", "sad", "true", "1", "9", "255", "256", "-1",
    "9223372036854775807", "18446744073709551615",
]

private func readValue(_ reader: inout FuzzReader) -> SQLiteValue {
    switch reader.byte() % 8 {
    case 0: return .null
    case 1: return .integer(reader.integer(width: Int(reader.byte() % 9)))
    case 2: return .real(reader.double())
    case 3: return .text(reader.string())
    case 4: return .blob(Data(reader.bytes()))
    case 5: return .text(reader.pick(typicalText))
    case 6: return .blob(Data(reader.bytes(limit: 16)))
    default: return .integer(Int64(reader.byte()) - 8)
    }
}

/// What decoding one row gave: the record's description, or the error's type.
private enum Outcome: Equatable {
    case record(String)
    case failure(String)
}

private func outcome<T>(_ body: () throws -> T) -> Outcome {
    do {
        return .record(String(reflecting: try body()))
    } catch let error as ValueConversionError {
        _ = error.description
        return .failure("ValueConversionError")
    } catch is DecodingError {
        return .failure("DecodingError")
    } catch let error as SQLiteError {
        return .failure("SQLiteError \(error.extendedCode)")
    } catch {
        require(false, "an error of an undocumented type: \(type(of: error)): \(error)")
        return .failure("?")
    }
}

/// Decodes the query's rows as `T` through a cursor and from copies of the
/// rows, and checks they agree.
private func compare<T: FetchableRecord>(_ type: T.Type, _ db: Database, _ sql: String, _ arguments: StatementArguments)
    -> [T]
{
    guard let copies = try? db.fetchAll(sql: sql, arguments: arguments) else { return [] }
    var live: [Outcome] = []
    var records: [T] = []
    do {
        let cursor = try db.fetchCursor(T.self, sql: sql, arguments: arguments)
        // A failed row is skipped; the cursor goes on with the next one.
        for _ in 0...copies.count {
            do {
                guard let record = try cursor.next() else { break }
                records.append(record)
                live.append(.record(String(reflecting: record)))
            } catch {
                live.append(outcome { throw error })
            }
        }
    } catch {
        require(false, "the cursor could not start a query that fetchAll ran: \(error)")
    }
    let fromCopies = copies.map { row in outcome { try T(row: row) } }
    let rebuilt = copies.map { row in outcome { try T(row: Row(columnNames: row.columnNames, values: row.values)) } }
    require(live.count == copies.count, "\(T.self): the cursor gave \(live.count) rows, fetchAll \(copies.count)")
    require(live == fromCopies, "\(T.self): live rows and copies decode differently:\n\(live)\n\(fromCopies)")
    require(fromCopies == rebuilt, "\(T.self): copies and rebuilt rows decode differently")
    return records
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var reader = FuzzReader(data, count: size)
    let rowCount = 1 + Int(reader.byte() % 3)
    let columnCount = Int(reader.byte() % 12)
    var names: [String] = []
    for _ in 0..<columnCount {
        let choice = reader.byte()
        names.append(choice & 0x80 == 0 ? vocabulary[Int(choice) % vocabulary.count] : reader.string(limit: 32))
    }
    var values: [SQLiteValue] = []
    for _ in 0..<rowCount * columnCount { values.append(readValue(&reader)) }

    let select: (Int) -> String = { row in
        "SELECT "
            + (0..<columnCount).map { column in
                let parameter = "?\(row * columnCount + column + 1)"
                return row == 0 ? "\(parameter) AS \(quotedIdentifier(names[column]))" : parameter
            }.joined(separator: ", ")
    }
    let sql =
        columnCount == 0
        ? "SELECT 1 AS id WHERE 0"
        : (0..<rowCount).map(select).joined(separator: " UNION ALL ")
    let arguments = StatementArguments(values: values)

    let db: Database
    do {
        db = try Database.inMemory()
    } catch {
        require(false, "cannot open an in-memory database: \(error)")
        return 0
    }
    defer { db.close() }

    _ = compare(Lenient.self, db, sql, arguments)
    _ = compare(Strict.self, db, sql, arguments)
    let kept = compare(ByHand.self, db, sql, arguments)
    // The cursor moved on after each of these records was made: the rows
    // they kept were frozen with their own values.
    if let copies = try? db.fetchAll(sql: sql, arguments: arguments) {
        for (record, copy) in zip(kept, copies) {
            require(record.row.values == copy.values, "a kept row changed: \(record.row) vs \(copy)")
        }
    }
    return 0
}
