/// Builds the statement tree from tokens, following jinja2/parser.py (3.1) for the tags chat
/// templates use: for/if/set/macro/call/filter/with, `break`/`continue` (transformers enables
/// the loopcontrols extension) and transformers' `generation` tag. Other tags (include,
/// extends, import, block, …) are errors: a chat template is a single string.
struct JinjaParser {
    private var tokens: [JinjaToken]
    private var index = 0
    /// How many `for` bodies enclose the current position (outside macros), for `break`.
    private var loopDepth = 0
    /// Variable names read anywhere in the current macro body, to tell whether the macro
    /// takes `varargs` / `kwargs`.
    private var namesRead: Set<String> = []
    /// How deeply expressions and blocks nest here. Real templates stay in single digits; a
    /// bound keeps a hostile template from exhausting the stack of the recursive descent.
    private var depth = 0
    static let maxDepth = 100

    static func parse(_ source: String) throws -> [JinjaNode] {
        var parser = JinjaParser(tokens: try JinjaLexer.tokenize(source))
        return try parser.parseTemplate()
    }

    private init(tokens: [JinjaToken]) {
        self.tokens = tokens
    }

    private mutating func parseTemplate() throws -> [JinjaNode] {
        let body = try subparse(endTags: [])
        guard case .eof = current.kind else { throw unexpected(current) }
        return body
    }

    // MARK: - Token stream

    var current: JinjaToken { tokens[index] }

    func peek() -> JinjaToken { tokens[min(index + 1, tokens.count - 1)] }

    @discardableResult
    mutating func advance() -> JinjaToken {
        let token = tokens[index]
        if index < tokens.count - 1 { index += 1 }
        return token
    }

    mutating func skipIf(name: String) -> Bool {
        guard current.isName(name) else { return false }
        advance()
        return true
    }

    mutating func skipIf(op: String) -> Bool {
        guard current.isOp(op) else { return false }
        advance()
        return true
    }

    mutating func expectName(_ name: String? = nil) throws -> JinjaToken {
        guard let value = current.nameValue, name == nil || value == name else {
            throw JinjaError.syntax(
                "expected '\(name ?? "name")', got '\(current.description)'", line: current.line,
                column: current.column)
        }
        _ = value
        return advance()
    }

    mutating func expect(op: String) throws {
        guard current.isOp(op) else {
            throw JinjaError.syntax(
                "expected '\(op)', got '\(current.description)'", line: current.line,
                column: current.column)
        }
        advance()
    }

    mutating func expect(_ kind: JinjaToken.Kind) throws {
        guard current.kind == kind else {
            let wanted = JinjaToken(kind: kind, line: 0, column: 0).description
            throw JinjaError.syntax(
                "expected '\(wanted)', got '\(current.description)'", line: current.line,
                column: current.column)
        }
        advance()
    }

    func unexpected(_ token: JinjaToken) -> JinjaError {
        .syntax("unexpected '\(token.description)'", line: token.line, column: token.column)
    }

    func fail(_ message: String, at token: JinjaToken) -> JinjaError {
        .syntax(message, line: token.line, column: token.column)
    }

    mutating func noteNameRead(_ name: String) { namesRead.insert(name) }

    /// Every expression node is made here, so that no tree deeper than the budget is ever
    /// built (left-deep chains are built in loops, past the recursion bound of `nested`).
    func make(_ kind: JinjaExpr.Kind, line: Int) throws -> JinjaExpr {
        let expr = JinjaExpr(kind: kind, line: line)
        guard expr.depth <= JinjaBudget.maxExpressionDepth else {
            throw fail(
                "the expression nests deeper than \(JinjaBudget.maxExpressionDepth) levels",
                at: current)
        }
        return expr
    }

    /// Runs one level of recursive parsing, refusing nesting deeper than `maxDepth`.
    mutating func nested<T>(_ body: (inout JinjaParser) throws -> T) throws -> T {
        guard depth < Self.maxDepth else {
            throw fail("the template nests deeper than \(Self.maxDepth) levels", at: current)
        }
        depth += 1
        defer { depth -= 1 }
        return try body(&self)
    }

    // MARK: - Bodies

