import Foundation
import PhiEngine
import PhiFormats

/// `engine-bench <model-dir> --compare-weights [--prompt 512] [--generate 128] [--runs 5]
/// [--kv-bits 16] [--act-bits 16]`: the model loaded twice, its weights mapped in 2 MiB pages
/// (`WeightPlacement.hugePages`) and as a resident copy on 64-byte lines (`.resident`), and
/// the same greedy run (prompt, then `--generate` steps) on each in turn, ABBA, on the shared
/// pool: a shared machine's load then falls on both alike, seconds apart, where separate
/// processes minutes apart saw it change under them. Prints each pair and the medians of the
/// prefill and decode speeds and of their per-pair ratios (resident / mapped). The two
/// sessions' logits are compared too: they must be the same bits.
func placementComparison(directory: String, threads: Int?, activations: ActivationWidth) throws {
    let promptLength = Int(option("--prompt", 512))
    let steps = Int(option("--generate", 128))
    let runs = max(1, Int(option("--runs", 5)))
    guard let width = KVCacheWidth(rawValue: Int(option("--kv-bits", 16))) else {
        throw TraceError("--kv-bits must be 8, 16 or 32")
    }
    let placements: [WeightPlacement] = [.hugePages, .resident]
    var sessions: [InferenceSession] = []
    for placement in placements {
        let start = Date()
        let model = try ModelArchitectures.load(
            directory: directory, threads: threads, placement: placement)
        print(
            String(
                format: "%@: load %.3f s; %@", placement.rawValue, Date().timeIntervalSince(start),
                memoryLine()))
        sessions.append(
            try InferenceSession(
                model: model, maxContext: promptLength + steps + 1, cacheWidth: width,
                activationWidth: activations))
    }
    var random = RandomSource(seed: 1)
    let prompt = (0..<promptLength).map { _ in
        3 + Int(random.next() % UInt64(sessions[0].model.vocabularySize - 3))
    }
    var speeds: [[(prefill: Double, decode: Double)]] = [[], []]
    var logits: [[Float]] = [[], []]
    for run in 0...runs {  // run 0 warms up both (pages, caches) and is left out
        for which in run % 2 == 0 ? [0, 1] : [1, 0] {
            let session = sessions[which]
            session.reset()
            let outcome = try generate(
                session: session, prompt: prompt,
                parameters: GenerationParameters(
                    maxTokens: steps, temperature: 0, ignoreEOS: true),
                stopTokens: StopTokens(), onToken: { _ in .more })
            logits[which] = Array(session.logits)
            if run > 0 {
                speeds[which].append(
                    (outcome.promptTokensPerSecond, outcome.generationTokensPerSecond))
            }
        }
        guard logits[0] == logits[1] else {
            throw TraceError("run \(run): the placements' last logits differ")
        }
        if run > 0 {
            let (a, b) = (speeds[0][run - 1], speeds[1][run - 1])
            print(
                String(
                    format:
                        "run %d (load %@): prefill %.2f / %.2f tok/s (%.3fx), decode %.2f / %.2f (%.3fx)",
                    run, loadAverage(), a.prefill, b.prefill, b.prefill / a.prefill, a.decode,
                    b.decode, b.decode / a.decode))
        }
    }
    let median = { (v: [Double]) in v.sorted()[v.count / 2] }
    let ratio = { (key: KeyPath<(prefill: Double, decode: Double), Double>) in
        median(zip(speeds[0], speeds[1]).map { $1[keyPath: key] / $0[keyPath: key] })
    }
    print(
        String(
            format:
                "median: prefill %.2f -> %.2f tok/s (pairs %.3fx), decode %.2f -> %.2f (pairs %.3fx); act-bits %d, logits identical",
            median(speeds[0].map(\.prefill)), median(speeds[1].map(\.prefill)), ratio(\.prefill),
            median(speeds[0].map(\.decode)), median(speeds[1].map(\.decode)), ratio(\.decode),
            activations.rawValue))
}

/// The 1-, 5- and 15-minute load averages.
func loadAverage() -> String {
    let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}
