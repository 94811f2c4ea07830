// Decode/prefill timing of the inference core on a model directory, without tokenizer or
// CLI: `swift build -c release --product engine-bench`, then
//   .build/release/engine-bench <model-dir> [--prompt 128] [--generate 64] [--threads N]
//                               [--runs 3] [--bandwidth-gbs 31.4] [--kv-bits 32]
//                               [--act-bits 16]   (8: the 8-bit-activation path; every mode
//                                                  below takes it) [--no-warm-up]
//   .build/release/engine-bench <model-dir> --load-only     (load time, three times)
//   .build/release/engine-bench <model-dir> --compare-weights [--prompt 512] [--generate 128]
//                                         (2 MiB-page mapping vs resident copy, alternated in
//                                          one process; PlacementCompare.swift)
//   --weights mapped|hugePages|resident|hugePagesOrResident   how the weight files are held (WeightPlacement;
//                                         default: the architecture's); the run prints RSS
//                                         and 2 MiB pages after load and after the runs
//   .build/release/engine-bench x --dispatch                (pool vs concurrentPerform)
//   .build/release/engine-bench <model-dir> --batch N       (aggregate decode tok/s of N
//                                                            sequences in one DecodeBatch)
//   .build/release/engine-bench <model-dir> --verify [--prompt 512] [--draft-max 8]
//                                                           (what verifying k drafted tokens
//                                                            costs; VerifyCost.swift)
//   .build/release/engine-bench <model-dir> --trace RUNS.json --out LOGITS.f32 [--kv-bits B]
//                                                           (logits after every token, for
//                                                            the numerics scripts; Trace.swift)
// Prints one line per run and the median; speeds as GenerationOutcome defines them. Random
// prompt tokens; greedy decoding that ignores end tokens, so every run does the same work.
// The ceiling counts weight bytes only (the KV cache adds its own traffic at long contexts).
import CKernels
import Foundation
import PhiEngine
import PhiFormats

func option(_ name: String, _ fallback: Double) -> Double {
    let args = CommandLine.arguments
    guard let i = args.firstIndex(of: name), i + 1 < args.count, let v = Double(args[i + 1])
    else { return fallback }
    return v
}

/// Busy work of a fixed duration on the calling thread.
nonisolated func spin(microseconds: Double) {
    var start = timespec()
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &start)
    repeat {
        clock_gettime(CLOCK_MONOTONIC, &now)
    } while Double(now.tv_sec - start.tv_sec) * 1e6 + Double(now.tv_nsec - start.tv_nsec) / 1e3
        < microseconds
}

/// Cost of starting one parallel job of 5 µs per thread: the persistent pool vs a
/// DispatchQueue.concurrentPerform per job (decode starts ~160 jobs per token). Nonisolated:
/// the closures run on worker threads (top-level code in main.swift is on the main actor).
nonisolated func dispatchBenchmark() {
    let n = Int(pk_available_cores())
    let pool = pk_pool_create(Int32(n))!
    let jobs = 20000
    for _ in 0..<3 {
        var t = Date()
        for _ in 0..<jobs { pk_pool_run(pool, { _, _, _ in spin(microseconds: 5) }, nil, n) }
        let poolMicros = Date().timeIntervalSince(t) / Double(jobs) * 1e6
        t = Date()
        for _ in 0..<jobs {
            DispatchQueue.concurrentPerform(iterations: n) { _ in spin(microseconds: 5) }
        }
        let gcdMicros = Date().timeIntervalSince(t) / Double(jobs) * 1e6
        print(
            String(
                format:
                    "5 µs per thread, %d threads: pk_pool %.2f µs per job, concurrentPerform %.2f µs",
                n, poolMicros, gcdMicros))
    }
    pk_pool_destroy(pool)
}

/// Aggregate decode speed of `sequences` sessions stepped together (a server's continuous
/// batch): each session prefills its own random prompt, then `--generate` greedy steps of all
/// of them run as single DecodeBatch passes. Prints tokens per second summed over sessions.
func batchBenchmark(
    directory: String, sequences: Int, threads: Int?, activations: ActivationWidth
) throws {
    let model = try ModelArchitectures.load(directory: directory, threads: threads)
    let prompt = Int(option("--prompt", 128))
    let steps = Int(option("--generate", 64))
    var random = RandomSource(seed: 2)
    let sessions = try (0..<sequences).map { _ in
        try InferenceSession(
            model: model, maxContext: prompt + steps + 1, activationWidth: activations)
    }
    let batch = try DecodeBatch(model: model, maxSequences: sequences)
    for _ in 0...max(1, Int(option("--runs", 3))) {
        for session in sessions {
            session.reset()
            _ = try session.prefill(
                (0..<prompt).map { _ in 3 + Int(random.next() % UInt64(model.vocabularySize - 3)) })
        }
        let start = Date()
        let startCPU = processCPUSeconds()
        for _ in 0..<steps {
            let next = sessions.map { s in s.logits.indices.max { s.logits[$0] < s.logits[$1] }! }
            try batch.step(sessions, tokens: next)
        }
        let seconds = Date().timeIntervalSince(start)
        // CPU time a step: comparable with a server's turn log (pass_cpu_ms) on a busy host
        let cpu = (processCPUSeconds() - startCPU) / Double(steps)
        print(
            String(
                format: "batch %d: %d steps, %.2f tok/s in all, %.2f per sequence; %.0f ms a "
                    + "step, %.0f ms of CPU", sequences, steps, Double(steps * sequences) / seconds,
                Double(steps) / seconds, seconds / Double(steps) * 1000, cpu * 1000))
    }
}

