import CKernels
import Synchronization

/// The compute threads (a `pk_pool`: the caller plus `size - 1` workers that spin briefly
/// between jobs, then sleep) and the kinds of parallel work of a forward pass. Each
/// call fills a job struct on the stack and returns when every thread is done; nothing is
/// allocated.
///
/// One pool serves the whole process (`shared`): sessions of a chat and the requests of a
/// server take turns on it, one forward pass at a time (`exclusively`), instead of each
/// starting threads of its own and fighting over the cores.
public final class WorkerPool: @unchecked Sendable {  // jobs run only inside `exclusively`
    private let pool: OpaquePointer
    /// Threads a job runs on, the caller's included.
    public let size: Int
    /// Kernel level (PK_MV_ISA_*) every job runs at.
    let isa: Int32
    /// Activation width of the forward pass holding the pool (`exclusively`): pool-wide
    /// because sessions of either width may share the process's pool.
    private var activationBits: Int32 = 16
    private let turn = Mutex<Void>(())

    /// A pool of its own (tests pin threads and kernel levels); sessions normally share
    /// `shared(threads:)`.
    init(threads: Int, isa: Int32) throws(SessionError) {
        guard let pool = pk_pool_create(Int32(threads)) else {
            throw .outOfMemory(bytes: threads * 8 << 20)  // thread stacks
        }
        self.pool = pool
        size = Int(pk_pool_size(pool))
        self.isa = isa
    }

    deinit { pk_pool_destroy(pool) }

    private static let process = Mutex<WorkerPool?>(nil)

    /// The process's pool, created by the first call with `threads` threads (every core when
    /// nil) and the best kernel level of this CPU; later calls get the same pool whatever
    /// they ask, so the cores are never oversubscribed.
    public static func shared(threads: Int? = nil) throws -> WorkerPool {
        try process.withLock { pool throws(SessionError) in
            if let pool { return pool }
            let created = try WorkerPool(
                threads: max(1, threads ?? Int(pk_available_cores())), isa: pk_matvec_best_isa())
            pool = created
            return created
        }
    }

    /// Runs `body` (one forward pass) while no other thread uses the pool, its matrix products
    /// at `activations` width.
    func exclusively<T>(activations: ActivationWidth, _ body: () throws -> T) rethrows -> T {
        try turn.withLock { _ in
            activationBits = Int32(activations.rawValue)
            return try body()
        }
    }

    /// y[t] = W · x[t] for t < tokens: x (tokens, cols) and y (tokens, rows) packed. Each
    /// input is readied (16- or 8-bit x, group sums) into `prep` (tokens × prepStride floats),
    /// then every chunk of rows is read once for all tokens.
    func matvec(
        _ m: WeightMatrix, _ x: UnsafePointer<Float>, tokens: Int,
        into y: UnsafeMutablePointer<Float>, prep: UnsafeMutablePointer<Float>, prepStride: Int
    ) {
        withUnsafePointer(to: m.raw) { matrix in
            var job = pk_matvec_job(
                m: matrix, tokens: tokens, x: x, ldx: m.cols, prep: prep, prep_stride: prepStride,
                y: y, ldy: m.rows, isa: isa, chunk_rows: 0,
                act_bits: activationBits)
            pk_pool_run(pool, pk_prepare_task, &job, pk_prepare_chunks(&job))
            let chunks = pk_matvec_chunks(&job)
            pk_pool_run(pool, pk_matvec_task, &job, chunks)
        }
        m.delta?.apply(x, ldx: m.cols, tokens: tokens, y, ldy: m.rows)
    }

    func attention(_ job: inout pk_attention_job) {
        job.isa = isa
        pk_pool_run(pool, pk_attention_task, &job, pk_attention_chunks(&job))
    }
}
