/// A rule about which tokens may come next in one sequence (structured output: a JSON
/// schema, a regular expression, a grammar). One instance per sequence, used by one
/// `Generator` on one thread; it keeps its own state and moves on as tokens are chosen.
///
/// Per generated token the generator asks, in this order:
/// 1. `isComplete` — when true, generation ends (finish reason `constraintComplete`).
/// 2. `allow(_:budget:)` on a mask that arrives with every token forbidden; tokens left
///    forbidden get logit -infinity before penalties and sampling. End tokens (the
///    sequence's stop tokens) are decided by `canEnd`, not by the mask: allowed exactly when
///    `canEnd`. The budget (the tokens `maxTokens` and the context leave, this one included)
///    lets a constraint close the answer in time instead of having it cut.
/// 3. `advance(_:)` with the token chosen (never an end token); a throw ends generation with
///    that error (the constraint's state is broken, not the user's input).
/// 4. `forcedTokens(limit:)` — tokens that are the only choice from here; the generator
///    appends them to the same step without sampling (the driver feeds them as one block)
///    and calls `advance` for each.
public protocol TokenConstraint: AnyObject {
    /// Marks the tokens allowed next in `mask` (which has every token forbidden on entry).
    func allow(_ mask: inout TokenMask)
    /// Up to `limit` tokens that must follow whatever is generated so far ([] when there is
    /// a choice). They must not include end tokens.
    func forcedTokens(limit: Int) -> [Int]
    /// `token` was chosen (sampled or forced): move past it.
    func advance(_ token: Int) throws
    /// Whether an end token may come now (the text so far is a whole answer).
    var canEnd: Bool { get }
    /// Whether nothing may follow: generation ends here.
    var isComplete: Bool { get }
    /// Like `allow(_:)`, leaving out the tokens after which the answer could no longer end
    /// within `budget` tokens counting this one (never all of them: when nothing fits, what
    /// `allow(_:)` allows). With an ample budget, exactly what `allow(_:)` allows.
    func allow(_ mask: inout TokenMask, budget: Int)
    /// At most how many tokens finish the answer from here (nil: unknown).
    var tokensToFinish: Int? { get }
}

extension TokenConstraint {
    public func allow(_ mask: inout TokenMask, budget: Int) { allow(&mask) }
    public var tokensToFinish: Int? { nil }

    /// Checks, before generating, that `maxTokens` leaves room for the shortest answer; else
    /// an error naming the option (`max_tokens`, `--max-tokens`): the answer could be cut.
    public func checkRoom(maxTokens: Int, naming option: String) throws(ConstraintError) {
        guard let needed = tokensToFinish, needed > maxTokens else { return }
        throw ConstraintError(
            "\(option) \(maxTokens) is too small for the answer format: its shortest answer may "
                + "take \(needed) tokens",
            hint: "set \(option) to at least \(needed) (or a looser format)")
    }
}

/// A set of token ids over a vocabulary, one bit per token: what a `TokenConstraint` allows.
/// Allocated once per sequence and reused (`forbidAll` clears it without allocating).
public struct TokenMask: Sendable, Equatable {
    public let vocabularySize: Int
    private var words: [UInt64]

    /// A mask over `vocabularySize` tokens, every one allowed or every one forbidden.
    public init(vocabularySize: Int, allowed: Bool = false) {
        precondition(vocabularySize >= 0, "negative vocabulary")
        self.vocabularySize = vocabularySize
        words = [UInt64](repeating: 0, count: (vocabularySize + 63) / 64)
        if allowed { allowAll() }
    }

    /// Whether `token` is allowed; tokens outside the vocabulary never are (and setting them
    /// does nothing).
    public subscript(token: Int) -> Bool {
        get {
            guard token >= 0 && token < vocabularySize else { return false }
            return words[token >> 6] & (1 << UInt64(token & 63)) != 0
        }
        set {
            guard token >= 0 && token < vocabularySize else { return }
            if newValue {
                words[token >> 6] |= 1 << UInt64(token & 63)
            } else {
                words[token >> 6] &= ~(1 << UInt64(token & 63))
            }
        }
    }

    public mutating func allow(_ token: Int) { self[token] = true }

    public mutating func allow(contentsOf tokens: some Sequence<Int>) {
        for token in tokens { self[token] = true }
    }

    public mutating func forbid(_ token: Int) { self[token] = false }

    public mutating func allowAll() {
        for i in words.indices { words[i] = ~0 }
        let spare = words.count * 64 - vocabularySize
        if spare > 0 { words[words.count - 1] >>= UInt64(spare) }
    }

    public mutating func forbidAll() {
        for i in words.indices { words[i] = 0 }
    }

    /// Keeps only the tokens `other` allows too.
    public mutating func formIntersection(_ other: TokenMask) {
        precondition(other.vocabularySize == vocabularySize, "masks of other vocabularies")
        for i in words.indices { words[i] &= other.words[i] }
    }

    /// Allows every token whose bit is set in `bits` (one bit per token, as the mask's own
    /// words; bits past the vocabulary are ignored): a constraint's precomputed set in one
    /// pass over the words instead of one call per token.
    mutating func allow(bits: [UInt64]) {
        let n = min(words.count, bits.count)
        words.withUnsafeMutableBufferPointer { w in
            bits.withUnsafeBufferPointer { b in
                for i in 0..<n { w[i] |= b[i] }
            }
        }
        let spare = words.count * 64 - vocabularySize
        if n == words.count && spare > 0 { words[words.count - 1] &= ~0 >> UInt64(spare) }
    }

    /// How many tokens are allowed.
    public var allowedCount: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }

    /// The allowed token ids, ascending.
    public var allowedTokens: [Int] {
        var tokens: [Int] = []
        for (w, word) in words.enumerated() where word != 0 {
            var bits = word
            while bits != 0 {
                tokens.append(w * 64 + bits.trailingZeroBitCount)
                bits &= bits - 1
            }
        }
        return tokens
    }
}
