import CKernels

/// What this binary was built from and which kernels it runs here (`phikit version`).
public enum BuildInfo {
    /// The git commit the Makefile embedded, or "unknown" (a plain `swift build`).
    public static var commit: String { String(cString: pk_build_commit()) }

    /// The matvec kernel level every forward pass uses on this CPU (the best it supports).
    public static var kernelPath: String {
        switch Int(pk_matvec_best_isa()) {
        case Int(PK_MV_ISA_AVX512): "AVX-512 VNNI"
        case Int(PK_MV_ISA_AVX2): "AVX2"
        default: "portable"
        }
    }
}
