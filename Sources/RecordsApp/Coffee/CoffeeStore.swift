import Foundation
import SQLiteStore

/// Reads and writes coffees and their pictures. Every value is a bound
/// argument; every write is validated first and runs in a transaction.
/// Every method runs on the database's own threads (pictures are streamed
/// there too), never on the caller's actor.
///
/// ```swift
/// let store = CoffeeStore(database: database)
/// let latte = try await store.add(CoffeeDraft(name: "Caffè Latte", price: Decimal(string: "3.20")!))
/// var coffees = try await store.all()           // id and name only: what the list shows
/// try await store.hydrate(&coffees[0])          // price, picture size and format
/// try await store.setPicture(id: latte.id, from: .file(path: "latte.png"))   // streamed, checked first
/// try await store.writePicture(id: latte.id, to: .file(path: "copy.png"))    // byte for byte
/// ```
///
/// The list and the detail never read a picture's bytes: the detail gets
/// its size from the row's header (`length(picture)`, which SQLite answers
/// without loading the value). Pictures go through SQLite's incremental
/// BLOB I/O in chunks, so memory stays flat whatever their size.
public struct CoffeeStore: RecordStore {
    let database: AppDatabase
    let table: RecordTable<Coffee>
    /// How the shared methods reach the table.
    public var access: RecordStoreAccess<Coffee, CoffeeSort> { RecordStoreAccess(table, orderBy: Self.orderBy) }
    /// The largest picture accepted, in bytes.
    public let pictureSizeLimit: Int

    /// Creates a store on the app's database.
    ///
    /// - Parameter pictureSizeLimit: The largest picture accepted, in bytes
    ///   (64 MiB by default); must not be negative.
    public init(database: AppDatabase, pictureSizeLimit: Int = CoffeeRules.defaultPictureSizeLimit) {
        precondition(pictureSizeLimit >= 0, "the picture size limit must not be negative")
        self.database = database
        self.table = RecordTable(database: database)
        self.pictureSizeLimit = pictureSizeLimit
    }

    // MARK: - The list: ID and name only

    /// Every coffee, ID and name only (not hydrated), in the given order.
    ///
    /// - Throws: ``UnreadableRowError`` naming the first coffee whose
    ///   stored name is not text (see ``list(sortedBy:direction:prices:page:)``, which
    ///   reads the others all the same); ``ValidationError`` for an invalid
    ///   price range.
    public func all(sortedBy sort: CoffeeSort = .name, direction: SortDirection? = nil, prices: CoffeePriceRange)
        async throws -> [Coffee]
    {
        try await list(sortedBy: sort, direction: direction, prices: prices).get()
    }

    /// Every coffee whose name can be read, ID and name only, in the given
    /// order, and the rows whose name cannot.
    ///
    /// Sorting by price and the price range are done by SQLite, on the
    /// prices' exact millionths: `9.5` comes before `10`, and a minimum of
    /// `5` takes in `9.5`.
    ///
    /// - Parameters:
    ///   - sort: The order.
    ///   - direction: Which way it runs; the order's own when nil. Coffees
    ///     without a readable price come last both ways.
    ///   - prices: Only the coffees whose price is in this range; by
    ///     default every coffee, priced or not.
    ///   - page: Which rows of the list; all by default.
    /// - Throws: ``ValidationError`` when an end of `prices` is not a valid
    ///   price or the minimum is above the maximum.
    public func list(
        sortedBy sort: CoffeeSort = .name, direction: SortDirection? = nil, prices: CoffeePriceRange,
        page: ListPage = .all
    ) async throws -> RecordList<Coffee> {
        try await table.list(
            where: Self.priceFilter(prices), orderBy: Self.orderBy(sort, direction ?? sort.defaultDirection),
            page: page)
    }

