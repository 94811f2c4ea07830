import Foundation
import PhiFormats
import Testing

@testable import PhiText

/// xorshift64*: a fixed-seed generator, so every run mutates the same way.
private struct ReplayRNG: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
}

/// The short fuzz run of `make test` (the long one is `make fuzz`, libFuzzer + ASan, see
/// scripts/fuzz): every seed and every past finding of the jinja, regex and tokenizer targets
/// goes through the same entry points as scripts/fuzz/FuzzHarness.swift, then a few hundred
/// fixed-seed mutations of the seeds. A trap kills the test process; the budgets must turn
/// everything else into an error.
@Suite("fuzz seeds and findings replayed (jinja, regex, tokenizer)")
struct FuzzReplayTests {
    private static let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/fuzz")

    private static func inputs(_ target: String) -> [[UInt8]] {
        ["seeds", "regressions"].flatMap { kind -> [[UInt8]] in
            let dir = fuzz.appendingPathComponent(kind).appendingPathComponent(target)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            return names.sorted().compactMap {
                try? Array(Data(contentsOf: dir.appendingPathComponent($0)))
            }
        }
    }

    /// A few random byte edits (flip, insert, delete, duplicate a slice).
    private static func mutate(_ input: [UInt8], _ rng: inout ReplayRNG) -> [UInt8] {
        var b = input
        for _ in 0..<Int.random(in: 1...4, using: &rng) where !b.isEmpty {
            let i = Int.random(in: 0..<b.count, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: b[i] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
            case 1: b.insert(UInt8.random(in: 0x20...0x7E, using: &rng), at: i)
            case 2: b.removeSubrange(i..<min(b.count, i + Int.random(in: 1...8, using: &rng)))
            default:
                let end = min(b.count, i + Int.random(in: 1...16, using: &rng))
                b.insert(contentsOf: b[i..<end], at: Int.random(in: 0...b.count, using: &rng))
            }
        }
        return b
    }

    /// Seeds and findings, then `mutations` mutants of the seeds.
    private static func corpus(_ target: String, mutations: Int) -> [[UInt8]] {
        let base = inputs(target)
        var rng = ReplayRNG(state: 0x9E37_79B9_7F4A_7C15)
        let mutants =
            base.isEmpty
            ? []
            : (0..<mutations).map { _ in
                mutate(base.randomElement(using: &rng)!, &rng)
            }
        return base + mutants
    }

    private static let conversation: [TemplateValue] = [
        .object([("role", .string("system")), ("content", .string("Be brief."))]),
        .object([("role", .string("user")), ("content", .string("Hi <|end|> {{ x }}"))]),
        .object([("role", .string("assistant")), ("content", .string("Hello"))]),
    ]

    @Test func jinja() {
        let corpus = Self.corpus("jinja", mutations: 300)
        #expect(corpus.count > 300)
        for input in corpus {
            let source = String(decoding: input, as: UTF8.self)
            guard
                let template = try? ChatTemplate(
                    source: source, specialTokens: ["bos_token": "<s>"])
            else { continue }
            if let text = try? template.render(
                conversation: Self.conversation, addGenerationPrompt: true)
            {
                #expect(text.utf8.count <= JinjaBudget.maxLength)
            }
        }
    }

    private static let baseTokenizer: [UInt8] = {
        let url = fuzz.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("models/stories-260k/tokenizer.json")
        return (try? Array(Data(contentsOf: url))) ?? []
    }()

    private func exercise(_ tokenizer: Tokenizer, _ text: String) {
        guard let ids = try? tokenizer.encode(text) else { return }
        #expect(ids.allSatisfy { $0 >= 0 && $0 < max(tokenizer.vocabularySize, 1) })
        _ = tokenizer.decode(ids)
        _ = tokenizer.decode(ids, skipSpecialTokens: true)
    }

    @Test func regex() throws {
        let corpus = Self.corpus("regex", mutations: 40)
        #expect(corpus.count > 40)
        for input in corpus {
            let cut = input.firstIndex(of: 0) ?? input.count
            let pattern = String(decoding: input[..<cut], as: UTF8.self)
            let text = String(decoding: input[min(cut + 1, input.count)...], as: UTF8.self)
            var json = try JSONValue(parsing: Self.baseTokenizer)
            json.set(
                "pre_tokenizer",
                .object([
                    ("type", .string("Split")), ("pattern", .object([("Regex", .string(pattern))])),
                    ("behavior", .string("Isolated")), ("invert", .bool(false)),
                ]))
            guard
                let tokenizer = try? Tokenizer(
                    tokenizerJSON: Array(json.serialized().utf8), source: "fuzz")
            else { continue }
            exercise(tokenizer, text)
        }
    }

    @Test func tokenizer() {
        let corpus = Self.corpus("tokenizer", mutations: 100)
        #expect(corpus.count > 100)
        for input in corpus {
            guard let tokenizer = try? Tokenizer(tokenizerJSON: input, source: "fuzz") else {
                continue
            }
            exercise(tokenizer, "Hello world! 123 \u{1F916} <s> </s>  x\n\ty")
        }
    }
}
