import Foundation
import Testing

@testable import PhiEngine

/// The budget-aware mask: a model that would loop in an unbounded array until `maxTokens`
/// gets an answer that closes in time instead — valid JSON for every budget, the same tokens
/// as without the budget until it binds, reproducible when sampled — and the shortest
/// completions it rests on.
@Suite("structured output: the token budget")
struct BudgetTests {
    static let vocabulary = GrammarMatcherTests.vocabulary
    static let end = vocabulary.size - 2  // the special token, used as the end token

    /// Members `xs` (unbounded integers) and `tag` (a string): a greedy loop in the array
    /// never reaches `tag` without a budget.
    static let schema = #"""
        {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "integer"}},
          "tag": {"type": "string", "minLength": 3}}, "required": ["xs", "tag"],
         "additionalProperties": false}
        """#

    static func matcher() throws -> GrammarMatcher {
        GrammarMatcher(
            grammar: try OutputFormat.jsonSchema(text: schema).compile(), vocabulary: vocabulary)
    }

    /// A "model" that likes digits and commas best and closing the array least: greedy, it
    /// writes `{"xs":[1,1,1,…` for ever.
    static func logits(after history: [Int]) -> [Float] {
        (0..<vocabulary.size).map { t in
            guard let piece = vocabulary.piece(t) else { return 0 }
            var score: Float = Float(history.count % 7) * 0.01 * Float(t % 5)
            for byte in piece {
                switch byte {
                case UInt8(ascii: "1"), UInt8(ascii: ","): score += 2
                case UInt8(ascii: "]"), UInt8(ascii: "}"): score -= 3
                default: score += 0.1
                }
            }
            return score
        }
    }

    /// The generated tokens and why generation stopped.
    static func generate(
        _ parameters: GenerationParameters, budgeted: Bool = true
    ) throws -> (tokens: [Int], finish: StopReason) {
        let matcher = try matcher()
        let constraint: any TokenConstraint = budgeted ? matcher : Unbudgeted(matcher)
        let generator = Generator(
            parameters: parameters, vocabularySize: vocabulary.size, stopTokens: StopTokens([end]),
            context: [], maxContext: 10_000, constraint: constraint)
        var tokens: [Int] = []
        while true {
            let step = try logits(after: tokens).withUnsafeBufferPointer { try generator.step($0) }
            tokens += step.ids
            if let finish = step.finish { return (tokens, finish) }
        }
    }

    static func text(_ tokens: [Int]) -> String {
        String(decoding: tokens.flatMap { vocabulary.piece($0)! }, as: UTF8.self)
    }

    /// The answer parsed, checked against the schema by hand: integers in `xs`, a `tag` of
    /// at least three characters, nothing else.
    static func isValid(_ text: String) -> Bool {
        guard
            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            Set(object.keys) == ["xs", "tag"], let xs = object["xs"] as? [NSNumber],
            let tag = object["tag"] as? String
        else { return false }
        return tag.count >= 3 && xs.allSatisfy { $0.doubleValue == $0.doubleValue.rounded() }
    }

    @Test("greedy: the answer closes within max_tokens and validates, for every budget")
    func greedyCloses() throws {
        let shortest = try #require(try Self.matcher().tokensToFinish)
        #expect(shortest == #"{"xs":[],"tag":"   "}"#.utf8.count)
        for maxTokens in [shortest, shortest + 1, 25, 40, 64, 100] {
            let (tokens, finish) = try Self.generate(.greedy(maxTokens: maxTokens))
            let text = Self.text(tokens)
            #expect(tokens.count <= maxTokens)
            #expect(Self.isValid(text), "max_tokens \(maxTokens): \(text)")
            #expect(finish == .maxTokens || finish == .constraintComplete, "\(finish)")
        }
        // Without the budget the same model is cut inside the array.
        let (cut, finish) = try Self.generate(.greedy(maxTokens: 64), budgeted: false)
        #expect(finish == .maxTokens && !Self.isValid(Self.text(cut)))
    }

    @Test("the budget changes nothing until it binds: the same tokens as without it, up to its last few")
    func samePrefix() throws {
        for maxTokens in [30, 64, 100] {
            let free = try Self.generate(.greedy(maxTokens: maxTokens), budgeted: false).tokens
            let closed = try Self.generate(.greedy(maxTokens: maxTokens)).tokens
            let common = zip(free, closed).prefix { $0 == $1 }.count
            // Closing takes `],"tag":"xyz"}` (14 bytes); tokens are at most 7 bytes, so the
            // budget binds at most that many tokens and one token's reach before the end.
            #expect(common >= maxTokens - 14 - 7, "\(common) of \(maxTokens)")
            #expect(common < maxTokens)  // it did bind: the free answer was cut
        }
    }

    @Test("sampled: the same seed gives the same valid answer")
    func sampledReproducible() throws {
        for seed: UInt64 in [1, 2, 3] {
            let parameters = GenerationParameters(maxTokens: 40, temperature: 1, seed: seed)
            let first = try Self.generate(parameters).tokens
            #expect(try Self.generate(parameters).tokens == first)
            #expect(Self.isValid(Self.text(first)), "\(Self.text(first))")
        }
    }

    @Test("a tight budget allows exactly the tokens after which the answer can still end in time")
    func tightMaskIsExact() throws {
        let matcher = try Self.matcher()
        let probe = try Self.matcher()
        let prefix = Array(#"{"xs":[12,3"#.utf8)
        #expect(matcher.advance(bytes: prefix))
        let grammarMask = matcher.allowedTokenIDs()
        for budget in [1, 12, 16, 20, 200] {
            var mask = TokenMask(vocabularySize: Self.vocabulary.size)
            matcher.allow(&mask, budget: budget)
            let expected = grammarMask.filter { t in
                probe.reset()
                _ = probe.advance(bytes: prefix + Self.vocabulary.piece(t)!)
                return probe.tokensToFinish! <= budget - 1
            }
            // Nothing fits in 1 token here (14 bytes are missing): the grammar's mask stays.
            #expect(mask.allowedTokens == (expected.isEmpty ? grammarMask : expected), "budget \(budget)")
        }
        #expect(matcher.tokensToFinish == #"],"tag":"   "}"#.utf8.count)
    }

    @Test("shortest answers of schemas, regexes and grammars, in bytes")
    func shortestAnswers() throws {
        let cases: [(OutputFormat, Int)] = [
            (.jsonObject, 2),
            (try .jsonSchema(text: #"{"type": "integer", "minimum": 100}"#), 3),
            (try .jsonSchema(text: #"{"enum": ["abc", 12345]}"#), 5),
            (.regex("[a-z]{3,5}(x|yy)"), 4),
            (.grammar("root ::= \"(\" root \")\" | \"ok\" item*\nitem ::= \"ab\" | \"c\""), 2),
        ]
        for (format, bytes) in cases {
            #expect(try format.compile().shortestAnswer == bytes, "\(format)")
        }
    }

    @Test("a max_tokens below the shortest answer is refused, naming the option")
    func tooSmall() throws {
        let matcher = try Self.matcher()
        #expect(throws: ConstraintError.self) {
            try matcher.checkRoom(maxTokens: 20, naming: "max_tokens")
        }
        do {
            try matcher.checkRoom(maxTokens: 3, naming: "max_tokens")
            Issue.record("max_tokens 3 was accepted")
        } catch {
            #expect(error.message.contains("max_tokens 3") && error.hint?.contains("21") == true)
        }
        try matcher.checkRoom(maxTokens: 21, naming: "max_tokens")
    }
}

/// The matcher without its budget (what `allow(_:budget:)` did before): the baseline.
private final class Unbudgeted: TokenConstraint {
    let matcher: GrammarMatcher
    init(_ matcher: GrammarMatcher) { self.matcher = matcher }
    func allow(_ mask: inout TokenMask) { matcher.allow(&mask) }
    func forcedTokens(limit: Int) -> [Int] { matcher.forcedTokens(limit: limit) }
    func advance(_ token: Int) throws { try matcher.advance(token) }
    var canEnd: Bool { matcher.canEnd }
    var isComplete: Bool { matcher.isComplete }
}
