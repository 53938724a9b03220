import Foundation

// MARK: - Date

extension Date: SQLiteValueConvertible {
    /// The date as UTC text with milliseconds, `2026-11-30 09:41:05.250`:
    /// the form SQLite's own date functions produce, so that stored dates
    /// sort and compare correctly, as text, with them.
    ///
    /// ```swift
    /// try db.execute("INSERT INTO notes (created) VALUES (?)", arguments: [Date()])
    /// // The last day's notes, compared by SQLite as text:
    /// try db.fetchAll("SELECT * FROM notes WHERE created > strftime('%Y-%m-%d %H:%M:%f', 'now', '-1 day')")
    /// ```
    ///
    /// - The text is `YYYY-MM-DD HH:MM:SS.SSS`, always UTC, always with three
    ///   decimals. `strftime('%Y-%m-%d %H:%M:%f', ...)` gives exactly this
    ///   form. `datetime(...)` gives the same without the fraction, which
    ///   compares correctly except for one case: a stored date that falls on
    ///   that very second (`... 06:00:00.000`) sorts after `... 06:00:00`,
    ///   as the longer text.
    /// - The date is rounded to the nearest millisecond: rounding, not
    ///   truncation, because a `Date` is a binary fraction of seconds, and
    ///   `.250` is often held as `.24999999...`. Reading the text back
    ///   gives exactly the `Date` of that millisecond.
    /// - Only years 0000 to 9999 can be written (what SQLite's date
    ///   functions handle, and what sorts correctly as four digits); a date
    ///   outside them throws ``ValueConversionError``.
    ///
    /// Earlier versions of SQLiteStore wrote dates as ISO 8601 with a `T`
    /// and a `Z` (`2026-11-30T09:41:05.250Z`), which SQLite's functions
    /// read but which compares wrongly with their results on the same day
    /// (`T` sorts after a space). Such text is still read; to
    /// compare a column holding it in SQL, rewrite it once with
    /// `UPDATE t SET d = strftime('%Y-%m-%d %H:%M:%f', d)`.
    ///
    /// Inside the JSON text of a nested `Codable` value, dates stay in the
    /// ISO-8601 form with `T` and `Z` that JSON readers expect (see
    /// ``PersistableRecord``).
    public var sqliteValue: SQLiteValue {
        get throws { .text(try ISO8601Text.format(self, style: .sqlite)) }
    }

    /// Reads a date from text or a number.
    ///
    /// - Text: `YYYY-MM-DD`, optionally followed by `T` or a space and
    ///   `HH:MM`, then optionally `:SS` and a fraction of any length, then
    ///   optionally `Z` or a `±HH:MM` offset. Without an offset the time is
    ///   UTC, as in SQLite. This reads what this conversion writes, the
    ///   ISO-8601 form it wrote before (`2026-11-30T09:41:05.250Z`), and
    ///   what SQLite's `date()`, `datetime()` and `strftime()` produce. A
    ///   fraction past six digits is rounded to the microsecond.
    /// - INTEGER or REAL: a Unix time in seconds, as SQLite's `unixepoch()`
    ///   gives. A Julian day number (`julianday()`) is not recognised, since
    ///   the same REAL is also a Unix time; convert it in SQL with
    ///   `unixepoch(value, 'julianday')` or `datetime(value)`.
    ///
    /// - Throws: ``ValueConversionError`` for NULL, a blob, text in no such
    ///   form or naming no real day (`2023-02-30`), or a non-finite REAL.
    public init(sqliteValue: SQLiteValue) throws {
        switch sqliteValue {
        case .text(let text):
            guard let seconds = ISO8601Text.parse(text) else {
                throw ValueConversionError(.invalidFormat("text is not an ISO-8601 date"), type: Date.self)
            }
            self = Date(timeIntervalSince1970: seconds)
        case .integer(let seconds):
            self = Date(timeIntervalSince1970: TimeInterval(seconds))
        case .real(let seconds):
            guard seconds.isFinite else { throw ValueConversionError(.outOfRange, type: Date.self) }
            self = Date(timeIntervalSince1970: seconds)
        case .null:
            throw ValueConversionError(.unexpectedNull, type: Date.self)
        case .textBytes:
            throw ValueConversionError(.invalidFormat("text is not valid UTF-8"), type: Date.self)
        case .blob:
            throw ValueConversionError(.typeMismatch(found: .blob), type: Date.self)
        }
    }
}

/// Formatting and parsing of ISO-8601 dates, written out by hand: it is
/// exact to the millisecond, independent of locale and calendar settings,
/// free of shared formatter state, and fast.
enum ISO8601Text {
    /// How a date is written.
    enum Style {
        /// `2026-11-30 09:41:05.250`: how columns store dates, SQLite's own
        /// form.
        case sqlite
        /// `2026-11-30T09:41:05.250Z`: ISO 8601 as JSON readers expect it.
        case iso8601
    }

