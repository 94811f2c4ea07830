import Foundation

// Python's arithmetic on template values: int and float math (bools count as ints), `+` on
// strings, lists and tuples, `*` repetition, true division `/`, floor division `//` and a
// modulo `%` that takes the sign of the divisor, and `%` string formatting.

extension JinjaValue {
    /// An int for ints and bools, for integer-only operations.
    var intValue: Int? {
        switch self {
        case .int(let i): i
        case .bool(let b): b ? 1 : 0
        default: nil
        }
    }

    func negated() throws -> JinjaValue {
        switch self {
        case .int(let i):
            guard i != .min else { throw JinjaError.render("integer overflow") }
            return .int(-i)
        case .bool(let b): return .int(b ? -1 : 0)
        case .double(let d): return .double(-d)
        case .undefined: throw undefinedError()
        default: throw JinjaError.render("bad operand type for unary -: '\(typeName)'")
        }
    }

    func unaryPlus() throws -> JinjaValue {
        switch self {
        case .int, .double: return self
        case .bool(let b): return .int(b ? 1 : 0)
        case .undefined: throw undefinedError()
        default: throw JinjaError.render("bad operand type for unary +: '\(typeName)'")
        }
    }

    func apply(_ op: JinjaBinaryOperator, _ other: JinjaValue) throws -> JinjaValue {
        if isUndefined { throw undefinedError() }
        if other.isUndefined { throw other.undefinedError() }
        if let a = intValue, let b = other.intValue { return try Self.integerMath(op, a, b) }
        if let a = numericValue, let b = other.numericValue { return try Self.floatMath(op, a, b) }
        switch (op, self, other) {
        case (.add, .string(let a), .string(let b)): return .string(a + b)
        case (.add, .list(let a), .list(let b)): return .list(a + b)
        case (.add, .tuple(let a), .tuple(let b)): return .tuple(a + b)
        case (.multiply, _, _):
            if let (sequence, count) = repetition(other) { return try sequence.repeated(count) }
        case (.modulo, .string(let format), _):
            return .string(try PythonPercentFormat.format(format, other))
        default: break
        }
        if op == .add, case .string = self {
            throw JinjaError.render("can only concatenate str (not \"\(other.typeName)\") to str")
        }
        throw JinjaError.render(
            "unsupported operand type(s) for \(op.rawValue): '\(typeName)' and '\(other.typeName)'")
    }

    /// `seq * n` or `n * seq`.
    private func repetition(_ other: JinjaValue) -> (JinjaValue, Int)? {
        switch (self, other) {
        case (.string, _), (.list, _), (.tuple, _): other.intValue.map { (self, $0) }
        case (_, .string), (_, .list), (_, .tuple): intValue.map { (other, $0) }
        default: nil
        }
    }

    private func repeated(_ count: Int) throws -> JinjaValue {
        let n = max(0, count)
        switch self {
        case .string(let s): try JinjaBudget.checkLength(JinjaBudget.product(s.utf8.count, n), "a string")
        case .list(let items), .tuple(let items):
            try JinjaBudget.checkItems(JinjaBudget.product(items.count, n), "a sequence")
        default: break
        }
        switch self {
        case .string(let s): return .string(String(repeating: s, count: n))
        case .list(let items):
            return .list(Array([[JinjaValue]](repeating: items, count: n).joined()))
        case .tuple(let items):
            return .tuple(Array([[JinjaValue]](repeating: items, count: n).joined()))
        default: return self
        }
    }

