import CKernels
import Foundation
import Synchronization
import Testing

@Suite("attention kernel and worker pool")
struct AttentionAndPoolTests {
    static let f32 = Int32(PK_KV_F32)
    static let kinds = [Int32(PK_KV_F32), Int32(PK_KV_F16), Int32(PK_KV_Q8)]

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
                pk_attention_isa(
                    isa, Self.f32, &out, q, k, v, &scores, lo, hi, Int32(headDim), scale)
                let worst = zip(out, reference).map { abs($0 - $1) }.max()!
                #expect(worst < 1e-5, "isa \(isa) head_dim \(headDim) positions \(lo)...\(hi)")
            }
        }
    }

    @Test("a tile of queries (a GQA group, several tokens) gives each what it gets alone")
    func tileEqualsAlone() {
        var random = KernelRandom(seed: 11)
        let positions = 90
        // positions go by blocks of 16, output slices of 128, 96, 64, 32, 8 and single
        // values; queries next to each other with the same rows go as a pair (scores and
        // outputs), the others alone
        for headDim in [12, 40, 96, 128] {
            for kind in Self.kinds {
                let (k, _) = KVCacheFormatTests.region(
                    random.floats(positions * headDim, -2, 2), kind: kind, key: true,
                    headDim: headDim)
                let (v, _) = KVCacheFormatTests.region(
                    random.floats(positions * headDim), kind: kind, key: false, headDim: headDim)
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
                            "kind \(kind) isa \(isa) head_dim \(headDim) query \(i)")
                    }
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
