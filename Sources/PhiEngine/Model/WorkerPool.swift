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

    /// y[rows] = W · x[cols]. `prep` is scratch of `pk_matvec_prep_floats(cols)` floats.
    func matvec(
        _ m: WeightMatrix, _ x: UnsafePointer<Float>, into y: UnsafeMutablePointer<Float>,
        prep: UnsafeMutablePointer<Float>
    ) {
        withUnsafePointer(to: m.raw) { matrix in
            pk_matvec_prepare(isa, matrix, x, prep)
            var job = pk_matvec_job(m: matrix, x: x, prep: prep, y: y, isa: isa, chunk_rows: 0)
            let chunks = pk_matvec_chunks(&job)
            pk_pool_run(pool, pk_matvec_task, &job, chunks)
        }
    }

    /// y[tokens][rows] = x[tokens][cols] · Wᵀ, weight tiles of `tileRows` rows through sgemm.
    /// `tiles` holds `size` tiles of `tileRows * cols` floats, one per thread, laid out
    /// `tileRows * cols` apart.
    func matmul(
        _ m: WeightMatrix, _ x: UnsafePointer<Float>, tokens: Int,
        into y: UnsafeMutablePointer<Float>, tiles: UnsafeMutablePointer<Float>, tileRows: Int
    ) {
        withUnsafePointer(to: m.raw) { matrix in
            var job = pk_matmul_job(
                m: matrix, x: x, y: y, tokens: tokens, tiles: tiles, tile_rows: tileRows,
                gemm: Blas.gemmFunction, isa: isa)
            pk_pool_run(pool, pk_matmul_task, &job, pk_matmul_chunks(&job))
        }
    }

    func attention(_ job: inout pk_attention_job) {
        job.isa = isa
        pk_pool_run(pool, pk_attention_task, &job, pk_attention_chunks(&job))
    }
}
