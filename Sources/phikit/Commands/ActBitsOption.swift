import PhiEngine

/// `--act-bits 8|16`, which run, chat, serve share: the width of the activations in the
/// matrix products (ActivationWidth), 16 unless told.
enum ActBitsOption {
    static let help = """
          --act-bits <8|16>        activations in the matrix products: 16 (default) is the
                                   exact path; 8 (int8 per 8 or 16 values, AVX-512 VNNI)
                                   computes 4-bit g32/g64 matrices 1.5-1.8x faster
                                   (prompts, batches, speculative checks; other matrices
                                   stay 16-bit) at a measured cost: mean KL from float64
                                   8.2e-4 and top-1 agreement 100% on SmolLM2-135M-Instruct
                                   text, 1.0-1.1e-3 and 95-97% on random Phi-shaped models
                                   (16-bit: 1e-7, 100%)
        """

    /// Reads the option; call before `finish()` like every option.
    static func read(_ args: inout ArgumentReader) throws -> ActivationWidth {
        let bits = try args.option("--act-bits", as: Int.self)
        guard let width = ActivationWidth(rawValue: bits ?? 16) else {
            throw UsageError("--act-bits must be 8 or 16")
        }
        if width == .int8 && !ActivationWidth.int8HasKernel {
            throw UsageError(
                "--act-bits 8 needs a CPU with AVX-512 VNNI; this one lacks it",
                hint: "leave out --act-bits: the 16-bit path is the exact one")
        }
        return width
    }
}
