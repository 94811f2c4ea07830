import CKernels

/// How wide the activations are in the matrix products (`--act-bits`).
///
/// `.int16` (the default and the reference): x rounded to 16 bits per group, far below the
/// weights' own quantization. `.int8` (opt-in): x rounded to int8 per block of 8 values
/// (rows with groups of 32) or 16 (groups of 64), finer than llama.cpp's 32 at no cost in
/// the kernel, for 4-bit rows with groups of 32 or 64, multiplied with twice the
/// products per instruction (AVX-512 VNNI); other matrices keep 16 bits. Within a mode
/// every path computes a token the same way (alone, in a block, in a batch), so prefix reuse
/// stays exact; across modes results differ (scripts/bench/README.md gives the fidelity).
public enum ActivationWidth: Int, Sendable, CaseIterable {
    case int16 = 16
    case int8 = 8
}

extension ActivationWidth {
    /// Whether this CPU runs the 8-bit kernel at speed (AVX-512 with VNNI); elsewhere `.int8`
    /// computes the same numbers lane by lane in C, far slower than `.int16`.
    public static var int8HasKernel: Bool { pk_matvec_best_isa() == Int32(PK_MV_ISA_AVX512) }
}
