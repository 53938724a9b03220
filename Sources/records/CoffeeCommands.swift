import Foundation
import RecordsApp

/// The default picture size limit, in MiB, for help texts.
private let pictureLimitMiB = CoffeeRules.defaultPictureSizeLimit >> 20

/// `records coffee ...`: the original tutorial's Coffee app.
let coffeeCommands = CommandFamily(
    app: .coffee,
    summary: "coffees with an exact price and a picture stored in the database",
    commands: [
        Command(
            name: "list", summary: "List every coffee's ID, name and price (never a picture's bytes)",
            options: [
                Command.Option(
                    name: "sort", valueName: "name|newest|price",
                    help: "Order by name (default), last added first, or cheapest first"),
                Command.Option(name: "min-price", valueName: "PRICE", help: "Only coffees costing at least PRICE"),
                Command.Option(name: "max-price", valueName: "PRICE", help: "Only coffees costing at most PRICE"),
                .order, .limit, .offset, .json,
            ],
            discussion: """
                Sorting by price and the price filters compare exact prices: 9.50 comes
                before 10. Coffees without a readable price come last by price, and are
                left out by a filter.
                """,
            examples: [
                "records coffee list", "records coffee list --sort newest --json",
                "records coffee list --sort price --min-price 3 --max-price 3.50",
            ],
            run: { invocation in
                let sort = try invocation.choice("sort", default: CoffeeSort.name)
                let direction = try invocation.direction(for: sort)
                let prices = try CoffeePriceRange.parse(
                    minimum: invocation.arguments.value("min-price"), maximum: invocation.arguments.value("max-price"))
                let list = coffeeList(invocation)
                let store = try CoffeeStore(database: invocation.database())
                try await store.forEach(
                    sortedBy: sort, direction: direction, prices: prices, page: invocation.page(), hydrated: true
                ) {
                    try list.take($0)
                }
                let none =
                    prices.isAny
                    ? "No coffees yet. Add one: records coffee add --name NAME --price PRICE"
                    : "No coffee has a price in that range."
                // A price filter leaves out the coffees without a price, as
                // the total does: its count is the filtered list's.
                try await invocation.finish(
                    list, empty: none, noun: prices.isAny ? "coffees" : "coffees in that price range",
                    count: {
                        if prices.isAny { return try await store.count() }
                        return try await store.totalPrice(prices: prices).count
                    })
            }),
        Command(
            name: "total", summary: "Add up the coffees' prices, exactly",
            options: [
                Command.Option(name: "min-price", valueName: "PRICE", help: "Only coffees costing at least PRICE"),
                Command.Option(name: "max-price", valueName: "PRICE", help: "Only coffees costing at most PRICE"),
                .json,
            ],
            discussion: """
                The database adds the prices as whole numbers of millionths, so nothing is
                rounded: 0.10 and 0.20 make 0.30. Coffees without a readable price are not
                counted; how many there are is said after the total.
                """,
            examples: ["records coffee total", "records coffee total --max-price 3 --json"],
            run: { invocation in
                let prices = try CoffeePriceRange.parse(
                    minimum: invocation.arguments.value("min-price"), maximum: invocation.arguments.value("max-price"))
                let total = try await CoffeeStore(database: invocation.database()).totalPrice(prices: prices)
                try invocation.emit(total, text: totalSummary(total))
            }),
        Command(
            name: "add", summary: "Add a coffee",
            options: [
                Command.Option(name: "name", valueName: "NAME", help: "Name (1-100 characters)", isRequired: true),
                Command.Option(
                    name: "price", valueName: "PRICE",
                    help: "Price, such as 3.50; kept exactly (up to \(CoffeeRules.maxFractionDigits) decimals)",
                    isRequired: true),
                .json,
            ],
            discussion: """
                Prints "Added “NAME” (ID N).", as every app's add does; scripts read the ID from
                the JSON (--json prints {"id":N,...}).
                """,
            examples: [
                "records coffee add --name \"Caffè Latte\" --price 3.45",
                "records coffee add --name Ristretto --price 2.20 --json",
            ],
            run: { invocation in
                let draft = try CoffeeDraft.parse(
                    name: invocation.required("name"), price: invocation.required("price"))
                let coffee = try await CoffeeStore(database: invocation.database()).add(draft)
                try invocation.afterChange("coffee \(coffee.id) was added", lost: "its ID") {
                    try invocation.emit(coffee, text: RecordOutcome.added.message(describe(coffee)))
                }
            }),
        Command(
            name: "show", summary: "Show a coffee: name, price, and its picture's format and size",
            positionals: [Command.Positional(name: "ID", help: "The coffee's ID, as listed")],
            options: [.json],
            discussion: "The picture's size comes from the row's header: its bytes are not read.",
            examples: ["records coffee show 1", "records coffee show 1 --json"],
            run: { invocation in
                let id = try invocation.recordID()
                guard let coffee = try await CoffeeStore(database: invocation.database()).coffee(id: id) else {
                    throw RecordNotFoundError(kind: "coffee", id: id)
                }
                try invocation.emit(Versioned(record: coffee, version: coffee.version), text: coffeeFields(coffee))
                if !coffee.unreadable.isEmpty {
                    let values = coffee.unreadable.map(\.description).joined(separator: "; ")
                    throw CommandFailure(
                        message: "coffee \(id) has stored values records cannot read, kept as they are: \(values); "
                            + "give a new one with records coffee edit \(id)")
                }
            }),
        Command(
            name: "edit", summary: "Change a coffee's name or price",
            positionals: [Command.Positional(name: "ID", help: "The coffee's ID, as listed")],
            options: [
                Command.Option(name: "name", valueName: "NAME", help: "New name"),
                Command.Option(name: "price", valueName: "PRICE", help: "New price, such as 3.50"),
                .ifVersion, .json,
            ],
            discussion: """
                Fields not given are left as they are; give at least one. Only the fields
                that differ from the stored ones are written; if none does, nothing is.
                """,
            examples: ["records coffee edit 1 --price 2.70", "records coffee edit 2 --name \"Cappuccino Grande\""],
            run: { invocation in
                let id = try invocation.recordID()
                let version = try invocation.ifVersion()
                let changes = try CoffeeChanges.parse(
                    name: invocation.arguments.value("name"), price: invocation.arguments.value("price"))
                let store = try CoffeeStore(database: invocation.database())
                guard let stored = try await store.coffee(id: id) else {
                    throw RecordNotFoundError(kind: "coffee", id: id)
                }
                // A change to nothing writes nothing, so the version is
                // checked here too, not only by the write.
                if let version, let current = stored.version, current != version {
                    throw VersionConflictError(kind: "coffee", id: id, expected: version, current: current)
                }
                var coffee = changes.applied(to: stored)
                let wrote = try await store.save(&coffee, ifVersion: version)
                let report = {
                    try invocation.emit(coffee, text: editSummary(before: stored, after: coffee, wrote: wrote))
                }
                if wrote {
                    try invocation.afterChange("coffee \(id) was updated", report)
                } else {
                    try report()
                }
            }),
        Command(
            name: "delete", summary: "Delete coffees, with their pictures, after asking",
            positionals: [.ids(of: "coffee")],
            options: [.yes, .json],
            discussion: deleteDiscussion,
            examples: ["records coffee delete 3", "records coffee delete 3 4 --yes"],
            run: { invocation in
                let store = try CoffeeStore(database: invocation.database())
                try await invocation.deleteRecords(
                    kind: "coffee", noun: "coffees", find: { try await store.coffee(id: $0) },
                    delete: { try await store.delete(ids: $0) }, describe: describe,
                    deleted: {
                        RecordOutcome.deleted.message(describe($0), more: $0.picture == nil ? "" : " and its picture")
                    })
            }),
        Command(
            name: "search", summary: "Find coffees by the start of the words of their name, best matches first",
            positionals: [
                Command.Positional(
                    name: "TEXT", help: "What to look for: words, each the start of a word", takesRest: true)
            ],
            options: indexedSearchOptions,
            discussion: indexedSearchDiscussion,
            examples: [
                "records coffee search latte", "records coffee search caf", "records coffee search caffe lat --json",
            ],
            run: { invocation in
                let store = try CoffeeStore(database: invocation.database())
                try await invocation.runIndexedSearch(
                    nothingFound: "No coffee matches", noun: "matching coffees",
                    search: { try await store.fullTextSearch($0, limit: $1, offset: $2, hydrated: true) },
                    printTable: { try coffeeList(invocation).print($0, empty: $1, noun: "matching coffees") })
            }),
        Command(
            name: "picture set", summary: "Store a PNG, JPEG, GIF or WebP picture for a coffee",
            positionals: [
                Command.Positional(name: "ID", help: "The coffee's ID, as listed"),
                Command.Positional(name: "FILE", help: "The picture file; - reads standard input"),
            ],
            discussion: """
                The format is recognised from the file's first bytes, not its name; anything
                else is refused. Pictures are limited to \(pictureLimitMiB) MiB. Both are checked before
                anything is written; the picture is then streamed into the database in
                chunks, replacing any the coffee had.
                """,
            examples: [
                "records coffee picture set 1 espresso.png",
                "records coffee picture set 3 - < latte.jpg",
            ],
            run: { invocation in
                let id = try invocation.recordID()
                let file = invocation.arguments.positionals[1]
                let source: PictureSource
                if file == "-" {
                    guard isatty(STDIN_FILENO) == 0 else {
                        throw UsageError(
                            message: "standard input is a terminal: pipe a picture in, or give a FILE",
                            helpPath: invocation.path)
                    }
                    source = .fileHandle(.standardInput, name: "standard input")
                } else {
                    source = .file(path: file)
                }
                let store = try CoffeeStore(database: invocation.database())
                guard let coffee = try await store.coffee(id: id) else {
                    throw RecordNotFoundError(kind: "coffee", id: id)
                }
                let picture = try await store.setPicture(id: id, from: source)
                try invocation.afterChange("the picture of coffee \(id) was stored") {
                    try Console.out(
                        "Stored \(Terminal.clean(file == "-" ? "standard input" : file)) as the picture of "
                            + "\(describe(coffee)): \(picture.summary).")
                }
            }),
        Command(
            name: "picture get", summary: "Write a coffee's picture to a file, byte for byte",
            positionals: [
                Command.Positional(name: "ID", help: "The coffee's ID, as listed"),
                Command.Positional(
                    name: "FILE", help: "Where to write it; - for standard output"),
            ],
            options: [.flag("force", "Replace FILE if it is an existing file")],
            discussion: """
                The file appears only once the whole picture is written: a failure leaves no
                partial file, and an existing file as it was. An existing file is kept unless
                --force is given; a device or FIFO (/dev/stdout) is written to without it.
                """,
            examples: [
                "records coffee picture get 1 espresso-copy.png", "records coffee picture get 1 espresso.png --force",
                "records coffee picture get 1 - | file -",
            ],
            run: { invocation in
                let id = try invocation.recordID()
                let file = invocation.arguments.positionals[1]
                if file == "-" && isatty(STDOUT_FILENO) != 0 {
                    throw UsageError(
                        message: "standard output is a terminal: redirect it to a file or a pipe, or give a FILE",
                        helpPath: invocation.path)
                }
                let store = try CoffeeStore(database: invocation.database())
                if file == "-" {
                    try await store.writePicture(id: id, to: .fileHandle(.standardOutput, name: standardOutputName))
                    return
                }
                guard let coffee = try await store.coffee(id: id) else {
                    throw RecordNotFoundError(kind: "coffee", id: id)
                }
                try refuseToReplace(file, force: invocation.arguments.flag("force"))
                let picture = try await store.writePicture(id: id, to: .file(path: file))
                try Console.out(
                    "Wrote the picture of \(describe(coffee)) to \(Terminal.clean(file)): \(picture.summary).")
                let fileExtension = (file as NSString).pathExtension
                if let format = picture.format, let named = PictureFormat(fileExtension: fileExtension), named != format
                {
                    Console.error(
                        "records: note: the picture is a \(format.displayName), though the file name ends in "
                            + ".\(Terminal.clean(fileExtension))")
                }
            }),
        Command(
            name: "picture remove", summary: "Remove a coffee's picture",
            positionals: [Command.Positional(name: "ID", help: "The coffee's ID, as listed")],
            examples: ["records coffee picture remove 1"],
            run: { invocation in
                let id = try invocation.recordID()
                let store = try CoffeeStore(database: invocation.database())
                guard let coffee = try await store.coffee(id: id) else {
                    throw RecordNotFoundError(kind: "coffee", id: id)
                }
                let picture = try await store.removePicture(id: id)
                try invocation.afterChange("the picture of coffee \(id) was removed") {
                    try Console.out("Removed the picture of \(describe(coffee)) (\(picture.summary)).")
                }
            }),
    ],
    groupSummaries: ["picture": "store, read and remove coffees' pictures"])

