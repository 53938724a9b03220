import Foundation
import SQLiteStore

// `swift run -c release bench [--rows N] [--reps N] [--filter NAME] [--json]`
//
// Runs each workload through the raw SQLite C API and through SQLiteStore in
// this process, checks that both did the same work, and prints the median
// times and their ratio.

let usage = """
    usage: bench [--rows N] [--reps N] [--filter NAME] [--json] [--callgrind-side raw|store]
      --rows N       rows per workload (default 100000; W7 streams ten times as many)
      --reps N       timed runs per side, at least 5 (default 7); one warm-up run comes first
      --filter NAME  only the workloads whose id or title contains NAME (case-insensitive);
                     may be repeated
      --json         print the results as JSON instead of a table
      --list         list the workloads and exit
      --callgrind-side raw|store
                     run that side's timed parts in measuredPart(), for valgrind's
                     --toggle-collect (scripts/bench-callgrind.sh)
    """

struct Options {
    var rows = 100_000
    var repetitions = 7
    var filters: [String] = []
    var json = false
    var list = false
    var collectedSide: Side?

    init(_ arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        func number(after flag: String, minimum: Int) throws -> Int {
            guard let text = iterator.next(), let value = Int(text), value >= minimum else {
                throw BenchError("\(flag) needs a whole number of at least \(minimum)\n\(usage)")
            }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--rows": rows = try number(after: argument, minimum: 1)
            case "--reps": repetitions = try number(after: argument, minimum: 5)
            case "--filter":
                guard let name = iterator.next() else { throw BenchError("--filter needs a name\n\(usage)") }
                filters.append(name.lowercased())
            case "--json": json = true
            case "--list": list = true
            case "--callgrind-side":
                guard let name = iterator.next(), let side = Side(rawValue: name) else {
                    throw BenchError("--callgrind-side needs raw or store\n\(usage)")
                }
                collectedSide = side
            case "-h", "--help":
                print(usage)
                exit(0)
            default: throw BenchError("unknown argument \(argument)\n\(usage)")
            }
        }
    }

    func selects(_ workload: Workload) -> Bool {
        filters.isEmpty
            || filters.contains { "\(workload.id) \(workload.title)".lowercased().contains($0) }
    }
}

func main() -> Int32 {
    do {
        let options = try Options(Array(CommandLine.arguments.dropFirst()))
        let workloads = Workloads.all.filter(options.selects)
        if options.list {
            for workload in Workloads.all {
                print("\(workload.id)  \(workload.title)  (\(workload.target.description))")
            }
            return 0
        }
        guard !workloads.isEmpty else { throw BenchError("no workload matches \(options.filters)") }
        #if DEBUG
            FileHandle.standardError.write(Data("bench: this is a debug build; measure with -c release\n".utf8))
        #endif
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("sqlitestore-bench-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let runner = Runner(
            directory: directory, rows: options.rows, repetitions: options.repetitions,
            collectedSide: options.collectedSide)
        let widths = Report.widths(for: workloads)
        if !options.json {
            print(Report.header(rows: options.rows, repetitions: options.repetitions))
            print(Report.header(widths: widths))
        }
        var results: [Result] = []
        for workload in workloads {
            let result = try runner.run(workload)
            results.append(result)
            // Printed as it comes: a full run takes a while.
            if !options.json { print(Report.row(result, widths: widths)) }
        }
        if options.json {
            print(try Report.json(results, rows: options.rows, repetitions: options.repetitions))
        } else if let throughput = Report.throughput(results) {
            print("\n" + throughput)
        }
        if !options.json, let speedUp = Report.searchSpeedUp(results) { print("\n" + speedUp) }
        if !options.json, workloads.contains(where: { $0.id == "W12" }) {
            print("\n" + (try Workloads.syncWireSizes()))
        }
        return 0
    } catch {
        FileHandle.standardError.write(Data("bench: \(error)\n".utf8))
        return 1
    }
}

exit(main())
