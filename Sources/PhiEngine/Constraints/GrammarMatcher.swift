/// Enforces a compiled `Grammar` on one sequence, token by token (a `TokenConstraint`).
///
/// The allowed tokens are found by walking the vocabulary's trie against the parse automaton:
/// a node whose byte the automaton refuses skips its whole subtree. Masks are cached per
/// automaton state, and the states repeat (the inside of a string, the place after a comma),
/// so most steps cost a copy. End tokens are the generator's business (`canEnd`).
public final class GrammarMatcher: TokenConstraint {
    public let grammar: Grammar
    public let vocabulary: TokenVocabulary
    private let automaton: ParseAutomaton
    private var state: Int32
    private var cache: [Int32: AllowedTokens] = [:]
    private var walkStates: [Int32]

    /// The most masks kept (each is vocabulary/8 bytes: 25 KB at 200k tokens).
    static let cachedMasks = 256

    /// The tokens one state allows, as bits over the vocabulary.
    struct AllowedTokens {
        var words: [UInt64]
        var count: Int
    }

    public init(grammar: Grammar, vocabulary: TokenVocabulary) {
        self.grammar = grammar
        self.vocabulary = vocabulary
        automaton = ParseAutomaton(grammar: grammar)
        state = automaton.start
        walkStates = [Int32](repeating: 0, count: vocabulary.maxDepth + 1)
    }

    // MARK: TokenConstraint

    public func allow(_ mask: inout TokenMask) {
        let allowed = allowedTokens(in: state)
        let size = min(mask.vocabularySize, vocabulary.size)
        if allowed.count * 2 > size {
            mask.allowAll()
            for t in size..<mask.vocabularySize { mask.forbid(t) }
            for (w, word) in allowed.words.enumerated() where word != ~0 {
                var missing = ~word
                while missing != 0 {
                    let t = w * 64 + missing.trailingZeroBitCount
                    if t < size { mask.forbid(t) }
                    missing &= missing - 1
                }
            }
        } else {
            for (w, word) in allowed.words.enumerated() where word != 0 {
                var bits = word
                while bits != 0 {
                    mask.allow(w * 64 + bits.trailingZeroBitCount)
                    bits &= bits - 1
                }
            }
        }
    }

    public func forcedTokens(limit: Int) -> [Int] {
        var s = state
        var forced: [Int] = []
        while forced.count < limit && !automaton.accepting[Int(s)] {
            let allowed = allowedTokens(in: s)
            guard allowed.count == 1, let w = allowed.words.firstIndex(where: { $0 != 0 })
            else { break }
            let token = w * 64 + allowed.words[w].trailingZeroBitCount
            forced.append(token)
            s = automaton.next(s, vocabulary.pieces[token]!)
        }
        return forced
    }

    public func advance(_ token: Int) throws {
        guard let piece = vocabulary.piece(token) else {
            throw ConstraintError("token \(token) is not text and cannot continue the constraint")
        }
        let next = automaton.next(state, piece)
        guard next >= 0 else {
            throw ConstraintError("token \(token) is not allowed by the constraint here")
        }
        state = next
    }

    public var canEnd: Bool { automaton.accepting[Int(state)] }

    public var isComplete: Bool { automaton.accepting[Int(state)] && automaton.isFinal(state) }

    // MARK: Bytes (tests, front ends)

    /// Moves past `bytes` if the grammar allows them; returns false (and stays) otherwise.
    public func advance(bytes: [UInt8]) -> Bool {
        let next = automaton.next(state, bytes)
        guard next >= 0 else { return false }
        state = next
        return true
    }

    /// Whether the grammar accepts exactly `bytes` as a whole, from its start.
    public func accepts(_ bytes: [UInt8]) -> Bool {
        let s = automaton.next(automaton.start, bytes)
        return s >= 0 && automaton.accepting[Int(s)]
    }

    /// Whether `prefix` may come next (the matcher does not move).
    public func copyAccepts(prefix: [UInt8]) -> Bool { automaton.next(state, prefix) >= 0 }

    /// Back to the start, as for a new answer.
    public func reset() { state = automaton.start }

    /// The allowed tokens now, as ids (tests and benchmarks).
    public func allowedTokenIDs() -> [Int] {
        var mask = TokenMask(vocabularySize: vocabulary.size)
        allow(&mask)
        return mask.allowedTokens
    }

    // MARK: The trie walk

    func allowedTokens(in s: Int32) -> AllowedTokens {
        if let hit = cache[s] { return hit }
        let computed = walk(from: s)
        if cache.count >= Self.cachedMasks { cache.removeAll(keepingCapacity: true) }
        cache[s] = computed
        return computed
    }

    /// Every token whose bytes the automaton takes from state `s`. The walk stops where a
    /// transition is not built yet, builds it, and goes on from the same node.
    private func walk(from s: Int32) -> AllowedTokens {
        var words = [UInt64](repeating: 0, count: (vocabulary.size + 63) / 64)
        var count = 0
        walkStates[0] = s
        var position = 0
        let end = vocabulary.nodeCount
        while position < end {
            let stop = walkUntilUnknown(from: position, to: end, into: &words, count: &count)
            position = stop.position
            if let (state, byteClass) = stop.pending {
                _ = automaton.computeTransition(state, byteClass)
            }
        }
        return AllowedTokens(words: words, count: count)
    }

    /// The walk's inner loop over nodes `start..<end`, until the end or a transition not
    /// built yet (returned as `pending`, with the node to resume at). Locals only: the
    /// closure-captured variables of a first version cost a memory round trip per node.
    private func walkUntilUnknown(
        from start: Int, to end: Int, into words: inout [UInt64], count: inout Int
    ) -> (position: Int, pending: (Int32, Int)?) {
        let classCount = automaton.classCount
        let duplicates = vocabulary.duplicates
        return vocabulary.nodes.withUnsafeBufferPointer { nodes in
            automaton.transitions.withUnsafeBufferPointer { transitions in
                grammar.classOf.withUnsafeBufferPointer { classOf in
                    walkStates.withUnsafeMutableBufferPointer { states in
                        words.withUnsafeMutableBufferPointer { bits in
                            var i = start
                            var allowed = 0
                            defer { count += allowed }
                            while i < end {
                                let node = nodes[i]
                                let depth = Int(node.depth)
                                let from = states[depth &- 1]
                                let to = transitions[
                                    Int(from) &* classCount &+ Int(classOf[Int(node.byte)])]
                                if to < 0 {
                                    if to == ParseAutomaton.unknown {
                                        return (i, (from, Int(classOf[Int(node.byte)])))
                                    }
                                    i = Int(node.next)
                                    continue
                                }
                                states[depth] = to
                                let token = node.token
                                if token >= 0 {
                                    bits[Int(token) >> 6] |= 1 << UInt64(token & 63)
                                    allowed &+= 1
                                } else if token < -1 {
                                    for t in duplicates[Int(-2 - token)] {
                                        bits[Int(t) >> 6] |= 1 << UInt64(t & 63)
                                        allowed &+= 1
                                    }
                                }
                                i &+= 1
                            }
                            return (end, nil)
                        }
                    }
                }
            }
        }
    }
}