    /// Template data, `{{ … }}` and statements until a block tag named in `endTags` (which is
    /// left as the current token) or the end of the template.
    private mutating func subparse(endTags: Set<String>) throws -> [JinjaNode] {
        var body: [JinjaNode] = []
        while true {
            let token = current
            switch token.kind {
            case .data(let text):
                advance()
                body.append(JinjaNode(kind: .text(text), line: token.line))
            case .variableBegin:
                advance()
                let expr = try parseTuple(withCondexpr: true)
                try expect(.variableEnd)
                body.append(JinjaNode(kind: .output(expr), line: token.line))
            case .blockBegin:
                advance()
                if let name = current.nameValue, endTags.contains(name) { return body }
                body.append(try parseStatement())
                try expect(.blockEnd)
            case .eof:
                return body
            default:
                throw unexpected(token)
            }
        }
    }

    /// `%}` then a body up to one of `endTags`; with `dropEnd`, the end tag is consumed.
    private mutating func parseBody(
        until endTags: Set<String>, dropEnd: Bool, opener: JinjaToken
    ) throws -> [JinjaNode] {
        try expect(.blockEnd)
        let body = try subparse(endTags: endTags)
        guard current.nameValue.map(endTags.contains) == true else {
            let tags = endTags.sorted().map { "'\($0)'" }.joined(separator: " or ")
            throw fail(
                "unexpected end of template: looking for \(tags) to close "
                    + "'\(opener.nameValue ?? "")' from line \(opener.line)", at: current)
        }
        if dropEnd { advance() }
        return body
    }

    // MARK: - Statements

    private mutating func parseStatement() throws -> JinjaNode {
        try nested { try $0.parseTag() }
    }

    private mutating func parseTag() throws -> JinjaNode {
        let token = current
        guard let tag = token.nameValue else { throw fail("tag name expected", at: token) }
        switch tag {
        case "for": return try parseFor()
        case "if": return try parseIf()
        case "set": return try parseSet()
        case "macro": return try parseMacro()
        case "call": return try parseCallBlock()
        case "filter":
            advance()
            let filter = try parseFilter(nil, startInline: true)!
            let body = try parseBody(until: ["endfilter"], dropEnd: true, opener: token)
            return JinjaNode(kind: .filterBlock(filter, body: body), line: token.line)
        case "with": return try parseWith()
        case "print":
            advance()
            return JinjaNode(kind: .output(try parseTuple(withCondexpr: true)), line: token.line)
        case "generation":
            advance()
            let body = try parseBody(until: ["endgeneration"], dropEnd: true, opener: token)
            return JinjaNode(kind: .generation(body), line: token.line)
        case "break", "continue":
            advance()
            guard loopDepth > 0 else { throw fail("'\(tag)' outside of a loop", at: token) }
            return JinjaNode(kind: tag == "break" ? .breakLoop : .continueLoop, line: token.line)
        case "include", "extends", "import", "from", "block", "autoescape":
            throw fail("the '\(tag)' tag is not supported in chat templates", at: token)
        default:
            throw fail("unknown tag '\(tag)'", at: token)
        }
    }

    private mutating func parseFor() throws -> JinjaNode {
        let opener = advance()
        let target = try parseAssignTarget(endNames: ["in"], withNamespace: false)
        _ = try expectName("in")
        let iterable = try parseTuple(withCondexpr: false, endNames: ["recursive"])
        let condition = skipIf(name: "if") ? try parseExpression() : nil
        let recursive = skipIf(name: "recursive")
        loopDepth += 1
        let body = try parseBody(until: ["endfor", "else"], dropEnd: false, opener: opener)
        loopDepth -= 1
        var otherwise: [JinjaNode] = []
        if advance().isName("else") {
            otherwise = try parseBody(until: ["endfor"], dropEnd: true, opener: opener)
        }
        let loop = JinjaForLoop(
            target: target, iterable: iterable, condition: condition, body: body,
            otherwise: otherwise, recursive: recursive)
        return JinjaNode(kind: .forLoop(loop), line: opener.line)
    }

    private mutating func parseIf() throws -> JinjaNode {
        let opener = advance()
        var branches: [JinjaBranch] = []
        var otherwise: [JinjaNode] = []
        while true {
            let test = try parseTuple(withCondexpr: false)
            let body = try parseBody(
                until: ["elif", "else", "endif"], dropEnd: false, opener: opener)
            branches.append(JinjaBranch(test: test, body: body))
            let end = advance()
            if end.isName("elif") { continue }
            if end.isName("else") {
                otherwise = try parseBody(until: ["endif"], dropEnd: true, opener: opener)
            }
            break
        }
        return JinjaNode(
            kind: .ifChain(branches: branches, otherwise: otherwise), line: opener.line)
    }

