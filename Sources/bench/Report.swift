import Foundation
import SQLiteStore

/// Prints results as a table or as JSON.
enum Report {
    static func header(rows: Int, repetitions: Int) -> String {
        let version = String(cString: sqlite3_libversion())
        return "SQLiteStore bench: --rows \(rows), median of \(repetitions) runs per side after a warm-up, "
            + "SQLite \(version)\n"
    }

    static let columns = ["workload", "rows", "raw ms", "SQLiteStore ms", "ratio", "target", "result"]

    static func tableRow(_ result: Result) -> [String] {
        var met = result.isMet.map { $0 ? "ok" : "MISSED" } ?? "n/a"
        if case .memoryGrowth = result.workload.target {
            met += " (growth: raw \(megabytes(result.rawGrowth)), SQLiteStore \(megabytes(result.storeGrowth)))"
        }
        return [
            "\(result.workload.id) \(result.workload.title)", String(result.rows),
            String(format: "%.2f", result.rawMedian), String(format: "%.2f", result.storeMedian),
            String(format: "%.2fx", result.ratio), result.workload.target.description, met,
        ]
    }

    /// Pads each column to its widest cell.
    static func table(_ rows: [[String]]) -> String {
        let all = [columns] + rows
        let widths = columns.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.indices.map { column in
                let cell = row[column]
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                // Text left-aligned, figures right-aligned.
                return column == 0 || column >= 5 ? cell + padding : padding + cell
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
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
                "rawMilliseconds": result.rawMedian,
                "storeMilliseconds": result.storeMedian,
                "ratio": result.ratio,
                "rawRunsMilliseconds": result.rawTimes.map { Result.median([$0]) },
                "storeRunsMilliseconds": result.storeTimes.map { Result.median([$0]) },
                "count": result.outcome.count,
                "sum": result.outcome.sum,
            ]
            switch result.workload.target {
            case .ratio(let ratio): entry["targetRatio"] = ratio
            case .memoryGrowth(let bytes): entry["targetMemoryGrowthBytes"] = bytes
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