    /// Page `number` (from 1) of `size` coffees in the given order going
    /// `direction` (the order's own when nil), ID and
    /// name only unless `hydrated` (then with price and picture, never its
    /// bytes), whether another page follows, and how many coffees are in
    /// `prices`; only that page is read, in one access of the database.
    ///
    /// - Throws: ``ValidationError`` when `number` is below 1, `size` is
    ///   not from 1 to ``PageRules/maxSize``, or `prices` is not a valid
    ///   range.
    public func page(
        sortedBy sort: CoffeeSort = .name, direction: SortDirection? = nil, prices: CoffeePriceRange = .any,
        number: Int, size: Int, hydrated: Bool = false
    ) async throws -> RecordPage<Coffee> {
        try await table.page(
            where: Self.priceFilter(prices), orderBy: Self.orderBy(sort, direction ?? sort.defaultDirection),
            number: number, size: size,
            details: hydrated)
    }

    /// Walks the coffees (as ``list(sortedBy:direction:prices:page:)``) without
    /// loading the whole list: `body` gets the rows in chunks as they are
    /// read, on a reader connection's thread, all from one committed state;
    /// ID and name only unless `hydrated` (then with price and picture,
    /// never its bytes).
    ///
    /// - Returns: How many rows `body` was given.
    @discardableResult
    public func forEach(
        sortedBy sort: CoffeeSort = .name, direction: SortDirection? = nil, prices: CoffeePriceRange,
        page: ListPage = .all, hydrated: Bool = false, _ body: @escaping @Sendable (RecordList<Coffee>) throws -> Void
    ) async throws -> Int {
        try await table.forEach(
            where: Self.priceFilter(prices), orderBy: Self.orderBy(sort, direction ?? sort.defaultDirection),
            page: page, details: hydrated, body)
    }

    /// The sum of the prices of the coffees in `prices` (every priced
    /// coffee by default), added by SQLite as whole numbers of millionths:
    /// exact, so `0.1 + 0.2` is `0.3`. Coffees without a price, or with one
    /// that cannot be read, are left out and counted in
    /// ``CoffeePriceTotal/withoutPrice``.
    ///
    /// - Throws: ``ValidationError`` for an invalid range, or a database
    ///   error.
    public func totalPrice(prices: CoffeePriceRange = .any) async throws -> CoffeePriceTotal {
        let filter = try Self.priceFilter(prices, pricedOnly: true)
        return try await database.read(for: .coffee) { db in
            // Whole units and millionths are added apart: a sum of prices
            // below a billion overflows neither before some 9 billion
            // coffees, where one sum of millionths would after 9,223.
            guard
                let row = try db.fetchOne(
                    """
                    SELECT count(*), ifnull(sum(\(Column.priceMicros) / \(CoffeePrice.scale)), 0),
                        ifnull(sum(\(Column.priceMicros) % \(CoffeePrice.scale)), 0)
                    FROM \(identifier: Coffee.tableName) WHERE \(filter)
                    """)
            else { return CoffeePriceTotal(total: 0, count: 0, withoutPrice: 0) }
            let unpriced: SQL = """
                SELECT count(*) FROM \(identifier: Coffee.tableName) WHERE typeof(\(Column.priceMicros)) <> 'integer'
                """
            let withoutPrice = try db.fetchOne(Int.self, unpriced) ?? 0
            let units: Int64 = try row[1]
            let micros: Int64 = try row[2]
            return CoffeePriceTotal(
                total: Decimal(units) + CoffeePrice.decimal(micros: micros), count: try row[0],
                withoutPrice: withoutPrice)
        }
    }

    // MARK: - The detail

    /// The coffee with that ID, hydrated; nil when there is none. A stored
    /// name or price the app cannot read is listed in
    /// ``Coffee/unreadable``.
    public func coffee(id: Int64) async throws -> Coffee? {
        try await table.record(id: id)
    }

