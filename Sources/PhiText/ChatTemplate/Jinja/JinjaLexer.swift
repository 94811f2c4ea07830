/// Splits a template into tokens exactly as Jinja2 3.1's lexer does in the environment
/// transformers builds (`trim_blocks=True, lstrip_blocks=True`, default delimiters, no line
/// statements):
/// - newlines are normalised to `\n` and one trailing newline of the template is dropped;
/// - `{%-`/`{{-`/`{#-` strip all whitespace before the tag, `-%}`/`-}}`/`-#}` all after it;
/// - lstrip_blocks removes spaces and tabs between the start of a line and a `{%` or `{#`
///   (not `{{`), unless the tag opens with `+`;
/// - trim_blocks removes the first newline after `%}` and `#}` (not `}}`), unless it is `+%}`;
/// - inside a tag, `}}`/`%}` only end it when brackets are balanced (`{{ {'a': 1}}}` works).
struct JinjaLexer {
    private let src: [Unicode.Scalar]
    /// Offsets in `src` where each line starts, for line/column numbers.
    private let lineStarts: [Int]
    private var pos = 0
    private var tokens: [JinjaToken] = []
    /// Whether the last match ended with a newline (Jinja's `line_starting`), which lets
    /// lstrip_blocks strip indentation at the very start of a line.
    private var lineStarting = true

    init(source: String) {
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(source.unicodeScalars.count)
        var it = source.unicodeScalars.makeIterator()
        var pending = it.next()
        while let s = pending {
            pending = it.next()
            if s == "\r" {
                if pending == "\n" { pending = it.next() }
                scalars.append("\n")
            } else {
                scalars.append(s)
            }
        }
        if scalars.last == "\n" { scalars.removeLast() }  // keep_trailing_newline=False
        src = scalars
        var starts = [0]
        for (i, s) in scalars.enumerated() where s == "\n" { starts.append(i + 1) }
        lineStarts = starts
    }

    static func tokenize(_ source: String) throws -> [JinjaToken] {
        var lexer = JinjaLexer(source: source)
        try lexer.run()
        return lexer.tokens
    }

    // MARK: - Root state: template data and tag openers

    private enum Opener { case variable, block, comment, raw }

    private mutating func run() throws {
        while pos < src.count {
            guard let tag = findOpener(from: pos) else {
                emit(.data(String(pythonScalars: src[pos...])), at: pos)
                break
            }
            let text = strippedData(src[pos..<tag.start], opener: tag.kind, sign: tag.sign)
            if !text.isEmpty { emit(.data(String(pythonScalars: text)), at: pos) }
            lineStarting = false
            switch tag.kind {
            case .comment:
                pos = tag.end
                try skipComment(openedAt: tag.start)
            case .raw:
                pos = tag.end
                lineStarting = src[pos - 1] == "\n"
                try lexRawBody(openedAt: tag.start)
            case .variable, .block:
                emit(tag.kind == .block ? .blockBegin : .variableBegin, at: tag.start)
                pos = tag.end
                try lexTag(isBlock: tag.kind == .block, openedAt: tag.start)
            }
        }
        emit(.eof, at: src.count)
    }

    /// The next `{{`, `{%` or `{#` at or after `from`, with its whitespace-control sign and the
    /// offset just past the opener (for `{% raw %}`, past the whole tag).
    private func findOpener(
        from start: Int
    ) -> (start: Int, end: Int, kind: Opener, sign: Unicode.Scalar?)? {
        var i = start
        while i + 1 < src.count {
            if src[i] == "{", let kind = Self.openerKind(src[i + 1]) {
                let sign: Unicode.Scalar? =
                    i + 2 < src.count && (src[i + 2] == "-" || src[i + 2] == "+") ? src[i + 2] : nil
                let end = i + 2 + (sign == nil ? 0 : 1)
                if kind == .block,
                    let rawEnd = matchRawTag(named: "raw", from: end, trimNewline: false)
                {
                    return (i, rawEnd, .raw, sign)
                }
                return (i, end, kind, sign)
            }
            i += 1
        }
        return nil
    }