/// The list of coffees (ID, name and price), printed as it is read.
@MainActor
private func coffeeList(_ invocation: Invocation) -> StreamingList<Coffee> {
    StreamingList(
        [.init(title: "ID", alignment: .right), .init(title: "NAME"), .init(title: "PRICE", alignment: .right)],
        json: invocation.wantsJSON
    ) { coffee in [String(coffee.id), coffee.name, priceCell(coffee)] }
}

/// A coffee's price as the list shows it: "3.50", "-" for none, or
/// "unreadable". Not isolated: the list's cells are made on the reading
/// thread.
private func priceCell(_ coffee: Coffee) -> String {
    for field in coffee.unreadable where field.field == "price" { return "unreadable" }
    return coffee.price.map(CoffeeRules.priceText) ?? "-"
}

private func coffeeFields(_ coffee: Coffee) -> String {
    let unreadable = Set(coffee.unreadable.map(\.field))
    func shown(_ field: String, _ text: String) -> String { unreadable.contains(field) ? "(cannot be read)" : text }
    return fieldList([
        ("ID", String(coffee.id)), (CoffeeField.name.label, shown("name", coffee.name)),
        (CoffeeField.price.label, shown("price", coffee.price.map(CoffeeRules.priceText) ?? "none")),
        ("Picture", coffee.picture?.summary ?? "none"), ("Version", coffee.version?.description ?? "unknown"),
    ])
}

