// Expressions, with Jinja's precedence (loosest first): `x if c else y`, `or`, `and`, `not`,
// comparisons and `in`, `+ -`, `~`, `* / // %`, `**`, unary `- +`, then primaries with
// postfix `.attr`, `[index]`, `(call)` and the filter/test chain `| f`, `is t`.

extension JinjaParser {
    mutating func parseExpression(withCondexpr: Bool = true) throws -> JinjaExpr {
        try nested { withCondexpr ? try $0.parseConditional() : try $0.parseOr() }
    }

    /// A comma-separated list becomes a tuple; a single expression stays itself.
    mutating func parseTuple(
        withCondexpr: Bool, endNames: Set<String> = [], explicitParentheses: Bool = false
    ) throws -> JinjaExpr {
        let line = current.line
        var items: [JinjaExpr] = []
        var isTuple = false
        while true {
            if !items.isEmpty { try expect(op: ",") }
            if isTupleEnd(endNames) { break }
            items.append(try parseExpression(withCondexpr: withCondexpr))
            guard current.isOp(",") else { break }
            isTuple = true
        }
        if !isTuple {
            if let only = items.first { return only }
            guard explicitParentheses else {
                throw fail("expected an expression, got '\(current.description)'", at: current)
            }
        }
        return try make(.tuple(items), line: line)
    }

    private mutating func parseConditional() throws -> JinjaExpr {
        var expr = try parseOr()
        while current.isName("if") {
            let line = advance().line
            let test = try parseOr()
            let otherwise = skipIf(name: "else") ? try nested { try $0.parseConditional() } : nil
            expr = JinjaExpr(
                kind: .conditional(test: test, then: expr, otherwise: otherwise), line: line)
        }
        return expr
    }

    private mutating func parseOr() throws -> JinjaExpr {
        try parseLeftAssociative({ try $0.parseAnd() }) { Self.keyword($0, "or", Kind.or) }
    }

    private mutating func parseAnd() throws -> JinjaExpr {
        try parseLeftAssociative({ try $0.parseNot() }) { Self.keyword($0, "and", Kind.and) }
    }

    private mutating func parseNot() throws -> JinjaExpr {
        guard current.isName("not") else { return try parseCompare() }
        let line = advance().line
        return try make(.unary(.not, try nested { try $0.parseNot() }), line: line)
    }

    private mutating func parseCompare() throws -> JinjaExpr {
        let line = current.line
        let left = try parseMath1()
        var comparisons: [JinjaComparison] = []
        while true {
            if case .op(let symbol) = current.kind,
                let op = JinjaComparison.Operator(rawValue: symbol), op != .contains
            {
                advance()
                comparisons.append(JinjaComparison(op: op, operand: try parseMath1()))
            } else if skipIf(name: "in") {
                comparisons.append(JinjaComparison(op: .contains, operand: try parseMath1()))
            } else if current.isName("not"), peek().isName("in") {
                advance()
                advance()
                comparisons.append(JinjaComparison(op: .notContains, operand: try parseMath1()))
            } else {
                break
            }
        }
        return comparisons.isEmpty ? left : try make(.compare(left, comparisons), line: line)
    }

    private mutating func parseMath1() throws -> JinjaExpr {
        try parseLeftAssociative({ try $0.parseConcat() }) { Self.binary($0, of: ["+", "-"]) }
    }

    private mutating func parseConcat() throws -> JinjaExpr {
        let line = current.line
        var parts = [try parseMath2()]
        while skipIf(op: "~") { parts.append(try parseMath2()) }
        return parts.count == 1 ? parts[0] : try make(.concat(parts), line: line)
    }

    private mutating func parseMath2() throws -> JinjaExpr {
        try parseLeftAssociative({ try $0.parsePow() }) {
            Self.binary($0, of: ["*", "/", "//", "%"])
        }
    }

    private mutating func parsePow() throws -> JinjaExpr {
        try parseLeftAssociative({ try $0.parseUnary() }) { Self.binary($0, of: ["**"]) }
    }

    /// One precedence level of left-associative operators, `operand (op operand)*`:
    /// `joiner` says whether the current token is one of the level's operators and how it
    /// joins the two sides; the expression takes the operator's line.
    private mutating func parseLeftAssociative(
        _ operand: (inout JinjaParser) throws -> JinjaExpr,
        joiner: (JinjaToken) -> Join?
    ) throws -> JinjaExpr {
        var left = try operand(&self)
        while let join = joiner(current) {
            let line = advance().line
            left = try make(join(left, try operand(&self)), line: line)
        }
        return left
    }

