import Foundation
import PhiFormats
import Testing

@testable import PhiKit

/// An untrained phi checkpoint (transformers initialises biases to zeros) is not broken: an
/// all-zero 1-D `.bias` is a warning, while any other all-zero tensor stays an error.
@Suite("verify: all-zero biases")
struct VerifyZeroBiasTests {
    /// The phi2 convert source with `tensors` zero-filled.
    static func phi2(zeroing tensors: Set<String>) throws -> URL {
        let dir = try ConvertFixtures.temporaryDirectory("zero-bias")
            .appendingPathComponent("phi2")
        try ConvertFixtures.buildSource("phi2-fp16", into: dir)
        let file = dir.appendingPathComponent("model.safetensors")
        let st = try SafeTensorsFile(path: file.path)
        let rewritten = st.tensors.map { t in
            let bytes = Array(st.data(t))
            return (
                TensorSpec(name: t.name, dtype: t.dtype, shape: t.shape),
                tensors.contains(t.name) ? [UInt8](repeating: 0, count: bytes.count) : bytes
            )
        }
        try FileManager.default.removeItem(at: file)
        try SafeTensorsWriter.write(path: file.path, tensors: rewritten, metadata: ["format": "pt"])
        return dir
    }

    @Test("a zero bias is a warning; a zero layer-norm weight is an error")
    func zeroBias() throws {
        let bias = "model.layers.0.self_attn.q_proj.bias"
        let biasOnly = try VerifyFixture.verify(try Self.phi2(zeroing: [bias]))
        // (the source's tokenizer is a stand-in of another vocabulary: only numbers count)
        let numbers = biasOnly.findings.filter { $0.layer == .numbers }
        #expect(numbers.allSatisfy { $0.severity == .warning }, "\(numbers)")
        #expect(biasOnly.findings("all_zero").map(\.tensor) == [bias])
        #expect(biasOnly.findings("all_zero").map(\.severity) == [.warning])

        let norm = "model.final_layernorm.weight"
        let withNorm = try VerifyFixture.verify(try Self.phi2(zeroing: [bias, norm]))
        #expect(withNorm.findings("all_zero").filter { $0.severity == .error }.map(\.tensor) == [norm])
    }
}
