import CKernels
import Foundation
import Synchronization
import Testing

@Suite("attention kernel and worker pool")
struct AttentionAndPoolTests {
    static let f32 = Int32(PK_KV_F32)
    static let kinds = [Int32(PK_KV_F32), Int32(PK_KV_F16), Int32(PK_KV_Q8)]

    /// `values` (rows of headDim) as cache rows of `kind`, and the same rows widened back.
    static func cacheRows(_ values: [Float], kind: Int32, headDim: Int) -> (
        rows: [UInt8], widened: [Float]
    ) {
        let rowBytes = pk_kv_row_bytes(kind, Int32(headDim))
        let count = values.count / headDim
        var rows = [UInt8](repeating: 0, count: count * rowBytes)
        var widened = [Float](repeating: 0, count: values.count)
        rows.withUnsafeMutableBytes { r in
            values.withUnsafeBufferPointer { x in
                for j in 0..<count {
                    let row = r.baseAddress! + j * rowBytes
                    pk_kv_store(kind, row, x.baseAddress! + j * headDim, Int32(headDim))
                    widened.withUnsafeMutableBufferPointer { w in
                        pk_kv_load(kind, w.baseAddress! + j * headDim, row, Int32(headDim))
                    }
                }
            }
        }
        return (rows, widened)
    }

    @Test("attention equals its double-precision reference", arguments: [8, 12, 16, 32, 96, 128])
    func attention(headDim: Int) {
        var random = KernelRandom(seed: UInt64(headDim))
        let positions = 300
        let k = random.floats(positions * headDim, -2, 2)
        let v = random.floats(positions * headDim)
        for (lo, hi) in [(0, 0), (0, 299), (17, 60), (250, 299)] {
            let q = random.floats(headDim, -2, 2)
            var scores = [Float](repeating: 0, count: positions)
            var reference = [Float](repeating: 0, count: headDim)
            let scale = 1 / Float(headDim).squareRoot()
            pk_attention_ref(&reference, q, k, v, &scores, lo, hi, Int32(headDim), scale)
            for isa in KernelLevels.all {
                var out = [Float](repeating: .nan, count: headDim)
                pk_attention_isa(isa, Self.f32, &out, q, k, v, &scores, lo, hi, Int32(headDim), scale)
                let worst = zip(out, reference).map { abs($0 - $1) }.max()!
                #expect(worst < 1e-5, "isa \(isa) head_dim \(headDim) positions \(lo)...\(hi)")
            }
        }
    }

    @Test("attention over 16- and 8-bit rows equals attention over the widened rows, bit for bit")
    func narrowCache() {
        var random = KernelRandom(seed: 5)
        for headDim in [8, 12, 96, 128] {
            let positions = 130
            let q = random.floats(headDim, -2, 2)
            let keys = random.floats(positions * headDim, -2, 2)
            let values = random.floats(positions * headDim)
            var scores = [Float](repeating: 0, count: positions)
            let scale = 1 / Float(headDim).squareRoot()
            for kind in Self.kinds.dropFirst() {
                let (k, kWide) = Self.cacheRows(keys, kind: kind, headDim: headDim)
                let (v, vWide) = Self.cacheRows(values, kind: kind, headDim: headDim)
                for isa in KernelLevels.all {
                    var wide = [Float](repeating: .nan, count: headDim)
                    var narrow = wide
                    pk_attention_isa(
                        isa, Self.f32, &wide, q, kWide, vWide, &scores, 3, 129, Int32(headDim),
                        scale)
                    pk_attention_isa(
                        isa, kind, &narrow, q, k, v, &scores, 3, 129, Int32(headDim), scale)
                    #expect(narrow == wide, "kind \(kind) isa \(isa) head_dim \(headDim)")
                }
            }
        }
    }

