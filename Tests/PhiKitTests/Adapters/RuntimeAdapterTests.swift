import Foundation
import PhiEngine
import PhiFormats
import TestSupport
import Testing

@testable import PhiKit

/// `--adapter-path`: an mlx-lm adapter applied at run time (the base's stored weights untouched,
/// the low-rank product added to each adapted layer's output) against the float64 forward pass
/// of base + adapter (ExactPhi3 with the adapter added to each weight row in float64), on the
/// fuse goldens' tiny bases and committed adapters: LoRA and DoRA, partial num_layers, keys
/// with lm_head, a bfloat16 adapter, float and 4-bit bases. Greedy tokens must be the float64
/// argmax wherever float64's best two are not within float32's reach of a tie; the logits stay
/// within float32's distance, while the adapter moves them far more than that.
@Suite("run --adapter-path follows float64 base + adapter")
struct RuntimeAdapterTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let base: String
        let adapter: String
        var testDescription: String { "\(base) + \(adapter)" }
    }

    static let cases = [
        Case(base: "phi4-bf16", adapter: "phi4-dora"),
        Case(base: "phi4-bf16", adapter: "phi4-lora-partial"),
        Case(base: "phi4-fp32", adapter: "phi4-lora-bf16"),
        Case(base: "phi35-bf16", adapter: "phi35-lora-head"),
        Case(base: "case:phi4-bf16-q4g64", adapter: "phi4-dora"),
        Case(base: "case:phi4-bf16-mxfp4", adapter: "phi4-lora-partial"),
    ]

    /// The engine's greedy continuation of `prompt` (12 tokens), with every position's logits.
    static func greedy(
        _ model: any CausalLanguageModel, adapter: Int? = nil, prompt: [Int], count: Int
    ) throws -> (tokens: [Int], logits: [[Float]]) {
        let session = try InferenceSession(model: model, maxContext: 64)
        session.adapter = adapter
        var tokens = prompt
        var rows: [[Float]] = []
        var last = Array(try session.prefill(prompt))
        for _ in 0..<count {
            rows.append(last)
            let next = last.indices.max { last[$0] < last[$1] }!
            tokens.append(next)
            last = Array(try session.step(next))
        }
        return (tokens, rows)
    }

    @Test(arguments: cases)
    func greedyTokensFollowFloat64(_ c: Case) throws {
        let base = try FuseGoldenCase.base(c.base).path
        let adapter = FuseGoldenCase.adapter(c.adapter).path
        let config = try ModelConfig.load(directory: base)
        let model = try ModelArchitectures.load(
            directory: base, threads: 2,
            adapters: [RuntimeAdapter.load(directory: adapter, config: config)])
        let prompt = [1, 17, 42, 99, 5, 230, 64, 3]
        let count = 12
        let run = try Self.greedy(model, adapter: 0, prompt: prompt, count: count)

        let exact = try ExactPhi3(directory: base, adapterPath: adapter).logits(run.tokens)
        let plain = try ExactPhi3(directory: base).logits(run.tokens)
        let vocab = model.vocabularySize
        var worst = 0.0
        var moved = 0.0
        var decided = 0
        for step in 0..<count {
            let position = prompt.count - 1 + step
            let reference = Array(exact[(position * vocab)..<((position + 1) * vocab)])
            for v in 0..<vocab {
                worst = max(worst, abs(Double(run.logits[step][v]) - reference[v]))
                moved = max(moved, abs(plain[position * vocab + v] - reference[v]))
            }
            let order = reference.indices.sorted { reference[$0] > reference[$1] }
            // A near-tie in float64 may fall either way in float32.
            guard reference[order[0]] - reference[order[1]] > 1e-3 else { continue }
            decided += 1
            #expect(run.tokens[prompt.count + step] == order[0], "step \(step)")
        }
        #expect(decided >= count - 2)
        #expect(worst < 1e-3, "largest |logit - float64| \(worst)")
        #expect(moved > 100 * worst, "the adapter moves the logits by \(moved)")
    }

    /// Run time and fused agree on the tokens (a phi-2 base: biases after DoRA's scaling).
    @Test(arguments: [
        Case(base: "phi2-fp16", adapter: "phi2-lora"), Case(base: "phi2-fp16", adapter: "phi2-dora"),
    ])
    func sameTokensAsFused(_ c: Case) throws {
        let base = try FuseGoldenCase.base(c.base)
        let adapter = FuseGoldenCase.adapter(c.adapter)
        let work = try ConvertFixtures.temporaryDirectory("runtime-adapter")
        defer { try? FileManager.default.removeItem(at: work) }
        let fused = work.appendingPathComponent("fused").path
        _ = try fuse(
            FuseOptions(
                model: base.path, adapterPath: adapter.path, output: fused, environment: [:]))
        let config = try ModelConfig.load(directory: base.path)
        let runtime = try ModelArchitectures.load(
            directory: base.path, threads: 2,
            adapters: [RuntimeAdapter.load(directory: adapter.path, config: config)])
        let prompt = [1, 17, 42, 99, 5, 230, 64, 3]
        let a = try Self.greedy(runtime, adapter: 0, prompt: prompt, count: 16)
        let b = try Self.greedy(ModelArchitectures.load(directory: fused, threads: 2), prompt: prompt, count: 16)
        let plain = try Self.greedy(ModelArchitectures.load(directory: base.path, threads: 2), prompt: prompt, count: 16)
        #expect(a.tokens == b.tokens)
        // fp16 fused weights round the correction; float32 run time does not.
        let gap = zip(a.logits.joined(), b.logits.joined()).map { abs($0 - $1) }.max() ?? 0
        let moved = zip(a.logits.joined(), plain.logits.joined()).map { abs($0 - $1) }.max() ?? 0
        #expect(gap < 0.05 && moved > 20 * gap, "fused gap \(gap), adapter's effect \(moved)")
    }

    /// A bad adapter is refused while loading, naming the tensor; nothing runs.
    @Test func wrongRankIsRefusedNamingTheTensor() throws {
        let base = try FuseGoldenCase.base("phi4-bf16").path
        let work = try ConvertFixtures.temporaryDirectory("runtime-adapter-bad")
        defer { try? FileManager.default.removeItem(at: work) }
        let source = FuseGoldenCase.adapter("phi4-dora")
        for file in ["adapter_config.json", "adapters.safetensors"] {
            try FileManager.default.copyItem(
                at: source.appendingPathComponent(file), to: work.appendingPathComponent(file))
        }
        // rank 4 in the tensors, 8 in the config
        let configURL = work.appendingPathComponent("adapter_config.json")
        let text = try String(contentsOf: configURL, encoding: .utf8)
            .replacingOccurrences(of: "\"rank\": 4", with: "\"rank\": 8")
        try text.write(to: configURL, atomically: true, encoding: .utf8)
        let config = try ModelConfig.load(directory: base)
        #expect {
            _ = try RuntimeAdapter.load(directory: work.path, config: config)
        } throws: { error in
            guard let e = error as? FuseError, case .badAdapterTensor(_, let name, _) = e else { return false }
            return name.hasSuffix(".lora_a") && e.exitCode == .dataError
        }
    }
}
