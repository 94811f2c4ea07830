// The parsed template: statements (JinjaNode) and expressions (JinjaExpr), each with the
// template line it came from so runtime errors can name it. Mirrors jinja2.nodes, reduced to
// what chat templates use.

struct JinjaExpr: Sendable {
    indirect enum Kind: Sendable {
        case constant(JinjaConstant)
        case name(String)
        case list([JinjaExpr])
        case tuple([JinjaExpr])
        case dict([JinjaPair])
        /// `value.name`
        case getattr(JinjaExpr, String)
        /// `value[index]`; the index may be a `.slice`.
        case getitem(JinjaExpr, JinjaExpr)
        case slice(start: JinjaExpr?, stop: JinjaExpr?, step: JinjaExpr?)
        case unary(JinjaUnaryOperator, JinjaExpr)
        case binary(JinjaBinaryOperator, JinjaExpr, JinjaExpr)
        case and(JinjaExpr, JinjaExpr)
        case or(JinjaExpr, JinjaExpr)
        /// `a ~ b ~ c`
        case concat([JinjaExpr])
        /// `a < b <= c`, `a in b`, `a not in b`
        case compare(JinjaExpr, [JinjaComparison])
        /// `then if test else otherwise`
        case conditional(test: JinjaExpr, then: JinjaExpr, otherwise: JinjaExpr?)
        case call(JinjaExpr, JinjaArgumentList)
        /// `value | name(args)`; the value is nil inside `{% filter %}` and `{% set x | f %}`
        /// blocks, where the block's output is filtered.
        case filter(JinjaExpr?, name: String, JinjaArgumentList)
        /// `value is name(args)`
        case test(JinjaExpr, name: String, JinjaArgumentList)
    }

    var kind: Kind
    var line: Int
    /// Levels of expressions from here to the deepest leaf. The parser refuses trees deeper
    /// than `JinjaBudget.maxExpressionDepth` as it builds them: evaluating (and freeing) a
    /// left-deep chain of 20,000 operators overflowed the stack.
    let depth: Int

    init(kind: Kind, line: Int) {
        self.kind = kind
        self.line = line
        depth = 1 + Self.deepestChild(kind)
    }

    private static func deepestChild(_ kind: Kind) -> Int {
        func most(_ exprs: [JinjaExpr?]) -> Int { exprs.reduce(0) { max($0, $1?.depth ?? 0) } }
        func arguments(_ a: JinjaArgumentList) -> [JinjaExpr?] {
            a.positional + a.keywords.map(\.value) + [a.star, a.doubleStar]
        }
        switch kind {
        case .constant, .name: return 0
        case .list(let items), .tuple(let items), .concat(let items): return most(items)
        case .dict(let pairs): return most(pairs.flatMap { [$0.key, $0.value] })
        case .getattr(let e, _), .unary(_, let e): return e.depth
        case .getitem(let a, let b), .binary(_, let a, let b), .and(let a, let b),
            .or(let a, let b):
            return max(a.depth, b.depth)
        case .slice(let start, let stop, let step): return most([start, stop, step])
        case .compare(let e, let comparisons): return most([e] + comparisons.map(\.operand))
        case .conditional(let test, let then, let otherwise): return most([test, then, otherwise])
        case .call(let e, let args): return most([e] + arguments(args))
        case .filter(let e, _, let args): return most([e] + arguments(args))
        case .test(let e, _, let args): return most([e] + arguments(args))
        }
    }
}

enum JinjaConstant: Sendable {
    case none
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
}

struct JinjaPair: Sendable {
    var key: JinjaExpr
    var value: JinjaExpr
}

enum JinjaUnaryOperator: Sendable { case negate, plus, not }

enum JinjaBinaryOperator: String, Sendable {
    case add = "+"
    case subtract = "-"
    case multiply = "*"
    case divide = "/"
    case floorDivide = "//"
    case modulo = "%"
    case power = "**"
}

struct JinjaComparison: Sendable {
    enum Operator: String, Sendable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessEqual = "<="
        case greater = ">"
        case greaterEqual = ">="
        case contains = "in"
        case notContains = "not in"
    }
    var op: Operator
    var operand: JinjaExpr
}

/// The arguments of a call, filter or test: `(a, b, key=c, *rest, **more)`.
struct JinjaArgumentList: Sendable {
    var positional: [JinjaExpr] = []
    var keywords: [JinjaKeywordArgument] = []
    var star: JinjaExpr? = nil
    var doubleStar: JinjaExpr? = nil
}

struct JinjaKeywordArgument: Sendable {
    var name: String
    var value: JinjaExpr
}

// MARK: - Statements

struct JinjaNode: Sendable {
    indirect enum Kind: Sendable {
        /// Template data, written as is.
        case text(String)
        /// `{{ expr }}`
        case output(JinjaExpr)
        case ifChain(branches: [JinjaBranch], otherwise: [JinjaNode])
        case forLoop(JinjaForLoop)
        case set(JinjaTarget, JinjaExpr)
        /// `{% set x %}…{% endset %}` (optionally `{% set x | filter %}`): the body's output.
        case setBlock(JinjaTarget, filter: JinjaExpr?, body: [JinjaNode])
        case macro(JinjaMacro)
        /// `{% call(params) macro(args) %}body{% endcall %}`: `caller()` renders the body.
        case callBlock(call: JinjaExpr, parameters: [JinjaParameter], body: [JinjaNode])
        /// `{% filter f %}body{% endfilter %}`
        case filterBlock(JinjaExpr, body: [JinjaNode])
        /// `{% with a = 1 %}body{% endwith %}`
        case with(assignments: [(JinjaTarget, JinjaExpr)], body: [JinjaNode])
        /// transformers' `{% generation %}…{% endgeneration %}`: renders its body.
        case generation([JinjaNode])
        case breakLoop
        case continueLoop
    }

    var kind: Kind
    var line: Int
}

struct JinjaBranch: Sendable {
    var test: JinjaExpr
    var body: [JinjaNode]
}

struct JinjaForLoop: Sendable {
    var target: JinjaTarget
    var iterable: JinjaExpr
    /// `for x in xs if condition`: items failing it are skipped before `loop` counts them.
    var condition: JinjaExpr?
    var body: [JinjaNode]
    var otherwise: [JinjaNode]
    var recursive: Bool
}

/// What a `set`, `for` or `with` assigns to.
indirect enum JinjaTarget: Sendable {
    case name(String)
    case tuple([JinjaTarget])
    /// `ns.attr`, for `{% set ns.attr = value %}`
    case namespaceAttribute(String, String)
}

struct JinjaMacro: Sendable {
    var name: String
    var parameters: [JinjaParameter]
    var body: [JinjaNode]
    /// Jinja only lets a macro take extra positional / keyword arguments when its body
    /// mentions `varargs` / `kwargs`.
    var usesVarargs: Bool
    var usesKwargs: Bool
}

struct JinjaParameter: Sendable {
    var name: String
    var defaultValue: JinjaExpr?
}
