import Foundation
import PhiEngine
import PhiFormats
import TestSupport
import Testing

@testable import PhiKit

/// The disk prefix cache on the bundled stories-260k (copied, so a test may rewrite its
/// weights): a stored prefix comes back and continues bit for bit as a cold prefill; another
/// model, width or weights never match; truncated and damaged files are refused with a warning;
/// the size limit holds; concurrent writers leave only whole files.
@Suite("disk prefix cache")
struct DiskPrefixCacheTests {
    static let text = (0..<60).map { ($0 * 37 + 11) % 500 + 3 }

    /// A private copy of stories-260k and a cache folder, removed afterwards.
    final class Fixture {
        let root: String
        let model: String
        let cacheDir: String
        let warnings = Warnings()

        final class Warnings: @unchecked Sendable {
            private let lock = NSLock()
            private var list: [String] = []
            func add(_ s: String) { lock.withLock { list.append(s) } }
            var all: [String] { lock.withLock { list } }
        }

        init() throws {
            root = NSTemporaryDirectory() + "diskcache-\(UUID().uuidString)"
            model = root + "/model"
            cacheDir = root + "/cache"
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: TestPaths.storiesModel.path, toPath: model)
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }

        func cache(
            width: KVCacheWidth = .float32, limit: Int = 1 << 30, model: String? = nil
        ) throws -> DiskPrefixCache {
            let warnings = self.warnings
            return try DiskPrefixCache(
                directory: cacheDir, limitBytes: limit,
                fingerprint: ModelFingerprint(
                    directory: model ?? self.model, modelType: "phi3", cacheWidth: width),
                warn: { warnings.add($0) })
        }

        func session(_ width: KVCacheWidth = .float32) throws -> InferenceSession {
            try InferenceSession(model: ModelArchitectures.load(directory: model), cacheWidth: width)
        }

        /// The snapshot of the first `n` tokens of `tokens`.
        func snapshot(_ n: Int, of tokens: [Int] = text, width: KVCacheWidth = .float32) throws
            -> KVSnapshot
        {
            let s = try session(width)
            _ = try s.prefill(Array(tokens[..<n]))
            return try #require(s.snapshot())
        }

