import Foundation

/// Sizes as people read them, in one unit system everywhere (the CLI's
/// pictures and backups, the web pages' limits): binary multiples, KiB,
/// MiB and GiB, with the exact count of bytes beside them.
public enum ByteCount {
    /// "12.1 KiB (12,345 bytes)", "30.0 MiB (31,457,280 bytes)", "512 bytes".
    public static func text(_ bytes: Int) -> String {
        var digits = String(bytes)
        var grouped = ""
        while digits.count > 3 {
            grouped = "," + digits.suffix(3) + grouped
            digits.removeLast(3)
        }
        let exact = digits + grouped + (bytes == 1 ? " byte" : " bytes")
        guard bytes >= 1024 else { return exact }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return String(format: "%.1f %@ (%@)", value, units[unit], exact)
    }
}
