/// Jinja's `is` tests (`x is defined`, `x is string`, `n is divisibleby 3`, …) with Python's
/// type rules: bools are numbers but not integers, strings are iterable sequences, dicts are
/// mappings and sequences. Jinja calls them "tests"; here they are predicates, so that the
/// name is not taken for a test suite.
enum JinjaPredicates {
    typealias Test = JinjaNamedFunctions<Bool>.Function

    /// Every test, by name.
    static let functions = JinjaNamedFunctions(kind: "test", table)

    private static func unary(
        _ name: String, _ predicate: @escaping @Sendable (JinjaValue) -> Bool
    ) -> Test {
        { v, a, _ in
            _ = try a.bind(name, [])
            return predicate(v)
        }
    }

    private static func comparison(_ name: String, _ op: JinjaComparison.Operator) -> Test {
        { v, a, _ in try v.compare(op, try a.bind(name, ["other"])[0]) }
    }

    private static let table: [String: Test] = [
        "defined": unary("defined") { !$0.isUndefined },
        "undefined": unary("undefined") { $0.isUndefined },
        "none": unary("none") { $0.isNone },
        "boolean": unary("boolean") { if case .bool = $0 { true } else { false } },
        "true": unary("true") { if case .bool(true) = $0 { true } else { false } },
        "false": unary("false") { if case .bool(false) = $0 { true } else { false } },
        "integer": unary("integer") { if case .int = $0 { true } else { false } },
        "float": unary("float") { if case .double = $0 { true } else { false } },
        "number": unary("number") { $0.numericValue != nil },
        "string": unary("string") { if case .string = $0 { true } else { false } },
        "mapping": unary("mapping") { if case .dict = $0 { true } else { false } },
        "iterable": unary("iterable") { value in
            switch value {
            case .string, .list, .tuple, .dict, .undefined: true
            default: false
            }
        },
        "sequence": unary("sequence") { value in
            switch value {
            case .string, .list, .tuple, .dict, .undefined: true
            default: false
            }
        },
        "callable": unary("callable") { value in
            switch value {
            case .function, .loop: true
            default: false
            }
        },
        // str(value).islower() / .isupper(): needs a cased character ("1" is neither).
        "lower": unary("lower") { v in
            let s = (try? v.pythonString) ?? ""
            return PythonText.hasCased(s) && s == s.lowercased()
        },
        "upper": unary("upper") { v in
            let s = (try? v.pythonString) ?? ""
            return PythonText.hasCased(s) && s == s.uppercased()
        },
        "escaped": unary("escaped") { _ in false },
        "odd": { v, a, _ in
            _ = try a.bind("odd", [])
            return try integer(v, "odd") % 2 != 0
        },
        "even": { v, a, _ in
            _ = try a.bind("even", [])
            return try integer(v, "even") % 2 == 0
        },
        "divisibleby": { v, a, _ in
            let n = try integer(try a.bind("divisibleby", ["num"])[0], "divisibleby")
            guard n != 0 else { throw JinjaError.render("integer division or modulo by zero") }
            // x % -1 is 0 for every x, but Int.min % -1 traps: its quotient overflows.
            let (remainder, overflow) = try integer(v, "divisibleby")
                .remainderReportingOverflow(dividingBy: n)
            return overflow || remainder == 0
        },
        "sameas": { v, a, _ in
            let other = try a.bind("sameas", ["other"])[0]
            switch (v, other) {
            case (.none, .none): return true
            case (.bool(let x), .bool(let y)): return x == y
            case (.namespace(let x), .namespace(let y)): return x === y
            default: return false  // `is` on other values is object identity
            }
        },
        "in": { v, a, _ in try a.bind("in", ["seq"])[0].pythonContains(v) },
        "filter": { v, a, _ in
            _ = try a.bind("filter", [])
            return JinjaFilters.functions.names.contains(try v.pythonString)
        },
        "test": { v, a, _ in
            _ = try a.bind("test", [])
            let name = try v.pythonString
            return table[name] != nil || name == "test"
        },
        "eq": comparison("eq", .equal), "equalto": comparison("equalto", .equal),
        "==": comparison("==", .equal),
        "ne": comparison("ne", .notEqual), "!=": comparison("!=", .notEqual),
        "lt": comparison("lt", .less), "lessthan": comparison("lessthan", .less),
        "<": comparison("<", .less),
        "le": comparison("le", .lessEqual), "<=": comparison("<=", .lessEqual),
        "gt": comparison("gt", .greater), "greaterthan": comparison("greaterthan", .greater),
        ">": comparison(">", .greater),
        "ge": comparison("ge", .greaterEqual), ">=": comparison(">=", .greaterEqual),
    ]

    private static func integer(_ v: JinjaValue, _ test: String) throws -> Int {
        switch v {
        case .int(let i): return i
        case .bool(let b): return b ? 1 : 0
        case .double(let d) where d == d.rounded() && abs(d) < 9e18: return Int(d)
        case .undefined: throw v.undefinedError()
        default: throw JinjaError.render("test '\(test)' needs a number, got '\(v.typeName)'")
        }
    }
}
