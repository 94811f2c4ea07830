import CKernels
import PhiFormats
import Testing

@testable import PhiEngine

/// `verify` and `rewind`, what speculative decoding is built on: a block of drafted tokens
/// gives, row for row, bit for bit the logits decode steps would have given, and a rewind
/// past the rejected rows leaves the session as if they had never been fed. Every model
/// shape, float and 4-bit, float32 and 8-bit caches (8-bit keys calibrate on the first 32
/// positions, so some blocks and rewinds straddle that).
@Suite("verify and rewind")
struct VerifyRewindTests {
    static let text = (0..<48).map { ($0 * 29 + 5) % 380 + 3 }

    /// (cached prefix, block length): inside one regime, across the tiny Phi-3 models'
    /// LongRoPE switch (past 32 positions) and across the 8-bit keys' calibration, from
    /// right at the switch, one token.
    static let cases = [(20, 6), (28, 8), (32, 3), (36, 7), (1, 1)]

    @Test("verified rows equal decode steps; a rewind then continues as the steps did")
    func rowsEqualSteps() throws {
        for (label, _, model) in try SessionReuseTests.models() {
            for width in [KVCacheWidth.float32, .int8] {
                for (p, k) in Self.cases {
                    let prefix = Array(Self.text[..<p])
                    let block = Array(Self.text[p..<p + k])
                    let stepper = try InferenceSession(model: model, cacheWidth: width)
                    _ = try stepper.prefill(prefix)
                    let stepped = try block.map { Array(try stepper.step($0)) }

                    let session = try InferenceSession(model: model, cacheWidth: width)
                    _ = try session.prefill(prefix)
                    let rows = try session.verify(block)
                    #expect(rows.count == k)
                    for i in 0..<k {
                        #expect(Array(rows[i]) == stepped[i], "\(label) \(width) p\(p) row \(i)")
                    }
                    #expect(Array(session.logits) == stepped[k - 1])
                    // Only the last rows (a forced run fed before a draft needs none): the
                    // same rows, across a regime switch too.
                    let last = (k + 1) / 2
                    let tail = try InferenceSession(model: model, cacheWidth: width)
                    _ = try tail.prefill(prefix)
                    let tailRows = try tail.verify(block, lastRows: last)
                    #expect(tailRows.count == last)
                    for i in 0..<last {
                        #expect(
                            Array(tailRows[i]) == stepped[k - last + i],
                            "\(label) \(width) p\(p) last \(last) row \(i)")
                    }
                    // the first token kept, the rest rejected: steps from there repeat them
                    let keep = p + 1
                    #expect(session.rewind(to: keep) == keep && session.position == keep)
                    for i in 1..<k {
                        #expect(
                            Array(try session.step(block[i])) == stepped[i],
                            "\(label) \(width) p\(p) after rewind, row \(i)")
                    }
                }
            }
        }
    }

    /// SmolLM2's storage, narrower: llama with 4-bit g32 layers whose rows are whole quads
    /// plus a 64-value segment (hidden 320, intermediate 576: the AVX-512 4-bit tile's
    /// segment path) and the tied head 8-bit (the 8-bit tile, 128-value blocks plus a half
    /// block), as scripts/smollm2 converts the real model: blocks of 2...9 give the steps' rows.
    @Test("SmolLM2-like narrow rows and an 8-bit tied head: verified rows equal steps")
    func narrowRowsEqualSteps() throws {
        var config = try EngineGoldens.tiny("tiny-llama-smol.json").mlxConfig
        for (key, value) in [
            ("hidden_size", 320), ("intermediate_size", 576), ("num_attention_heads", 5),
            ("num_key_value_heads", 1),
        ] {
            config.set(key, .int(value))
        }
        let source = try TinyModels.writeFloat(config: config, seed: 5, amplitude: 0.25)
        let dir = try TinyModels.writeQuantized(
            from: source.path,
            quantization: .object([
                ("group_size", .int(32)), ("bits", .int(4)), ("mode", .string("affine")),
                ("model.embed_tokens", .object([("group_size", .int(32)), ("bits", .int(8))])),
            ]))
        let model = try ModelArchitectures.load(directory: dir.path)
        let prefix = Array(Self.text[..<12])
        let stepper = try InferenceSession(model: model)
        _ = try stepper.prefill(prefix)
        let stepped = try Self.text[12..<21].map { Array(try stepper.step($0)) }
        let session = try InferenceSession(model: model)
        _ = try session.prefill(prefix)
        for k in 2...9 {
            let rows = try session.verify(Array(Self.text[12..<12 + k]))
            for i in 0..<k { #expect(Array(rows[i]) == stepped[i], "block of \(k), row \(i)") }
            #expect(session.rewind(to: 12) == 12)
        }
    }

    @Test("a verify after a prompt of several blocks, with blocks smaller than the prompt")
    func smallBlocks() throws {
        let (_, model) = try SessionTests.quantizedModel("tiny-phi4mini.json")
        let reference = try InferenceSession(model: model)
        _ = try reference.prefill(Array(Self.text[..<10]))
        let stepped = try Self.text[10..<14].map { Array(try reference.step($0)) }
        let session = try InferenceSession(
            model: model, maxContext: nil, threads: 2, isa: pk_matvec_best_isa(), block: 4)
        #expect(session.maxVerifyTokens == 4)
        // 10 cached tokens are 4 + 4 + 2; the verify block is one block of its own
        _ = try session.prefill(Array(Self.text[..<10]))
        let rows = try session.verify(Array(Self.text[10..<14]))
        for i in 0..<4 { #expect(Array(rows[i]) == stepped[i], "row \(i)") }
        // 11 cached tokens end mid-block; the verify block still comes whole
        session.reset()
        _ = try session.prefill(Array(Self.text[..<11]))
        let three = try session.verify(Array(Self.text[11..<14]))
        for i in 0..<3 { #expect(Array(three[i]) == stepped[i + 1], "row \(i) of 3") }
    }

    @Test("verify refuses an empty or oversized block and tokens past the context")
    func refusals() throws {
        let (_, model) = try SessionTests.floatModel("tiny-phi4mini.json")
        let session = try InferenceSession(
            model: model, maxContext: 16, threads: 1, isa: pk_matvec_best_isa(), block: 8)
        _ = try session.prefill([1, 2, 3])
        #expect(throws: SessionError.invalidBlock(tokens: 0, maximum: 8)) {
            try session.verify([])
        }
        #expect(throws: SessionError.invalidBlock(tokens: 9, maximum: 8)) {
            try session.verify(Array(repeating: 4, count: 9))
        }
        _ = try session.verify(Array(repeating: 4, count: 8))
        #expect(throws: SessionError.contextFull(needed: 17, limit: 16)) {
            try session.verify(Array(repeating: 4, count: 6))
        }
        #expect(session.position == 11)
        #expect(session.rewind(to: 40) == 11 && session.rewind(to: 5) == 5)
        #expect(session.tokens == [1, 2, 3, 4, 4])
    }
}

