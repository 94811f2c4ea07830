/// `phikit pull MODEL`: download a model snapshot into the Hugging Face cache.
/// Parsing is final; the download itself is not written yet.
struct PullCommand: Command {
    static let name = "pull"
    static let summary = "Download a model from the Hugging Face Hub into the local cache"
    static let usage = """
        phikit pull <model> [--revision <rev>] [--include <glob>]... [--exclude <glob>]...
                    [--token <token>] [--dry-run] [--json]
        """
    static let help = """
        Downloads <model> into the Hugging Face cache (HF_HUB_CACHE, else HF_HOME/hub, else
        ~/.cache/huggingface/hub), where huggingface_hub and mlx-lm find it too. Interrupted
        downloads resume. On success prints the snapshot directory.

        arguments:
          <model>              registry alias (phi-3.5-mini) or Hub id (org/name[@revision])

        options:
          --revision <rev>     branch, tag or commit (default: main, or the @revision in <model>)
          --include <glob>     download only matching files; repeatable
          --exclude <glob>     skip matching files; repeatable
          --token <token>      Hub token (default: HF_TOKEN, then the token file in HF_HOME)
          --dry-run            list what would be downloaded, download nothing
          --json               print the result as JSON
        """

    var model: String
    var revision: String?
    var include: [String]
    var exclude: [String]
    var token: String?
    var dryRun: Bool
    var json: Bool

    init(_ args: inout ArgumentReader) throws {
        revision = try args.option("--revision")
        include = try args.options("--include")
        exclude = try args.options("--exclude")
        token = try args.option("--token")
        dryRun = args.flag("--dry-run")
        json = args.flag("--json")
        model = try args.positional("model")
        try args.finish()
    }

    static var isImplemented: Bool { false }
    func run() throws { throw NotImplementedError(command: Self.name) }
}
