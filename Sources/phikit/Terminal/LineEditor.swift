#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads one line from the terminal with editing: the prompt, the keys of `KeyDecoder`, the
/// history of this session, and a display that wraps long and multi-line text and keeps the
/// cursor where the text says (wide characters count two columns). The terminal is raw only
/// while `readLine` runs.
final class LineEditor {
    private var buffer = LineBuffer()
    private var decoder = KeyDecoder()
    /// Rows between the first row of the prompt and the cursor, as last drawn.
    private var cursorRow = 0

    enum Result: Equatable {
        case line(String)
        /// Ctrl-C: `empty` when the line was empty (the chat then ends).
        case interrupt(empty: Bool)
        case endOfInput
    }

    /// `prompt` is shown as it is; `promptWidth` is its width in columns (without colours).
    func readLine(prompt: String, promptWidth: Int) -> Result {
        TerminalMode.enterRaw()
        defer { TerminalMode.enterAnswer() }
        cursorRow = 0
        redraw(prompt, promptWidth)
        var bytes = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(STDIN_FILENO, &bytes, bytes.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return .endOfInput }
            var keys = decoder.feed(bytes[..<count])
            // A lone ESC (the Escape key) would wait forever for the rest of a sequence.
            if decoder.hasPending && !inputArrives(withinMilliseconds: 50) {
                keys += decoder.flushPending()
            }
            for key in keys {
                let wasEmpty = buffer.isEmpty
                switch buffer.handle(key) {
                case .edited: break
                case .submit(let line):
                    finish(prompt, showing: line)
                    return .line(line)
                case .interrupt:
                    finish(prompt, showing: nil)
                    return .interrupt(empty: wasEmpty)
                case .endOfInput:
                    finish(prompt, showing: nil)
                    return .endOfInput
                case .clearScreen:
                    Self.write("\u{1B}[H\u{1B}[2J")
                    cursorRow = 0
                case .suspend:
                    Self.write("\r\n")
                    TerminalMode.suspendSelf()
                    cursorRow = 0
                }
            }
            redraw(prompt, promptWidth)
        }
    }

    /// Leaves the line as entered (the cursor after it, on a fresh row).
    private func finish(_ prompt: String, showing line: String?) {
        Self.write(moveToFirstRow() + prompt + Self.displayed(line ?? "") + "\u{1B}[J\r\n")
        cursorRow = 0
    }

    private func redraw(_ prompt: String, _ promptWidth: Int) {
        let layout = Layout(promptWidth: promptWidth, text: buffer.text, columns: columns())
        var out = moveToFirstRow() + prompt + Self.displayed(buffer.string) + "\u{1B}[J"
        // A text that ends exactly at the right margin leaves the cursor in the margin's
        // "pending wrap" state; a line break puts it where the layout says.
        if layout.endsAtMargin { out += "\r\n" }
        let target = layout.position(of: buffer.cursor)
        let end = layout.end
        if end.row > target.row { out += "\u{1B}[\(end.row - target.row)A" }
        out += "\r"
        if target.column > 0 { out += "\u{1B}[\(target.column)C" }
        Self.write(out)
        cursorRow = target.row
    }

    private func moveToFirstRow() -> String {
        (cursorRow > 0 ? "\u{1B}[\(cursorRow)A" : "") + "\r"
    }

    /// Text as drawn: a line break returns to the first column; other control characters
    /// would move the cursor behind the layout's back, so they show as spaces.
    private static func displayed(_ text: String) -> String {
        var out = ""
        for c in text {
            if c == "\n" {
                out += "\r\n"
            } else if let scalar = c.unicodeScalars.first,
                scalar.value < 0x20 || scalar.value == 0x7F
            {
                out += " "
            } else {
                out.append(c)
            }
        }
        return out
    }

    private func inputArrives(withinMilliseconds timeout: Int32) -> Bool {
        var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, timeout) > 0
    }

    /// The terminal's width (80 when it cannot say).
    private func columns() -> Int {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    static func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = writeBytes(STDOUT_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                offset += n
            }
        }
    }
}

/// write(2), under a name that does not clash with `LineEditor.write`.
private func writeBytes(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, bytes, count)
}

/// Where each character of prompt + text lands on a terminal `columns` wide: rows wrap at the
/// margin (a wide character that does not fit goes to the next row, as terminals do) and at
/// line breaks.
struct Layout {
    /// (row, column) before each character, and after the last one.
    private var positions: [(row: Int, column: Int)] = []
    private(set) var endsAtMargin = false

    init(promptWidth: Int, text: [Character], columns: Int) {
        var row = promptWidth / columns
        var column = promptWidth % columns
        for c in text {
            if c == "\n" {
                positions.append((row, column))
                row += 1
                column = 0
                continue
            }
            let width = Self.width(of: c)
            if column + width > columns {
                row += 1
                column = 0
            }
            positions.append((row, column))
            column += width
        }
        if column >= columns {
            endsAtMargin = true
            row += 1
            column = 0
        }
        positions.append((row, column))
    }

    func position(of index: Int) -> (row: Int, column: Int) {
        positions[min(index, positions.count - 1)]
    }

    var end: (row: Int, column: Int) { positions[positions.count - 1] }

    /// Columns a character takes: 2 for East Asian wide and emoji, 0 for a lone combining
    /// mark, else 1.
    static func width(of c: Character) -> Int {
        guard let scalar = c.unicodeScalars.first else { return 0 }
        let v = scalar.value
        if scalar.properties.generalCategory == .nonspacingMark
            || scalar.properties.generalCategory == .enclosingMark
        {
            return 0
        }
        if scalar.properties.isEmojiPresentation
            || c.unicodeScalars.contains(where: { $0.value == 0xFE0F })
        {
            return 2
        }
        let wide: [ClosedRange<UInt32>] = [
            0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x20000...0x3FFFD,
        ]
        return wide.contains { $0.contains(v) } ? 2 : 1
    }
}