/// A model whose sequence states refuse every rewind (as a cache that cannot drop positions
/// would): the session must compute the kept tokens again and give the same logits. (Not a
/// `BlockForwardModel`, so one position regime: the test stays below the LongRoPE switch.)
final class RefusingRewindModel: CausalLanguageModel, @unchecked Sendable {
    let inner: any CausalLanguageModel
    init(_ inner: any CausalLanguageModel) { self.inner = inner }
    var directory: String { inner.directory }
    var config: ModelConfig { inner.config }
    var generationConfig: GenerationConfig? { inner.generationConfig }
    var vocabularySize: Int { inner.vocabularySize }
    var maxPositions: Int { inner.maxPositions }
    var bytesPerToken: Int { inner.bytesPerToken }
    var threads: Int { inner.threads }
    var adapterCount: Int { inner.adapterCount }
    func makeSequenceState(
        capacity: Int, block: Int, threads: Int, cacheWidth: KVCacheWidth
    ) throws -> any SequenceState {
        Refusing(
            try inner.makeSequenceState(
                capacity: capacity, block: block, threads: threads, cacheWidth: cacheWidth))
    }
    func makeBatchState(maxSequences: Int, maxTokens: Int, threads: Int) throws -> any BatchState {
        try inner.makeBatchState(maxSequences: maxSequences, maxTokens: maxTokens, threads: threads)
    }

    final class Refusing: SequenceState {
        let inner: any SequenceState
        init(_ inner: any SequenceState) { self.inner = inner }
        var block: Int { inner.block }
        var capacity: Int { inner.capacity }
        var logitRows: Int { inner.logitRows }
        var logits: UnsafeBufferPointer<Float> { inner.logits }
        func forward(
            _ tokens: UnsafeBufferPointer<Int>, at p0: Int, regime: Int, logitRows: Int,
            pool: WorkerPool
        ) {
            inner.forward(tokens, at: p0, regime: regime, logitRows: logitRows, pool: pool)
        }
        func rewind(to position: Int) -> Bool { false }
    }
}

extension VerifyRewindTests {
    @Test("a state that refuses to rewind: the kept tokens are computed again, same logits")
    func refusedRewind() throws {
        let (_, model) = try SessionTests.quantizedModel("tiny-phi4mini.json")
        let refusing = RefusingRewindModel(model)
        let text = Array(Self.text[..<24])
        let reference = try InferenceSession(model: model)
        _ = try reference.prefill(Array(text[..<12]))
        let stepped = try text[12...].map { Array(try reference.step($0)) }

        let session = try InferenceSession(model: refusing)
        _ = try session.prefill(Array(text[..<12]))
        _ = try session.verify(Array(text[12..<18]))
        #expect(session.rewind(to: 14) == 0 && session.tokens == Array(text[..<14]))
        #expect(Array(try session.step(text[14])) == stepped[2])
        // prepare reports nothing reused when its rewind is refused
        #expect(try session.prepare(Array(text[..<13]) + [7, 8]) == 0)
        #expect(Array(session.logits) == (try SessionReuseTests.fresh(model, Array(text[..<13]) + [7, 8])))
        // appending needs no rewind: reuse as usual
        #expect(try session.prepare(Array(text[..<13]) + [7, 8, 9]) == 15)
    }
}
