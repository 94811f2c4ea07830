/// A compiled constraint: a context-free grammar over bytes, flat for the matcher.
///
/// `elements` holds every rule alternative in a row, each ending with `end`; an element is a
/// byte set (index ≥ 0 into `byteSets`), `end` (-1) or a call of rule r (-2 - r). The bytes
/// are split into classes that no byte set tells apart, so the matcher's transition table
/// has one column per class instead of 256.
///
/// Built once per schema/grammar and shared (immutable); each sequence's `GrammarMatcher`
/// keeps its own parse state.
public struct Grammar: Sendable {
    static let end: Int32 = -1

    let elements: [Int32]
    let byteSets: [ByteSet]
    /// The first element of each alternative of each rule.
    let alternatives: [[Int32]]
    let names: [String]
    let root: Int
    /// The class of each byte value, and a byte of each class.
    let classOf: [UInt8]
    let classRepresentative: [UInt8]
    /// contains[set * classCount + class]: whether byte set `set` holds the class's bytes.
    let setContainsClass: [Bool]
    /// The fewest bytes from each position to its alternative's end, every byte usable.
    private(set) var completionLengths = CompletionLengths.none

    var classCount: Int { classRepresentative.count }

    /// Checks the grammar (it accepts something; no rule calls itself before consuming a
    /// byte unless as its last element, which would grow the parse stack forever) and
    /// flattens it. Alternatives that can never match (an empty byte set, a rule that
    /// accepts nothing) are dropped.
    init(rules: [[[GrammarBuilder.Atom]]], names: [String], root: Int, what: String)
        throws(ConstraintError)
    {
        let productive = Self.productiveRules(rules)
        guard productive[root] else {
            throw ConstraintError(
                "the \(what) accepts no string at all",
                hint: "check for contradictions (an empty enum, a rule that never ends)")
        }
        func usable(_ alt: [GrammarBuilder.Atom]) -> Bool {
            alt.allSatisfy {
                switch $0 {
                case .bytes(let set): !set.isEmpty
                case .call(let r): productive[r]
                }
            }
        }
        let kept = rules.map { $0.filter(usable) }
        try Self.checkLeftRecursion(kept, names: names, what: what)

        var setIndex: [ByteSet: Int32] = [:]
        var sets: [ByteSet] = []
        var elements: [Int32] = []
        var alternatives: [[Int32]] = []
        alternatives.reserveCapacity(kept.count)
        for rule in kept {
            var starts: [Int32] = []
            for alt in rule {
                starts.append(Int32(elements.count))
                for atom in alt {
                    switch atom {
                    case .bytes(let set):
                        if let i = setIndex[set] {
                            elements.append(i)
                        } else {
                            setIndex[set] = Int32(sets.count)
                            elements.append(Int32(sets.count))
                            sets.append(set)
                        }
                    case .call(let r): elements.append(-2 - Int32(r))
                    }
                }
                elements.append(Self.end)
            }
            alternatives.append(starts)
        }
        self.elements = elements
        self.byteSets = sets
        self.alternatives = alternatives
        self.names = names
        self.root = root
        (classOf, classRepresentative) = Self.byteClasses(sets)
        let classCount = classRepresentative.count
        var contains = [Bool](repeating: false, count: sets.count * classCount)
        for (s, set) in sets.enumerated() {
            for c in 0..<classCount where set.contains(classRepresentative[c]) {
                contains[s * classCount + c] = true
            }
        }
        setContainsClass = contains
        completionLengths = CompletionLengths(grammar: self, usable: .all)
    }

    /// The fewest bytes of a whole answer (each a token in a vocabulary with every byte as a
    /// token): what `max_tokens` must leave room for.
    public var shortestAnswer: Int { Int(completionLengths.shortestAnswer) }

    /// Rules that derive at least one finite string (a fixed point from the byte sets up).
    static func productiveRules(_ rules: [[[GrammarBuilder.Atom]]]) -> [Bool] {
        rulesWithAnAlternative(rules) { atom, productive in
            switch atom {
            case .bytes(let set): !set.isEmpty
            case .call(let c): productive[c]
            }
        }
    }

    /// Rules that derive the empty string.
    static func nullableRules(_ rules: [[[GrammarBuilder.Atom]]]) -> [Bool] {
        rulesWithAnAlternative(rules) { atom, nullable in
            if case .call(let c) = atom { return nullable[c] }
            return false
        }
    }

