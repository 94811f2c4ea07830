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

    @Test("the pool calls every thread index exactly once per run, awake or asleep")
    func poolRuns() throws {
        for threads in [1, 2, 3, 5] {
            let pool = try #require(pk_pool_create(Int32(threads)))
            defer { pk_pool_destroy(pool) }
            #expect(pk_pool_size(pool) == Int32(threads))
            var counts = [Int32](repeating: 0, count: 8)
            for run in 0..<200 {
                // Every 50th run waits long enough for the workers to go to sleep.
                if run % 50 == 49 { usleep(2000) }
                counts.withUnsafeMutableBufferPointer { buffer in
                    pk_pool_run(
                        pool,
                        { ctx, thread, n in
                            let counts = ctx!.assumingMemoryBound(to: Int32.self)
                            counts[Int(thread)] += 1
                            counts[7] = n
                        }, buffer.baseAddress)
                }
            }
            #expect(Array(counts[0..<threads]) == Array(repeating: 200, count: threads))
            #expect(counts[threads..<7].allSatisfy { $0 == 0 })
            #expect(counts[7] == Int32(threads))
        }
    }
}
