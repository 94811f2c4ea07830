import CKernels
import COpenBLAS

/// The only Swift file that imports OpenBLAS. Row-major fp32 GEMM; the thread count is pinned
/// by the caller (`Blas.setThreads`) so OpenBLAS does not oversubscribe our own worker threads.
public enum Blas {
    public static func setThreads(_ count: Int) { openblas_set_num_threads(Int32(count)) }

    /// c[m×n] = a[m×k] · b[n×k]ᵀ  (weights stored `[out, in]`, as in safetensors).
    public static func matmulTransposedB(
        _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ c: UnsafeMutablePointer<Float>,
        m: Int, n: Int, k: Int
    ) {
        cblas_sgemm(
            CblasRowMajor, CblasNoTrans, CblasTrans, Int32(m), Int32(n), Int32(k),
            1, a, Int32(k), b, Int32(k), 0, c, Int32(n))
    }

    /// The same product with a row stride for c, as the C function pointer the prompt
    /// kernels (`pk_matmul_job`) call from the worker threads: each worker multiplies its own
    /// weight tile, so OpenBLAS must run single-threaded (`setThreads(1)`) meanwhile.
    static let gemmFunction: pk_gemm_fn = { a, b, c, m, n, k, ldc in
        cblas_sgemm(
            CblasRowMajor, CblasNoTrans, CblasTrans, Int32(m), Int32(n), Int32(k),
            1, a, Int32(k), b, Int32(k), 0, c, Int32(ldc))
    }
}
