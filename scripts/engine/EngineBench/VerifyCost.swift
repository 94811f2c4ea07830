import Foundation
import PhiEngine

/// `engine-bench <model-dir> --verify [--prompt 512] [--runs 3] [--draft-max 8] [--kv-bits 16]
/// [--act-bits 16]`:
/// what checking k drafted tokens costs (speculative decoding, issue 31): after a prompt of
/// `--prompt` random tokens, a decode step and then `InferenceSession.verify` of blocks of
/// k + 1 tokens (the token just chosen and k drafted ones) for k = 1…draft-max, each rewound
/// before the next, repeated `--runs` times interleaved; the median of each. Prints per k
/// the milliseconds, the cost in decode steps, and the speedup the block gives if a share a
/// of drafted tokens is accepted (the agreeing prefix: 1 + a + … + a^k tokens per block).
func verifyCostBenchmark(
    directory: String, threads: Int?, activations: ActivationWidth
) throws {
    let model = try ModelArchitectures.load(directory: directory, threads: threads)
    let promptLength = Int(option("--prompt", 512))
    let maxDraft = Int(option("--draft-max", 8))
    let runs = max(1, Int(option("--runs", 3)))
    guard let width = KVCacheWidth(rawValue: Int(option("--kv-bits", 16))) else {
        throw TraceError("--kv-bits must be 8, 16 or 32")
    }
    let session = try InferenceSession(
        model: model, maxContext: promptLength + maxDraft + 2, cacheWidth: width,
        activationWidth: activations)
    var random = RandomSource(seed: 3)
    let tokens = (0..<promptLength + maxDraft + 1).map { _ in
        3 + Int(random.next() % UInt64(model.vocabularySize - 3))
    }
    _ = try session.prefill(Array(tokens[..<promptLength]))
    // seconds[n - 1]: blocks of n tokens (n = 1 is a decode step)
    var seconds = [[Double]](repeating: [], count: maxDraft + 1)
    for run in 0...runs {
        for n in 1...maxDraft + 1 {
            let block = Array(tokens[promptLength..<promptLength + n])
            let start = monotonicSeconds()
            if n == 1 { _ = try session.step(block[0]) } else { _ = try session.verify(block) }
            let elapsed = monotonicSeconds() - start
            session.rewind(to: promptLength)
            if run > 0 { seconds[n - 1].append(elapsed) }  // run 0 warms up
        }
    }
    let median = seconds.map { $0.sorted()[$0.count / 2] }
    print(
        String(
            format: "verify cost after %d tokens, %@-bit cache, %d-bit activations, %d threads, median of %d:",
            promptLength, "\(width.rawValue)", activations.rawValue, session.threads, runs))
    print("  k  block      ms  steps   speedup at acceptance 0.5 / 0.7 / 0.9")
    for k in 0...maxDraft {
        let cost = median[k] / median[0]
        let gains = [0.5, 0.7, 0.9].map { a in
            (0...k).reduce(0.0) { sum, j in sum + pow(a, Double(j)) } / cost
        }
        print(
            String(
                format: "%3d  %5d  %6.1f  %5.2f   %.2f / %.2f / %.2f", k, k + 1, median[k] * 1e3,
                cost, gains[0], gains[1], gains[2]))
    }
}
