import Foundation
import SQLiteStore
#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// Prints results as a table or as JSON.
enum Report {
    static func header(rows: Int, repetitions: Int) -> String {
        let version = String(cString: sqlite3_libversion())
        return "SQLiteStore bench: --rows \(rows), median of \(repetitions) runs per side after a warm-up, "
            + "SQLite \(version)\n"
    }

    static let columns = ["workload", "rows", "raw ms", "SQLiteStore ms", "ratio", "target", "result"]

    /// The widths of the columns, known before any result so that rows can
    /// be printed as they come.
    static func widths(for workloads: [Workload]) -> [Int] {
        let names = workloads.map { "\($0.id) \($0.title)".count }
        return [max(columns[0].count, names.max() ?? 0), 8, 8, 14, 6, 8, 0]
    }

    static func header(widths: [Int]) -> String {
        line(columns, widths: widths)
    }

    static func row(_ result: Result, widths: [Int]) -> String {
        var met = result.isMet.map { $0 ? "ok" : "MISSED" } ?? "n/a"
        if case .memoryGrowth = result.workload.target {
            met += " (growth: raw \(megabytes(result.rawGrowth)), SQLiteStore \(megabytes(result.storeGrowth)))"
        }
        let cells = [
            "\(result.workload.id) \(result.workload.title)", String(result.rows),
            String(format: "%.2f", result.rawMedian), String(format: "%.2f", result.storeMedian),
            String(format: "%.2fx", result.ratio), result.workload.target.description, met,
        ]
        return line(cells, widths: widths)
    }

    /// Text left-aligned, figures right-aligned.
    private static func line(_ cells: [String], widths: [Int]) -> String {
        cells.indices.map { column in
            let cell = cells[column]
            let padding = String(repeating: " ", count: max(0, widths[column] - cell.count))
            return column == 0 || column >= 5 ? cell + padding : padding + cell
        }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
    }

    /// W8's rows read per second at each reader count, all readers
    /// together, on both sides; nil if W8 did not run.
    static func throughput(_ results: [Result]) -> String? {
        let scaling = results.filter { $0.workload.id == "W8" }
        guard !scaling.isEmpty else { return nil }
        let lines = scaling.map { result in
            String(
                format: "  %@: raw %.2f M rows/s, SQLiteStore %.2f M rows/s (%d rows read per run)",
                result.workload.title, result.rawRowsPerSecond / 1e6, result.storeRowsPerSecond / 1e6,
                result.rowsHandled)
        }
        return (["W8 throughput (rows read per second, all readers together):"] + lines).joined(separator: "\n")
    }

    static func megabytes(_ bytes: Int?) -> String {
        guard let bytes else { return "n/a" }
        return String(format: "%.1f MB", Double(bytes) / 1_048_576)
    }

    static func json(_ results: [Result], rows: Int, repetitions: Int) throws -> String {
        let entries: [[String: Any]] = results.map { result in
            var entry: [String: Any] = [
                "id": result.workload.id,
                "title": result.workload.title,
                "rows": result.rows,
                "rowsHandled": result.rowsHandled,
                "rawMilliseconds": result.rawMedian,
                "storeMilliseconds": result.storeMedian,
                "ratio": result.ratio,
                "rawRowsPerSecond": result.rawRowsPerSecond,
                "storeRowsPerSecond": result.storeRowsPerSecond,
                "rawRunsMilliseconds": result.rawTimes.map { Result.median([$0]) },
                "storeRunsMilliseconds": result.storeTimes.map { Result.median([$0]) },
                "count": result.outcome.count,
                "sum": result.outcome.sum,
            ]
            switch result.workload.target {
            case .ratio(let ratio): entry["targetRatio"] = ratio
            case .memoryGrowth(let bytes): entry["targetMemoryGrowthBytes"] = bytes
            case .none: break
            }
            if let met = result.isMet { entry["met"] = met }
            if let growth = result.rawGrowth { entry["rawMemoryGrowthBytes"] = growth }
            if let growth = result.storeGrowth { entry["storeMemoryGrowthBytes"] = growth }
            return entry
        }
        let document: [String: Any] = [
            "rows": rows, "repetitions": repetitions, "sqliteVersion": String(cString: sqlite3_libversion()),
            "workloads": entries,
        ]
        let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}
