/// Python's `str` operations on code points (Swift's `String` counts grapheme clusters and
/// trims its own set of whitespace; templates need Python's answers byte for byte).
enum PythonText {
    static func strip(
        _ s: String, leading: Bool, trailing: Bool, _ isStripped: (Unicode.Scalar) -> Bool
    ) -> String {
        let scalars = Array(s.unicodeScalars)
        var start = 0
        var end = scalars.count
        if leading { while start < end, isStripped(scalars[start]) { start += 1 } }
        if trailing { while end > start, isStripped(scalars[end - 1]) { end -= 1 } }
        return String(pythonScalars: scalars[start..<end])
    }

    /// `s.split()` / `s.rsplit()`: runs of whitespace separate, empty parts are dropped.
    static func splitWhitespace(_ s: String, maxSplit: Int, fromEnd: Bool) -> [String] {
        var scalars = Array(s.unicodeScalars)
        if fromEnd { scalars.reverse() }
        var parts: [String] = []
        var i = 0
        while i < scalars.count {
            while i < scalars.count, scalars[i].isPythonWhitespace { i += 1 }
            guard i < scalars.count else { break }
            if maxSplit >= 0, parts.count == maxSplit {
                parts.append(String(pythonScalars: scalars[i...]))  // the rest keeps its far end
                break
            }
            let start = i
            while i < scalars.count, !scalars[i].isPythonWhitespace { i += 1 }
            parts.append(String(pythonScalars: scalars[start..<i]))
        }
        return fromEnd
            ? parts.reversed().map { String(pythonScalars: $0.unicodeScalars.reversed()) } : parts
    }

    /// `s.split(sep, maxsplit)` / `s.rsplit(sep, maxsplit)` with a non-empty separator.
    static func split(_ s: String, separator: String, maxSplit: Int, fromEnd: Bool) -> [String] {
        let scalars = Array(s.unicodeScalars)
        let sep = Array(separator.unicodeScalars)
        var cuts: [Int] = []  // start offsets of the separators used
        if fromEnd {
            var i = scalars.count - sep.count
            while i >= 0, maxSplit < 0 || cuts.count < maxSplit {
                if scalars[i..<(i + sep.count)].elementsEqual(sep) {
                    cuts.insert(i, at: 0)
                    i -= sep.count
                } else {
                    i -= 1
                }
            }
        } else {
            var i = 0
            while i + sep.count <= scalars.count, maxSplit < 0 || cuts.count < maxSplit {
                if scalars[i..<(i + sep.count)].elementsEqual(sep) {
                    cuts.append(i)
                    i += sep.count
                } else {
                    i += 1
                }
            }
        }
        var parts: [String] = []
        var start = 0
        for cut in cuts {
            parts.append(String(pythonScalars: scalars[start..<cut]))
            start = cut + sep.count
        }
        parts.append(String(pythonScalars: scalars[start...]))
        return parts
    }

    /// `s.splitlines(keepends)`: Python's line boundaries (\n, \r\n, \r, \v, \f, \x1c–\x1e,
    /// \x85, U+2028, U+2029).
    static func splitLines(_ s: String, keepEnds: Bool) -> [String] {
        let scalars = Array(s.unicodeScalars)
        var lines: [String] = []
        var start = 0
        var i = 0
        while i < scalars.count {
            let v = scalars[i].value
            let isBreak = [0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029].contains(
                v)
            guard isBreak else {
                i += 1
                continue
            }
            var end = i + 1
            if v == 0x0D, end < scalars.count, scalars[end] == "\n" { end += 1 }
            lines.append(String(pythonScalars: scalars[start..<(keepEnds ? end : i)]))
            start = end
            i = end
        }
        if start < scalars.count { lines.append(String(pythonScalars: scalars[start...])) }
        return lines
    }

    /// `s.replace(old, new, count)`; an empty `old` inserts `new` around every code point.
    /// Whether `s` is printable ASCII without `quote` or a backslash: text that Python's repr
    /// and json.dumps copy as it is between quotes (the fast path for long strings).
    static func needsNoEscaping(_ s: String, quote: UInt8) -> Bool {
        var s = s
        return s.withUTF8 { bytes in
            for byte in bytes where byte < 0x20 || byte >= 0x7F || byte == quote || byte == 0x5C {
                return false
            }
            return true
        }
    }

    static func replace(_ s: String, _ old: String, _ new: String, count: Int) -> String {
        let scalars = Array(s.unicodeScalars)
        let pattern = Array(old.unicodeScalars)
        var out = String.UnicodeScalarView()
        var replaced = 0
        var i = 0
        func canReplace() -> Bool { count < 0 || replaced < count }
        if pattern.isEmpty {
            for scalar in scalars {
                if canReplace() {
                    out.append(contentsOf: new.unicodeScalars)
                    replaced += 1
                }
                out.append(scalar)
            }
            if canReplace() { out.append(contentsOf: new.unicodeScalars) }
            return String(out)
        }
        while i < scalars.count {
            if canReplace(), i + pattern.count <= scalars.count,
                scalars[i..<(i + pattern.count)].elementsEqual(pattern)
            {
                out.append(contentsOf: new.unicodeScalars)
                replaced += 1
                i += pattern.count
            } else {
                out.append(scalars[i])
                i += 1
            }
        }
        return String(out)
    }

    /// `s.count(sub)`: non-overlapping occurrences (an empty `sub` occurs len+1 times).
    static func count(_ s: String, _ sub: String) -> Int {
        let scalars = Array(s.unicodeScalars)
        let pattern = Array(sub.unicodeScalars)
        guard !pattern.isEmpty else { return scalars.count + 1 }
        var n = 0
        var i = 0
        while i + pattern.count <= scalars.count {
            if scalars[i..<(i + pattern.count)].elementsEqual(pattern) {
                n += 1
                i += pattern.count
            } else {
                i += 1
            }
        }
        return n
    }

    /// `s.find(sub)` / `s.rfind(sub)` as a code-point offset.
    static func offset(of sub: String, in s: String, fromEnd: Bool) -> Int? {
        let scalars = Array(s.unicodeScalars)
        let pattern = Array(sub.unicodeScalars)
        guard pattern.count <= scalars.count else { return nil }
        let starts = Array(0...(scalars.count - pattern.count))
        return (fromEnd ? starts.reversed() : starts).first {
            scalars[$0..<($0 + pattern.count)].elementsEqual(pattern)
        }
    }

    /// `str.title()`: a cased character after an uncased one is title-cased, others lowered
    /// ("they're" → "They'Re", "x2y" → "X2Y").
    static func title(_ s: String) -> String {
        var out = ""
        var previousCased = false
        for scalar in s.unicodeScalars {
            let p = scalar.properties
            out += previousCased ? p.lowercaseMapping : p.titlecaseMapping
            previousCased = p.isCased
        }
        return out
    }

    /// `str.capitalize()`: the first character title-cased, the rest lowercased.
    static func capitalize(_ s: String) -> String {
        guard let first = s.unicodeScalars.first else { return s }
        return first.properties.titlecaseMapping + String(s.unicodeScalars.dropFirst()).lowercased()
    }

    static func hasCased(_ s: String) -> Bool {
        s.unicodeScalars.contains { $0.properties.isCased }
    }
}
