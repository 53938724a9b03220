import Foundation
import SQLiteStore

/// A coffee of the Coffee app: a row of `coffee`.
///
/// The model keeps the original tutorial's two states:
///
/// - **Hydrated or not** (the original tutorial's `isDetailViewHydrated`). The list loads
///   only the ID and name, which is all it shows; ``price`` and ``picture``
///   are loaded when the detail is opened (``CoffeeStore/hydrate(_:reload:)``).
///   Until then they are nil and ``isHydrated`` is false.
/// - **Dirty or not** (the original tutorial's `isDirty`): ``isDirty`` is true when the
///   name or price differs from what was last read from or written to the
///   database. ``CoffeeStore/save(_:ifVersion:)`` writes only the fields that differ,
///   and nothing at all for a model that is not dirty. Setting a field back
///   to its stored value makes the model clean again.
///
/// ```swift
/// var coffee = try await store.all()[0]    // id and name only
/// try await store.hydrate(&coffee)         // price and picture size and type
/// coffee.price = Decimal(string: "2.70")
/// coffee.isDirty                           // true
/// try await store.save(&coffee)            // UPDATE "coffee" SET "priceMicros" = ? ...
/// try await store.save(&coffee)            // false: nothing to write, no statement run
/// ```
///
/// The picture's bytes are never part of the model: only its size and
/// format. Pictures are stored and read by the store directly, in chunks
/// (``CoffeeStore/setPicture(id:from:)``), and are not part of the dirty
/// state.
public struct Coffee: Sendable, Identifiable, Hashable {
    /// The row's ID (`coffeeID`), assigned by the database.
    public internal(set) var id: Int64
    /// The coffee's name.
    public var name: String
    /// The price, exact; nil when the coffee is not hydrated yet, or has no
    /// price (the original tutorial's table allows NULL).
    public var price: Decimal?
    /// The stored picture's size and format; nil when there is none or the
    /// coffee is not hydrated yet.
    public internal(set) var picture: CoffeePicture?
    /// The version of the stored coffee this detail was read from (see
    /// ``RecordVersion``): its name, price, picture type and size, and the
    /// picture's own version (bumped whenever its bytes are stored, by
    /// anyone), never the bytes themselves. Nil for a coffee that was not
    /// read as a detail: one of the list's (not hydrated) or one made in
    /// memory. Saving through ``CoffeeStore/save(_:ifVersion:)`` updates
    /// it; editing a field in memory does not.
    public internal(set) var version: RecordVersion?
    /// Whether the details (price, picture) have been loaded.
    public private(set) var isHydrated: Bool
    /// The stored name or price, when it is not one the app can read (a
    /// name that is not text; a price that is not a whole number of
    /// millionths, such as `1e+300`, which the Coffee migrations keep as
    /// the text it was). Such a value
    /// stays in the database as it is, and ``name`` or ``price`` is empty
    /// or nil; saving a new one replaces it. Empty until hydrated.
    public internal(set) var unreadable: [UnreadableValue] = []

    /// The name and price as last read from or written to the database.
    private var stored: Fields

    struct Fields: Sendable, Hashable {
        var name: String
        var price: Decimal?
    }

    /// A coffee as the list loads it: ID and name, not hydrated, not dirty.
    public init(id: Int64, name: String) {
        self.id = id
        self.name = name
        self.price = nil
        self.picture = nil
        self.isHydrated = false
        self.stored = Fields(name: name, price: nil)
    }

    /// A hydrated coffee whose fields are as stored: not dirty.
    public init(id: Int64, name: String, price: Decimal?, picture: CoffeePicture?) {
        self.id = id
        self.name = name
        self.price = price
        self.picture = picture
        self.isHydrated = true
        self.stored = Fields(name: name, price: price)
    }

    /// Whether the name or price was changed in memory and not saved yet.
    public var isDirty: Bool { nameIsDirty || priceIsDirty }

    var nameIsDirty: Bool { name != stored.name }
    var priceIsDirty: Bool { price != stored.price }

    /// Takes the stored details: the snapshot becomes `fields`, and a field
    /// that was not edited in memory takes its stored value. Unsaved edits
    /// are kept (and stay dirty if they differ).
    mutating func hydrate(
        with fields: Fields, picture: CoffeePicture?, unreadable: [UnreadableValue], version: RecordVersion?
    ) {
        if !nameIsDirty { name = fields.name }
        if !priceIsDirty { price = fields.price }
        stored = fields
        self.picture = picture
        self.unreadable = unreadable
        self.version = version
        isHydrated = true
    }

