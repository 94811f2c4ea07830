/// Collects named rules (each a `Pattern`) and lowers them into a `Grammar`: nested choices
/// and repetitions become helper rules, so every rule is a list of alternatives of byte sets
/// and rule calls. Repetitions recurse on the right (`x* ::= x x* | ε`) so that, with the
/// matcher's tail calls, a loop never grows the parse stack.
struct GrammarBuilder {
    /// The most grammar elements (byte sets and calls) a compiled constraint may have: the
    /// compile budget that turns a huge schema or repetition bound into an error, not a hang.
    static let elementBudget = 2_000_000

    private(set) var names: [String] = []
    private var bodies: [Pattern?] = []
    private var lowered: [[[Atom]]] = []
    private var atomCount = 0
    let what: String

    /// `what` names the source in errors ("JSON schema", "grammar", "regular expression").
    init(what: String) { self.what = what }

    enum Atom: Hashable {
        case bytes(ByteSet)
        case call(Int)
    }

    var ruleCount: Int { names.count }

    mutating func addRule(_ name: String) -> Int {
        names.append(name)
        bodies.append(nil)
        return names.count - 1
    }

    mutating func define(_ rule: Int, _ body: Pattern) {
        bodies[rule] = body
    }

    func isDefined(_ rule: Int) -> Bool { bodies[rule] != nil }

    /// Lowers every rule and checks the grammar (see `Grammar.init(rules:names:root:)`).
    mutating func build(root: Int) throws(ConstraintError) -> Grammar {
        let userRules = names.count
        lowered = Array(repeating: [], count: userRules)
        for rule in 0..<userRules {  // helper rules are appended, already lowered
            guard let body = bodies[rule] else {
                throw ConstraintError("\(what) rule '\(names[rule])' is used but never defined")
            }
            let alternatives = try lowerAlternatives(body)
            lowered[rule] = alternatives
        }
        return try Grammar(rules: lowered, names: names, root: root, what: what)
    }

    private mutating func helper(_ alternatives: [[Atom]]) -> Int {
        names.append("\(names.count)")
        bodies.append(.empty)  // defined: its lowered form is set directly
        lowered.append(alternatives)
        return names.count - 1
    }

    private mutating func count(_ n: Int) throws(ConstraintError) {
        atomCount += n
        if atomCount > Self.elementBudget { throw .tooLarge(what, limit: Self.elementBudget) }
    }

    private mutating func lowerAlternatives(_ p: Pattern) throws(ConstraintError) -> [[Atom]] {
        if case .choice(let options) = p {
            var result: [[Atom]] = []
            for option in options { result += try lowerAlternatives(option) }
            return result
        }
        return [try lowerSequence(p)]
    }

    private mutating func lowerSequence(_ p: Pattern) throws(ConstraintError) -> [Atom] {
        switch p {
        case .bytes(let set):
            try count(1)
            return [.bytes(set)]
        case .rule(let r):
            try count(1)
            return [.call(r)]
        case .sequence(let parts):
            var atoms: [Atom] = []
            for part in parts { atoms += try lowerSequence(part) }
            return atoms
        case .choice(let options):
            if options.count == 1 { return try lowerSequence(options[0]) }
            let alternatives = try lowerAlternatives(p)
            try count(1)
            return [.call(helper(alternatives))]
        case .repetition(let item, let min, let max):
            if let max, max < min { return [.bytes(ByteSet())] }  // matches nothing
            var body = try lowerSequence(item)
            if body.isEmpty { return [] }
            // Each copy is one call when the item is longer than one element.
            if body.count > 1 && (min > 1 || max != min) {
                try count(1)
                body = [.call(helper([body]))]
            }
            // Checked before building so that {0,1000000} fails at once, not a million
            // helper rules later.
            let copies = min.multipliedReportingOverflow(by: body.count + 1).partialValue
                + ((max ?? min) - min) * (body.count + 1)
            if copies > Self.elementBudget - atomCount { throw .tooLarge(what, limit: Self.elementBudget) }
            var atoms: [Atom] = []
            try count(body.count * min)
            for _ in 0..<min { atoms += body }
            if let max {
                // x{0,k} ::= x x{0,k-1} | ε, built from k = 1 up.
                var tail: Int? = nil
                for _ in 0..<(max - min) {
                    try count(body.count + 1)
                    tail = helper([body + (tail.map { [Atom.call($0)] } ?? []), []])
                }
                if let tail { atoms.append(.call(tail)) }
            } else {
                let loop = helper([])
                lowered[loop] = [body + [.call(loop)], []]
                try count(body.count + 2)
                atoms.append(.call(loop))
            }
            return atoms
        }
    }
}
