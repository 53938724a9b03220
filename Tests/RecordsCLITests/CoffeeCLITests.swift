import Foundation
import SQLiteStore
import TestSupport
import Testing

/// A PNG signature followed by `count - 8` pattern bytes, written a
/// mebibyte at a time so that large test pictures never sit in memory.
///
/// The bytes come from TestSupport's `PatternBytes`, eight at a time
/// through a pointer: made a byte at a time, a 30 MB picture took a debug
/// build seconds of a cooperative thread, many times that on a loaded
/// machine, and other tests waited for the thread.
func writePicture(_ path: String, count: Int, seed: UInt8 = 1) throws {
    guard FileManager.default.createFile(atPath: path, contents: nil),
        let handle = FileHandle(forWritingAtPath: path)
    else { throw CocoaError(.fileWriteUnknown) }
    defer { try? handle.close() }
    let signature = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    var generator = PatternBytes(seed: UInt64(seed))
    var chunk = Data(count: 1 << 20)
    var written = 0
    while written < count {
        let size = min(chunk.count, count - written)
        chunk.withUnsafeMutableBytes { generator.fill(UnsafeMutableRawBufferPointer(rebasing: $0[0..<size])) }
        if written == 0 { chunk.replaceSubrange(0..<min(signature.count, size), with: signature.prefix(size)) }
        try handle.write(contentsOf: chunk.prefix(size))
        written += size
    }
}

/// A price read from JSON text.
func jsonDecimal(_ value: Any?) -> Decimal? {
    (value as? String).flatMap { Decimal(string: $0, locale: Locale(identifier: "en_US_POSIX")) }
}

@Suite("records coffee")
struct CoffeeCLITests {
    // MARK: - Help

    @Test("Help gives the coffee commands with the issue's synopsis")
    func help() async throws {
        let sandbox = try Sandbox()
        let main = try await sandbox.runRaw(["--help"])
        for command in [
            "coffee list", "coffee add", "coffee picture set", "coffee picture get", "coffee picture remove",
        ] {
            #expect(main.stdout.contains(command), "missing \(command)")
        }
        // Help is at most 100 columns wide: the list's synopsis continues on
        // a second line.
        let family = try await sandbox.runRaw(["coffee", "--help"], environment: ["COLUMNS": "100"])
        #expect(family.status == 0)
        let synopses = [
            "list [--sort name|newest|price] [--min-price PRICE] [--max-price PRICE] [--order asc|desc]\n    [--limit N] [--offset N] [--json]",
            "total [--min-price PRICE] [--max-price PRICE] [--json]", "add --name NAME --price PRICE [--json]",
            "show ID [--json]",
            "edit ID [--name NAME] [--price PRICE] [--if-version VERSION] [--json]", "delete ID... [--yes] [--json]",
            "search TEXT... [--limit N] [--offset N] [--json]",
            "picture set ID FILE", "picture get ID FILE", "picture remove ID",
        ]
        for synopsis in synopses {
            #expect(family.stdout.contains("  " + synopsis), "missing \(synopsis)")
        }
        let group = try await sandbox.runRaw(["coffee", "picture", "--help"])
        #expect(group.status == 0)
        #expect(group.stdout.contains("picture get ID FILE"))
        #expect(!group.stdout.contains("  list"))
        let command = try await sandbox.runRaw(["coffee", "picture", "set", "--help"])
        #expect(command.stdout.contains("Usage: records [global options] coffee picture set ID FILE"))
        // Help is wrapped to the width: the sentence may span lines.
        #expect(command.stdout.replacingOccurrences(of: "\n", with: " ").contains("Pictures are limited to 64 MiB."))
        #expect(try await sandbox.runRaw(["help", "coffee", "picture", "set"]).stdout == command.stdout)
        #expect(try await sandbox.runRaw(["help", "coffee", "picture"]).stdout == group.stdout)
        #expect(!FileManager.default.fileExists(atPath: sandbox.defaultDatabase))
    }

