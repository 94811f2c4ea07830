import PhiFormats
import Testing

@testable import PhiEngine

/// `snapshot` and `restore`, what the disk prefix cache is built on: a session restored from a
/// snapshot of a prefix computes, bit for bit, what a session that prefilled the prefix cold
/// computes next — every model shape, float and 4-bit, every cache width, prefixes before and
/// after the tiny Phi-3 models' LongRoPE switch (past 32 positions) and the 8-bit keys'
/// calibration (the first 32 positions).
@Suite("KV snapshots")
struct KVSnapshotTests {
    static let text = VerifyRewindTests.text

    @Test("a restored prefix continues bit for bit as a cold prefill of it")
    func restoreEqualsColdPrefill() throws {
        for (label, _, model) in try SessionReuseTests.models() {
            for width in KVCacheWidth.allCases {
                for (p, more) in [(20, 7), (36, 9), (5, 1)] {
                    let prefix = Array(Self.text[..<p])
                    let rest = Array(Self.text[p..<p + more])
                    let cold = try InferenceSession(model: model, cacheWidth: width)
                    _ = try cold.prefill(prefix)
                    let coldBlock = Array(try cold.prefill(rest))
                    let coldNext = Array(try cold.step(3))

                    // the snapshot comes from a session that holds the prefix and then some
                    let source = try InferenceSession(model: model, cacheWidth: width)
                    _ = try source.prefill(prefix)
                    _ = try source.step(11)
                    let snapshot = try #require(source.snapshot(count: p), "\(label) \(width) p\(p)")
                    #expect(snapshot.tokens == prefix)

                    let restored = try InferenceSession(model: model, cacheWidth: width)
                    _ = try restored.prefill([7, 8, 9])  // whatever it held is replaced
                    try restored.restore(snapshot)
                    #expect(restored.tokens == prefix)
                    #expect(Array(try restored.prefill(rest)) == coldBlock, "\(label) \(width) p\(p)")
                    #expect(Array(try restored.step(3)) == coldNext, "\(label) \(width) p\(p) step")

                    // prepare keeps the restored prefix and computes only the rest
                    let prepared = try InferenceSession(model: model, cacheWidth: width)
                    try prepared.restore(snapshot)
                    #expect(try prepared.prepare(prefix + rest) == p)
                    #expect(Array(prepared.logits) == coldBlock, "\(label) \(width) p\(p) prepare")
                }
            }
        }
    }

    @Test("a prefix in another position regime is not handed out or taken")
    func regimeMismatch() throws {
        let (_, model) = try SessionTests.floatModel("tiny-phi35.json")
        let session = try InferenceSession(model: model)
        _ = try session.prefill(Array(Self.text[..<40]))  // past the switch: long factors
        #expect(session.snapshot(count: 20) == nil)
        let long = try #require(session.snapshot())
        #expect(long.regime == 1)
        let forged = KVSnapshot(
            layout: KVSnapshot.Layout(
                tokens: Array(long.tokens[..<20]), regime: 1, cacheWidth: long.cacheWidth,
                layers: long.layers, kvHeads: long.kvHeads, headDim: long.headDim),
            rows: long.rows)
        let other = try InferenceSession(model: model)
        #expect(throws: SessionError.self) { try other.restore(forged) }
        #expect(other.tokens.isEmpty)
    }

    @Test("another cache width or model shape is refused and leaves the session as it was")
    func shapeMismatch() throws {
        let (_, model) = try SessionTests.floatModel("tiny-phi35.json")
        let (_, otherModel) = try SessionTests.floatModel("tiny-llama-smol.json")
        let source = try InferenceSession(model: model, cacheWidth: .float16)
        _ = try source.prefill(Array(Self.text[..<10]))
        let snapshot = try #require(source.snapshot())
        let wide = try InferenceSession(model: model, cacheWidth: .float32)
        _ = try wide.prefill([1, 2])
        #expect(throws: SessionError.self) { try wide.restore(snapshot) }
        #expect(wide.tokens == [1, 2])
        let foreign = try InferenceSession(model: otherModel, cacheWidth: .float16)
        #expect(throws: SessionError.self) { try foreign.restore(snapshot) }
        let truncated = KVSnapshot(layout: snapshot.layout, rows: Array(snapshot.rows.dropLast()))
        let same = try InferenceSession(model: model, cacheWidth: .float16)
        #expect(throws: SessionError.self) { try same.restore(truncated) }
        #expect(same.tokens.isEmpty)
    }

    @Test("rows filled piece by piece restore what the snapshot does; a fill that fails leaves the session empty")
    func restoreFromPieces() throws {
        let (_, model) = try SessionTests.floatModel("tiny-phi35.json")
        let source = try InferenceSession(model: model, cacheWidth: .float16)
        _ = try source.prefill(Array(Self.text[..<12]))
        let snapshot = try #require(source.snapshot())
        let cold = Array(try source.step(5))

        var offsets: [Int] = []
        let restored = try InferenceSession(model: model, cacheWidth: .float16)
        try snapshot.rows.withUnsafeBytes { rows in
            try restored.restore(snapshot.layout) { piece, offset in
                offsets.append(offset)
                piece.copyMemory(from: UnsafeRawBufferPointer(rebasing: rows[offset..<offset + piece.count]))
            }
        }
        #expect(offsets.count > 1 && offsets == offsets.sorted() && offsets[0] == 0)
        #expect(Array(try restored.step(5)) == cold)

        struct Damaged: Error {}
        let failing = try InferenceSession(model: model, cacheWidth: .float16)
        _ = try failing.prefill([1, 2, 3])
        #expect(throws: Damaged.self) {
            try failing.restore(snapshot.layout) { piece, offset in
                if offset > 0 { throw Damaged() }
                piece.initializeMemory(as: UInt8.self, repeating: 0)
            }
        }
        #expect(failing.tokens.isEmpty)
        // what the failed fill wrote is never read: a prefill from there is a cold one
        let fresh = try InferenceSession(model: model, cacheWidth: .float16)
        #expect(Array(try failing.prefill(Array(Self.text[..<12]))) == Array(try fresh.prefill(Array(Self.text[..<12]))))
    }
}