    private static func integerMath(
        _ op: JinjaBinaryOperator, _ a: Int, _ b: Int
    ) throws -> JinjaValue {
        func checked(_ result: (Int, Bool)) throws -> JinjaValue {
            guard !result.1 else { throw JinjaError.render("integer overflow") }
            return .int(result.0)
        }
        switch op {
        case .add: return try checked(a.addingReportingOverflow(b))
        case .subtract: return try checked(a.subtractingReportingOverflow(b))
        case .multiply: return try checked(a.multipliedReportingOverflow(by: b))
        case .divide: return try floatMath(.divide, Double(a), Double(b))
        case .floorDivide, .modulo:
            guard b != 0 else { throw JinjaError.render("integer division or modulo by zero") }
            if a == .min && b == -1 {  // the one quotient that leaves the range (it traps)
                if op == .modulo { return .int(0) }
                throw JinjaBudget.integerRange("\(a) // -1")
            }
            var (q, r) = a.quotientAndRemainder(dividingBy: b)
            if r != 0, (r < 0) != (b < 0) {
                q -= 1
                r += b
            }
            return .int(op == .floorDivide ? q : r)
        case .power:
            guard b >= 0 else { return try floatMath(.power, Double(a), Double(b)) }
            // 0, 1 and -1 to any power without looping (`1 ** 9223372036854775807` looped for
            // ever); any other base overflows within 63 squarings.
            switch a {
            case 0: return .int(b == 0 ? 1 : 0)
            case 1: return .int(1)
            case -1: return .int(b % 2 == 0 ? 1 : -1)
            default: break
            }
            var (result, base, exponent) = (1, a, b)
            while exponent > 0 {
                if exponent & 1 == 1 {
                    let (r, overflow) = result.multipliedReportingOverflow(by: base)
                    guard !overflow else { throw JinjaError.render("integer overflow") }
                    result = r
                }
                exponent >>= 1
                guard exponent > 0 else { break }
                let (square, overflow) = base.multipliedReportingOverflow(by: base)
                guard !overflow else { throw JinjaError.render("integer overflow") }
                base = square
            }
            return .int(result)
        }
    }

    private static func floatMath(
        _ op: JinjaBinaryOperator, _ a: Double, _ b: Double
    ) throws -> JinjaValue {
        switch op {
        case .add: return .double(a + b)
        case .subtract: return .double(a - b)
        case .multiply: return .double(a * b)
        case .divide:
            guard b != 0 else { throw JinjaError.render("division by zero") }
            return .double(a / b)
        case .floorDivide, .modulo:
            guard b != 0 else { throw JinjaError.render("float floor division or modulo by zero") }
            var r = fmod(a, b)
            if r != 0, (r < 0) != (b < 0) { r += b }
            return .double(op == .modulo ? r : ((a - r) / b).rounded())
        case .power: return .double(pow(a, b))
        }
    }
}

// MARK: - Slicing and indexing

extension JinjaValue {
    /// `value[start:stop:step]` with Python's rules (negative indices count from the end,
    /// out-of-range bounds clamp, step may be negative).
    func sliced(start: JinjaValue?, stop: JinjaValue?, step: JinjaValue?) throws -> JinjaValue {
        func bound(_ v: JinjaValue?) throws -> Int? {
            guard let v, !v.isNone else { return nil }
            guard let i = v.intValue else {
                throw JinjaError.render("slice indices must be integers or None")
            }
            return i
        }
        let stride = try bound(step) ?? 1
        guard stride != 0 else { throw JinjaError.render("slice step cannot be zero") }
        func indices(_ count: Int) throws -> [Int] {
            func clamp(_ i: Int?, _ fallback: Int, low: Int, high: Int) -> Int {
                guard var i else { return fallback }
                if i < 0 { i += count }
                return min(max(i, low), high)
            }
            if stride > 0 {
                let from = clamp(try bound(start), 0, low: 0, high: count)
                let to = clamp(try bound(stop), count, low: 0, high: count)
                return Array(Swift.stride(from: from, to: to, by: stride))
            }
            let from = clamp(try bound(start), count - 1, low: -1, high: count - 1)
            let to = clamp(try bound(stop), -1, low: -1, high: count - 1)
            return Array(Swift.stride(from: from, to: to, by: stride))
        }
        switch self {
        case .list(let items): return .list(try indices(items.count).map { items[$0] })
        case .tuple(let items): return .tuple(try indices(items.count).map { items[$0] })
        case .string(let s):
            let scalars = Array(s.unicodeScalars)
            return .string(String(pythonScalars: try indices(scalars.count).map { scalars[$0] }))
        default:
            return .undefined("'\(typeName)' object is not subscriptable")
        }
    }
}
