import PhiEngine
import PhiFormats
import PhiKit

/// How run, chat and serve load MODEL: `--threads`, `--adapter-path` and `--act-bits`, read
/// alike and handed to one loader (a Hub model missing from the cache is pulled first).
struct ModelLoadFlags {
    var threads: Int?
    var adapterPath: String?
    var activationWidth: ActivationWidth
    /// serve's `--adapter NAME=DIR` adapters, which requests select by name (serve reads them).
    var adapters: [NamedAdapter] = []
    /// How a dense model's weights are held; nil: mapped in 2 MiB pages (serve sets
    /// `.resident`).
    var placement: WeightPlacement?

    /// Reads the options; call before `finish()` like every option.
    init(_ args: inout ArgumentReader) throws {
        threads = try args.option("--threads", as: Int.self)
        adapterPath = try AdapterOption.read(&args)
        activationWidth = try ActBitsOption.read(&args)
    }

    /// After `finish()`, so that an unknown option is reported first: a thread count the
    /// worker pool can run.
    func check() throws(UsageError) {
        try UsageError.check("--threads", threads, in: 1...1024)
    }

    /// `model` loaded with these settings (see `PullProgressView.loadModel`).
    func load(_ model: String) throws -> ModelContainer {
        try PullProgressView.loadModel(
            model, threads: threads, activationWidth: activationWidth, adapterPath: adapterPath,
            adapters: adapters, placement: placement)
    }
}
