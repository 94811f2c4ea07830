/// What one render may cost. A chat template comes with a downloaded model: it is untrusted
/// input, like a safetensors header. Python's jinja2 has arbitrary-precision integers and
/// fails with MemoryError or RecursionError where these bounds stop us; everything jinja2
/// renders within them renders identically (the golden cases), and anything beyond is a clear
/// `JinjaError.render` naming the template and line (exit 65), never a trap, an allocation
/// abort, a stack overflow or a loop without end.
enum JinjaBudget {
    /// Characters of any string the template builds, and of the whole output (64 Mi).
    static let maxLength = 1 << 26
    /// Items of any list or tuple it builds (`[0] * n`, `batch` padding).
    static let maxItems = 1 << 22
    /// Loop iterations over the whole render (nested loops multiply).
    static let maxIterations = 10_000_000
    /// Nesting of one expression (`1 + 1 + …`, `x | f | f …`): beyond this, evaluating and even
    /// freeing the tree recurse deeper than a thread's stack. jinja2 stops near 1000 levels
    /// with a RecursionError.
    static let maxExpressionDepth = 400
    /// Nesting of a value: lists, tuples, dicts and namespaces inside one another. Printing,
    /// comparing and freeing a value recurse once per level; a namespace can carry a list
    /// wrapped once per loop iteration (`set ns.x = [ns.x]`) past any thread's stack.
    /// jinja2 stops printing near 1000 levels with a RecursionError.
    static let maxNesting = 500
    /// `loop(children)` recursion in a `recursive` for loop, as macro calls (200).
    static let maxLoopRecursion = 200
    /// Digits after the point in `%.Nf`, `{:.Nf}` and `round`.
    static let maxPrecision = 1000

    static func exceeded(_ what: String) -> JinjaError {
        .render("the template exceeds phikit's rendering budget: \(what)")
    }

    /// Refuses a string or sequence of `count` elements (also negative products that wrapped).
    static func checkLength(_ count: Int, _ what: String) throws {
        guard count <= maxLength else { throw exceeded("\(what) of \(count) characters") }
    }

    static func checkItems(_ count: Int, _ what: String) throws {
        guard count <= maxItems else { throw exceeded("\(what) of \(count) items") }
    }

    /// `separator.join(parts)`, refused before anything is built when the result would be
    /// longer than `maxLength` (four million copies of one long string cost nothing to hold
    /// and petabytes to join).
    static func joined(_ parts: [String], separator: String) throws -> String {
        var total = separator.utf8.count * max(0, parts.count - 1)
        for part in parts {
            total += part.utf8.count
            if total > maxLength { throw exceeded("a joined string of more than \(maxLength) bytes") }
        }
        return parts.joined(separator: separator)
    }

    /// `s.replace(old, new, count)`, refused before it is built when the result would be
    /// longer than `maxLength` (a thousand characters each replaced by 60 MB).
    static func replace(_ s: String, _ old: String, _ new: String, count: Int) throws -> String {
        if new.utf8.count > old.utf8.count {
            let found = old.isEmpty ? s.unicodeScalars.count + 1 : PythonText.count(s, old)
            let replaced = count < 0 ? found : min(found, count)
            let growth = product(replaced, new.utf8.count - old.utf8.count)
            try checkLength(
                s.utf8.count.addingReportingOverflow(growth).overflow
                    ? Int.max : s.utf8.count + growth, "a replaced string")
        }
        return PythonText.replace(s, old, new, count: count)
    }

    /// Refuses a value the template made that is already over the budget: every expression's
    /// result passes here, so no way of growing a string or a list (`~`, `+`, filters, string
    /// methods, formatting) goes further than one step past the limit.
    static func check(_ value: JinjaValue) throws {
        switch value {
        case .string(let s): try checkLength(s.utf8.count, "a string")
        case .list(let items), .tuple(let items): try checkItems(items.count, "a sequence")
        default: break
        }
    }

    /// How deeply `value` nests (0 for a scalar), looked at no deeper than `maxNesting + 1`
    /// levels; a namespace counts with the depth it was given when its attributes were set.
    /// `visits` bounds the walk: lists share their items, so `[x, x]` doubled 64 times is 64
    /// levels deep and small in memory but 2**64 items to walk.
    static func nesting(_ value: JinjaValue, limit: Int = maxNesting + 1, visits: inout Int) throws
        -> Int
    {
        guard limit > 0 else { return 0 }
        visits += 1
        guard visits <= maxItems else {
            throw exceeded("a value of more than \(maxItems) items and levels to keep")
        }
        switch value {
        case .list(let items), .tuple(let items):
            var deepest = 0
            for item in items where deepest < limit - 1 {
                deepest = max(deepest, try nesting(item, limit: limit - 1, visits: &visits))
            }
            return 1 + deepest
        case .dict(let d):
            var deepest = 0
            for (key, item) in d.items where deepest < limit - 1 {
                deepest = max(
                    deepest, try nesting(key, limit: limit - 1, visits: &visits),
                    try nesting(item, limit: limit - 1, visits: &visits))
            }
            return 1 + deepest
        case .namespace(let ns): return ns.nesting
        default: return 0
        }
    }

    /// Refuses to store `value` (in a variable or a namespace) when it nests deeper than
    /// `maxNesting`: only stored values can grow a level per loop iteration.
    static func checkNesting(_ value: JinjaValue) throws -> Int {
        var visits = 0
        let depth = try nesting(value, visits: &visits)
        guard depth <= maxNesting else {
            throw tooDeep
        }
        return depth
    }

    static let tooDeep = exceeded("a value nested more than \(maxNesting) levels")

    /// `a * b` for sizes: nil when it overflows.
    static func product(_ a: Int, _ b: Int) -> Int {
        let (p, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? Int.max : p
    }

    /// An integer result Python would have computed as a big integer.
    static func integerRange(_ what: String) -> JinjaError {
        .render("integer overflow: \(what) is outside the 64-bit range phikit's templates use")
    }

    /// `Int(d)` for a finite double inside the 64-bit range; nil otherwise.
    static func int(exactly d: Double) -> Int? {
        guard d.isFinite, d >= -9.223372036854775808e18, d < 9.223372036854775808e18 else {
            return nil
        }
        return Int(d)
    }
}