    /// The least fixed point of "a rule has an alternative whose every atom passes", where
    /// `passes` sees the rules marked so far.
    private static func rulesWithAnAlternative(
        _ rules: [[[GrammarBuilder.Atom]]], _ passes: (GrammarBuilder.Atom, [Bool]) -> Bool
    ) -> [Bool] {
        var marked = [Bool](repeating: false, count: rules.count)
        var changed = true
        while changed {
            changed = false
            for (r, alts) in rules.enumerated() where !marked[r] {
                if alts.contains(where: { alt in alt.allSatisfy { passes($0, marked) } }) {
                    marked[r] = true
                    changed = true
                }
            }
        }
        return marked
    }

    /// A rule reaching itself through calls that come first in their alternative (after
    /// nullable elements only) grows the parse stack without consuming a byte, unless every
    /// call on the cycle is the last of its alternative (a tail call keeps the stack as is).
    /// Such cycles are found as strongly connected components of the leftmost-call graph
    /// holding a non-tail edge.
    static func checkLeftRecursion(
        _ rules: [[[GrammarBuilder.Atom]]], names: [String], what: String
    ) throws(ConstraintError) {
        let nullable = nullableRules(rules)
        var edges = [[(to: Int, tail: Bool)]](repeating: [], count: rules.count)
        for (r, alts) in rules.enumerated() {
            for alt in alts {
                for (i, atom) in alt.enumerated() {
                    guard case .call(let c) = atom else { break }
                    edges[r].append((c, i == alt.count - 1))
                    if !nullable[c] { break }
                }
            }
        }
        let component = stronglyConnectedComponents(edges.map { $0.map(\.to) })
        for (r, out) in edges.enumerated() {
            for edge in out where !edge.tail && component[edge.to] == component[r] {
                throw ConstraintError(
                    "\(what) rule '\(names[r])' is left-recursive (it reaches itself before "
                        + "matching any character)",
                    hint: "rewrite the recursion on the right, e.g. a ::= b a? instead of "
                        + "a ::= a? b")
            }
        }
    }

    /// Tarjan's algorithm without recursion (grammars may have hundreds of thousands of
    /// rules). Returns each node's component number.
    static func stronglyConnectedComponents(_ graph: [[Int]]) -> [Int] {
        let n = graph.count
        var index = [Int](repeating: -1, count: n)
        var low = [Int](repeating: 0, count: n)
        var onStack = [Bool](repeating: false, count: n)
        var component = [Int](repeating: -1, count: n)
        var stack: [Int] = []
        var counter = 0
        var components = 0
        for start in 0..<n where index[start] < 0 {
            var work: [(node: Int, edge: Int)] = [(start, 0)]
            index[start] = counter
            low[start] = counter
            counter += 1
            stack.append(start)
            onStack[start] = true
            while let (node, edge) = work.last {
                if edge < graph[node].count {
                    work[work.count - 1].edge += 1
                    let next = graph[node][edge]
                    if index[next] < 0 {
                        index[next] = counter
                        low[next] = counter
                        counter += 1
                        stack.append(next)
                        onStack[next] = true
                        work.append((next, 0))
                    } else if onStack[next] {
                        low[node] = min(low[node], index[next])
                    }
                } else {
                    work.removeLast()
                    if let parent = work.last?.node { low[parent] = min(low[parent], low[node]) }
                    if low[node] == index[node] {
                        while let top = stack.popLast() {
                            onStack[top] = false
                            component[top] = components
                            if top == node { break }
                        }
                        components += 1
                    }
                }
            }
        }
        return component
    }

    /// Splits 0...255 into classes no byte set tells apart (partition refinement).
    static func byteClasses(_ sets: [ByteSet]) -> (classOf: [UInt8], representative: [UInt8]) {
        var classOf = [Int](repeating: 0, count: 256)
        var classCount = 1
        for set in sets {
            var split: [Int: Int] = [:]  // old class × inside → new class, for the inside half
            var outside = [Bool](repeating: false, count: classCount)
            for b in 0..<256 where !set.contains(UInt8(b)) { outside[classOf[b]] = true }
            for b in 0..<256 where set.contains(UInt8(b)) {
                let old = classOf[b]
                guard outside[old] else { continue }  // the whole class is inside: no split
                if let new = split[old] {
                    classOf[b] = new
                } else {
                    split[old] = classCount
                    classOf[b] = classCount
                    classCount += 1
                }
            }
        }
        var representative = [UInt8](repeating: 0, count: classCount)
        var found = [Bool](repeating: false, count: classCount)
        for b in 0..<256 where !found[classOf[b]] {
            found[classOf[b]] = true
            representative[classOf[b]] = UInt8(b)
        }
        return (classOf.map { UInt8($0) }, representative)
    }
}
