import PhiKit

/// `--no-speculative` and `--draft-max <n>`, which run, chat and serve share: speculative
/// decoding by prompt lookup (`Speculation`), which never changes an answer, only its speed.
enum SpeculationOption {
    /// The options' help; `default` is what the command uses when neither is given.
    static func help(default: Speculation) -> String {
        let state = `default`.isOn ? "\(`default`.maxDraft); drafts only where it pays" : "0, off"
        return """
              --draft-max <n>          speculative decoding: verify up to n tokens copied from
                                       earlier in the context per forward pass (edits, quotes,
                                       extraction); the answer is the same tokens, only faster
                                       when the text repeats (default: \(state))
              --no-speculative         no speculative decoding (as --draft-max 0)
            """
    }

    /// Reads the options; call before `finish()` like every option.
    static func read(
        _ args: inout ArgumentReader, default: Speculation = .default
    ) throws -> Speculation {
        let off = args.flag("--no-speculative")
        let maxDraft = try args.option("--draft-max", as: Int.self)
        try UsageError.check("--draft-max", maxDraft, in: 0...Speculation.maxDraftLimit)
        if off && (maxDraft ?? 0) > 0 {
            throw UsageError("--no-speculative and --draft-max \(maxDraft!) contradict each other")
        }
        if off { return .off }
        return maxDraft.map(Speculation.init(maxDraft:)) ?? `default`
    }
}
