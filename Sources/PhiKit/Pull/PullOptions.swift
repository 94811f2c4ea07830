import Foundation
import PhiFormats
import PhiHub

/// What `phikit pull` was asked to do.
public struct PullOptions: Sendable, CancellableOptions {
    /// A registry alias (`phi-4-mini`), a Hub id (`org/name`, `org/name@rev`, `hf://org/name`).
    public var model: String
    /// Branch, tag or commit; nil = the `@rev` in `model`, else the registry's pin, else main.
    public var revision: String? = nil
    /// Globs of files to fetch; empty = mlx-lm's defaults (`FilePatterns.mlxDefaults`).
    public var include: [String] = []
    public var exclude: [String] = []
    /// `--token`; nil = `HF_TOKEN`, then the token file.
    public var token: String? = nil
    /// Parallel transfers.
    public var jobs = 8
    /// Plan only: say what would be fetched, fetch nothing.
    public var dryRun = false
    /// Where `HF_*`, `PHIKIT_*` and `HOME` are read from (tests pass their own).
    public var environment: [String: String]
    /// Stops the transfers (Ctrl-C); their partial files stay and the next pull resumes them.
    public var cancellation: CancellationToken? = nil

    public init(
        model: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.model = model
        self.environment = environment
    }

    var patterns: FilePatterns {
        FilePatterns(
            include: include.isEmpty ? FilePatterns.mlxDefaults.include : include,
            exclude: exclude)
    }
}

/// Files and bytes done, transfers in flight (PhiHub's type, named here for PhiKit's users).
public typealias PullTransferProgress = SnapshotProgress

/// What `pull` reports while it works, on the calling thread.
public enum PullProgress: Sendable {
    /// Asking the Hub which commit the revision is (or reading the cache, offline).
    case resolving(repoID: String, revision: String)
    /// The plan is known: files, bytes, what the cache already has.
    case planned(PullPlan)
    /// About ten times a second while files transfer.
    case downloading(PullTransferProgress)
}
