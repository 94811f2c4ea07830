/// The line being edited and the session's history, without any terminal: keys go in, the
/// text and the cursor (an index in Characters, so a cursor step is one user-perceived
/// character however many bytes or scalars it has) come out.
struct LineBuffer {
    private(set) var text: [Character] = []
    private(set) var cursor = 0
    /// Lines entered this session, oldest first.
    private(set) var history: [String] = []
    /// Which history line is shown (history.count: the line being written).
    private var historyIndex = 0
    /// The line being written, kept while the user browses the history.
    private var draft: [Character] = []

    var isEmpty: Bool { text.isEmpty }
    var string: String { String(text) }

    /// What a key asks of the editor beyond changing the text.
    enum Outcome: Equatable {
        case edited
        case submit(String)
        case interrupt
        case endOfInput
        case clearScreen
        case suspend
    }

    mutating func handle(_ key: Key) -> Outcome {
        switch key {
        case .text(let s), .paste(let s): insert(s)
        case .enter:
            let line = string
            remember(line)
            text = []
            cursor = 0
            return .submit(line)
        case .backspace:
            if cursor > 0 {
                text.remove(at: cursor - 1)
                cursor -= 1
            }
        case .delete: if cursor < text.count { text.remove(at: cursor) }
        case .left: cursor = max(0, cursor - 1)
        case .right: cursor = min(text.count, cursor + 1)
        case .home: cursor = lineStart()
        case .end: cursor = lineEnd()
        case .wordLeft: cursor = wordStart(before: cursor)
        case .wordRight: cursor = wordEnd(after: cursor)
        case .killToEnd: text.removeSubrange(cursor..<lineEnd())
        case .killToStart:
            let start = lineStart()
            text.removeSubrange(start..<cursor)
            cursor = start
        case .killWordBack:
            let start = wordStart(before: cursor)
            text.removeSubrange(start..<cursor)
            cursor = start
        case .up: browse(by: -1)
        case .down: browse(by: 1)
        case .interrupt:
            text = []
            cursor = 0
            historyIndex = history.count
            return .interrupt
        case .endOfInput:
            // Ctrl-D ends the input on an empty line and deletes forward otherwise (as bash).
            if text.isEmpty { return .endOfInput }
            if cursor < text.count { text.remove(at: cursor) }
        case .clearScreen: return .clearScreen
        case .suspend: return .suspend
        }
        return .edited
    }

    private mutating func insert(_ s: String) {
        text.insert(contentsOf: s, at: cursor)
        // Inserting can merge graphemes (a combining mark after a letter): recount from text.
        let before = String(text[..<cursor]) + s
        text = Array(String(text))
        cursor = min(text.count, before.count)
    }

    private mutating func remember(_ line: String) {
        if !line.isEmpty && history.last != line { history.append(line) }
        historyIndex = history.count
        draft = []
    }

    private mutating func browse(by step: Int) {
        let target = historyIndex + step
        guard target >= 0, target <= history.count else { return }
        if historyIndex == history.count { draft = text }
        historyIndex = target
        text = target == history.count ? draft : Array(history[target])
        cursor = text.count
    }

    /// Home and End work on the current line of a pasted multi-line text.
    private func lineStart() -> Int {
        var i = cursor
        while i > 0 && text[i - 1] != "\n" { i -= 1 }
        return i
    }

    private func lineEnd() -> Int {
        var i = cursor
        while i < text.count && text[i] != "\n" { i += 1 }
        return i
    }

    private func wordStart(before position: Int) -> Int {
        var i = position
        while i > 0 && !isWordCharacter(text[i - 1]) { i -= 1 }
        while i > 0 && isWordCharacter(text[i - 1]) { i -= 1 }
        return i
    }

    private func wordEnd(after position: Int) -> Int {
        var i = position
        while i < text.count && !isWordCharacter(text[i]) { i += 1 }
        while i < text.count && isWordCharacter(text[i]) { i += 1 }
        return i
    }

    private func isWordCharacter(_ c: Character) -> Bool { c.isLetter || c.isNumber }
}