/// The process's CPU time so far (every thread), seconds.
func processCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

let arguments = CommandLine.arguments
guard arguments.count > 1 else {
    print("usage: engine-bench <model-dir> [--prompt N] [--generate N] [--threads N] [--runs N]")
    exit(64)
}
let promptLength = Int(option("--prompt", 128))
let generateCount = Int(option("--generate", 64))
let runs = max(1, Int(option("--runs", 3)))
let bandwidth = option("--bandwidth-gbs", 31.4)
let threads = arguments.contains("--threads") ? Int(option("--threads", 1)) : nil

/// `--weights mapped|hugePages|resident`; nil when not given (the architecture's default).
func weightPlacement() throws -> WeightPlacement? {
    guard let i = arguments.firstIndex(of: "--weights") else { return nil }
    guard i + 1 < arguments.count, let placement = WeightPlacement(rawValue: arguments[i + 1])
    else {
        throw TraceError("--weights must be mapped, hugePages or resident")
    }
    return placement
}

/// RSS and the 2 MiB pages backing it (anonymous: a resident copy; file: a huge-page
/// mapping), from /proc/self (Linux).
func memoryLine() -> String {
    func field(_ file: String, _ key: String) -> Int {
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix(key) }
        return line.flatMap { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } } ?? 0
    }
    let mb = { (kb: Int) in String(format: "%.0f MB", Double(kb) / 1024) }
    return "RSS \(mb(field("/proc/self/status", "VmRSS:"))), AnonHugePages "
        + "\(mb(field("/proc/self/smaps_rollup", "AnonHugePages:"))), FilePmdMapped "
        + "\(mb(field("/proc/self/smaps_rollup", "FilePmdMapped:")))"
}

/// `--act-bits 8|16` (default 16): the activation width of every session below.
func activationWidth() throws -> ActivationWidth {
    guard let width = ActivationWidth(rawValue: Int(option("--act-bits", 16))) else {
        throw TraceError("--act-bits must be 8 or 16")
    }
    return width
}

do {
    let activations = try activationWidth()
    let placement = try weightPlacement()
    if arguments.contains("--dispatch") {
        dispatchBenchmark()
        exit(0)
    }
    if arguments.contains("--load-only") {
        for _ in 0..<3 {
            let t = Date()
            _ = try ModelArchitectures.load(
                directory: arguments[1], threads: threads, placement: placement)
            print(String(format: "load %.3f s", Date().timeIntervalSince(t)))
        }
        exit(0)
    }
    if let i = arguments.firstIndex(of: "--trace"), i + 1 < arguments.count,
        let o = arguments.firstIndex(of: "--out"), o + 1 < arguments.count
    {
        try traceLogits(
            directory: arguments[1], runsPath: arguments[i + 1], outPath: arguments[o + 1],
            bits: Int(option("--kv-bits", 32)), activations: activations)
        exit(0)
    }
    if arguments.contains("--compare-weights") {
        try placementComparison(
            directory: arguments[1], threads: threads, activations: activations)
        exit(0)
    }
    if arguments.contains("--verify") {
        try verifyCostBenchmark(
            directory: arguments[1], threads: threads, activations: activations)
        exit(0)
    }
    if arguments.contains("--batch") {
        try batchBenchmark(
            directory: arguments[1], sequences: Int(option("--batch", 4)), threads: threads,
            activations: activations)
        exit(0)
    }
    let loadStart = Date()
    let model = try ModelArchitectures.load(
        directory: arguments[1], threads: threads, placement: placement)
    let loadSeconds = Date().timeIntervalSince(loadStart)
    print("weights \(placement.map(\.rawValue) ?? "default"); after load: \(memoryLine())")
    let gb = Double(model.bytesPerToken) / 1e9
    print(
        String(
            format: "load %.3f s; %.3f GB of weights per token; ceiling %.1f tok/s at %.1f GB/s",
            loadSeconds, gb, bandwidth / gb, bandwidth))
    // --kv-bits 8|16|32 (default 32, as before: run and serve default to 16)
    guard let width = KVCacheWidth(rawValue: Int(option("--kv-bits", 32))) else {
        throw TraceError("--kv-bits must be 8, 16 or 32")
    }
    let session = try InferenceSession(
        model: model, maxContext: promptLength + generateCount + 1, cacheWidth: width,
        activationWidth: activations)
    var random = RandomSource(seed: 1)
    let prompt = (0..<promptLength).map { _ in
        3 + Int(random.next() % UInt64(model.vocabularySize - 3))
    }
    var prefill: [Double] = []
    var decode: [Double] = []
    // run 0 warms up (pages, caches) and is left out of the median; --no-warm-up skips it
    // (a 4,096-token prompt's prefill takes minutes on 2 cores)
    for run in (arguments.contains("--no-warm-up") ? 1 : 0)...runs {
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
                "median: prompt %.2f tok/s, generation %.2f tok/s (%.0f%% of %.1f tok/s), threads %d, act-bits %d",
            median(prefill), median(decode), 100 * median(decode) * gb / bandwidth,
            bandwidth / gb, session.threads, activations.rawValue))
    print("after the runs: \(memoryLine())")
} catch {
    print("error: \(error)")
    exit(1)
}