    @Test("8-bit rows: within half a step of each value, a step = max|group| / 127")
    func int8Rows() {
        var random = KernelRandom(seed: 9)
        for headDim in [8, 12, 64, 96, 128] {
            let group = Int(pk_kv_q8_group(Int32(headDim)))
            #expect(group == (headDim % 32 == 0 ? 32 : headDim))
            #expect(pk_kv_row_bytes(Int32(PK_KV_Q8), Int32(headDim)) == headDim + 4 * headDim / group)
            // groups of very different magnitudes, one all zero, one with a single outlier
            var x = random.floats(headDim * 4, -3, 3)
            for d in 0..<headDim { x[headDim + d] = 0 }
            x[2 * headDim + 1] = 40
            let (_, back) = Self.cacheRows(x, kind: Int32(PK_KV_Q8), headDim: headDim)
            for start in stride(from: 0, to: x.count, by: group) {
                let slice = x[start..<start + group]
                let step = slice.map(abs).max()! / 127
                for i in slice.indices {
                    #expect(abs(back[i] - x[i]) <= step / 2 * 1.0001, "head_dim \(headDim) [\(i)]")
                }
            }
        }
    }

    @Test("a tile of queries (a GQA group, several tokens) gives each what it gets alone")
    func tileEqualsAlone() {
        var random = KernelRandom(seed: 11)
        let headDim = 96
        let positions = 90
        for kind in Self.kinds {
            let (k, _) = Self.cacheRows(random.floats(positions * headDim, -2, 2), kind: kind, headDim: headDim)
            let (v, _) = Self.cacheRows(random.floats(positions * headDim), kind: kind, headDim: headDim)
            let count = Int(PK_ATTENTION_TILE)
            let q = random.floats(count * headDim, -2, 2)
            // causal ranges of 5 tokens, some windowed, as a prefill tile would have
            let ranges = (0..<count).map { i in (i % 3 == 0 ? 10 + i : 0, 70 + i / 3) }
            var scores = [Float](repeating: 0, count: count * positions)
            for isa in KernelLevels.all {
                var tiled = [Float](repeating: .nan, count: count * headDim)
                q.withUnsafeBufferPointer { qp in
                    tiled.withUnsafeMutableBufferPointer { out in
                        scores.withUnsafeMutableBufferPointer { sc in
                            let queries = (0..<count).map { i in
                                pk_attention_query(
                                    q: qp.baseAddress! + i * headDim,
                                    out: out.baseAddress! + i * headDim,
                                    scores: sc.baseAddress! + i * positions, lo: ranges[i].0,
                                    hi: ranges[i].1)
                            }
                            pk_attention_tile_isa(
                                isa, kind, queries, Int32(count), k, v, Int32(headDim), 0.1)
                        }
                    }
                }
                for i in 0..<count {
                    var alone = [Float](repeating: .nan, count: headDim)
                    let qi = Array(q[i * headDim..<(i + 1) * headDim])
                    pk_attention_isa(
                        isa, kind, &alone, qi, k, v, &scores, ranges[i].0, ranges[i].1,
                        Int32(headDim), 0.1)
                    #expect(
                        Array(tiled[i * headDim..<(i + 1) * headDim]) == alone,
                        "kind \(kind) isa \(isa) query \(i)")
                }
            }
        }
    }

    @Test("the pool runs every chunk exactly once per job, workers awake or asleep")
    func poolRuns() throws {
        for threads in [1, 2, 3, 5] {
            let pool = try #require(pk_pool_create(Int32(threads)))
            defer { pk_pool_destroy(pool) }
            #expect(pk_pool_size(pool) == Int32(threads))
            // counts[0..<100]: runs of each chunk; counts[100 + t]: chunks thread t ran.
            var counts = [Int](repeating: 0, count: 110)
            for run in 0..<300 {
                // Every 50th job comes after a pause long enough for the workers to sleep.
                if run % 50 == 49 { usleep(2000) }
                let chunks = run % 3 == 0 ? 1 : 100
                counts.withUnsafeMutableBufferPointer { buffer in
                    pk_pool_run(
                        pool,
                        { ctx, chunk, thread in
                            // Each chunk slot is written by the one thread that took the
                            // chunk, each thread slot by its own thread: no data race.
                            let counts = ctx!.assumingMemoryBound(to: Int.self)
                            counts[Int(chunk)] += 1
                            counts[100 + Int(thread)] += 1
                        }, buffer.baseAddress, chunks)
                }
            }
            let perChunk = Array(counts[0..<100])
            let perThread = Array(counts[100..<110])
            let expected = [300] + Array(repeating: 200, count: 99)
            #expect(perChunk == expected)
            let ran: Int = perThread.reduce(0, +)
            #expect(ran == 20100)  // 200 jobs of 100 chunks, 100 jobs of 1
            #expect(perThread[threads...].allSatisfy { $0 == 0 })
        }
    }
}