    /// Loads a coffee's details (the original tutorial's `hydrateDetailViewData`): price,
    /// picture size and format. Edits not saved yet are kept.
    ///
    /// - Parameters:
    ///   - coffee: The coffee; nothing is read when it is hydrated already,
    ///     unless `reload` is true.
    ///   - reload: Read the stored values again even if it is hydrated.
    /// - Throws: ``RecordNotFoundError`` when the coffee was deleted.
    public func hydrate(_ coffee: inout Coffee, reload: Bool = false) async throws {
        if coffee.isHydrated && !reload { return }
        guard let stored = try await table.record(id: coffee.id) else {
            throw RecordNotFoundError(kind: "coffee", id: coffee.id)
        }
        coffee.hydrate(
            with: Coffee.Fields(name: stored.name, price: stored.price), picture: stored.picture,
            unreadable: stored.unreadable, version: stored.version)
    }

    // MARK: - Changes

    /// Saves a new coffee and returns it, hydrated, with its ID.
    ///
    /// - Throws: ``ValidationError`` (nothing is written) or a database error.
    @discardableResult
    public func add(_ draft: CoffeeDraft) async throws -> Coffee {
        let valid = try draft.validated()
        _ = try Self.micros(valid.price)
        return try await table.insert(Coffee(id: 0, name: valid.name, price: valid.price, picture: nil))
    }

    /// Writes the fields of `coffee` that changed since it was read or last
    /// saved, and marks it clean, at the version the write made. A coffee
    /// that is not dirty is not written at all: no statement runs.
    ///
    /// - Parameter ifVersion: Write only if the coffee is still at this
    ///   version (usually ``Coffee/version`` as it was read), checked in
    ///   the transaction that writes; nil writes whatever it holds.
    /// - Returns: Whether anything was written.
    /// - Throws: ``ValidationError`` (an invalid name or price, or a price
    ///   cleared), ``RecordNotFoundError`` (the coffee was deleted) or
    ///   ``VersionConflictError`` (someone changed it since): nothing is
    ///   written and the coffee stays dirty.
    @discardableResult
    public func save(_ coffee: inout Coffee, ifVersion: RecordVersion? = nil) async throws -> Bool {
        guard coffee.isDirty else { return false }
        var validator = Validator()
        var setting: [(column: Coffee.Columns, value: (any SQLiteValueConvertible)?)] = []
        var saved = coffee
        var written: Set<String> = []
        if coffee.nameIsDirty {
            written.insert("name")
            saved.name = validator.text(coffee.name, field: CoffeeField.name, maxLength: CoffeeRules.maxNameLength)
            setting.append((.name, saved.name))
        }
        if coffee.priceIsDirty {
            written.insert("price")
            if let price = coffee.price {
                validator.checkPrice(price)
                if let micros = CoffeePrice.micros(exactly: price) {
                    setting.append((.priceMicros, micros))
                } else {
                    validator.fail(CoffeeField.price, Validator.decimalsProblem)
                }
            } else {
                validator.fail(CoffeeField.price, "is required")
            }
        }
        try validator.check()
        // The same update as every store's: a coffee deleted meanwhile is a
        // RecordNotFoundError and nothing is written.
        let stored = try await table.update(id: coffee.id, setting: setting, ifVersion: ifVersion)
        saved.markSaved(fields: written, version: stored.version)
        coffee = saved
        return true
    }

    /// Changes the given fields of a coffee and returns it as stored
    /// afterwards, hydrated: the update path of a program that holds no
    /// ``Coffee`` (the JSON API, a form), where ``save(_:ifVersion:)``
    /// needs one read first.
    ///
    /// - Parameter ifVersion: Write only if the coffee is still at this
    ///   version (``Coffee/version`` as it was read), checked in the
    ///   transaction that writes; nil writes whatever it holds.
    /// - Throws: ``ValidationError`` (no field given, an invalid name or
    ///   price), ``RecordNotFoundError``, ``VersionConflictError``, or a
    ///   database error; nothing is written on any error.
    @discardableResult
    public func update(id: Int64, with changes: CoffeeChanges, ifVersion: RecordVersion? = nil) async throws
        -> Coffee
    {
        if changes.name == nil && changes.price == nil {
            throw ValidationError(field: "changes", message: "Nothing to change: give a name or a price.")
        }
        var validator = Validator()
        var setting: [(column: Coffee.Columns, value: (any SQLiteValueConvertible)?)] = []
        if let name = changes.name {
            setting.append((.name, validator.text(name, field: CoffeeField.name, maxLength: CoffeeRules.maxNameLength)))
        }
        if let price = changes.price {
            validator.checkPrice(price)
            if let micros = CoffeePrice.micros(exactly: price) {
                setting.append((.priceMicros, micros))
            } else {
                validator.fail(CoffeeField.price, Validator.decimalsProblem)
            }
        }
        try validator.check()
        return try await table.update(id: id, setting: setting, ifVersion: ifVersion)
    }

