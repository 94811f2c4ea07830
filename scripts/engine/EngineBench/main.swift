// Decode/prefill timing of the inference core on a model directory, without tokenizer or
// CLI: `swift build -c release --product engine-bench`, then
//   .build/release/engine-bench <model-dir> [--prompt 128] [--generate 64] [--threads N]
//                               [--runs 3] [--bandwidth-gbs 31.4]
// Prints one line per run and the median; speeds as GenerationOutcome defines them. Random
// prompt tokens; greedy decoding that ignores end tokens, so every run does the same work.
import Foundation
import PhiEngine

func option(_ name: String, _ fallback: Double) -> Double {
    let args = CommandLine.arguments
    guard let i = args.firstIndex(of: name), i + 1 < args.count, let v = Double(args[i + 1])
    else { return fallback }
    return v
}

let arguments = CommandLine.arguments
guard arguments.count > 1 else {
    print("usage: engine-bench <model-dir> [--prompt N] [--generate N] [--threads N] [--runs N]")
    exit(64)
}
let promptLength = Int(option("--prompt", 128))
let generateCount = Int(option("--generate", 64))
let runs = Int(option("--runs", 3))
let bandwidth = option("--bandwidth-gbs", 31.4)
let threads = arguments.contains("--threads") ? Int(option("--threads", 1)) : nil

do {
    if arguments.contains("--load-only") {
        for _ in 0..<3 {
            let t = Date()
            _ = try Phi3Model.load(directory: arguments[1], threads: threads)
            print(String(format: "load %.3f s", Date().timeIntervalSince(t)))
        }
        exit(0)
    }
    let loadStart = Date()
    let model = try Phi3Model.load(directory: arguments[1], threads: threads)
    let loadSeconds = Date().timeIntervalSince(loadStart)
    let gb = Double(model.bytesPerToken) / 1e9
    print(
        String(
            format: "load %.3f s; %.3f GB of weights per token; ceiling %.1f tok/s at %.1f GB/s",
            loadSeconds, gb, bandwidth / gb, bandwidth))
    let session = try InferenceSession(model: model, maxContext: promptLength + generateCount + 1)
    var random = RandomSource(seed: 1)
    let prompt = (0..<promptLength).map { _ in
        3 + Int(random.next() % UInt64(model.vocabularySize - 3))
    }
    var prefill: [Double] = []
    var decode: [Double] = []
    for run in 0...runs {
        session.reset()
        let outcome = try generate(
            session: session, prompt: prompt,
            parameters: GenerationParameters(
                maxTokens: generateCount, temperature: 0, ignoreEOS: true),
            stopTokens: StopTokens(), onToken: { _ in .more })
        let label = run == 0 ? "warm-up" : "run \(run)"
        print(
            String(
                format:
                    "%@: prompt %d tok %.2f tok/s; generation %d steps %.2f tok/s (%.0f%% of ceiling); ttft %.3f s",
                label, outcome.promptTokens, outcome.promptTokensPerSecond, outcome.decodeSteps,
                outcome.generationTokensPerSecond,
                100 * outcome.generationTokensPerSecond * gb / bandwidth, outcome.timeToFirstToken))
        if run > 0 {
            prefill.append(outcome.promptTokensPerSecond)
            decode.append(outcome.generationTokensPerSecond)
        }
    }
    let median = { (v: [Double]) in v.sorted()[v.count / 2] }
    print(
        String(
            format:
                "median: prompt %.2f tok/s, generation %.2f tok/s (%.0f%% of %.1f tok/s), threads %d",
            median(prefill), median(decode), 100 * median(decode) * gb / bandwidth,
            bandwidth / gb, session.threads))
} catch {
    print("error: \(error)")
    exit(1)
}