/// "Updated Espresso (ID 1): price 2.50 → 2.70." or that nothing changed.
private func editSummary(before: Coffee, after: Coffee, wrote: Bool) -> String {
    guard wrote else { return updateMessage(describe(after), changed: false) }
    var changes: [String] = []
    if before.name != after.name {
        changes.append("name \"\(Terminal.clean(before.name))\" → \"\(Terminal.clean(after.name))\"")
    }
    if before.price != after.price {
        changes.append("price \(priceText(before.price)) → \(priceText(after.price))")
    }
    return RecordOutcome.updated.message(describe(after), more: ": " + changes.joined(separator: ", "))
}

/// "Total of 6 coffees: 19.50." and how many were not counted.
private func totalSummary(_ total: CoffeePriceTotal) -> String {
    let counted = total.count == 1 ? "1 coffee" : "\(total.count) coffees"
    var text = "Total of \(counted): \(CoffeeRules.priceText(total.total))."
    if total.withoutPrice > 0 {
        text +=
            total.withoutPrice == 1
            ? " 1 coffee has no readable price and is not counted."
            : " \(total.withoutPrice) coffees have no readable price and are not counted."
    }
    return text
}

private func priceText(_ price: Decimal?) -> String { price.map(CoffeeRules.priceText) ?? "none" }

/// "Espresso (ID 1)"
/// `“Espresso” (ID 1)`.
private func describe(_ coffee: Coffee) -> RecordMention {
    RecordMention(Terminal.clean(coffee.name), details: "ID \(coffee.id)")
}