    private static func openerKind(_ s: Unicode.Scalar) -> Opener? {
        switch s {
        case "{": .variable
        case "%": .block
        case "#": .comment
        default: nil
        }
    }

    /// Applies `-` (strip all trailing whitespace) or lstrip_blocks (strip the indentation of
    /// the tag's own line) to the data before a tag.
    private func strippedData(
        _ text: ArraySlice<Unicode.Scalar>, opener: Opener, sign: Unicode.Scalar?
    ) -> ArraySlice<Unicode.Scalar> {
        if sign == "-" {
            var end = text.endIndex
            while end > text.startIndex, text[end - 1].isPythonWhitespace { end -= 1 }
            return text[text.startIndex..<end]
        }
        guard sign != "+", opener != .variable else { return text }
        let lineStart = (text.lastIndex(of: "\n").map { $0 + 1 }) ?? text.startIndex
        guard lineStart > text.startIndex || lineStarting else { return text }
        let indentation = text[lineStart...]
        guard !indentation.isEmpty, indentation.allSatisfy(\.isPythonWhitespace) else {
            return text
        }
        return text[text.startIndex..<lineStart]
    }

    // MARK: - Comments and raw blocks

    private mutating func skipComment(openedAt start: Int) throws {
        var i = pos
        while i + 1 < src.count {
            if src[i] == "+" || src[i] == "-", i + 2 < src.count, src[i + 1] == "#",
                src[i + 2] == "}"
            {
                pos = i + 3
                if src[i] == "-" { skipWhitespace() }
                lineStarting = src[pos - 1] == "\n"
                return
            }
            if src[i] == "#", src[i + 1] == "}" {
                pos = i + 2
                if pos < src.count, src[pos] == "\n" { pos += 1 }  // trim_blocks
                lineStarting = src[pos - 1] == "\n"
                return
            }
            i += 1
        }
        throw syntaxError("Missing end of comment tag", at: start)
    }

    /// Matches `\s*<name>\s*` followed by a block end (`-%}` eating whitespace after it, `+%}`,
    /// or `%}` eating one newline when `trimNewline`), returning the offset after it.
    private func matchRawTag(named name: String, from start: Int, trimNewline: Bool) -> Int? {
        var i = start
        while i < src.count, src[i].isPythonWhitespace { i += 1 }
        for s in name.unicodeScalars {
            guard i < src.count, src[i] == s else { return nil }
            i += 1
        }
        while i < src.count, src[i].isPythonWhitespace { i += 1 }
        func at(_ text: String, _ offset: Int) -> Bool {
            let chars = Array(text.unicodeScalars)
            return offset + chars.count <= src.count
                && src[offset..<offset + chars.count].elementsEqual(chars)
        }
        if at("-%}", i) {
            i += 3
            while i < src.count, src[i].isPythonWhitespace { i += 1 }
            return i
        }
        if trimNewline, at("+%}", i) { return i + 3 }
        guard at("%}", i) else { return nil }
        i += 2
        if trimNewline, i < src.count, src[i] == "\n" { i += 1 }
        return i
    }

    /// The text of `{% raw %}…{% endraw %}`, emitted as data without interpretation.
    private mutating func lexRawBody(openedAt start: Int) throws {
        var i = pos
        while i + 1 < src.count {
            if src[i] == "{", src[i + 1] == "%" {
                let sign: Unicode.Scalar? =
                    i + 2 < src.count && (src[i + 2] == "-" || src[i + 2] == "+") ? src[i + 2] : nil
                let after = i + 2 + (sign == nil ? 0 : 1)
                if let end = matchRawTag(named: "endraw", from: after, trimNewline: true) {
                    let text = strippedData(src[pos..<i], opener: .block, sign: sign)
                    if !text.isEmpty { emit(.data(String(pythonScalars: text)), at: pos) }
                    pos = end
                    lineStarting = src[pos - 1] == "\n"
                    return
                }
            }
            i += 1
        }
        throw syntaxError("Missing end of raw directive", at: start)
    }

    // MARK: - Inside {{ … }} and {% … %}

