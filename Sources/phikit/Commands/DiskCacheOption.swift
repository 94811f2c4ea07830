import PhiEngine
import PhiKit

/// `--cache-dir`, `--cache-size`, `--cache-min-tokens`, `--no-disk-cache`, which chat and serve
/// share: where computed prompts' KV caches are kept on disk (DiskPrefixCache).
struct DiskCacheOption {
    static let help = """
          --cache-dir <dir>        where prompts' KV caches are kept on disk, shared safely
                                   by processes (default: $PHIKIT_HOME/kv-cache)
          --cache-size <mb>        disk the cache may take; least recently used prompts
                                   go first (default: 8192)
          --cache-min-tokens <n>   shortest prompt written to disk (default: 256)
          --no-disk-cache          keep prompts' KV caches in memory only
        """

    var directory: String?
    var megabytes: Int
    var minTokens: Int

    /// Reads the options; call before `finish()` like every option.
    init(_ args: inout ArgumentReader) throws {
        let directory = try args.option("--cache-dir") ?? ModelStore.root() + "/kv-cache"
        self.directory = args.flag("--no-disk-cache") ? nil : directory
        megabytes = try args.option("--cache-size", as: Int.self) ?? 8192
        minTokens = try args.option("--cache-min-tokens", as: Int.self) ?? 256
        guard megabytes >= 1 else { throw UsageError("--cache-size must be at least 1 (MB)") }
        guard minTokens >= 1 else { throw UsageError("--cache-min-tokens must be at least 1") }
    }

    /// The disk cache for `container`'s model files and `cacheWidth` (and its default
    /// adapter), or nil with --no-disk-cache. Refused files and failed writes print warnings;
    /// a folder that cannot be made (a read-only home) leaves the command running without it,
    /// with a warning.
    func open(_ container: ModelContainer, cacheWidth: KVCacheWidth) -> DiskPrefixCache? {
        open(container, cacheWidth: cacheWidth, adapterDirectory: container.adapterDirectory)
    }

    /// One disk cache for each adapter requests select (`serve --adapter`), by index: under
    /// a fingerprint of its own, so a prompt cached with one adapter is never restored under
    /// another.
    func openPerAdapter(_ container: ModelContainer, cacheWidth: KVCacheWidth) -> [Int: DiskPrefixCache] {
        var caches: [Int: DiskPrefixCache] = [:]
        for (i, adapter) in container.adapters.enumerated() where i != container.defaultAdapter {
            caches[i] = open(container, cacheWidth: cacheWidth, adapterDirectory: adapter.directory)
        }
        return caches
    }

    private func open(
        _ container: ModelContainer, cacheWidth: KVCacheWidth, adapterDirectory: String?
    ) -> DiskPrefixCache? {
        guard let directory else { return nil }
        let model = container.model
        do {
            return try DiskPrefixCache(
                directory: directory, limitBytes: megabytes << 20,
                fingerprint: ModelFingerprint(
                    directory: model.directory, modelType: model.config.modelType,
                    cacheWidth: cacheWidth, activationWidth: container.activationWidth,
                    adapterDirectory: adapterDirectory),
                minTokens: minTokens, warn: { Diagnostics.warning($0) })
        } catch {
            Diagnostics.warning("no disk cache: \(error.message)")
            return nil
        }
    }
}
