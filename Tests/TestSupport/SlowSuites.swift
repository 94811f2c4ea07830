import Foundation
import Testing

extension Tag {
    /// Suites that take tens of seconds in a debug build on 2 cores (whole-corpus tokenizer
    /// goldens, every convert golden). `swift test` runs them; `make test-fast` does not.
    @Tag public static var slow: Self
}

extension Trait where Self == ConditionTrait {
    /// Skips a `.slow` suite when `PHIKIT_SKIP_SLOW=1` (what `make test-fast` sets): swift
    /// test's `--skip` matches test names, not tags. The run reports the suite as skipped.
    public static var skippedWhenFast: Self {
        .disabled(
            if: ProcessInfo.processInfo.environment["PHIKIT_SKIP_SLOW"] == "1",
            "a slow suite, and PHIKIT_SKIP_SLOW=1")
    }
}