    private mutating func lexTag(isBlock: Bool, openedAt start: Int) throws {
        var balancing: [Unicode.Scalar] = []
        while true {
            if balancing.isEmpty, matchTagEnd(isBlock: isBlock) { return }
            guard pos < src.count else {
                let what = isBlock ? "end of statement block" : "end of print statement"
                throw syntaxError("unexpected end of template, expected '\(what)'", at: pos)
            }
            let s = src[pos]
            if s.isPythonWhitespace {
                skipWhitespace()
            } else if let number = try lexNumber() {
                emit(number.kind, at: number.start)
            } else if s == "_" || s.properties.isXIDStart {
                let begin = pos
                while pos < src.count, src[pos] == "_" || src[pos].properties.isXIDContinue {
                    pos += 1
                }
                emit(.name(String(pythonScalars: src[begin..<pos])), at: begin)
            } else if s == "'" || s == "\"" {
                let begin = pos
                emit(.string(try lexString()), at: begin)
            } else {
                try lexOperator(&balancing)
            }
        }
    }

    /// Consumes the end of the current tag if it is here: `-%}` / `-}}` strip the whitespace
    /// after them, `%}` also eats one newline (trim_blocks), `+%}` eats nothing.
    private mutating func matchTagEnd(isBlock: Bool) -> Bool {
        let closer: Unicode.Scalar = isBlock ? "%" : "}"
        func at(_ offset: Int, _ s: Unicode.Scalar) -> Bool {
            offset < src.count && src[offset] == s
        }
        let begin = pos
        if isBlock, at(pos, "+"), at(pos + 1, closer), at(pos + 2, "}") {
            pos += 3
        } else if at(pos, "-"), at(pos + 1, closer), at(pos + 2, "}") {
            pos += 3
            skipWhitespace()
        } else if at(pos, closer), at(pos + 1, "}") {
            pos += 2
            if isBlock, at(pos, "\n") { pos += 1 }
        } else {
            return false
        }
        emit(isBlock ? .blockEnd : .variableEnd, at: begin)
        lineStarting = src[pos - 1] == "\n"
        return true
    }

    private mutating func lexOperator(_ balancing: inout [Unicode.Scalar]) throws {
        let begin = pos
        let s = src[pos]
        let next = pos + 1 < src.count ? src[pos + 1] : nil
        let two: Set<String> = ["//", "**", "==", "!=", ">=", "<="]
        if let next, two.contains(String(Character(s)) + String(Character(next))) {
            pos += 2
            emit(.op(String(Character(s)) + String(Character(next))), at: begin)
            return
        }
        guard "+-/*%~[](){}><=.:|,;".unicodeScalars.contains(s) else {
            throw syntaxError("unexpected char '\(Character(s))'", at: begin)
        }
        switch s {
        case "{": balancing.append("}")
        case "(": balancing.append(")")
        case "[": balancing.append("]")
        case "}", ")", "]":
            guard let expected = balancing.popLast() else {
                throw syntaxError("unexpected '\(Character(s))'", at: begin)
            }
            guard expected == s else {
                throw syntaxError(
                    "unexpected '\(Character(s))', expected '\(Character(expected))'", at: begin)
            }
        default: break
        }
        pos += 1
        emit(.op(String(Character(s))), at: begin)
    }

    private mutating func skipWhitespace() {
        while pos < src.count, src[pos].isPythonWhitespace { pos += 1 }
    }

    // MARK: - Helpers

    mutating func emit(_ kind: JinjaToken.Kind, at offset: Int) {
        let (line, column) = location(of: offset)
        tokens.append(JinjaToken(kind: kind, line: line, column: column))
    }

    func location(of offset: Int) -> (line: Int, column: Int) {
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if lineStarts[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        return (low + 1, offset - lineStarts[low] + 1)
    }

    func syntaxError(_ message: String, at offset: Int) -> JinjaError {
        let (line, column) = location(of: offset)
        return .syntax(message, line: line, column: column)
    }

    var source: [Unicode.Scalar] { src }
    var position: Int {
        get { pos }
        set { pos = newValue }
    }
}

extension String {
    init(pythonScalars scalars: some Sequence<Unicode.Scalar>) {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        self = String(view)
    }
}