    /// Records that the current name and price are what the database holds,
    /// at `version`; the fields written are readable now.
    mutating func markSaved(fields written: Set<String>, version: RecordVersion?) {
        stored = Fields(name: name, price: price)
        unreadable.removeAll { written.contains($0.field) }
        self.version = version
    }
}

extension Coffee {
    /// Equal when the fields are; the version is left out: it tells which
    /// stored row a value was read from, and a value edited in memory keeps
    /// it, so comparing it would tell two equal values apart.
    public static func == (lhs: Coffee, rhs: Coffee) -> Bool {
        lhs.id == rhs.id && lhs.name == rhs.name && lhs.price == rhs.price && lhs.picture == rhs.picture
            && lhs.isHydrated == rhs.isHydrated && lhs.unreadable == rhs.unreadable && lhs.stored == rhs.stored
    }

    /// Hashes the fields, as ``==`` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(name)
        hasher.combine(price)
        hasher.combine(picture)
        hasher.combine(isHydrated)
        hasher.combine(unreadable)
        hasher.combine(stored)
    }
}

extension Coffee: Encodable {
    private enum CodingKeys: String, CodingKey {
        case id, name, price, picture, unreadable
    }

    /// `{"id": 1, "name": "Espresso"}` for a coffee that is not hydrated;
    /// a hydrated one adds `price` (exact decimal text such as `"2.50"`, so
    /// that no JSON parser rounds it; null when it has none) and `picture`
    /// (`{"size": ..., "type": "image/png"}`, or null), and, only when a
    /// stored value cannot be read, `unreadable`: the fields at fault
    /// (`["price"]`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        if isHydrated {
            try container.encode(price.map(CoffeeRules.priceText), forKey: .price)
            try container.encode(picture, forKey: .picture)
            if !unreadable.isEmpty { try container.encode(unreadable.map(\.field), forKey: .unreadable) }
        }
    }
}

extension Coffee {
    /// The columns of `coffee` (see ``CoffeeSchema``).
    enum Columns: String, TableColumn {
        case id = "coffeeID"
        case name = "coffeeName"
        /// The price in millionths.
        case priceMicros
        /// The picture's MIME type.
        case pictureType
        /// The picture's bytes; last, see ``CoffeeSchema``.
        case picture
    }

    /// The detail's name for `length(picture)`.
    static let pictureSize = "pictureSize"
    /// The detail's name for the picture's version (`coffee_picture_version`).
    static let pictureVersion = "pictureVersion"
}

extension Coffee: FetchableRecord, PersistableRecord {
    /// The original tutorial's table.
    public static let tableName = "coffee"
    /// Its key column.
    public static let primaryKey = Columns.id.rawValue

    /// A coffee from a row of `coffee`: the list's (`coffeeID`,
    /// `coffeeName`: not hydrated), or the detail's, which adds
    /// `priceMicros`, `pictureType` and `length(picture) AS pictureSize`
    /// (hydrated; see ``unreadable``).
    ///
    /// - Throws: ``UnreadableRowError`` when the list's name is not text.
    public init(row: Row) throws { try self.init(row: row, strict: true) }

    /// Writes the ID, the name, and for a hydrated coffee the price in
    /// millionths; never the picture, which is streamed apart.
    public func encode(to columns: inout RecordColumns) {
        columns[Columns.id] = id
        columns[Columns.name] = name
        if isHydrated { columns[Columns.priceMicros] = price.flatMap(CoffeePrice.micros(exactly:)) }
    }

    /// Takes the ID SQLite gave the new row.
    public mutating func didInsert(rowID: Int64) { id = rowID }
}

extension Coffee: AppRecord {
    static let app = AppDatabase.App.coffee
    static let kind = "coffee"
    var recordVersion: RecordVersion? { version }
    /// The picture's version is the database's (a trigger sets it).
    static let readsBackAfterInsert = true
    /// What the version covers: the detail's columns, never the bytes.
    static let versionColumns =
        [Columns.id, .name, .priceMicros, .pictureType].map(\.rawValue) + [pictureSize, pictureVersion]
    static let selection: SQL = "\(columns: [Columns.id, .name])"
    /// Everything but the picture's bytes: `length()` of a blob column is
    /// read from the row's header, without loading the value. The
    /// picture's version makes the coffee's version change when its bytes
    /// do, without reading them.
    static let detailSelection: SQL = """
        \(columns: [Columns.id, .name, .priceMicros, .pictureType]), \
        length(\(Columns.picture)) AS \(identifier: pictureSize), \
        (SELECT version FROM coffee_picture_version v WHERE v.coffeeID = \(identifier: tableName).\(Columns.id)) \
        AS \(identifier: pictureVersion)
        """

