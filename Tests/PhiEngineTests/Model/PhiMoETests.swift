import CKernels
import Foundation
import PhiFormats
import TestSupport
import Testing

@testable import PhiEngine

/// Tiny random Phi-3.5-MoE-shaped models (scripts/engine/tiny_models.py: 16 experts choosing
/// 2, GQA, jitter 0.01, two seeds; 4 experts, MHA, three layers, a wide router band, a
/// sliding window)
/// against transformers' PhimoeForCausalLM in float32 (tiny-phimoe.json, made by
/// scripts/engine/make_phimoe_goldens.py), and the engine's own invariants: the Hugging Face
/// per-expert layout and mlx's stacked one compute the same bits, cached decoding equals a
/// full forward pass, a batch of decode steps equals each step alone. Both models have
/// original_max_position_embeddings 32: the 12-token prompt's greedy run crosses it, the
/// 40-token one starts beyond it.
@Suite("phimoe: tiny Phi-3.5-MoE shapes against transformers")
struct PhiMoETests {
    static let models = ["phimoe16x2", "phimoe4x2", "phimoe16x2-seed11"]
    static let golden: JSONValue = try! JSONValue(
        parsing: [UInt8](
            Data(contentsOf: EngineGoldens.directory.appendingPathComponent("tiny-phimoe.json"))))

    /// A model directory of the golden's config: float32 weights from the seed, experts in
    /// the Hugging Face layout (`split`) or stacked as mlx saves them.
    static func write(_ name: String, split: Bool) throws -> TemporaryModel {
        let config = try #require(golden["models"]?[name]?["config"])
        let dir = try TemporaryModel()
        try dir.write("config.json", config.serialized())
        let parsed = try ModelConfig(data: Array(config.serialized().utf8), source: "config.json")
        let moe = parsed.fields(PhiMoESchema.Fields.self)
        let sizes = SeededWeights.PhiMoESizes(
            hidden: parsed.hiddenSize, intermediate: parsed.intermediateSize,
            layers: parsed.layerCount, heads: parsed.attentionHeads, kvHeads: parsed.kvHeads,
            vocab: parsed.vocabSize, experts: moe.experts,
            attentionBias: moe.attentionBias, lmHeadBias: moe.lmHeadBias)
        let stacked = SeededWeights.phimoe(
            sizes, seed: UInt64(try #require(golden["models"]?[name]?["seed"]?.intValue)),
            amplitude: Float(try #require(golden["amplitude"]?.doubleValue)))
        let tensors = (split ? SeededWeights.splitExperts(stacked) : stacked).map {
            TinyModels.Tensor(
                name: $0.name, shape: $0.shape, dtype: .f32, bytes: TinyModels.encode($0.values, .f32))
        }
        try TinyModels.writeSafetensors(tensors, to: dir.file("model.safetensors"))
        return dir
    }

    static func cases(_ name: String) throws -> [EngineGoldens.Case] {
        let text = try #require(golden["models"]?[name]?["float32"]).serialized()
        return try JSONDecoder().decode([EngineGoldens.Case].self, from: Data(text.utf8))
    }

    @Test("float32: logits within 1e-4 of transformers, greedy identical", arguments: models)
    func float32(_ name: String) throws {
        let dir = try Self.write(name, split: true)
        let model = try #require(try ModelArchitectures.load(directory: dir.path) as? PhiMoEModel)
        let session = try InferenceSession(model: model)
        for c in try Self.cases(name) {
            session.reset()
            let difference = relativeDifference(try session.prefill(c.prompt), c.lastLogits)
            print("phimoe \(name) prompt \(c.prompt.count): relative difference \(difference)")
            #expect(difference < 1e-4, "\(name), prompt of \(c.prompt.count) tokens")
            session.reset()
            let tokens = try greedy(session, prompt: c.prompt, count: c.greedy.count)
            #expect(tokens == c.greedy, "\(name), prompt of \(c.prompt.count) tokens")
        }
    }

    @Test("the Hugging Face per-expert layout and mlx's stacked one give the same bits")
    func layoutsAgree() throws {
        let split = try Self.write("phimoe16x2", split: true)
        let stacked = try Self.write("phimoe16x2", split: false)
        let prompt = try Self.cases("phimoe16x2")[1].prompt
        let a = try InferenceSession(model: try PhiMoEModel.load(directory: split.path))
        let b = try InferenceSession(model: try PhiMoEModel.load(directory: stacked.path))
        #expect(Array(try a.prefill(prompt)) == Array(try b.prefill(prompt)))
    }

    @Test("cached decoding equals a full forward pass, on both sides of the LongRoPE switch",
        arguments: models)
    func cachedDecodeEqualsFullForward(_ name: String) throws {
        let dir = try Self.write(name, split: false)
        let model = try PhiMoEModel.load(directory: dir.path)
        let prompt = try Self.cases(name)[0].prompt  // 12 tokens; decoding passes 32
        let stepped = try InferenceSession(model: model)
        var logits = Array(try stepped.prefill(prompt))
        var sequence = prompt
        for _ in 0..<26 {
            let fresh = try InferenceSession(model: model)
            let full = try withExtendedLifetime(fresh) { Array(try fresh.prefill(sequence)) }
            #expect(logits == full, "\(name) at \(sequence.count) tokens")
            let next = logits.indices.max { logits[$0] < logits[$1] }!
            sequence.append(next)
            logits = Array(try stepped.step(next))
        }
    }

    @Test("prompt blocks of any size and a decode batch give each token the same bits")
    func blocksAndBatchesAgree() throws {
        let dir = try Self.write("phimoe4x2", split: false)
        let model = try PhiMoEModel.load(directory: dir.path)
        let pool = try WorkerPool(threads: 2, isa: pk_matvec_best_isa())
        let prompts = [[1, 17, 200, 33, 5], [1, 99, 250], [1, 3, 42, 7, 11, 300, 12], [1, 2]]
        var alone: [[[Float]]] = []
        for prompt in prompts {
            let whole = try InferenceSession(model: model, maxContext: nil, pool: pool, block: 512)
            let ones = try InferenceSession(model: model, maxContext: nil, pool: pool, block: 1)
            #expect(Array(try whole.prefill(prompt)) == Array(try ones.prefill(prompt)))
            alone.append(
                try (0..<5).map { _ in Array(try whole.step(argmax(whole.logits))) })
        }
        let batch = try DecodeBatch(model: model, maxSequences: 4, pool: pool)
        let sessions = try prompts.map { prompt in
            let session = try InferenceSession(model: model, maxContext: nil, pool: pool, block: 512)
            _ = try session.prefill(prompt)
            return session
        }
        var seen = [[[Float]]](repeating: [], count: prompts.count)
        for _ in 0..<5 {
            try batch.step(sessions, tokens: sessions.map { argmax($0.logits) })
            for (k, session) in sessions.enumerated() { seen[k].append(Array(session.logits)) }
        }
        #expect(seen == alone)
    }
}