    // MARK: - Pictures

    /// Stores a picture for a coffee, replacing any it had.
    ///
    /// Before anything is written, the source is opened, its first bytes
    /// are checked for a PNG, JPEG, GIF or WebP signature, and its size
    /// against ``pictureSizeLimit`` (a source of unknown size, such as a
    /// pipe, is buffered in a temporary file first and stopped as soon as
    /// it passes the limit). The bytes are then streamed into the row in
    /// chunks, on the database writer's thread; if anything fails, the
    /// coffee keeps its old picture. An upload (``PictureSource/upload(_:)``)
    /// was checked as it arrived; it is used up here, stored or not.
    /// Storing gives the picture a new version
    /// (``PictureReader/entityTag``).
    ///
    /// - Parameter ifVersion: Store it only if the coffee is still at this
    ///   version (``Coffee/version``), checked in the transaction that
    ///   stores it; nil stores it whatever the coffee holds.
    /// - Returns: The stored picture's size and format.
    /// - Throws: ``PictureError`` (unreadable, empty, unrecognised, too
    ///   large), ``RecordNotFoundError``, ``VersionConflictError``, or a
    ///   database error.
    @discardableResult
    public func setPicture(id: Int64, from source: PictureSource, ifVersion: RecordVersion? = nil) async throws
        -> CoffeePicture
    {
        let input = try PictureInput.open(source, limit: pictureSizeLimit)
        defer { input.close() }
        let limit = pictureSizeLimit
        do {
            return try await database.write(for: .coffee) { db in
                guard try Coffee.exists(db, id: id) else { throw RecordNotFoundError(kind: "coffee", id: id) }
                try RecordTable<Coffee>.checkVersion(db, id: id, expected: ifVersion)
                // The type first: the picture must stay the last non-NULL
                // value of the row while it is reserved.
                try db.execute(
                    """
                    UPDATE \(identifier: Coffee.tableName) SET \(Column.pictureType) = \(input.format.mimeType)
                    WHERE \(Column.id) = \(id)
                    """)
                let size = try db.writeBlob(
                    from: input.blobSource(), table: Coffee.tableName, column: Column.picture.rawValue, rowID: id,
                    maximumSize: limit)
                return CoffeePicture(size: size, format: input.format)
            }
        } catch let error as BlobError {
            throw Self.translate(error, subject: input.name)
        }
    }

    /// Writes a coffee's picture to a file or stream, byte for byte, in
    /// chunks, on a database reader's thread. A file appears only once
    /// complete; an existing file is replaced.
    ///
    /// - Returns: The picture's size and format.
    /// - Throws: ``RecordNotFoundError``, ``PictureError`` (no picture, the
    ///   destination cannot be written: nothing is created), or a database
    ///   error.
    @discardableResult
    public func writePicture(id: Int64, to destination: PictureDestination) async throws -> CoffeePicture {
        let kind = destination.kind
        do {
            // One read: the type and the bytes are of the same picture.
            return try await database.read(for: .coffee) { db in
                let blobDestination: BlobDestination
                switch kind {
                case .file(let path): blobDestination = .file(path: path)
                case .fileHandle(let handle, _): blobDestination = .fileHandle(handle)
                }
                let picture = try Self.picture(db, id: id)
                let size = try db.readBlob(
                    table: Coffee.tableName, column: Column.picture.rawValue, rowID: id, to: blobDestination)
                return CoffeePicture(size: size, format: picture.format)
            }
        } catch let error as BlobError {
            throw Self.translate(error, subject: destination.name)
        }
    }