        func files() -> [String] {
            let dirs = (try? FileManager.default.contentsOfDirectory(atPath: cacheDir)) ?? []
            return dirs.flatMap { d in
                ((try? FileManager.default.contentsOfDirectory(atPath: cacheDir + "/" + d)) ?? [])
                    .map { cacheDir + "/" + d + "/" + $0 }
            }
        }
    }

    @Test("a stored prefix comes back after a restart and continues as a cold prefill", arguments: KVCacheWidth.allCases)
    func roundTrip(_ width: KVCacheWidth) throws {
        let f = try Fixture()
        #expect(try f.cache(width: width).store(try f.snapshot(40, width: width)))
        let cold = try f.session(width)
        let coldLogits = Array(try cold.prefill(Array(Self.text[..<50])))

        // a new cache object: what a restarted server opens
        let found = try #require(
            try f.cache(width: width).longestPrefix(of: Array(Self.text[..<50]), atMost: 49))
        #expect(found.tokens == Array(Self.text[..<40]))
        let restored = try f.session(width)
        try restored.restore(found)
        #expect(try restored.prepare(Array(Self.text[..<50])) == 40)
        #expect(Array(restored.logits) == coldLogits)
        #expect(f.warnings.all.isEmpty)
    }

    @Test("the longest stored prefix of the prompt is found, never one it does not start with")
    func longestPrefix() throws {
        let f = try Fixture()
        let cache = try f.cache()
        try cache.store(try f.snapshot(10))
        try cache.store(try f.snapshot(30))
        #expect(cache.longestPrefix(of: Self.text, atMost: 59)?.tokens.count == 30)
        #expect(cache.longestPrefix(of: Self.text, atMost: 29)?.tokens.count == 10)
        #expect(cache.longestPrefix(of: Self.text, atMost: 59, longerThan: 30) == nil)
        var diverging = Self.text
        diverging[20] = 499
        #expect(cache.longestPrefix(of: diverging, atMost: 59)?.tokens.count == 10)
        diverging[3] = 499
        #expect(cache.longestPrefix(of: diverging, atMost: 59) == nil)
    }

    @Test("another cache width, model or rewritten weights never match")
    func fingerprints() throws {
        let f = try Fixture()
        try f.cache().store(try f.snapshot(20))
        let prompt = Array(Self.text[..<30])
        #expect(try f.cache().longestPrefix(of: prompt, atMost: 29) != nil)
        #expect(try f.cache(width: .float16).longestPrefix(of: prompt, atMost: 29) == nil)

        let modelA = try ModelFingerprint(directory: f.model, modelType: "phi3", cacheWidth: .float32)
        #expect(try ModelFingerprint(directory: f.model, modelType: "llama", cacheWidth: .float32) != modelA)
        // the same bytes written again (what a re-convert does) are another file
        let weights = f.model + "/model.safetensors"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: weights))
        try FileManager.default.removeItem(atPath: weights)
        try bytes.write(to: URL(fileURLWithPath: weights))
        #expect(try ModelFingerprint(directory: f.model, modelType: "phi3", cacheWidth: .float32) != modelA)
        #expect(try f.cache().longestPrefix(of: prompt, atMost: 29) == nil)

        // a file moved into another model's folder is refused by its header
        let old = try #require(f.files().first { $0.hasSuffix(".kv") })
        let newFolder = f.cacheDir + "/" + (try ModelFingerprint(
            directory: f.model, modelType: "phi3", cacheWidth: .float32)).description
        try FileManager.default.moveItem(
            atPath: old, toPath: newFolder + "/" + (old as NSString).lastPathComponent)
        #expect(try f.cache().longestPrefix(of: prompt, atMost: 29) == nil)
        #expect(f.warnings.all.contains { $0.contains("another model") })
    }

    @Test("truncated, damaged and old-format files are ignored with a warning and removed")
    func damagedFiles() throws {
        let f = try Fixture()
        let cache = try f.cache()
        let prompt = Array(Self.text[..<30])
        let cases: [(damage: String, reason: String)] = [
            ("truncate", "not what its header promises"), ("rows", "checksum mismatch in its rows"),
            ("tokens", "checksum mismatch in its head"), ("version 1", "format version 1"),
            ("empty", "shorter than its header"),
        ]
        for (damage, reason) in cases {
            try cache.store(try f.snapshot(20))
            let file = try #require(f.files().first { $0.hasSuffix(".kv") })
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
            switch damage {
            case "truncate": bytes.removeLast(100)
            case "rows": bytes[bytes.count - 100] ^= 0x10
            case "tokens": bytes[KVSnapshotFile.headerBytes + 4] ^= 0x01
            case "version 1": bytes[8] = 1
            default: bytes = []
            }
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            let before = f.warnings.all.count
            #expect(cache.longestPrefix(of: prompt, atMost: 29) == nil, "\(damage)")
            #expect(f.warnings.all.count == before + 1, "\(damage)")
            #expect(f.warnings.all.last?.contains(reason) == true, "\(damage): \(f.warnings.all)")
            #expect(!FileManager.default.fileExists(atPath: file), "\(damage)")
        }
    }

    @Test("a file found damaged while it is read into a session is dropped for the next shorter prefix")
    func damagedDuringRestore() throws {
        let f = try Fixture()
        let cache = try f.cache()
        try cache.store(try f.snapshot(20))
        try cache.store(try f.snapshot(40))
        let long = try #require(f.files().first { $0.hasSuffix("/" + DiskPrefixCache.fileName(Self.text[..<40])) })
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: long)))
        bytes[bytes.count - 1] ^= 0x40  // the last row byte: found only after every other is read
        try Data(bytes).write(to: URL(fileURLWithPath: long))

        let prompt = Array(Self.text[..<50])
        let cold = try f.session()
        let coldLogits = Array(try cold.prefill(prompt))
        let session = try f.session()
        _ = try session.prefill(Array(Self.text[..<10]))  // shares 10 tokens with the prompt
        #expect(cache.restoreLongestPrefix(of: prompt, into: session) == 20)
        #expect(session.tokens == Array(Self.text[..<20]))
        #expect(try session.prepare(prompt) == 20)
        #expect(Array(session.logits) == coldLogits)
        #expect(f.warnings.all.count == 1 && f.warnings.all[0].contains("checksum mismatch in its rows"))
        #expect(!FileManager.default.fileExists(atPath: long))
        #expect(cache.hits == (prompts: 1, tokens: 20))
    }

    @Test("the folder never grows past its limit; the least recently used go first")
    func sizeLimit() throws {
        let f = try Fixture()
        let one = try f.snapshot(20)
        let fileBytes = KVSnapshotFile.fileBytes(one.layout)
        let cache = try f.cache(limit: fileBytes * 5 / 2)  // room for two
        var prompts: [[Int]] = []
        for i in 0..<4 {
            var tokens = Self.text
            tokens[0] = 3 + i
            prompts.append(tokens)
            Thread.sleep(forTimeInterval: 0.02)  // distinct modification times
            try cache.store(try f.snapshot(20, of: tokens))
            #expect(cache.totalBytes <= cache.limitBytes)
            if i == 1 {
                Thread.sleep(forTimeInterval: 0.02)
                // a restore makes the first one more recently used than the second
                #expect(cache.longestPrefix(of: prompts[0], atMost: 59) != nil)
            }
            if i == 2 {
                #expect(cache.contains(Array(prompts[0][..<20])))
                #expect(!cache.contains(Array(prompts[1][..<20])))
            }
        }
        #expect(f.files().count == 2)
        #expect(cache.contains(Array(prompts[2][..<20])) && cache.contains(Array(prompts[3][..<20])))
        // a prefix larger than the whole limit is not written
        #expect(try f.cache(limit: fileBytes - 1).store(try f.snapshot(30)) == false)
    }

    @Test("two writers of the same prefixes at once leave only whole files")
    func concurrentWriters() throws {
        let f = try Fixture()
        let snapshots = try (1...6).map { try f.snapshot(5 * $0) }
        let caches = try [f.cache(), f.cache()]
        DispatchQueue.concurrentPerform(iterations: 12) { i in
            _ = try? caches[i % 2].store(snapshots[i / 2])
        }
        #expect(f.files().count == 6)
        #expect(f.files().allSatisfy { $0.hasSuffix(".kv") })
        for n in stride(from: 5, through: 30, by: 5) {
            #expect(caches[0].longestPrefix(of: Self.text, atMost: n)?.tokens.count == n)
        }
        #expect(f.warnings.all.isEmpty)
    }
}