    @Test(
        "Usage mistakes exit 2, say what to choose, and touch no database",
        arguments: [
            (["coffee", "picture"], "missing command for 'coffee picture'"),
            (["coffee", "picture", "sett", "1", "a.png"], "choose set, get, remove; did you mean 'set'?"),
            (["coffee", "pictur", "set"], "did you mean 'picture'?"),
            (["coffee", "picture", "set", "1"], "missing FILE"),
            (["coffee", "picture", "get", "x", "out.png"], "ID must be a positive whole number"),
            (["coffee", "picture", "remove", "1", "2"], "unexpected argument '2'"),
            (["coffee", "add", "--name", "X"], "missing required option '--price PRICE'"),
            (["coffee", "add", "--name", "X", "--price", "3,50"], "with a point for the decimals, not a comma"),
            (["coffee", "edit", "1"], "Nothing to change: give a name or a price."),
            (["coffee", "search"], "missing TEXT"),
            (["coffee", "list", "--sort", "cost"], "choose name, newest, price"),
            (["coffee", "list", "--min-price", "abc"], "Minimum price must be a number such as 3.50"),
            (["coffee", "total", "--max-price", "-1"], "Maximum price must be 0 or more."),
            (
                ["coffee", "total", "--min-price", "5", "--max-price", "4"],
                "Minimum price must not be above the maximum price."
            ),
        ])
    func usageErrors(arguments: [String], message: String) async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.runRaw(arguments)
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.contains("records: error: "), "\(run)")
        #expect(run.stderr.contains(message), "\(run)")
        #expect(run.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: sandbox.defaultDatabase))
    }

    // MARK: - Records

    /// The cells of a text table's line: the text between runs of two or
    /// more spaces.
    private func cells(_ line: String) -> [String] {
        line.trimmingCharacters(in: .whitespaces).split(separator: /\s{2,}/).map(String.init)
    }

    @Test("list shows the sample coffees' IDs, names and prices; --json adds the price and picture")
    func list() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.run("coffee", "list")
        #expect(run.status == 0)
        #expect(cells(try #require(run.lines.first)) == ["ID", "NAME", "PRICE"])
        #expect(run.lines.count == 7)
        let espresso = try #require(run.lines.first { cells($0).prefix(2) == ["1", "Espresso"] })
        #expect(cells(espresso).last?.wholeMatch(of: /[0-9]+\.[0-9]{2}/) != nil, "\(espresso)")
        let json = try #require(try await sandbox.run("coffee", "list", "--json").json() as? [[String: Any]])
        #expect(json.count == 6)
        #expect(json.allSatisfy { Set($0.keys) == ["id", "name", "price", "picture"] })
        let newest = try #require(
            try await sandbox.run("coffee", "list", "--sort", "newest", "--json").json() as? [[String: Any]])
        #expect(newest.compactMap { $0["id"] as? Int } == [6, 5, 4, 3, 2, 1])
    }

    @Test("list --sort price is numeric (0.1, 9.50, 10, 100) and --min-price 5 takes in 9.50")
    func listByPrice() async throws {
        let sandbox = try Sandbox()
        for (name, price) in [("Tenth", "0.1"), ("Ten", "10"), ("Hundred", "100"), ("Nine fifty", "9.50")] {
            #expect(try await sandbox.run("coffee", "add", "--name", name, "--price", price).status == 0)
        }
        let sorted = try #require(
            try await sandbox.run("coffee", "list", "--sort", "price", "--json").json() as? [[String: Any]])
        #expect(sorted.compactMap { $0["id"] as? Int } == [7, 1, 5, 2, 3, 4, 6, 10, 8, 9])
        let above = try await sandbox.run("coffee", "list", "--sort", "price", "--min-price", "5")
        #expect(above.status == 0)
        #expect(
            above.lines.map(cells) == [
                ["ID", "NAME", "PRICE"], ["10", "Nine fifty", "9.50"], ["8", "Ten", "10.00"],
                ["9", "Hundred", "100.00"],
            ])
        // The price column is right-aligned, so the prices' decimal points line up.
        #expect(Set(above.lines.map(\.count)).count == 1, "\(above.lines)")
        let between = try await sandbox.run("coffee", "list", "--min-price", "3.45", "--max-price", "3.60")
        #expect(
            between.lines.map { Array(cells($0).prefix(2)) } == [
                ["ID", "NAME"], ["3", "Caffè Latte"], ["4", "Flat White"],
            ])
        let none = try await sandbox.run("coffee", "list", "--min-price", "500")
        #expect(none.status == 0 && none.stdout == "No coffee has a price in that range.\n")
    }

    @Test("total adds prices exactly, in text and JSON, within a range")
    func total() async throws {
        let sandbox = try Sandbox()
        let sample = try await sandbox.run("coffee", "total")
        #expect(sample.status == 0)
        #expect(sample.stdout == "Total of 6 coffees: 19.50.\n")
        for price in ["0.1", "0.2"] {
            #expect(try await sandbox.run("coffee", "add", "--name", "Small", "--price", price).status == 0)
        }
        let small = try #require(
            try await sandbox.run("coffee", "total", "--max-price", "0.2", "--json").json() as? [String: Any])
        #expect(small["total"] as? String == "0.30")
        #expect(small["count"] as? Int == 2)
        #expect(small["withoutPrice"] as? Int == 0)
        let db = try Database(path: sandbox.database)
        try db.execute("UPDATE coffee SET priceMicros = 'cheap' WHERE coffeeID = 1")
        db.close()
        let flagged = try await sandbox.run("coffee", "total")
        #expect(flagged.stdout == "Total of 7 coffees: 17.30. 1 coffee has no readable price and is not counted.\n")
    }

    @Test("add confirms with the name and new ID; show has the exact price and the picture's format and size")
    func addAndShow() async throws {
        let sandbox = try Sandbox()
        let add = try await sandbox.run("coffee", "add", "--name", "Cortado", "--price", "3.10")
        #expect(add.status == 0, "\(add)")
        #expect(add.stdout == "Added “Cortado” (ID 7).\n")
        let show = try await sandbox.run("coffee", "show", "7")
        #expect(show.stdout.hasPrefix("ID:       7\nName:     Cortado\nPrice:    3.10\nPicture:  none\nVersion:  "))
        let espresso = try await sandbox.run("coffee", "show", "1")
        #expect(espresso.stdout.contains("Picture:  PNG, 135 bytes"))
        let json = try #require(try await sandbox.run("coffee", "show", "1", "--json").json() as? [String: Any])
        #expect(json["price"] as? String == "2.50")
        #expect((json["picture"] as? [String: Any])?["type"] as? String == "image/png")
        let missing = try await sandbox.run("coffee", "show", "99")
        #expect(missing.status == 1)
        #expect(missing.stderr == "records: error: no coffee with ID 99\n")
    }

    @Test(
        "Prices round-trip exactly through the command line",
        arguments: [("0.1", 100_000), ("19.99", 19_990_000), ("1234567.891", 1_234_567_891_000)])
    func priceRoundTrip(price: String, micros: Int64) async throws {
        let sandbox = try Sandbox()
        let added = try #require(
            try await sandbox.run("coffee", "add", "--name", "P", "--price", price, "--json").json() as? [String: Any])
        let id = try #require(added["id"] as? Int)
        let shown = try #require(try await sandbox.run("coffee", "show", "\(id)", "--json").json() as? [String: Any])
        #expect(jsonDecimal(shown["price"]) == jsonDecimal(price))
        #expect(try await sandbox.run("coffee", "edit", "1", "--price", price).status == 0)
        let edited = try #require(try await sandbox.run("coffee", "show", "1", "--json").json() as? [String: Any])
        #expect(jsonDecimal(edited["price"]) == jsonDecimal(price))
        let db = try Database(path: sandbox.database)
        #expect(
            try db.fetchOne(SQLiteValue.self, "SELECT priceMicros FROM coffee WHERE coffeeID = ?", arguments: [id])
                == .integer(micros))
    }

    @Test("edit writes only what differs, and says so when nothing does")
    func edit() async throws {
        let sandbox = try Sandbox()
        let same = try await sandbox.run("coffee", "edit", "1", "--price", "2.50", "--name", "Espresso")
        #expect(same.status == 0)
        #expect(same.stdout == "Nothing changed: “Espresso” (ID 1) already has those values.\n")
        let debug = try await sandbox.run("--debug", "coffee", "edit", "1", "--price", "2.70")
        #expect(debug.stdout == "Updated “Espresso” (ID 1): price 2.50 → 2.70.\n")
        #expect(debug.stderr.contains("SQL: UPDATE \"coffee\" SET \"priceMicros\" = ?\nWHERE \"coffeeID\" = ?"))
        let both = try await sandbox.run("coffee", "edit", "2", "--name", "Cappuccino Grande", "--price", "4", "--json")
        let json = try #require(try both.json() as? [String: Any])
        #expect(json["name"] as? String == "Cappuccino Grande")
        #expect(json["price"] as? String == "4.00")
        let missing = try await sandbox.run("coffee", "edit", "99", "--price", "1")
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no coffee with ID 99"))
    }

    @Test("delete, and search by name ignoring case and accents")
    func deleteAndSearch() async throws {
        let sandbox = try Sandbox()
        let found = try #require(try await sandbox.run("coffee", "search", "CAFE", "--json").json() as? [[String: Any]])
        #expect(found.compactMap { $0["name"] as? String } == ["Café Mocha"])
        // Equal ranks come in the order the coffees were added.
        let prefix = try await sandbox.run("coffee", "search", "caf")
        #expect(
            prefix.lines.map { Array(cells($0).prefix(2)) } == [
                ["ID", "NAME"], ["3", "Caffè Latte"], ["6", "Café Mocha"],
            ])
        #expect(cells(try #require(prefix.lines.first)).last == "PRICE")
        #expect(prefix.lines.dropFirst().allSatisfy { cells($0).last?.wholeMatch(of: /[0-9]+\.[0-9]{2}/) != nil })
        #expect(try await sandbox.run("coffee", "search", "tea").stdout == "No coffee matches \"tea\".\n")
        let delete = try await sandbox.run("coffee", "delete", "1", "--yes")
        #expect(delete.stdout == "Deleted “Espresso” (ID 1) and its picture.\n")
        #expect(try await sandbox.run("coffee", "delete", "1", "--yes").status == 1)
        #expect((try await sandbox.run("coffee", "list", "--json").json() as? [Any])?.count == 5)
    }

    // MARK: - Pictures

    @Test("A small picture goes in and comes back byte for byte, through files and pipes")
    func smallPicture() async throws {
        let sandbox = try Sandbox()
        let input = sandbox.path("latte.png")
        try writePicture(input, count: 5000)
        let set = try await sandbox.run("coffee", "picture", "set", "3", input)
        #expect(set.status == 0, "\(set)")
        #expect(set.stdout == "Stored \(input) as the picture of “Caffè Latte” (ID 3): PNG, 4.9 KiB (5,000 bytes).\n")
        #expect(try await sandbox.run("coffee", "show", "3").stdout.contains("Picture:  PNG, 4.9 KiB (5,000 bytes)"))
        let output = sandbox.path("out.png")
        let get = try await sandbox.run("coffee", "picture", "get", "3", output)
        #expect(get.stdout == "Wrote the picture of “Caffè Latte” (ID 3) to \(output): PNG, 4.9 KiB (5,000 bytes).\n")
        #expect(try sameBytes(input, output))

        // Standard output, when it is not a terminal, into standard input.
        let script =
            "\"$0\" --database \"$1\" coffee picture get 3 - | \"$0\" --database \"$1\" coffee picture set 4 - && "
            + "\"$0\" --database \"$1\" coffee picture get 4 \"$2\""
        let shell = try await sandbox.runRaw(
            ["-c", script, try recordsBinary().path, sandbox.database, sandbox.path("via-pipe.png")],
            binary: URL(fileURLWithPath: "/bin/sh"))
        #expect(shell.status == 0, "\(shell)")
        #expect(shell.stdout.contains("Stored standard input as the picture of “Flat White” (ID 4)"))
        #expect(try sameBytes(input, sandbox.path("via-pipe.png")))
    }

    @Test("A file that is not a PNG, JPEG, GIF or WebP is invalid input (status 2); the old picture stays")
    func wrongType() async throws {
        let sandbox = try Sandbox()
        let notes = sandbox.path("notes.png")
        try Data("just some text".utf8).write(to: URL(fileURLWithPath: notes))
        let run = try await sandbox.run("coffee", "picture", "set", "1", notes)
        #expect(run.status == 2)
        let expected =
            "records: error: \(notes) is not a PNG, JPEG, GIF or WebP picture "
            + "(it starts with 6A 75 73 74 20 73 6F 6D); nothing was stored\n"
        #expect(run.stderr == expected)
        #expect(try await sandbox.run("coffee", "show", "1").stdout.contains("Picture:  PNG, 135 bytes"))
        try Data().write(to: URL(fileURLWithPath: sandbox.path("empty.png")))
        let empty = try await sandbox.run("coffee", "picture", "set", "1", sandbox.path("empty.png"))
        #expect(empty.status == 2)
        #expect(empty.stderr.contains("is empty"))
    }

    @Test("A missing file is a clear error, and the coffee is unchanged")
    func missingFile() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.run("coffee", "picture", "set", "2", "no-such-file.png")
        #expect(run.status == 1)
        #expect(run.stderr == "records: error: cannot read no-such-file.png: No such file or directory\n")
        #expect(try await sandbox.run("coffee", "show", "2").stdout.contains("Picture:  none"))
        let noCoffee = try await sandbox.run("coffee", "picture", "set", "99", "no-such-file.png")
        #expect(noCoffee.stderr == "records: error: no coffee with ID 99\n")
    }

    @Test("An unwritable output path is a clear error and creates nothing")
    func unwritableOutput() async throws {
        let sandbox = try Sandbox()
        let inMissing = sandbox.path("missing/dir/out.png")
        let run = try await sandbox.run("coffee", "picture", "get", "1", inMissing)
        #expect(run.status == 1)
        let expected =
            "records: error: cannot write \(inMissing): the directory \(sandbox.path("missing/dir")) does not exist\n"
        #expect(run.stderr == expected)
        let file = sandbox.path("a-file")
        try Data("keep".utf8).write(to: URL(fileURLWithPath: file))
        let underFile = try await sandbox.run("coffee", "picture", "get", "1", file + "/out.png")
        #expect(underFile.status == 1)
        #expect(underFile.stderr.contains("\(file) is not a directory"))
        let directory = try await sandbox.run("coffee", "picture", "get", "1", sandbox.root.path)
        #expect(directory.stderr.contains("it is a directory"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data("keep".utf8))
        let none = try await sandbox.run("coffee", "picture", "get", "2", sandbox.path("none.png"))
        #expect(none.status == 1)
        #expect(none.stderr == "records: error: coffee 2 has no picture\n")
        #expect(!FileManager.default.fileExists(atPath: sandbox.path("none.png")))
    }

    @Test("A picture over 64 MiB is invalid input (status 2), refused before anything is written")
    func tooLarge() async throws {
        let sandbox = try Sandbox()
        // Sparse: 64 MiB and 1 byte that take no disk space; only the first
        // bytes are ever read.
        let big = sandbox.path("huge.png")
        try writePicture(big, count: 16)
        let handle = try #require(FileHandle(forWritingAtPath: big))
        try handle.truncate(atOffset: UInt64(64 << 20) + 1)
        try handle.close()
        #expect(try await sandbox.run("coffee", "list").status == 0)
        let size = try FileManager.default.attributesOfItem(atPath: sandbox.database)[.size] as? Int
        let run = try await sandbox.run("--debug", "coffee", "picture", "set", "2", big)
        #expect(run.status == 2)
        let expected =
            "records: error: \(big) is 64.0 MiB (67,108,865 bytes), over the picture limit of "
            + "64.0 MiB (67,108,864 bytes); nothing was stored"
        #expect(run.stderr.contains(expected), "\(run)")
        #expect(!run.stderr.contains("zeroblob"))
        #expect(try FileManager.default.attributesOfItem(atPath: sandbox.database)[.size] as? Int == size)
        #expect(try await sandbox.run("coffee", "show", "2").stdout.contains("Picture:  none"))
    }

    @Test("remove clears the picture; removing none is an error")
    func remove() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.run("coffee", "picture", "remove", "1")
        #expect(run.stdout == "Removed the picture of “Espresso” (ID 1) (PNG, 135 bytes).\n")
        #expect(try await sandbox.run("coffee", "show", "1").stdout.contains("Picture:  none"))
        let again = try await sandbox.run("coffee", "picture", "remove", "1")
        #expect(again.status == 1)
        #expect(again.stderr == "records: error: coffee 1 has no picture\n")
    }

    @Test("A picture written under another format's extension gets a note")
    func extensionNote() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.run("coffee", "picture", "get", "1", sandbox.path("espresso.jpg"))
        #expect(run.status == 0)
        #expect(run.stderr == "records: note: the picture is a PNG, though the file name ends in .jpg\n")
        #expect(try await sandbox.run("coffee", "picture", "get", "1", sandbox.path("espresso.bin")).stderr.isEmpty)
    }

    @Test(
        "A 30 MB picture round-trips byte for byte with peak memory far below its size",
        .enabled(if: ChildMemory.isAvailable, "reads the child's peak memory from /proc"))
    func largePictureMemory() async throws {
        let sandbox = try Sandbox()
        let size = 30 * 1024 * 1024
        let input = sandbox.path("large.png")
        try writePicture(input, count: size, seed: 7)

        // What the command costs without a picture: the same binary, the
        // same database (installed by a first run), a detail read.
        // Its peak is sampled while it runs, and a run this short can end
        // before the sample that sees it: the highest of five is the baseline.
        #expect(try await sandbox.run("coffee", "list").status == 0)
        var baseline = try await sandbox.runMeasuringMemory("coffee", "show", "1")
        for _ in 1..<5 {
            let again = try await sandbox.runMeasuringMemory("coffee", "show", "1")
            if again.peakResidentBytes > baseline.peakResidentBytes { baseline = again }
        }
        #expect(baseline.run.status == 0, "\(baseline.run)")
        let set = try await sandbox.runMeasuringMemory("coffee", "picture", "set", "2", input)
        #expect(set.run.status == 0, "\(set.run)")
        let show = try await sandbox.runMeasuringMemory("coffee", "show", "2")
        #expect(show.run.stdout.contains("Picture:  PNG, 30.0 MiB (31,457,280 bytes)"))
        let output = sandbox.path("large-copy.png")
        let get = try await sandbox.runMeasuringMemory("coffee", "picture", "get", "2", output)
        #expect(get.run.status == 0, "\(get.run)")
        #expect(try sameBytes(input, output))

        // The measure sees a process that holds the picture whole: dd
        // copying it as one block (and syncing it, so that it holds it long
        // enough to be seen).
        let whole = try await sandbox.runMeasuringMemory(
            binary: URL(fileURLWithPath: "/bin/dd"),
            ["if=\(input)", "of=\(sandbox.path("dd-copy.png"))", "bs=\(size)", "count=1", "conv=fsync"])
        #expect(whole.run.status == 0, "\(whole.run)")
        #expect(whole.peakResidentBytes >= size * 9 / 10)

        let peaks: [String] = [baseline, set, show, get, whole].map { run in
            String(format: "%.1f MiB", Double(run.peakResidentBytes) / 1_048_576)
        }
        print("records coffee, 30 MiB picture, peak RSS (VmHWM): show without picture \(peaks[0]),", terminator: " ")
        print("picture set \(peaks[1]), show \(peaks[2]), picture get \(peaks[3]); dd holding it: \(peaks[4])")
        let limit = baseline.peakResidentBytes + size / 4
        for run in [set, show, get] {
            #expect(run.peakResidentBytes < limit, "\(peaks)")
        }
    }
}