    /// Removes a coffee's picture and returns what it was.
    ///
    /// - Parameter ifVersion: Remove it only if the coffee is still at this
    ///   version (``Coffee/version``), checked in the transaction that
    ///   removes it; nil removes it whatever the coffee holds.
    /// - Throws: ``RecordNotFoundError``, ``PictureError`` when it has none,
    ///   ``VersionConflictError``, or a database error.
    @discardableResult
    public func removePicture(id: Int64, ifVersion: RecordVersion? = nil) async throws -> CoffeePicture {
        try await database.write(for: .coffee) { db in
            try RecordTable<Coffee>.checkVersion(db, id: id, expected: ifVersion)
            let picture = try Self.picture(db, id: id)
            try db.execute(
                """
                UPDATE \(identifier: Coffee.tableName) SET \(Column.picture) = NULL, \(Column.pictureType) = NULL
                WHERE \(Column.id) = \(id)
                """)
            return picture
        }
    }

    // MARK: - Rows

    private typealias Column = Coffee.Columns

    /// The order of a list going `direction`; the ID breaks ties.
    @Sendable static func orderBy(_ sort: CoffeeSort, _ direction: SortDirection) -> SQL {
        order(sort).sql(direction)
    }

    /// The order of a list, going up.
    static func order(_ sort: CoffeeSort) -> SortOrder {
        let byName = SortOrder(["records_fold(\(Column.name))", "\(Column.id)"])
        switch sort {
        case .name: return byName
        case .newest: return SortOrder(["\(Column.id)"])
        // Prices that cannot be read (any non-INTEGER) last both ways, by name.
        case .price:
            return SortOrder(["CASE typeof(\(Column.priceMicros)) WHEN 'integer' THEN \(Column.priceMicros) END"])
                .then(byName).pinning("typeof(\(Column.priceMicros)) <> 'integer'")
        }
    }

    /// A `WHERE` condition taking in the coffees whose price is in
    /// `range`. Only INTEGER prices are compared: SQL would order any text
    /// after every number.
    private static func priceFilter(_ range: CoffeePriceRange, pricedOnly: Bool = false) throws -> SQL {
        if range.isAny && !pricedOnly { return "1" }
        let (minimum, maximum) = try range.millionths()
        var conditions: [SQL] = ["typeof(\(Column.priceMicros)) = 'integer'"]
        if let minimum { conditions.append("\(Column.priceMicros) >= \(minimum)") }
        if let maximum { conditions.append("\(Column.priceMicros) <= \(maximum)") }
        return conditions.joined(separator: " AND ")
    }

    /// A validated price in millionths.
    private static func micros(_ price: Decimal) throws -> Int64 {
        guard let micros = CoffeePrice.micros(exactly: price) else {
            throw ValidationError(CoffeeField.price, problem: Validator.decimalsProblem)
        }
        return micros
    }

    /// The picture of a coffee that must have one.
    private static func picture(_ db: Database, id: Int64) throws -> CoffeePicture {
        guard let coffee = try RecordTable<Coffee>.record(db, id: id, strict: false) else {
            throw RecordNotFoundError(kind: "coffee", id: id)
        }
        guard let picture = coffee.picture else { throw PictureError(.noPicture(coffeeID: id), subject: nil) }
        return picture
    }

    /// The app's errors for what the blob copy reports about the coffee
    /// or the file; anything else is passed on as it is.
    private static func translate(_ error: BlobError, subject: String) -> any Error {
        switch error.reason {
        case .rowNotFound: RecordNotFoundError(kind: "coffee", id: error.rowID)
        case .nullValue: PictureError(.noPicture(coffeeID: error.rowID), subject: nil)
        case .tooLarge(let size, let limit): PictureError(.tooLarge(size: size, limit: limit), subject: subject)
        case .unreadableSource(let why): PictureError(.unreadable(why), subject: subject)
        case .unwritableDestination(let why): PictureError(.unwritable(why), subject: subject)
        default: error
        }
    }
}
