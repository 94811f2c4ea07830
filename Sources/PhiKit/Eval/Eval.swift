import Foundation
import PhiEngine
import PhiFormats

/// `phikit eval`: what a quantization costs. Every model (and the reference) scores the same
/// tokens — the text tokenized once, by the reference's tokenizer (each candidate's must
/// agree) — cut into windows of `context` tokens, each window from an empty cache; within a
/// window every token but the first is predicted from the ones before it.
///
/// The models run side by side a block at a time (`InferenceSession.verify`: one forward pass
/// per block, the logits of every position), so the reference's logits are compared with each
/// candidate's while they are in memory: no logits file (llama-perplexity's `--kl-divergence`
/// saves the reference's, tens of GB for a 200k vocabulary). Evaluation runs at the prefill
/// rate of each model.
public func evaluate(
    _ options: EvalOptions, progress: (EvalProgress) -> Void = { _ in }
) throws -> EvalReport {
    guard !options.models.isEmpty else { throw EvalError.noModels }
    let clock = ContinuousClock.now
    func elapsed() -> Double {
        let d = ContinuousClock.now - clock
        return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }
    var names = options.models
    var referenceIndex: Int?
    let exact = options.reference == .exact
    if case .model(let reference) = options.reference {
        if let i = names.firstIndex(of: reference) {
            referenceIndex = i
        } else {
            names.insert(reference, at: 0)
            referenceIndex = 0
        }
    }
    let containers = try names.map {
        try ModelContainer.load($0, environment: options.environment)
    }
    let first = referenceIndex.map { containers[$0] } ?? containers[0]
    let maximum = containers.map(\.model.maxPositions).min() ?? 2
    guard options.context >= 2, options.context <= maximum else {
        throw EvalError.badContext(options.context, maximum: maximum)
    }
    let tokens = try first.tokenizer.encode(options.text)
    guard tokens.count >= 2 else { throw EvalError.textTooShort(tokens: tokens.count) }
    for (name, c) in zip(names, containers) where c !== first {
        guard try c.tokenizer.encode(options.text) == tokens else {
            throw EvalError.differentTokenization(model: name, reference: first.location.name)
        }
        guard c.model.vocabularySize == first.model.vocabularySize else {
            throw EvalError.differentVocabulary(
                model: name, size: c.model.vocabularySize, reference: first.location.name,
                referenceSize: first.model.vocabularySize)
        }
    }

    let exactModels = try exact ? containers.map { try ExactPhi3(directory: $0.location.directory) } : []
    let sessions = try containers.map {
        try $0.makeSession(maxContext: options.context, cacheWidth: options.cacheWidth)
    }
    let block = sessions.map(\.maxVerifyTokens).min() ?? 1
    let threads = ProcessInfo.processInfo.activeProcessorCount  // the engine's pool's default
    let windows = stride(from: 0, to: tokens.count - 1, by: options.context).map {
        Array(tokens[$0..<min($0 + options.context, tokens.count)])
    }.filter { $0.count >= 2 }
    let total = windows.reduce(0) { $0 + $1.count - 1 }
    var scores = [EvalAccumulator](repeating: EvalAccumulator(), count: containers.count)
    var reference = ReferenceDistribution()
    var done = 0
    progress(EvalProgress(positionsDone: 0, positionCount: total, elapsed: 0))
    // The scoring rate is timed from here: loading, tokenizing and allocating are not scoring
    // (run's prompt rate leaves them out too).
    let scoringStart = elapsed()
    for window in windows {
        for s in sessions { s.reset() }
        let fed = window.count - 1  // the last token is only a target
        // float64 logits of the whole window, per model (n × vocab), for --reference exact
        let exactLogits = try exactModels.map { try $0.logits(Array(window[0..<fed])) }
        var start = 0
        while start < fed {
            try options.cancellation.check()
            let chunk = Array(window[start..<min(start + block, fed)])
            let rows = try sessions.map { try $0.verify(chunk) }
            let lse = EvalAccumulator.logSumExps(of: rows, threads: threads)
            for j in 0..<chunk.count {
                let target = window[start + j + 1]
                if exact {
                    for m in containers.indices {
                        let vocab = rows[m][j].count
                        let position = start + j
                        reference.load(exactLogits[m][(position * vocab)..<((position + 1) * vocab)])
                        scores[m].add(rows[m][j], target: target, logSumExp: lse[m][j], against: reference)
                    }
                    continue
                }
                if let r = referenceIndex { reference.load(rows[r][j], logSumExp: lse[r][j]) }
                for m in containers.indices {
                    if referenceIndex == nil || m == referenceIndex {
                        scores[m].add(rows[m][j], target: target, logSumExp: lse[m][j])
                    } else {
                        scores[m].add(rows[m][j], target: target, logSumExp: lse[m][j], against: reference)
                    }
                }
            }
            start += chunk.count
            done += chunk.count
            progress(EvalProgress(positionsDone: done, positionCount: total, elapsed: elapsed()))
        }
    }

    let results = zip(names, containers).enumerated().map { m, pair in
        let (name, c) = pair
        let s = scores[m]
        return EvalResult(
            model: name, directory: c.location.directory, isReference: m == referenceIndex,
            perplexity: s.perplexity, meanKL: s.meanKL, p99KL: s.p99KL,
            topOneAgreement: s.topOneAgreement,
            meanAbsoluteLogitDifference: s.meanAbsoluteLogitDifference,
            sizeOnDisk: ModelFootprint.weightFileBytes(c.location.directory),
            memoryAtContext: ModelFootprint.memoryBytes(
                c.location.directory, config: c.model.config, context: options.context))
    }
    let seconds = elapsed()
    return EvalReport(
        tokens: tokens.count, positions: total, context: options.context, windows: windows.count,
        seconds: seconds,
        positionsPerSecond: seconds > scoringStart ? Double(total) / (seconds - scoringStart) : 0,
        results: results)
}
