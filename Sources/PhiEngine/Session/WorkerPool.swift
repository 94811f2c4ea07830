import CKernels

/// The session's threads (a `pk_pool`: the caller plus `size - 1` workers that spin briefly
/// between jobs, then sleep) and the three kinds of parallel work of a forward pass. Each
/// call fills a job struct on the stack and returns when every thread is done; nothing is
/// allocated.
final class WorkerPool {
    private let pool: OpaquePointer
    let size: Int
    /// Kernel level (PK_MV_ISA_*) every job runs at.
    let isa: Int32

    init(threads: Int, isa: Int32) throws(SessionError) {
        guard let pool = pk_pool_create(Int32(threads)) else {
            throw .outOfMemory(bytes: threads * 8 << 20)  // thread stacks
        }
        self.pool = pool
        size = Int(pk_pool_size(pool))
        self.isa = isa
    }

    deinit { pk_pool_destroy(pool) }

    /// y[t] = W · x[t] for t < tokens: x (tokens, cols) and y (tokens, rows) packed. Each
    /// input is readied (16-bit x, group sums) into `prep` (tokens × prepStride floats),
    /// then every chunk of rows is read once for all tokens.
    func matvec(
        _ m: WeightMatrix, _ x: UnsafePointer<Float>, tokens: Int,
        into y: UnsafeMutablePointer<Float>, prep: UnsafeMutablePointer<Float>, prepStride: Int
    ) {
        withUnsafePointer(to: m.raw) { matrix in
            var job = pk_matvec_job(
                m: matrix, tokens: tokens, x: x, ldx: m.cols, prep: prep, prep_stride: prepStride,
                y: y, ldy: m.rows, isa: isa, chunk_rows: 0)
            pk_pool_run(pool, pk_prepare_task, &job, pk_prepare_chunks(&job))
            let chunks = pk_matvec_chunks(&job)
            pk_pool_run(pool, pk_matvec_task, &job, chunks)
        }
    }

    /// y[tokens][rows] = x[tokens][cols] · Wᵀ for a float32 matrix, through OpenBLAS sgemm
    /// on blocks of rows (one single-threaded sgemm per chunk, on whichever thread takes it).
    func matmul(
        _ m: WeightMatrix, _ x: UnsafePointer<Float>, tokens: Int,
        into y: UnsafeMutablePointer<Float>
    ) {
        withUnsafePointer(to: m.raw) { matrix in
            var job = pk_matmul_job(
                m: matrix, x: x, y: y, tokens: tokens, chunk_rows: 0, gemm: Blas.gemmFunction)
            let chunks = pk_matmul_chunks(&job)
            pk_pool_run(pool, pk_matmul_task, &job, chunks)
        }
    }

    func attention(_ job: inout pk_attention_job) {
        job.isa = isa
        pk_pool_run(pool, pk_attention_task, &job, pk_attention_chunks(&job))
    }
}
