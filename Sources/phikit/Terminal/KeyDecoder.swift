import Foundation

/// A key (or a paste) the line editor acts on.
enum Key: Equatable {
    /// Typed text: one or more characters.
    case text(String)
    /// Text between the bracketed-paste markers, newlines and all.
    case paste(String)
    case enter, backspace, delete, left, right, home, end, up, down
    case wordLeft, wordRight, killToEnd, killToStart, killWordBack, clearScreen
    /// Ctrl-C, Ctrl-D, Ctrl-Z.
    case interrupt, endOfInput, suspend
}

/// Turns the bytes a raw terminal sends into keys: UTF-8 text (a character split across
/// reads waits for its last byte), control keys, the escape sequences of xterm and the
/// Linux console (CSI and SS3, with modifiers), and bracketed paste
/// (`ESC [200~` … `ESC [201~`), which may span many reads.
struct KeyDecoder {
    private var pending: [UInt8] = []
    /// Inside a bracketed paste: the bytes pasted so far.
    private var paste: [UInt8]?

    private static let pasteStart: [UInt8] = Array("\u{1B}[200~".utf8)
    private static let pasteEnd: [UInt8] = Array("\u{1B}[201~".utf8)

    /// Bytes are waiting for more (an escape sequence or a character not yet complete).
    var hasPending: Bool { !pending.isEmpty || paste != nil }

    mutating func feed(_ bytes: some Sequence<UInt8>) -> [Key] {
        pending.append(contentsOf: bytes)
        var keys: [Key] = []
        while let key = next() { keys.append(key) }
        return merged(keys)
    }

    /// Nothing more came after a lone ESC (the Escape key): drop what is waiting.
    mutating func flushPending() -> [Key] {
        defer {
            pending = []
            paste = nil
        }
        if let paste { return [.paste(String(decoding: paste + pending, as: UTF8.self))] }
        return []
    }

    /// Consecutive typed characters as one `.text`, so a fast typist costs one redraw.
    private func merged(_ keys: [Key]) -> [Key] {
        var out: [Key] = []
        for key in keys {
            if case .text(let b) = key, case .text(let a)? = out.last {
                out[out.count - 1] = .text(a + b)
            } else {
                out.append(key)
            }
        }
        return out
    }

    /// The next complete key in `pending`, consuming its bytes; nil when more bytes are needed.
    private mutating func next() -> Key? {
        if paste != nil { return nextPasteChunk() }
        guard let first = pending.first else { return nil }
        if first == 0x1B { return nextEscape() }
        if first < 0x20 || first == 0x7F {
            pending.removeFirst()
            return controlKey(first) ?? next()
        }
        // UTF-8: the lead byte says how long the character is.
        let length =
            first < 0x80 ? 1 : first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : first >= 0xC0 ? 2 : 1
        guard pending.count >= length else { return nil }
        let bytes = pending.prefix(length)
        pending.removeFirst(length)
        return .text(String(decoding: bytes, as: UTF8.self))
    }

    private func controlKey(_ byte: UInt8) -> Key? {
        switch byte {
        case 0x01: .home  // Ctrl-A
        case 0x02: .left  // Ctrl-B
        case 0x03: .interrupt  // Ctrl-C
        case 0x04: .endOfInput  // Ctrl-D
        case 0x05: .end  // Ctrl-E
        case 0x06: .right  // Ctrl-F
        case 0x08, 0x7F: .backspace
        case 0x09: .text("    ")  // Tab: spaces, which the display measures honestly
        case 0x0A, 0x0D: .enter
        case 0x0B: .killToEnd  // Ctrl-K
        case 0x0C: .clearScreen  // Ctrl-L
        case 0x0E: .down  // Ctrl-N
        case 0x10: .up  // Ctrl-P
        case 0x15: .killToStart  // Ctrl-U
        case 0x17: .killWordBack  // Ctrl-W
        case 0x1A: .suspend  // Ctrl-Z
        default: nil
        }
    }

    /// `ESC [ params final`, `ESC O final`, or Alt-key (`ESC b`).
    private mutating func nextEscape() -> Key? {
        guard pending.count >= 2 else { return nil }
        let kind = pending[1]
        if kind != UInt8(ascii: "[") && kind != UInt8(ascii: "O") {
            pending.removeFirst(2)
            switch kind {
            case UInt8(ascii: "b"): return .wordLeft
            case UInt8(ascii: "f"): return .wordRight
            case 0x7F, 0x08: return .killWordBack
            default: return next()
            }
        }
        // Parameters (digits and ';') end at a final byte in 0x40...0x7E.
        var end = 2
        while end < pending.count && !(0x40...0x7E).contains(pending[end]) { end += 1 }
        guard end < pending.count else { return nil }
        let sequence = Array(pending[0...end])
        pending.removeFirst(end + 1)
        if sequence == Self.pasteStart {
            paste = []
            return nextPasteChunk()
        }
        let parameters = String(decoding: sequence[2..<end], as: UTF8.self)
        return escapeKey(final: sequence[end], parameters: parameters) ?? next()
    }

    private func escapeKey(final: UInt8, parameters: String) -> Key? {
        let modified = parameters.contains(";")  // `1;5D`: Ctrl-Left and friends
        switch final {
        case UInt8(ascii: "A"): return .up
        case UInt8(ascii: "B"): return .down
        case UInt8(ascii: "C"): return modified ? .wordRight : .right
        case UInt8(ascii: "D"): return modified ? .wordLeft : .left
        case UInt8(ascii: "H"): return .home
        case UInt8(ascii: "F"): return .end
        case UInt8(ascii: "~"):
            switch parameters.split(separator: ";").first {
            case "1", "7": return .home
            case "4", "8": return .end
            case "3": return .delete
            default: return nil
            }
        default: return nil
        }
    }

    /// Collects pasted bytes until the end marker; the paste is one key.
    private mutating func nextPasteChunk() -> Key? {
        guard var collected = paste else { return nil }
        collected.append(contentsOf: pending)
        pending = []
        if let range = collected.firstRange(of: Self.pasteEnd) {
            pending = Array(collected[range.upperBound...])
            paste = nil
            let text = String(decoding: collected[..<range.lowerBound], as: UTF8.self)
            // Terminals send pasted line ends as CR; a message keeps them as LF.
            return .paste(
                text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(
                    of: "\r", with: "\n"))
        }
        paste = collected
        return nil
    }
}