    /// The list's row is strict about the name (unless `strict` is false);
    /// the detail's never throws for a stored value: a name or price the
    /// app cannot read is listed in ``unreadable``, so that the coffee can
    /// still be shown, edited and deleted.
    init(row: Row, strict: Bool) throws {
        var reader = RowReader(row, table: Self.tableName)
        let id = try reader.key(Columns.id)
        let storedName = try reader.text(Columns.name, field: "name")
        // The original tutorial's table allows a NULL name; it reads as empty.
        let name = storedName ?? ""
        guard row.hasColumn(Columns.priceMicros) else {
            if strict { try reader.check(kind: Self.kind, id: id) }
            self.init(id: id, name: name)
            return
        }
        let storedPrice: SQLiteValue = try row[Columns.priceMicros]
        var price: Decimal?
        switch storedPrice {
        case .null: break
        case .integer(let micros): price = CoffeePrice.decimal(micros: micros)
        default:
            reader.fail(
                storedPrice, column: Columns.priceMicros, field: "price",
                expected: "a price in millionths (a whole number)")
        }
        let size: Int? = try row[Self.pictureSize]
        let storedType: SQLiteValue = try row[Columns.pictureType]
        // A type that is not text is an unknown format.
        var type: String?
        if case .text(let text) = storedType { type = text }
        self.init(
            id: id, name: name, price: price,
            picture: size.map { CoffeePicture(size: $0, format: type.flatMap(PictureFormat.init(mimeType:))) })
        unreadable = reader.problems
        if reader.readsAsStored {
            // The values already read, as stored, in the order of
            // `versionColumns`; only the size and picture version are read
            // again as values.
            var input = Self.versionSeed
            input.append(integer: id)
            input.append(text: storedName)
            input.append(storedPrice)
            input.append(storedType)
            input.append(try row[Self.pictureSize])
            input.append(try row[Self.pictureVersion])
            version = input.version()
        } else {
            version = try RecordVersion.of(kind: Self.kind, row: row, columns: Self.versionColumns)
        }
    }

    /// The hash of the kind, which every version starts with.
    private static let versionSeed = VersionInput(kind: kind)
}

/// The fields of a coffee's form and of the price range a list takes in:
/// the names their problems carry, and the labels forms show and messages
/// start with ("Price must not be negative.").
public enum CoffeeField: String, FormField, CaseIterable {
    /// ``Coffee/name``.
    case name
    /// ``Coffee/price``.
    case price
    /// ``CoffeePriceRange/minimum``.
    case minimumPrice = "minimum price"
    /// ``CoffeePriceRange/maximum``.
    case maximumPrice = "maximum price"

    /// "Name", "Price", "Minimum price", "Maximum price".
    public var label: String {
        switch self {
        case .name: "Name"
        case .price: "Price"
        case .minimumPrice: "Minimum price"
        case .maximumPrice: "Maximum price"
        }
    }
}

/// The rules for a coffee's fields.
public enum CoffeeRules {
    /// The longest name, in characters.
    public static let maxNameLength = 100
    /// Prices must be below this.
    public static let priceLimit = Decimal(1_000_000_000)
    /// The most digits a price may have after the decimal point.
    public static let maxFractionDigits = 6
    /// The largest picture stored by default: 64 MiB.
    public static let defaultPictureSizeLimit = 64 << 20

    /// Parses a price typed as text, such as `3.50`: digits with an
    /// optional decimal point, never a locale's comma, never rounded.
    ///
    /// - Throws: ``ValidationError`` when the text is not such a number, is
    ///   negative, is not below ``priceLimit`` or has more than
    ///   ``maxFractionDigits`` decimals.
    public static func price(fromText text: String) throws -> Decimal {
        var validator = Validator()
        let price = validator.price(text)
        try validator.check()
        return price
    }

    /// The price as text with at least two decimals: `2.5` is `2.50`,
    /// `1234567.891` stays as it is.
    public static func priceText(_ price: Decimal) -> String {
        let text = price.description
        guard let point = text.firstIndex(of: ".") else { return text + ".00" }
        let decimals = text.distance(from: text.index(after: point), to: text.endIndex)
        return decimals >= 2 ? text : text + String(repeating: "0", count: 2 - decimals)
    }
}