    private typealias Kind = JinjaExpr.Kind
    /// How an operator makes one expression of its two sides.
    private typealias Join = (JinjaExpr, JinjaExpr) -> Kind

    /// The joiner of a level with one keyword operator (`or`, `and`).
    private static func keyword(
        _ token: JinjaToken, _ name: String, _ join: @escaping Join
    ) -> Join? {
        token.isName(name) ? join : nil
    }

    /// The joiner of a level of binary operators written as `symbols`.
    private static func binary(_ token: JinjaToken, of symbols: Set<String>) -> Join? {
        guard case .op(let symbol) = token.kind, symbols.contains(symbol),
            let op = JinjaBinaryOperator(rawValue: symbol)
        else { return nil }
        return { .binary(op, $0, $1) }
    }

    private mutating func parseUnary(withFilter: Bool = true) throws -> JinjaExpr {
        var node: JinjaExpr
        if current.isOp("-") || current.isOp("+") {
            let token = advance()
            let operand = try nested { try $0.parseUnary(withFilter: false) }
            node = JinjaExpr(
                kind: .unary(token.isOp("-") ? .negate : .plus, operand), line: token.line)
        } else {
            node = try parsePrimary()
        }
        node = try parsePostfix(node)
        if withFilter { node = try parseFilterChain(node) }
        return node
    }

    mutating func parsePrimary() throws -> JinjaExpr {
        let token = current
        switch token.kind {
        case .name(let name):
            advance()
            switch name {
            case "true", "True": return try make(.constant(.bool(true)), line: token.line)
            case "false", "False": return try make(.constant(.bool(false)), line: token.line)
            case "none", "None": return try make(.constant(.none), line: token.line)
            default:
                noteNameRead(name)
                return try make(.name(name), line: token.line)
            }
        case .string(var text):
            advance()
            while case .string(let more) = current.kind {  // "a" "b" is "ab", as in Python
                text += more
                advance()
            }
            return try make(.constant(.string(text)), line: token.line)
        case .integer(let value):
            advance()
            return try make(.constant(.int(value)), line: token.line)
        case .float(let value):
            advance()
            return try make(.constant(.double(value)), line: token.line)
        case .op("("):
            advance()
            let inner = try parseTuple(withCondexpr: true, explicitParentheses: true)
            try expect(op: ")")
            return inner
        case .op("["):
            advance()
            var items: [JinjaExpr] = []
            while !current.isOp("]") {
                if !items.isEmpty { try expect(op: ",") }
                if current.isOp("]") { break }
                items.append(try parseExpression())
            }
            try expect(op: "]")
            return try make(.list(items), line: token.line)
        case .op("{"):
            advance()
            var pairs: [JinjaPair] = []
            while !current.isOp("}") {
                if !pairs.isEmpty { try expect(op: ",") }
                if current.isOp("}") { break }
                let key = try parseExpression()
                try expect(op: ":")
                pairs.append(JinjaPair(key: key, value: try parseExpression()))
            }
            try expect(op: "}")
            return try make(.dict(pairs), line: token.line)
        default:
            throw unexpected(token)
        }
    }

    mutating func parsePostfix(_ start: JinjaExpr) throws -> JinjaExpr {
        var node = start
        while true {
            if current.isOp(".") {
                let dot = advance()
                let attribute = advance()
                switch attribute.kind {
                case .name(let name):
                    node = try make(.getattr(node, name), line: dot.line)
                case .integer(let i):
                    let index = try make(.constant(.int(i)), line: attribute.line)
                    node = try make(.getitem(node, index), line: dot.line)
                default:
                    throw fail("expected name or number", at: attribute)
                }
            } else if current.isOp("[") {
                node = try parseSubscript(node)
            } else if current.isOp("(") {
                let line = current.line
                node = try make(.call(node, try parseCallArguments()), line: line)
            } else {
                return node
            }
        }
    }

    private mutating func parseFilterChain(_ start: JinjaExpr) throws -> JinjaExpr {
        var node = start
        while true {
            if current.isOp("|") {
                node = try parseFilter(node, startInline: false)!
            } else if current.isName("is") {
                node = try parseTest(node)
            } else if current.isOp("(") {
                let line = current.line
                node = try make(.call(node, try parseCallArguments()), line: line)
            } else {
                return node
            }
        }
    }