    /// The earliest and latest milliseconds since 1970 that can be written:
    /// 0000-01-01 00:00:00.000 to 9999-12-31 23:59:59.999.
    static let millisecondRange: ClosedRange<Double> = -62_167_219_200_000...253_402_300_799_999

    /// The date in `style`, rounded to the nearest millisecond.
    ///
    /// - Throws: ``ValueConversionError`` for a date outside years 0000 to
    ///   9999.
    static func format(_ date: Date, style: Style) throws -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard millisecondRange.contains(milliseconds) else {
            throw ValueConversionError(.notStorable("only years 0000 to 9999 can be stored"), type: Date.self)
        }
        return format(millisecondsSince1970: Int64(milliseconds), style: style)
    }

    static func format(millisecondsSince1970 ms: Int64, style: Style) -> String {
        let msPerDay: Int64 = 86_400_000
        var days = ms / msPerDay
        var msOfDay = ms % msPerDay
        if msOfDay < 0 {
            msOfDay += msPerDay
            days -= 1
        }
        let (year, month, day) = civil(fromDays: days)
        let hour = msOfDay / 3_600_000
        let minute = msOfDay / 60_000 % 60
        let second = msOfDay / 1000 % 60
        let millisecond = msOfDay % 1000
        var bytes = [UInt8]()
        bytes.reserveCapacity(24)
        func append(_ value: Int64, digits: Int) {
            var divisor: Int64 = 1
            for _ in 1..<digits { divisor *= 10 }
            var value = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(value / divisor))
                value %= divisor
                divisor /= 10
            }
        }
        append(year, digits: 4)
        bytes.append(UInt8(ascii: "-"))
        append(month, digits: 2)
        bytes.append(UInt8(ascii: "-"))
        append(day, digits: 2)
        bytes.append(UInt8(ascii: style == .sqlite ? " " : "T"))
        append(hour, digits: 2)
        bytes.append(UInt8(ascii: ":"))
        append(minute, digits: 2)
        bytes.append(UInt8(ascii: ":"))
        append(second, digits: 2)
        bytes.append(UInt8(ascii: "."))
        append(millisecond, digits: 3)
        if style == .iso8601 { bytes.append(UInt8(ascii: "Z")) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Seconds since 1970 for an ISO-8601 date, or nil if the text is not one.
    static func parse(_ text: String) -> TimeInterval? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ count: Int) -> Int64? {
            guard index + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<index + count] {
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            index += count
            return value
        }
        func expect(_ character: Character) -> Bool {
            guard index < bytes.count, bytes[index] == character.asciiValue else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month)
        else { return nil }
        // Counted in whole microseconds, so that text with milliseconds
        // gives exactly the `Date` of those milliseconds.
        var microseconds = days(fromYear: year, month: month, day: day) * 86_400_000_000
        if index == bytes.count { return timeInterval(microseconds: microseconds) }
        guard expect("T") || expect("t") || expect(" ") else { return nil }
        guard let hour = number(2), expect(":"), let minute = number(2), hour < 24, minute < 60 else { return nil }
        microseconds += (hour * 3600 + minute * 60) * 1_000_000
        if expect(":") {
            guard let second = number(2), second < 60 else { return nil }
            microseconds += second * 1_000_000
            if expect(".") {
                // Digits past the sixth round the fraction to the nearest
                // microsecond.
                var fraction: Int64 = 0
                var digits = 0
                var roundsUp = false
                let start = index
                while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                    let digit = Int64(bytes[index] - 48)
                    if digits < 6 {
                        fraction = fraction * 10 + digit
                    } else if digits == 6 {
                        roundsUp = digit >= 5
                    }
                    digits += 1
                    index += 1
                }
                guard index > start else { return nil }
                for _ in digits..<max(digits, 6) { fraction *= 10 }
                microseconds += fraction + (roundsUp ? 1 : 0)
            }
        }
        _ = expect(" ")
        if index == bytes.count || ((expect("Z") || expect("z")) && index == bytes.count) {
            return timeInterval(microseconds: microseconds)
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") else {
            return nil
        }
        let sign: Int64 = bytes[index] == UInt8(ascii: "+") ? 1 : -1
        index += 1
        guard let offsetHours = number(2), offsetHours < 24 else { return nil }
        var offsetMinutes: Int64 = 0
        if index < bytes.count {
            _ = expect(":")
            guard let minutes = number(2), minutes < 60 else { return nil }
            offsetMinutes = minutes
        }
        guard index == bytes.count else { return nil }
        return timeInterval(microseconds: microseconds - sign * (offsetHours * 3600 + offsetMinutes * 60) * 1_000_000)
    }

    /// Seconds for a count of microseconds: a whole number of milliseconds
    /// gives the same `TimeInterval` as `Double(milliseconds) / 1000`.
    private static func timeInterval(microseconds: Int64) -> TimeInterval {
        if microseconds % 1000 == 0 { return Double(microseconds / 1000) / 1000 }
        return Double(microseconds / 1_000_000) + Double(microseconds % 1_000_000) / 1_000_000
    }

    static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Days from civil and back, proleptic Gregorian (H. Hinnant's algorithms).
    static func days(fromYear year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

// MARK: - UUID

extension UUID: SQLiteValueConvertible {
    /// The UUID as its canonical text, `E621E1F8-C36C-495A-93FC-0C247A3E6E5F`.
    public var sqliteValue: SQLiteValue { .text(uuidString) }

    /// Reads canonical text in either case, or a 16-byte blob.
    public init(sqliteValue: SQLiteValue) throws {
        switch sqliteValue {
        case .text(let text):
            guard let uuid = UUID(uuidString: text) else {
                throw ValueConversionError(.invalidFormat("text is not a UUID"), type: UUID.self)
            }
            self = uuid
        case .blob(let data):
            guard data.count == 16 else {
                throw ValueConversionError(.invalidFormat("blob of \(data.count) bytes is not a UUID"), type: UUID.self)
            }
            let b = [UInt8](data)
            self = UUID(
                uuid: (
                    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]
                ))
        case .null:
            throw ValueConversionError(.unexpectedNull, type: UUID.self)
        default:
            throw ValueConversionError(.typeMismatch(found: sqliteValue.storageClass), type: UUID.self)
        }
    }
}

// MARK: - Decimal

extension Decimal: SQLiteValueConvertible {
    /// The decimal as exact text such as `1234567.891`. A REAL would round
    /// it to the nearest binary fraction (0.1 becomes 0.1000000000000000055...).
    ///
    /// Text keeps every digit, whatever the scale, and reads back as the
    /// same `Decimal`; the price is that SQL sees text, not a number:
    /// `ORDER BY` sorts it as text (`0.1`, `10`, `100`, `9.5`), and
    /// `WHERE amount > 5` compares text with a number (every text is
    /// greater). `CAST(amount AS REAL)` sorts and compares correctly but
    /// approximately, and `sum()` of it adds binary fractions. When SQL must
    /// sort, filter or add such values exactly, store them in an `INTEGER`
    /// column as a count of a fixed smallest unit (cents, or millionths)
    /// instead, as the records app does with coffee prices.
    public var sqliteValue: SQLiteValue {
        get throws {
            if isNaN { throw ValueConversionError(.notStorable("NaN has no decimal text"), type: Decimal.self) }
            return .text(description)
        }
    }

    /// Reads decimal text (`-12.50`, `1e-3`), an INTEGER exactly, or a REAL
    /// through its shortest decimal text.
    public init(sqliteValue: SQLiteValue) throws {
        switch sqliteValue {
        case .text(let text):
            guard let decimal = Decimal.parseExact(text) else {
                throw ValueConversionError(.invalidFormat("text is not a decimal number"), type: Decimal.self)
            }
            self = decimal
        case .integer(let integer):
            self = Decimal(integer)
        case .real(let real):
            guard real.isFinite, let decimal = Decimal.parseExact(String(real)) else {
                throw ValueConversionError(.outOfRange, type: Decimal.self)
            }
            self = decimal
        case .null:
            throw ValueConversionError(.unexpectedNull, type: Decimal.self)
        case .textBytes:
            throw ValueConversionError(.invalidFormat("text is not valid UTF-8"), type: Decimal.self)
        case .blob:
            throw ValueConversionError(.typeMismatch(found: .blob), type: Decimal.self)
        }
    }

    /// Parses the whole text as a decimal number: `Decimal(string:)` alone
    /// accepts a numeric prefix ("12abc" gives 12).
    static func parseExact(_ text: String) -> Decimal? {
        var sawDigit = false
        var state = 0  // 0 sign, 1 integer digits, 2 fraction digits, 3 exponent sign, 4 exponent digits
        var sawExponentDigit = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                if state == 0 {
                    state = 1
                } else if state == 3 {
                    state = 4
                } else {
                    return nil
                }
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if state == 0 { state = 1 }
                if state == 3 { state = 4 }
                if state == 4 { sawExponentDigit = true } else { sawDigit = true }
            case UInt8(ascii: "."):
                guard state <= 1 else { return nil }
                state = 2
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                guard sawDigit, state <= 2 else { return nil }
                state = 3
            default:
                return nil
            }
        }
        guard sawDigit, state < 3 || sawExponentDigit else { return nil }
        return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
    }
}