extension Validator {
    /// Parses and checks a price typed as text; 0 when it has a problem.
    ///
    /// The limits are checked on the digits as typed, so that the value is
    /// built from at most 15 significant digits: `Decimal(string:)` alone
    /// would silently round a longer text.
    mutating func price(_ text: String, field: CoffeeField = .price) -> Decimal {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let isNegative = trimmed.hasPrefix("-")
        let body = isNegative ? trimmed.dropFirst() : Substring(trimmed)
        let parts = body.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        guard parts.allSatisfy({ $0.utf8.allSatisfy(isDigit) }), body.utf8.contains(where: isDigit) else {
            let comma =
                body.split(separator: ",").count == 2 && body.utf8.allSatisfy { isDigit($0) || $0 == UInt8(ascii: ",") }
            fail(field, comma ? Self.commaProblem : Self.numberProblem)
            return 0
        }
        let whole = parts[0].drop { $0 == "0" }
        let fraction = parts.count > 1 ? parts[1].reversed().drop { $0 == "0" }.reversed() : []
        if isNegative && (!whole.isEmpty || !fraction.isEmpty) {
            fail(field, Self.negativeProblem)
        } else if whole.count > 9 {
            fail(field, Self.limitProblem)
        } else if fraction.count > CoffeeRules.maxFractionDigits {
            fail(field, Self.decimalsProblem)
        } else if let value = Decimal(
            string: (whole.isEmpty ? "0" : String(whole)) + "." + String(fraction) + "0",
            locale: Locale(identifier: "en_US_POSIX"))
        {
            return value
        } else {
            fail(field, Self.numberProblem)
        }
        return 0
    }

    /// Checks a price's range and precision.
    mutating func checkPrice(_ price: Decimal, field: CoffeeField = .price) {
        if price.isNaN {
            fail(field, Self.numberProblem)
        } else if price < 0 {
            fail(field, Self.negativeProblem)
        } else if price >= CoffeeRules.priceLimit {
            fail(field, Self.limitProblem)
        } else if CoffeePrice.micros(exactly: price) == nil {
            fail(field, Self.decimalsProblem)
        }
    }

    // What is wrong with a price, to follow the field's label.
    static let numberProblem = "must be a number such as 3.50 (digits, with a point for the decimals)"
    static let commaProblem = "must be a number such as 3.50, with a point for the decimals, not a comma"
    static let negativeProblem = "must be 0 or more"
    static let limitProblem = "must be less than \(CoffeeRules.priceLimit)"
    static let decimalsProblem = "must have at most \(CoffeeRules.maxFractionDigits) digits after the point"
}

/// The fields of a new coffee, as typed.
public struct CoffeeDraft: Sendable, Equatable {
    /// The name; surrounding spaces are trimmed.
    public var name: String
    /// The price, from 0 to below ``CoffeeRules/priceLimit``.
    public var price: Decimal

    /// Creates a draft.
    public init(name: String, price: Decimal) {
        self.name = name
        self.price = price
    }

    /// The draft with its name trimmed, or the problems that keep it from
    /// being saved.
    public func validated() throws -> CoffeeDraft {
        var validator = Validator()
        let name = validator.text(name, field: CoffeeField.name, maxLength: CoffeeRules.maxNameLength)
        validator.checkPrice(price)
        try validator.check()
        return CoffeeDraft(name: name, price: price)
    }

    /// A validated draft from a form's text fields (or a command line),
    /// with the problems of every field reported together.
    public static func parse(name: String, price: String) throws -> CoffeeDraft {
        var validator = Validator()
        let name = validator.text(name, field: CoffeeField.name, maxLength: CoffeeRules.maxNameLength)
        let price = validator.price(price)
        try validator.check()
        return CoffeeDraft(name: name, price: price)
    }
}

/// Changes to a coffee's fields; nil leaves a field as it is.
public struct CoffeeChanges: Sendable, Equatable {
    /// A new name.
    public var name: String?
    /// A new price.
    public var price: Decimal?

    /// Creates changes.
    public init(name: String? = nil, price: Decimal? = nil) {
        self.name = name
        self.price = price
    }

    /// Validated changes from text fields; nil leaves a field as it is.
    /// The problems of every field are reported together; giving no field
    /// is one.
    public static func parse(name: String?, price: String?) throws -> CoffeeChanges {
        if name == nil && price == nil {
            throw ValidationError(field: "changes", message: "Nothing to change: give a name or a price.")
        }
        var validator = Validator()
        let name = name.map { validator.text($0, field: CoffeeField.name, maxLength: CoffeeRules.maxNameLength) }
        let price = price.map { validator.price($0) }
        try validator.check()
        return CoffeeChanges(name: name, price: price)
    }

    /// `coffee` with these changes applied; it is dirty if they differ
    /// from what it holds.
    public func applied(to coffee: Coffee) -> Coffee {
        var changed = coffee
        if let name { changed.name = name }
        if let price { changed.price = price }
        return changed
    }
}

