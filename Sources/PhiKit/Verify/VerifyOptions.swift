import Foundation
import PhiFormats

/// What `phikit verify` was asked to do.
public struct VerifyOptions: Sendable, CancellableOptions {
    /// A registry alias, a Hub id in the cache, or a model directory.
    public var model: String
    /// Never ask the Hub for a snapshot's file list (also when `HF_HUB_OFFLINE` is set).
    public var offline = false
    /// Also load the model and generate a few tokens greedily.
    public var smoke = false
    /// Tokens the smoke test generates when the registry has no fingerprint for the model.
    public var smokeTokenCount = 16
    /// Threads that hash and scan files (and run the smoke test).
    public var threads = ProcessInfo.processInfo.activeProcessorCount
    /// Where `HF_*`, `PHIKIT_*` and `HOME` are read from (tests pass their own).
    public var environment: [String: String]
    /// `--target`: also check what these programs need to load the model.
    public var targets: [LoaderTarget] = []
    /// `--fix`: repair what a target check can repair unambiguously (an end-of-turn token
    /// missing from generation_config.json's eos_token_id).
    public var fix = false
    /// Stops the check between chunks, the Hub listing and the smoke generation (Ctrl-C).
    public var cancellation: CancellationToken? = nil

    /// Checks the files only, on every core; set `smoke`, `targets`, … on the value.
    public init(
        model: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.model = model
        self.environment = environment
    }
}

/// What `verify` reports while it works, on the calling thread.
public enum VerifyProgress: Sendable {
    /// Asking the Hub for the snapshot's file list.
    case fetchingListing(repoID: String)
    /// Hashing and scanning files, about ten times a second: work done of the total, in bytes
    /// (a weight file counts twice, once hashed and once scanned, though it is read once).
    case reading(done: Int, total: Int)
    case checking(VerifyLayer)
}

/// What one layer's check found.
struct LayerOutcome {
    let layer: VerifyLayer
    var findings: [VerifyFinding] = []
    /// One line for the report (what was checked against what, or why it was skipped).
    var summary: String = ""
    var skipped = false

    init(_ layer: VerifyLayer) { self.layer = layer }

    var result: LayerResult {
        let status: LayerResult.Status =
            skipped
            ? .skipped
            : hasErrors ? .failed : findings.isEmpty ? .passed : .warnings
        return LayerResult(layer: layer, status: status, summary: summary)
    }

    var hasErrors: Bool { findings.contains { $0.severity == .error } }

    mutating func error(
        _ code: String, file: String? = nil, tensor: String? = nil, _ message: String,
        hint: String? = nil
    ) {
        findings.append(
            VerifyFinding(layer, .error, code, file: file, tensor: tensor, message, hint: hint))
    }

    mutating func warning(
        _ code: String, file: String? = nil, tensor: String? = nil, _ message: String,
        hint: String? = nil
    ) {
        findings.append(
            VerifyFinding(layer, .warning, code, file: file, tensor: tensor, message, hint: hint))
    }

    /// A check that could not finish: its error, in the user's words where it has them.
    mutating func error(_ code: String, file: String? = nil, failure: any Error) {
        error(code, file: file, (failure as? any UserFacingError)?.message ?? "\(failure)")
    }

    /// Marks the layer as not run, saying why.
    static func skipped(_ layer: VerifyLayer, _ why: String) -> LayerOutcome {
        var outcome = LayerOutcome(layer)
        outcome.skipped = true
        outcome.summary = why
        return outcome
    }
}