    private mutating func parseSubscript(_ base: JinjaExpr) throws -> JinjaExpr {
        let bracket = advance()
        var items: [JinjaExpr] = []
        while !current.isOp("]") {
            if !items.isEmpty { try expect(op: ",") }
            items.append(try parseSubscribed())
        }
        try expect(op: "]")
        guard !items.isEmpty else { throw fail("expected subscript expression", at: bracket) }
        let index = items.count == 1 ? items[0] : try make(.tuple(items), line: bracket.line)
        return try make(.getitem(base, index), line: bracket.line)
    }

    /// An index or a slice `start:stop:step` (each part optional).
    private mutating func parseSubscribed() throws -> JinjaExpr {
        let line = current.line
        var start: JinjaExpr? = nil
        if !current.isOp(":") {
            let expr = try parseExpression()
            guard current.isOp(":") else { return expr }
            start = expr
        }
        advance()  // the first ':'
        func atEnd(_ p: JinjaParser) -> Bool {
            p.current.isOp("]") || p.current.isOp(",") || p.current.isOp(":")
        }
        let stop = atEnd(self) ? nil : try parseExpression()
        var step: JinjaExpr? = nil
        if skipIf(op: ":"), !current.isOp("]"), !current.isOp(",") {
            step = try parseExpression()
        }
        return try make(.slice(start: start, stop: stop, step: step), line: line)
    }

    mutating func parseCallArguments() throws -> JinjaArgumentList {
        let open = current
        try expect(op: "(")
        var args = JinjaArgumentList()
        var needComma = false
        func ensure(_ ok: Bool) throws {
            guard ok else { throw fail("invalid syntax for function call expression", at: open) }
        }
        while !current.isOp(")") {
            if needComma {
                try expect(op: ",")
                if current.isOp(")") { break }
            }
            if skipIf(op: "*") {
                try ensure(args.star == nil && args.doubleStar == nil)
                args.star = try parseExpression()
            } else if skipIf(op: "**") {
                try ensure(args.doubleStar == nil)
                args.doubleStar = try parseExpression()
            } else if case .name(let name) = current.kind, peek().isOp("=") {
                try ensure(args.doubleStar == nil)
                advance()
                advance()
                args.keywords.append(JinjaKeywordArgument(name: name, value: try parseExpression()))
            } else {
                try ensure(args.star == nil && args.doubleStar == nil && args.keywords.isEmpty)
                args.positional.append(try parseExpression())
            }
            needComma = true
        }
        try expect(op: ")")
        return args
    }

    /// `| name(args) | other …`; with `startInline` the first name has no `|` before it
    /// (`{% filter upper %}`). Unknown filters fail here, as they fail Jinja's compile step.
    mutating func parseFilter(_ start: JinjaExpr?, startInline: Bool) throws -> JinjaExpr? {
        var node = start
        var inline = startInline
        while current.isOp("|") || inline {
            if !inline { advance() }
            inline = false
            let token = try expectName()
            let name = token.nameValue!
            guard JinjaFilters.functions.names.contains(name) else {
                throw fail("no filter named '\(name)'", at: token)
            }
            let args = current.isOp("(") ? try parseCallArguments() : JinjaArgumentList()
            node = try make(.filter(node, name: name, args), line: token.line)
        }
        return node
    }

    private mutating func parseTest(_ value: JinjaExpr) throws -> JinjaExpr {
        let isToken = advance()
        let negated = skipIf(name: "not")
        let token = try expectName()
        let name = token.nameValue!
        guard JinjaPredicates.functions.names.contains(name) else {
            throw fail("no test named '\(name)'", at: token)
        }
        var args = JinjaArgumentList()
        if current.isOp("(") {
            args = try parseCallArguments()
        } else if startsTestArgument {
            if current.isName("is") {
                throw fail("you cannot chain multiple tests with is", at: current)
            }
            args.positional = [try parsePostfix(try parsePrimary())]
        }
        let test = try make(.test(value, name: name, args), line: isToken.line)
        return negated ? try make(.unary(.not, test), line: isToken.line) : test
    }

    /// Whether the token after a test name is its single unparenthesised argument
    /// (`x is divisibleby 3`, `x is sameas none`).
    private var startsTestArgument: Bool {
        switch current.kind {
        case .name(let n): return !["else", "or", "and"].contains(n)
        case .string, .integer, .float, .op("("), .op("["), .op("{"): return true
        default: return false
        }
    }
}