/// How the list of coffees is ordered.
public enum CoffeeSort: String, Sendable, CaseIterable, Codable {
    /// By name, ignoring case and accents.
    case name
    /// The last added first.
    case newest
    /// The cheapest first, equal prices by name; coffees without a price,
    /// or with one that cannot be read, come last.
    case price
}

/// The prices a list or a total takes in; nil leaves that end open. Both
/// ends are included.
///
/// ```swift
/// let range = try CoffeePriceRange.parse(minimum: "2.50", maximum: nil)
/// let coffees = try store.list(sortedBy: .price, prices: range)
/// ```
///
/// A coffee without a price, or whose stored price cannot be read, is in
/// no range but ``any``.
public struct CoffeePriceRange: Sendable, Equatable {
    /// The lowest price taken in.
    public var minimum: Decimal?
    /// The highest price taken in.
    public var maximum: Decimal?

    /// Every coffee, priced or not.
    public static let any = CoffeePriceRange()

    /// Creates a range.
    public init(minimum: Decimal? = nil, maximum: Decimal? = nil) {
        self.minimum = minimum
        self.maximum = maximum
    }

    /// A range from text typed as prices are (`3.50`).
    ///
    /// - Throws: ``ValidationError`` when either is not a valid price, or
    ///   the minimum is above the maximum.
    public static func parse(minimum: String?, maximum: String?) throws -> CoffeePriceRange {
        var validator = Validator()
        let range = CoffeePriceRange(
            minimum: minimum.map { validator.price($0, field: .minimumPrice) },
            maximum: maximum.map { validator.price($0, field: .maximumPrice) })
        try validator.check()
        _ = try range.millionths()
        return range
    }

    /// Whether it takes in every coffee, priced or not (no end is set).
    public var isAny: Bool { minimum == nil && maximum == nil }

    /// The ends in millionths, as the database stores prices.
    ///
    /// - Throws: ``ValidationError`` when an end is not a valid price (see
    ///   ``CoffeeRules``), or the minimum is above the maximum.
    func millionths() throws -> (minimum: Int64?, maximum: Int64?) {
        var validator = Validator()
        if let minimum { validator.checkPrice(minimum, field: .minimumPrice) }
        if let maximum { validator.checkPrice(maximum, field: .maximumPrice) }
        if let minimum, let maximum, minimum > maximum {
            validator.fail(CoffeeField.minimumPrice, "must not be above the maximum price")
        }
        try validator.check()
        return (minimum.flatMap(CoffeePrice.micros(exactly:)), maximum.flatMap(CoffeePrice.micros(exactly:)))
    }
}

/// The sum of coffees' prices, exact.
public struct CoffeePriceTotal: Sendable, Equatable, Encodable {
    /// The sum of the prices counted.
    public var total: Decimal
    /// How many coffees' prices were added.
    public var count: Int
    /// How many coffees have no price, or one that cannot be read, and
    /// were left out (whatever the range).
    public var withoutPrice: Int

    /// Creates a total.
    public init(total: Decimal, count: Int, withoutPrice: Int) {
        self.total = total
        self.count = count
        self.withoutPrice = withoutPrice
    }

    private enum CodingKeys: String, CodingKey {
        case total, count, withoutPrice
    }

    /// `{"total": "19.50", "count": 6, "withoutPrice": 0}`: the total as
    /// exact decimal text, as prices are.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(CoffeeRules.priceText(total), forKey: .total)
        try container.encode(count, forKey: .count)
        try container.encode(withoutPrice, forKey: .withoutPrice)
    }
}

/// Prices as the `coffee` table stores them: whole numbers of millionths
/// (`priceMicros`), which SQL sorts, compares and adds exactly.
enum CoffeePrice {
    /// Millionths in one unit of currency.
    static let scale: Int64 = 1_000_000

    /// The price in millionths, or nil when it is not a whole number of
    /// them (more than 6 decimals) or does not fit an `Int64`.
    static func micros(exactly price: Decimal) -> Int64? {
        guard price.isFinite else { return nil }
        let scaled = price * Decimal(scale)
        // Whole-number decimals print as plain digits; anything else
        // (a fraction, too many digits) is no Int64.
        guard let micros = Int64(scaled.description), decimal(micros: micros) == price else { return nil }
        return micros
    }

    /// The price of a number of millionths, exact.
    static func decimal(micros: Int64) -> Decimal {
        Decimal(sign: micros < 0 ? .minus : .plus, exponent: -6, significand: Decimal(micros.magnitude))
    }
}