    private mutating func parseSet() throws -> JinjaNode {
        let opener = advance()
        let target = try parseAssignTarget(endNames: [], withNamespace: true)
        if skipIf(op: "=") {
            return JinjaNode(
                kind: .set(target, try parseTuple(withCondexpr: true)), line: opener.line)
        }
        let filter = try parseFilter(nil, startInline: false)
        let body = try parseBody(until: ["endset"], dropEnd: true, opener: opener)
        return JinjaNode(kind: .setBlock(target, filter: filter, body: body), line: opener.line)
    }

    private mutating func parseMacro() throws -> JinjaNode {
        let opener = advance()
        let name = try expectName()
        guard let macroName = name.nameValue else { throw unexpected(name) }
        let parameters = try parseSignature()
        let (outerLoops, outerNames) = (loopDepth, namesRead)
        (loopDepth, namesRead) = (0, [])
        let body = try parseBody(until: ["endmacro"], dropEnd: true, opener: opener)
        let macro = JinjaMacro(
            name: macroName, parameters: parameters, body: body,
            usesVarargs: namesRead.contains("varargs"), usesKwargs: namesRead.contains("kwargs"))
        (loopDepth, namesRead) = (outerLoops, outerNames.union(namesRead))
        return JinjaNode(kind: .macro(macro), line: opener.line)
    }

    private mutating func parseCallBlock() throws -> JinjaNode {
        let opener = advance()
        let parameters = current.isOp("(") ? try parseSignature() : []
        let call = try parseExpression()
        guard case .call = call.kind else { throw fail("expected call", at: opener) }
        let body = try parseBody(until: ["endcall"], dropEnd: true, opener: opener)
        return JinjaNode(
            kind: .callBlock(call: call, parameters: parameters, body: body), line: opener.line)
    }

    private mutating func parseWith() throws -> JinjaNode {
        let opener = advance()
        var assignments: [(JinjaTarget, JinjaExpr)] = []
        while current.kind != .blockEnd {
            if !assignments.isEmpty { try expect(op: ",") }
            let target = try parseAssignTarget(endNames: [], withNamespace: false)
            try expect(op: "=")
            assignments.append((target, try parseExpression()))
        }
        let body = try parseBody(until: ["endwith"], dropEnd: true, opener: opener)
        return JinjaNode(kind: .with(assignments: assignments, body: body), line: opener.line)
    }

    /// `(a, b=1, …)` of a macro or call block.
    private mutating func parseSignature() throws -> [JinjaParameter] {
        try expect(op: "(")
        var parameters: [JinjaParameter] = []
        while !current.isOp(")") {
            if !parameters.isEmpty { try expect(op: ",") }
            let token = try expectName()
            let name = token.nameValue!
            if skipIf(op: "=") {
                parameters.append(JinjaParameter(name: name, defaultValue: try parseExpression()))
            } else {
                if parameters.last?.defaultValue != nil {
                    throw fail("non-default argument follows default argument", at: token)
                }
                parameters.append(JinjaParameter(name: name, defaultValue: nil))
            }
        }
        try expect(op: ")")
        return parameters
    }

    /// A name, `ns.attr` (with `withNamespace`), or a comma-separated tuple of names.
    private mutating func parseAssignTarget(
        endNames: Set<String>, withNamespace: Bool
    ) throws -> JinjaTarget {
        var targets: [JinjaTarget] = []
        var isTuple = false
        while true {
            if !targets.isEmpty { try expect(op: ",") }
            if isTupleEnd(endNames) { break }
            if skipIf(op: "(") {  // a nested tuple target: `for a, (b, c) in …`
                targets.append(try parseAssignTarget(endNames: [], withNamespace: false))
                try expect(op: ")")
                guard current.isOp(",") else { break }
                isTuple = true
                continue
            }
            let token = try expectName()
            let name = token.nameValue!
            if ["true", "false", "True", "False", "none", "None"].contains(name) {
                throw fail("can't assign to '\(name)'", at: token)
            }
            if withNamespace, skipIf(op: ".") {
                let attribute = try expectName().nameValue!
                targets.append(.namespaceAttribute(name, attribute))
            } else {
                targets.append(.name(name))
            }
            guard current.isOp(",") else { break }
            isTuple = true
        }
        if !isTuple, let only = targets.first { return only }
        guard !targets.isEmpty else { throw fail("expected an assignment target", at: current) }
        return .tuple(targets)
    }

    func isTupleEnd(_ endNames: Set<String>) -> Bool {
        switch current.kind {
        case .variableEnd, .blockEnd: return true
        case .op(")"): return true
        case .name(let n): return endNames.contains(n)
        default: return false
        }
    }
}
