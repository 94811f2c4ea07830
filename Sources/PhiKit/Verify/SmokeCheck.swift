import Foundation
import PhiEngine
import PhiFormats

/// Layer 6 (`--smoke`): loads the model the way `phikit run` does and generates a few tokens
/// greedily from the registry's default prompt (through the chat template when there is one).
/// It must produce tokens, and, when the registry stores a fingerprint (`smokeTokens`), start
/// with exactly those ids: greedy decoding is deterministic, so a different start means the
/// weights or the engine compute something else than when the fingerprint was taken.
struct SmokeCheck {
    let target: VerifyTarget
    let options: VerifyOptions
    private(set) var outcome = LayerOutcome(.smoke)

    /// The prompt when the registry has none for this model.
    static let fallbackPrompt = "Once upon a time"

    init(target: VerifyTarget, options: VerifyOptions) {
        self.target = target
        self.options = options
    }

    /// Throws only when interrupted; a model that does not load or run is a finding.
    mutating func run() throws -> (LayerOutcome, SmokeResult?) {
        let start = DispatchTime.now().uptimeNanoseconds
        let prompt = target.entry?.defaultPrompt ?? Self.fallbackPrompt
        let expected = target.entry?.smokeTokens
        let located = LocalModel(
            directory: target.directory, name: target.name, hubRepo: target.snapshot?.repoID,
            revision: target.snapshot?.commit, entry: target.entry)
        let generated: RunOutcome
        do {
            let container = try ModelContainer(located, threads: options.threads)
            generated = try container.generate(
                .text(prompt),
                parameters: .greedy(maxTokens: expected?.count ?? options.smokeTokenCount),
                cancel: options.cancellation
            ) { _ in .more }
        } catch let error as any UserFacingError {
            outcome.error("smoke_failed", error.message, hint: error.hint)
            outcome.summary = "the model does not load or run"
            return (outcome, nil)
        }
        try options.cancellation.check()
        let result = SmokeResult(
            prompt: prompt, tokens: generated.tokens, text: generated.text,
            stopReason: generated.stopReason, expectedTokens: expected,
            seconds: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        judge(result)
        return (outcome, result)
    }

    private mutating func judge(_ result: SmokeResult) {
        let count = "\(result.tokens.count) tokens"
        guard !result.tokens.isEmpty else {
            outcome.error(
                "smoke_no_tokens", "greedy generation stopped before its first token",
                hint: "the model ends every reply at once: its weights or stop tokens are wrong")
            outcome.summary = "no tokens generated"
            return
        }
        guard let expected = result.expectedTokens else {
            outcome.summary = "greedy generation of \(count) (no fingerprint in the registry)"
            return
        }
        if result.tokens != expected {
            let at =
                zip(result.tokens, expected).enumerated().first { $0.element.0 != $0.element.1 }?
                .offset ?? min(result.tokens.count, expected.count)
            outcome.error(
                "smoke_mismatch", file: target.entry?.source,
                "greedy generation differs from the registry's smokeTokens at token \(at): "
                    + "generated \(result.tokens), expected \(expected)",
                hint: "the weights are not the ones the fingerprint was taken from")
            outcome.summary = "\(count), not the registry's fingerprint"
        } else {
            outcome.summary = "greedy generation of \(count) matches the registry's fingerprint"
        }
    }
}
