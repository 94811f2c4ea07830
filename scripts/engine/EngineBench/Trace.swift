import Foundation
import PhiEngine

/// `engine-bench <model-dir> --trace RUNS.json --out LOGITS.f32 [--kv-bits 8|16|32]
/// [--act-bits 8|16]`: the
/// logits phikit computes after every token, for the numerics scripts
/// (scripts/engine/kv_fidelity.py). RUNS.json is {"runs": [{"prompt": [ids], "generate": n}]}:
/// each prompt is fed token by token (by the exactness contract that is the prefill's
/// result), then n greedy tokens (the first largest logit, as generation picks). LOGITS.f32
/// gets one float32 row of vocab logits after each token, runs one after another; stdout one
/// JSON line per run, {"tokens": [prompt + generated]}.
func traceLogits(
    directory: String, runsPath: String, outPath: String, bits: Int, activations: ActivationWidth
) throws {
    let model = try ModelArchitectures.load(directory: directory, threads: 1)
    guard let width = KVCacheWidth(rawValue: bits) else {
        throw TraceError("--kv-bits must be 8, 16 or 32")
    }
    let object = try JSONSerialization.jsonObject(
        with: Data(contentsOf: URL(fileURLWithPath: runsPath)))
    guard let runs = (object as? [String: Any])?["runs"] as? [[String: Any]] else {
        throw TraceError("\(runsPath): expected {\"runs\": [{\"prompt\": [ids], \"generate\": n}]}")
    }
    let specs = try runs.map { run -> ([Int], Int) in
        guard let prompt = run["prompt"] as? [Int], !prompt.isEmpty else {
            throw TraceError("\(runsPath): every run needs a non-empty prompt")
        }
        return (prompt, run["generate"] as? Int ?? 0)
    }
    let longest = specs.map { $0.0.count + $0.1 }.max() ?? 1
    let session = try InferenceSession(
        model: model, maxContext: longest, cacheWidth: width, activationWidth: activations)
    var rows = Data()
    for (prompt, generate) in specs {
        session.reset()
        var tokens = prompt
        var logits = try session.prefill([prompt[0]])
        rows.append(contentsOf: UnsafeRawBufferPointer(logits))
        for token in prompt.dropFirst() {
            logits = try session.step(token)
            rows.append(contentsOf: UnsafeRawBufferPointer(logits))
        }
        for _ in 0..<generate {
            let next = firstLargest(logits)
            tokens.append(next)
            logits = try session.step(next)
            rows.append(contentsOf: UnsafeRawBufferPointer(logits))
        }
        let line = try JSONSerialization.data(withJSONObject: ["tokens": tokens])
        print(String(decoding: line, as: UTF8.self))
    }
    try rows.write(to: URL(fileURLWithPath: outPath), options: .atomic)
}

private func firstLargest(_ x: UnsafeBufferPointer<Float>) -> Int {
    var best = 0
    for i in x.indices where x[i] > x[best] { best = i }
    return best
}

struct TraceError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
