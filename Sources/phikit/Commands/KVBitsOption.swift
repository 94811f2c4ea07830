import PhiEngine

/// `--kv-bits 8|16|32`, which run, chat and serve share: the width of the cached keys and
/// values (KVCacheWidth), 16 unless told.
enum KVBitsOption {
    static let help = """
          --kv-bits <8|16|32>      width of the cached keys and values: 16 halves the
                                   cache's memory and the reads of long contexts, 8 (int8
                                   with a scale per 32 values) nearly halves it again
                                   (default: 16); 32 is the exact mode: every logit as
                                   the weights give it (16 moves a greedy token only at a
                                   near-tie, on real text KL ~1e-6 from float64;
                                   scripts/bench/README.md)
        """

    /// Reads the option; call before `finish()` like every option.
    static func read(_ args: inout ArgumentReader) throws -> KVCacheWidth {
        let bits = try args.option("--kv-bits", as: Int.self)
        guard let width = KVCacheWidth(rawValue: bits ?? KVCacheWidth.defaultForRun.rawValue)
        else { throw UsageError("--kv-bits must be 8, 16 or 32") }
        return width
    }
}
