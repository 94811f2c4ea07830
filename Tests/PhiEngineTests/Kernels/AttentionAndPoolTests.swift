import CKernels
import Foundation
import Synchronization
import Testing

@Suite("attention kernel and worker pool")
struct AttentionAndPoolTests {
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
                pk_attention_isa(isa, &out, q, k, v, &scores, lo, hi, Int32(headDim), scale)
                let worst = zip(out, reference).map { abs($0 - $1) }.max()!
                #expect(worst < 1e-5, "isa \(isa) head_dim \(headDim) positions \(lo)...\(hi)")
            }
        }
    }

    @Test("attention over a half cache equals attention over its widened rows, bit for bit")
    func halfCache() {
        var random = KernelRandom(seed: 5)
        for headDim in [8, 96, 128] {
            let positions = 130
            var k16 = [UInt16](repeating: 0, count: positions * headDim)
            var v16 = k16
            pk_f32_to_f16(&k16, random.floats(positions * headDim, -2, 2), k16.count)
            pk_f32_to_f16(&v16, random.floats(positions * headDim), v16.count)
            var k = [Float](repeating: 0, count: k16.count)
            var v = k
            pk_f16_to_f32(&k, k16, k.count)
            pk_f16_to_f32(&v, v16, v.count)
            let q = random.floats(headDim, -2, 2)
            var scores = [Float](repeating: 0, count: positions)
            let scale = 1 / Float(headDim).squareRoot()
            for isa in KernelLevels.all {
                var wide = [Float](repeating: .nan, count: headDim)
                var half = wide
                pk_attention_isa(isa, &wide, q, k, v, &scores, 3, 129, Int32(headDim), scale)
                pk_attention_f16_isa(
                    isa, &half, q, k16, v16, &scores, 3, 129, Int32(headDim), scale)
                #expect(half == wide, "isa \(isa) head_dim \(headDim)")
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
