import Foundation
import PhiFormats
import PhiKit

/// `phikit pull MODEL`: download a model snapshot into the Hugging Face cache.
struct PullCommand: Command {
    static let name = "pull"
    static let summary = "Download a model from the Hugging Face Hub into the local cache"
    static let usage = """
        phikit pull <model> [--revision <rev>] [--include <glob>]... [--exclude <glob>]...
                    [--token <token>] [--jobs <n>] [--dry-run] [--json]
        """
    static let help = """
        Downloads <model> into the Hugging Face cache (HF_HUB_CACHE, else HF_HOME/hub, else
        ~/.cache/huggingface/hub), where huggingface_hub and mlx-lm find it too. Every file is
        checked against the Hub's sha256 (git sha1 for small files) while it streams; a file
        that does not match is discarded. Interrupted downloads (Ctrl-C, a dropped connection,
        kill -9) resume from the byte they reached. A second pull of the same revision
        downloads nothing. Before downloading it shows the plan and refuses if the disk is
        too small. On success prints the snapshot directory.

        arguments:
          <model>              registry alias (phi-3.5-mini) or Hub id (org/name[@revision])

        options:
          --revision <rev>     branch, tag or commit (default: the @revision in <model>, the
                               registry's pinned commit, or main)
          --include <glob>     download only matching files; repeatable (default: what mlx-lm
                               loads: *.json, model*.safetensors, *.py, tokenizer.model,
                               *.tiktoken, *.txt, *.jsonl, *.jinja)
          --exclude <glob>     skip matching files; repeatable
          --token <token>      Hub token (default: HF_TOKEN, then HF_TOKEN_PATH or the token
                               file in HF_HOME); never printed
          -j, --jobs <n>       parallel downloads (default 8)
          --dry-run            show what would be downloaded, download nothing
          --json               print the result (or, with --dry-run, the plan) as JSON

        environment: HF_ENDPOINT (a mirror), HF_TOKEN, HF_HUB_OFFLINE=1 (use the cache only:
          succeeds if the snapshot is complete, else exit 66), HF_HUB_DOWNLOAD_TIMEOUT
          (seconds without data before a retry, default 30)
        exit codes: 64 bad options, 65 a file did not match its announced hash, 66 model,
          revision or file not found (or not cached, offline), 69 network or HTTP error
          (gated, rate-limited, server error), 74 disk full or not writable, 130 interrupted
        """

    var options: PullOptions
    var json: Bool

    init(_ args: inout ArgumentReader) throws {
        // The flags go straight into the options; MODEL, a positional, is read after them.
        options = PullOptions(model: "")
        options.revision = try args.option("--revision")
        options.include = try args.options("--include")
        options.exclude = try args.options("--exclude")
        options.token = try args.option("--token")
        options.jobs = try args.option("-j", "--jobs", as: Int.self) ?? options.jobs
        options.dryRun = args.flag("--dry-run")
        json = args.flag("--json")
        options.model = try args.positional("model")
        try args.finish()
        if !(1...64).contains(options.jobs) {
            throw UsageError("--jobs must be between 1 and 64 (got \(options.jobs))")
        }
    }

    func run() throws {
        let view = PullProgressView()
        let result: PullResult
        do {
            result = try InterruptibleJob.run(options) { options in
                try PhiKit.pull(options) { view.show($0) }
            }
        } catch {
            view.clear()
            throw error
        }
        view.finish(result)
        if json {
            try StandardOutput.print(try Format.json(result))
        } else if result.dryRun {
            try StandardOutput.print(Self.dryRunText(result))
        } else {
            try StandardOutput.print(result.snapshotDirectory)
        }
    }

    /// hf's dry-run format: `[dry-run] Will download 3 files (out of 7) totalling 2.18 GB.`,
    /// then one line per file.
    static func dryRunText(_ result: PullResult) -> String {
        if result.bundled {
            return "[dry-run] \(result.model) is bundled with phikit: nothing to download."
        }
        let fetch = result.files.filter { $0.action != "cached" && $0.action != "linked" }
        let bytes = fetch.reduce(0) { $0 + $1.size - $1.resumedFrom }
        let rows = result.files.map { file in
            [file.path, Format.bytes(file.size), file.action]
        }
        return "[dry-run] Will download \(fetch.count) files (out of \(result.files.count)) "
            + "totalling \(Format.bytes(bytes)).\n"
            + Format.table(header: ["FILE", "SIZE", "ACTION"], rows: rows, rightAligned: [1])
    }
}
