import Foundation

/// Number and size formatting for human-readable output (tables, summaries), and the one
/// JSON style of every `--json`.
enum Format {
    /// `--json` output: pretty, keys sorted, slashes unescaped (paths stay readable), every
    /// key snake_case (`repo_id`, `size_on_disk`), as the Hub API and OpenAI spell theirs,
    /// whatever the Swift property is called. docs/json.md shows each command's object.
    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try encoder([.prettyPrinted]).encode(value), as: UTF8.self)
    }

    /// One JSON object on one line (`run --json --stream` prints one per token).
    static func jsonLine(_ value: some Encodable) throws -> String {
        String(decoding: try encoder([]).encode(value), as: UTF8.self)
    }

    private static func encoder(_ formatting: JSONEncoder.OutputFormatting) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = formatting.union([.sortedKeys, .withoutEscapingSlashes])
        // Keys already written snake_case (CodingKeys) pass through unchanged; dictionary
        // keys (tensor names, GGUF metadata) are data and are not converted.
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }

    /// Base-10 sizes as the Hub and `hf` show them: `512 B`, `12.3 kB`, `197 MB`, `7.64 GB`
    /// (three significant digits).
    static func bytes(_ count: Int) -> String {
        let units = ["B", "kB", "MB", "GB", "TB", "PB"]
        var value = Double(count)
        var unit = 0
        while value >= 999.5 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        if unit == 0 { return "\(count) B" }
        let decimals = value < 9.995 ? 2 : value < 99.95 ? 1 : 0
        return fixed(value, decimals: decimals) + " " + units[unit]
    }

    /// `3,821,079,552`.
    static func grouped(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, ch) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(ch)
        }
        return n < 0 ? "-" + out : out
    }

    /// `value` rounded to `decimals` places, without Foundation's locale-dependent formatting.
    static func fixed(_ value: Double, decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int((value * scale).rounded())
        guard decimals > 0 else { return String(scaled) }
        let whole = scaled / Int(scale)
        let fraction = String(scaled % Int(scale))
        return "\(whole)." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }

    /// A table with a header row; columns listed in `rightAligned` are right-aligned.
    static func table(header: [String], rows: [[String]], rightAligned: Set<Int> = []) -> String {
        var widths = header.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in
                rightAligned.contains(i)
                    ? cell.leftPadding(to: widths[i]) : cell.padding(to: widths[i])
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }
        return ([line(header)] + rows.map(line)).joined(separator: "\n")
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
