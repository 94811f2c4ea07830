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
