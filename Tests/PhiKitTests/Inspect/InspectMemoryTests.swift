import Foundation
import PhiFormats
import TestSupport
import Testing

@testable import PhiKit

/// `inspect --ctx N`: weights + the KV cache of N positions. stories-260k: 5 layers, 4 kv
/// heads of 8 dims; a float16 cache holds keys and values of 2 bytes per dim per position, a
/// float32 one 4; the 8-bit one adds its per-group scales (and, for keys, zeros).
@Suite("inspect --ctx")
struct InspectMemoryTests {
    @Test func storiesAt512Tokens() throws {
        let report = try inspect(path: TestPaths.storiesModel.path)
        let memory = try #require(MemoryAtContext(report, context: 512))
        #expect(memory.weightBytes == report.tensorBytes)
        let perPositionValues = 5 * 4 * 8 * 2  // layers × kv heads × head dim × (key, value)
        #expect(memory.caches.map(\.bits) == [16, 32, 8])
        #expect(memory.caches[0].kvCacheBytes == perPositionValues * 2 * 512)
        #expect(memory.caches[1].kvCacheBytes == perPositionValues * 4 * 512)
        #expect(memory.caches[2].kvCacheBytes > perPositionValues * 512)
        #expect(memory.caches[2].kvCacheBytes < memory.caches[0].kvCacheBytes)
        #expect(memory.caches.allSatisfy { $0.totalBytes == report.tensorBytes + $0.kvCacheBytes })
    }

    /// Without config.json (a lone weight file elsewhere) there is nothing to size a cache by.
    @Test func needsAConfig() throws {
        let work = try ConvertFixtures.temporaryDirectory("inspect-ctx")
        defer { try? FileManager.default.removeItem(at: work) }
        let file = work.appendingPathComponent("model.safetensors")
        try FileManager.default.copyItem(
            at: TestPaths.storiesModel.appendingPathComponent("model.safetensors"), to: file)
        #expect(MemoryAtContext(try inspect(path: file.path), context: 512) == nil)
    }
}
