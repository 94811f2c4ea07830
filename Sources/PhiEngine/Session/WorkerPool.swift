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
    /// The run-time adapter of each token row of the forward pass holding the pool.
    private var adapters: AdapterSelection = .uniform(nil)
    /// The rows of one adapter in a batch that mixes several (reused: nothing allocated).
    private var adapterRows: [Int] = []
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
    /// at `activations` width, each token row corrected by the adapter `adapters` gives it.
    func exclusively<T>(
        activations: ActivationWidth, adapters: AdapterSelection = .uniform(nil),
        _ body: () throws -> T
    ) rethrows -> T {
        try turn.withLock { _ in
            activationBits = Int32(activations.rawValue)
            self.adapters = adapters
            // the batch's row list is its own again (reused without a copy) after the pass
            defer { self.adapters = .uniform(nil) }
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
        guard !m.deltas.isEmpty else { return }
        switch adapters {
        case .uniform(nil): return
        case .uniform(let i?):
            if let delta = m.deltas[i] { correct(delta, x, ldx: m.cols, y, ldy: m.rows, rows: nil, count: tokens) }
        case .perRow(let selected):
            precondition(selected.count == tokens, "one adapter per token row")
            for (i, delta) in m.deltas.enumerated() {
                guard let delta else { continue }
                adapterRows.removeAll(keepingCapacity: true)
                for t in 0..<tokens where selected[t] == i { adapterRows.append(t) }
                guard !adapterRows.isEmpty else { continue }
                adapterRows.withUnsafeBufferPointer {
                    correct(
                        delta, x, ldx: m.cols, y, ldy: m.rows, rows: $0.baseAddress,
                        count: $0.count)
                }
            }
        }
    }

    /// y[t] += the low-rank correction of x[t] for the `count` rows `rows` lists (nil: the
    /// first `count`), a few tokens per chunk over the pool's threads: a prompt block's
    /// corrections cost their FLOPs, not a single thread's time between the products.
    private func correct(
        _ delta: AppliedDelta, _ x: UnsafePointer<Float>, ldx: Int,
        _ y: UnsafeMutablePointer<Float>, ldy: Int, rows: UnsafePointer<Int>?, count: Int
    ) {
        delta.withJob(x, ldx: ldx, y, ldy: ldy, rows: rows, count: count, isa: isa) { job in
            let chunks = pk_lowrank_chunks(&job)
            if chunks == 1 {
                pk_lowrank_task(&job, 0, 0)  // a decode step: not worth waking the workers
            } else {
                pk_pool_run(pool, pk_lowrank_task, &job, chunks)
            }
        }
    }

    func attention(_ job: inout pk_attention_job) {
        job.isa = isa
        pk_pool_run(pool, pk_attention_task, &job, pk_attention_chunks(&job))
    }
}

/// Which run-time adapter (`InferenceSession.adapter`, an index into the model's adapters)
/// each token row of a forward pass is corrected by.
enum AdapterSelection {
    /// Every row (one session's pass): this adapter, or none.
    case uniform(Int?)
    /// Row t: `[t]` (a batch of sessions with different adapters).
    case perRow([Int?])
}
