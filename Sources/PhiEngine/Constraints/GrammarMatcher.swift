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
    private var contextFreeCache: [Int32: ContextFreeMask] = [:]
    private var forcedTextCache: [Int32: [Int]] = [:]
    private var walkStates: [Int32]
    private var runPlans: [Int32: RunPlan] = [:]
    /// Masks as written, per state: a cached step costs a copy-on-write reference.
    private var written: [Int32: TokenMask] = [:]

    /// The most masks kept (each is vocabulary/8 bytes: 25 KB at 200k tokens).
    static let cachedMasks = 256

    /// The tokens one state allows, as bits over the vocabulary.
    struct AllowedTokens {
        var words: [UInt64]
        var count: Int
        /// The largest `ParseAutomaton.distance` among the states these tokens lead to: a
        /// budget of more tokens than that needs no filtering.
        var farthest: Int32 = 0
    }

    public init(grammar: Grammar, vocabulary: TokenVocabulary) {
        self.grammar = grammar
        self.vocabulary = vocabulary
        // Lengths count one-byte tokens; the grammar's own assume all 256 (byte-level BPE,
        // SentencePiece byte fallback). A vocabulary missing some is counted without them.
        let lengths =
            vocabulary.oneByteTokens == ByteSet.all
            ? grammar.completionLengths
            : CompletionLengths(grammar: grammar, usable: vocabulary.oneByteTokens)
        automaton = ParseAutomaton(grammar: grammar, rest: lengths.rest)
        state = automaton.start
        walkStates = [Int32](repeating: 0, count: vocabulary.maxDepth + 1)
    }

    /// Byte sets smaller than this are not worth a run: few tokens are made of them.
    static let smallestRun = 16
    /// The longest byte run followed: each step may build automaton states, and deeper
    /// subtrees are few (the walk takes them node by node).
    static let longestByteRun = 32

    // MARK: TokenConstraint

    public func allow(_ mask: inout TokenMask) {
        if let known = written[state], known.vocabularySize == mask.vocabularySize {
            mask = known
            return
        }
        write(allowedTokens(in: state), into: &mask)
        if written.count >= Self.writtenMasks { written.removeAll(keepingCapacity: true) }
        written[state] = mask
    }

    /// The most written masks kept (each vocabulary/8 bytes).
    static let writtenMasks = 64

    /// The grammar's tokens after which the answer can still finish within `budget` tokens
    /// counting this one (see `TokenConstraint.allow(_:budget:)`). While every allowed token
    /// leaves room (the state's `farthest`), that is the grammar's mask as is, cached; near the
    /// end of the budget, a walk from the state keeps the tokens whose next state is at most
    /// `budget - 1` one-byte tokens from an end. There is always one when this state was
    /// within `budget`: the first byte of its shortest completion. If none fits (the budget
    /// was short from the start) and the answer cannot end here, the grammar's mask is kept.
    public func allow(_ mask: inout TokenMask, budget: Int) {
        let allowed = allowedTokens(in: state)
        let limit = Int32(clamping: budget - 1)
        guard allowed.farthest > limit else { return write(allowed, into: &mask) }
        let fitting = tokensFinishing(within: max(limit, 0))
        write(fitting.count > 0 || canEnd ? fitting : allowed, into: &mask)
    }

    /// At most how many tokens finish the answer from here: the fewest bytes, each a token.
    public var tokensToFinish: Int? {
        let d = automaton.distance[Int(state)]
        return d < CompletionLengths.unreachable ? Int(d) : nil
    }

    private func write(_ allowed: AllowedTokens, into mask: inout TokenMask) {
        mask.allow(bits: allowed.words)
    }

    /// The tokens that must come next: first those that are the only allowed token in a row;
    /// then, when the vocabulary has the tokenizer's `encode`, the text the grammar forces
    /// from there (a key, punctuation, the rest of an enum value: one byte possible at a
    /// time) as the tokenizer encodes it, all but its last token when an allowed token could
    /// reach past the forced text (the last one could merge with what the model writes next,
    /// so the model chooses it). Never a token merely likely.
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
        if forced.count < limit && !automaton.accepting[Int(s)] {
            forced += forcedText(from: s).prefix(limit - forced.count)
        }
        return forced
    }

    /// The tokens of the text forced from state `s` (see `forcedTokens`), cached per state.
    private func forcedText(from s: Int32) -> [Int] {
        guard let encode = vocabulary.encode else { return [] }
        if let known = forcedTextCache[s] { return known }
        var bytes: [UInt8] = []
        var t = s
        while bytes.count < Self.maxForcedBytes && !automaton.accepting[Int(t)],
            let byte = onlyByte(from: t)
        {
            bytes.append(byte)
            t = automaton.next(t, byte)
        }
        // Whole characters only: the tokenizer encodes text.
        while !bytes.isEmpty && String(validating: bytes, as: UTF8.self) == nil { bytes.removeLast() }
        var tokens: [Int] = []
        if !bytes.isEmpty {
            var offset = 0
            t = s
            let encoded = encode(String(decoding: bytes, as: UTF8.self))
            for (i, id) in encoded.enumerated() {
                // A token that is not these bytes (a SentencePiece prefix space, a special
                // token) ends the run.
                guard let piece = vocabulary.piece(id), bytes[offset...].starts(with: piece)
                else { break }
                // The last token goes too when no token the grammar allows here reaches
                // past the forced text: nothing the model writes next could merge with it,
                // and it saves the model a decode step per key.
                if i == encoded.count - 1
                    && (offset + piece.count != bytes.count || reachesPast(from: t, bytes.count - offset))
                {
                    break
                }
                t = automaton.next(t, piece)
                guard t >= 0 else { break }
                tokens.append(id)
                offset += piece.count
            }
        }
        if forcedTextCache.count >= Self.cachedMasks { forcedTextCache.removeAll(keepingCapacity: true) }
        forcedTextCache[s] = tokens
        return tokens
    }

    /// Whether a token allowed from state `t` is longer than `length` bytes (the forced text
    /// left there: every allowed token starts with as much of it as it covers).
    private func reachesPast(from t: Int32, _ length: Int) -> Bool {
        let allowed = allowedTokens(in: t)
        for (w, word) in allowed.words.enumerated() where word != 0 {
            var bits = word
            while bits != 0 {
                if vocabulary.pieces[w * 64 + bits.trailingZeroBitCount]!.count > length { return true }
                bits &= bits - 1
            }
        }
        return false
    }

    /// The longest forced text looked at once.
    static let maxForcedBytes = 256

    /// The one byte the grammar allows after state `s`, nil when there are none or several.
    private func onlyByte(from s: Int32) -> UInt8? {
        var only: UInt8? = nil
        for byte in 0...255 {
            guard automaton.next(s, UInt8(byte)) >= 0 else { continue }
            if only != nil { return nil }
            only = UInt8(byte)
        }
        return only
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

    /// Forgets the cached masks but not the automaton's states (benchmarks: the cost of a
    /// walk over warm transitions).
    public func dropCachedMasks() {
        cache.removeAll()
        contextFreeCache.removeAll()
        written.removeAll()
    }

    /// Back to the start, as for a new answer.
    public func reset() { state = automaton.start }

    /// The allowed tokens now, as ids (tests and benchmarks).
    public func allowedTokenIDs() -> [Int] {
        var mask = TokenMask(vocabularySize: vocabulary.size)
        allow(&mask)
        return mask.allowedTokens
    }

    // MARK: The trie walk

    /// The tokens from the current state after which at most `limit` bytes finish the answer
    /// (a walk each time: only near the end of a budget).
    private func tokensFinishing(within limit: Int32) -> AllowedTokens {
        let loop = automaton.stringBodyLoop(state)
        var allowed = AllowedTokens(words: [UInt64](repeating: 0, count: (vocabulary.size + 63) / 64), count: 0)
        if let loop, automaton.distance[Int(loop)] <= limit {
            allowed = AllowedTokens(
                words: vocabulary.stringBodyByCharacters.all, count: vocabulary.stringBodyByCharacters.count,
                farthest: automaton.distance[Int(loop)])
        }
        let trie = loop != nil ? vocabulary.outsideStringBody : vocabulary.all
        var none: [UncertainRange] = []
        walk(
            trie, nodes: 0..<trie.nodes.count, depth: 1, state: state, into: &allowed,
            recordingContext: false, sliced: loop != nil, uncertain: &none, limit: limit)
        return allowed
    }

    func allowedTokens(in s: Int32) -> AllowedTokens {
        if let hit = cache[s] { return hit }
        let free = automaton.contextFree(s)
        var computed: AllowedTokens
        if free == s {
            var unused: [UncertainRange] = []
            computed = walk(from: s, recordingContext: false, uncertain: &unused)
        } else {
            let base: ContextFreeMask
            if let known = contextFreeCache[free] {
                base = known
            } else {
                var ranges: [UncertainRange] = []
                let allowed = walk(from: free, recordingContext: true, uncertain: &ranges)
                base = ContextFreeMask(allowed: allowed, uncertain: ranges)
                if contextFreeCache.count >= Self.cachedMasks {
                    contextFreeCache.removeAll(keepingCapacity: true)
                }
                contextFreeCache[free] = base
            }
            computed = base.allowed
            if computed.count > 0 {
                computed.farthest = CompletionLengths.add(computed.farthest, automaton.cutDistance(s))
            }
            for range in base.uncertain { resolve(range, from: s, into: &computed) }
        }
        if cache.count >= Self.cachedMasks { cache.removeAll(keepingCapacity: true) }
        cache[s] = computed
        return computed
    }

    /// A subtree of a trie whose tokens popped into the context during a context-free walk.
    struct UncertainRange {
        var start: Int32
        var end: Int32
        var depth: Int32
        /// In the trie without the string-body slice (else the whole vocabulary's).
        var sliced: Bool
    }

    /// What a context-free state allows for sure, and the subtrees to recheck per context.
    struct ContextFreeMask {
        var allowed: AllowedTokens
        var uncertain: [UncertainRange]
    }

    /// What a walk from a state takes from the vocabulary's slices instead of walking them.
    enum RunPlan {
        case none
        /// Runs of string-body characters (a string's inside, bounded or not): the slice's
        /// tokens as long as the chain allows are allowed at once, the others are walked.
        case stringBody(ParseAutomaton.RunChain)
        /// Runs of bytes of known sets (`[a-z0-9]{0,39}`, a key off the declared ones): the
        /// walk allows a subtree whose path bytes are each of their step's set, whose bytes
        /// are all of every set from its depth on, and no deeper than the chain, at once (its
        /// tokens are one run in trie order) instead of walking it.
        case byteSet(ByteRun)
    }

    struct ByteRun {
        var chain: ParseAutomaton.RunChain
        var shape: ByteRunShape
        /// The largest distance of the chain's states.
        var farthest: Int32
    }

    /// The plan for walks from `s`, cached: string-body runs first, then byte runs.
    private func runPlan(_ s: Int32) -> RunPlan {
        if let known = runPlans[s] { return known }
        var plan = RunPlan.none
        let body = vocabulary.stringBodyByCharacters
        if body.longest > 0,
            let chain = automaton.runChain(from: s, longest: body.longest, step: automaton.stringBodyStep)
        {
            plan = .stringBody(chain)
        } else if let (chain, sets) = automaton.byteRunChain(
            from: s, longest: min(vocabulary.maxDepth, Self.longestByteRun), smallest: Self.smallestRun)
        {
            plan = .byteSet(
                ByteRun(
                    chain: chain, shape: ByteRunShape(sets: sets, loops: chain.loops, length: chain.states.count),
                    farthest: chain.states.map { automaton.distance[Int($0)] }.max()!))
        }
        runPlans[s] = plan
        return plan
    }

    /// The tokens of `slice` that a run along `chain` takes (every one no longer than the
    /// chain, or all when it loops), with the farthest distance they lead to.
    private func runTokens(_ chain: ParseAutomaton.RunChain, _ slice: LengthSlice) -> AllowedTokens {
        let longest = chain.loops ? slice.longest : min(chain.states.count, slice.longest)
        guard longest > 0 else {
            return AllowedTokens(words: [UInt64](repeating: 0, count: (vocabulary.size + 63) / 64), count: 0)
        }
        let (words, count) = slice.tokens(upTo: longest)
        var farthest: Int32 = 0
        for length in 1...longest where slice.countOfLength[length] > 0 {
            let s = chain.states[min(length, chain.states.count) - 1]
            farthest = max(farthest, automaton.distance[Int(s)])
        }
        return AllowedTokens(words: words, count: count, farthest: farthest)
    }

    /// Every token whose bytes the automaton takes from state `s`. Where the state takes
    /// runs of string-body characters or of byte sets, the slice's or the skeleton's tokens
    /// are allowed at once and only the others are walked (see `RunPlan`).
    private func walk(from s: Int32, recordingContext: Bool, uncertain: inout [UncertainRange])
        -> AllowedTokens
    {
        switch runPlan(s) {
        case .none:
            var allowed = AllowedTokens(words: [UInt64](repeating: 0, count: (vocabulary.size + 63) / 64), count: 0)
            walk(
                vocabulary.all, nodes: 0..<vocabulary.all.nodes.count, depth: 1, state: s, into: &allowed,
                recordingContext: recordingContext, sliced: false, uncertain: &uncertain)
            return allowed
        case .stringBody(let chain):
            var allowed = runTokens(chain, vocabulary.stringBodyByCharacters)
            let trie = vocabulary.outsideStringBody
            walk(
                trie, nodes: 0..<trie.nodes.count, depth: 1, state: s, into: &allowed,
                recordingContext: recordingContext, sliced: true, uncertain: &uncertain)
            return allowed
        case .byteSet(let run):
            return walk(from: s, along: run, recordingContext: recordingContext, uncertain: &uncertain)
        }
    }

    /// The walk from `s` along a byte run: the skeleton's tokens, then the subtrees leaving
    /// the run where the automaton takes their first byte.
    private func walk(
        from s: Int32, along run: ByteRun, recordingContext: Bool, uncertain: inout [UncertainRange]
    ) -> AllowedTokens {
        let skeleton = vocabulary.skeleton(run.shape)
        let trie = vocabulary.all
        var allowed = AllowedTokens(
            words: skeleton.words, count: skeleton.count, farthest: skeleton.count > 0 ? run.farthest : 0)
        for group in skeleton.groups {
            let from = group.step == 0 ? s : run.chain.states[Int(group.step) - 1]
            guard automaton.next(from, group.byte) >= 0 else { continue }
            for k in Int(group.from)..<Int(group.to) {
                let node = Int(skeleton.exits[k])
                walk(
                    trie, nodes: node..<Int(trie.nodes[node].next), depth: Int(trie.nodes[node].depth),
                    state: from, into: &allowed, recordingContext: recordingContext, sliced: false,
                    uncertain: &uncertain)
            }
        }
        return allowed
    }

    /// Walks an uncertain subtree again from the real state.
    private func resolve(_ range: UncertainRange, from s: Int32, into allowed: inout AllowedTokens) {
        let trie = range.sliced ? vocabulary.outsideStringBody : vocabulary.all
        // The subtree's path from the root: the first bytes of any token in it.
        let piece = vocabulary.pieces[trie.someToken(under: Int(range.start))]!
        let state = automaton.next(s, Array(piece[..<(Int(range.depth) - 1)]))
        guard state >= 0 else { return }
        var none: [UncertainRange] = []
        walk(
            trie, nodes: Int(range.start)..<Int(range.end), depth: Int(range.depth), state: state,
            into: &allowed, recordingContext: false, sliced: range.sliced, uncertain: &none)
    }

    /// The walk over the subtrees in `nodes` (whose roots are at `depth`), from `state`. It
    /// stops where a transition is not built yet, builds it, and goes on from the same node.
    /// Tokens leading to a state more than `limit` bytes from an end are left out.
    private func walk(
        _ trie: TokenTrie, nodes: Range<Int>, depth: Int, state: Int32,
        into allowed: inout AllowedTokens, recordingContext: Bool, sliced: Bool,
        uncertain: inout [UncertainRange], limit: Int32 = .max
    ) {
        walkStates[depth - 1] = state
        var position = nodes.lowerBound
        while position < nodes.upperBound {
            let stop = walkUntilUnknown(
                trie, from: position, to: nodes.upperBound, into: &allowed,
                recordingContext: recordingContext, sliced: sliced, uncertain: &uncertain,
                limit: limit)
            position = stop.position
            if let (state, byteClass) = stop.pending {
                _ = automaton.computeTransition(state, byteClass)
            }
        }
    }

    /// The walk's inner loop over nodes `start..<end`, until the end or a transition not
    /// built yet (returned as `pending`, with the node to resume at). Locals only: the
    /// closure-captured variables of a first version cost a memory round trip per node.
    private func walkUntilUnknown(
        _ trie: TokenTrie, from start: Int, to end: Int, into allowed: inout AllowedTokens,
        recordingContext: Bool, sliced: Bool, uncertain: inout [UncertainRange], limit: Int32
    ) -> (position: Int, pending: (Int32, Int)?) {
        let classCount = automaton.classCount
        let duplicates = trie.duplicates
        var count = 0
        var farthest = allowed.farthest
        defer {
            allowed.count += count
            allowed.farthest = farthest
        }
        return trie.nodes.withUnsafeBufferPointer { nodes in
          automaton.distance.withUnsafeBufferPointer { distance in
            automaton.transitions.withUnsafeBufferPointer { transitions in
                automaton.touchesContext.withUnsafeBufferPointer { touches in
                    grammar.classOf.withUnsafeBufferPointer { classOf in
                        walkStates.withUnsafeMutableBufferPointer { states in
                            allowed.words.withUnsafeMutableBufferPointer { bits in
                                var i = start
                                while i < end {
                                    let node = nodes[i]
                                    let depth = Int(node.depth)
                                    let from = states[depth &- 1]
                                    let byteClass = Int(classOf[Int(node.byte)])
                                    let to = transitions[Int(from) &* classCount &+ byteClass]
                                    if to < 0 {
                                        if to == ParseAutomaton.unknown {
                                            return (i, (from, byteClass))
                                        }
                                        i = Int(node.next)
                                        continue
                                    }
                                    if recordingContext && touches[Int(to)] {
                                        uncertain.append(
                                            UncertainRange(
                                                start: Int32(i), end: node.next, depth: Int32(depth),
                                                sliced: sliced))
                                        i = Int(node.next)
                                        continue
                                    }
                                    states[depth] = to
                                    let token = node.token
                                    if token != -1 {
                                        let d = distance[Int(to)]
                                        if d <= limit {
                                            if d > farthest { farthest = d }
                                            if token >= 0 {
                                                bits[Int(token) >> 6] |= 1 << UInt64(token & 63)
                                                count &+= 1
                                            } else {
                                                for t in duplicates[Int(-2 - token)] {
                                                    bits[Int(t) >> 6] |= 1 << UInt64(t & 63)
                                                    count &+= 1
                                                }
                                            }
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
    }
}
