import Foundation
import PhiFormats
import Testing

@testable import PhiKit

/// Every GGML block type phikit decodes, against `gguf.quants.dequantize` on random blocks
/// (scripts/gguf/make_block_goldens.py): the exact types transcode to MLX affine tensors whose
/// `scale * q + bias` equals ggml's value for every element; the others decode exactly and
/// are re-quantized with the error they report.
@Suite struct GGUFBlockGoldenTests {
    static let dir = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/gguf").path
    let file: GGUFFile
    let expected: SafeTensorsFile

    init() throws {
        file = try GGUFFile(path: Self.dir + "/blocks.gguf")
        expected = try SafeTensorsFile(path: Self.dir + "/blocks-expected.safetensors")
    }

    func reference(_ name: String) throws -> [Float] {
        let info = try #require(expected.info(name))
        var out = [Float](repeating: 0, count: info.elementCount)
        out.withUnsafeMutableBytes { $0.copyMemory(from: expected.data(info)) }
        return out
    }

    func module(_ names: [String]) throws -> GGUFModelLayout.Module {
        let parts = try names.map { GGUFModelLayout.Part(tensor: try #require(file.tensor($0)), unpermuteHeads: nil) }
        let module = GGUFModelLayout.Module(name: "m.weight", parts: parts)
        #expect(module.shape == [parts.reduce(0) { $0 + $1.tensor.shape[0] }, 256])
        return module
    }

    /// The float32 values an MLX loader computes from the transcoded tensors: scale·q + bias
    /// with the scales widened to float32 (product, then sum).
    func values(_ plan: GGUFModulePlan, _ r: GGUFTranscoder.Result) throws -> [Float] {
        guard case .affine(let bits, let scaleType) = plan.form else {
            var out = [Float](repeating: 0, count: r.tensors[0].count / plan.outputs[0].dtype.size)
            r.tensors[0].withUnsafeBytes { raw in
                out.withUnsafeMutableBufferPointer { widen(raw, plan.outputs[0].dtype, into: $0) }
            }
            return out
        }
        let rows = plan.module.shape[0]
        let words = r.tensors[0].withUnsafeBytes { Array($0.bindMemory(to: UInt32.self)) }
        func f32(_ bytes: [UInt8]) -> [Float] {
            var out = [Float](repeating: 0, count: bytes.count / scaleType.size)
            bytes.withUnsafeBytes { raw in out.withUnsafeMutableBufferPointer { widen(raw, scaleType, into: $0) } }
            return out
        }
        let scales = f32(r.tensors[1])
        let biases = f32(r.tensors[2])
        var out = [Float](repeating: 0, count: rows * 256)
        try words.withUnsafeBufferPointer { w in
            try scales.withUnsafeBytes { s in
                try biases.withUnsafeBytes { b in
                    try out.withUnsafeMutableBufferPointer {
                        try AffineQuantization(bits: bits, groupSize: 32).dequantize(
                            weight: w, scales: s, biases: b, rows: rows, cols: 256,
                            scaleDType: .f32, into: $0)
                    }
                }
            }
        }
        return out
    }

    @Test(arguments: [
        ("Q4_0", 4, DType.f16), ("Q4_1", 4, .f16), ("Q5_0", 5, .f16), ("Q5_1", 5, .f16),
        ("Q8_0", 8, .f16), ("Q4_K", 4, .f32), ("Q5_K", 5, .f32), ("Q4_0_big", 4, .f32),
        ("Q8_0_big", 8, .f32),
    ])
    func exactTypesEqualGGUFBitForBit(_ name: String, _ bits: Int, _ scales: DType) throws {
        let plan = try GGUFModulePlan.make(try module([name]), file: file, settings: .init(exact: true))
        #expect(plan.form == .affine(bits: bits, scales: scales))
        #expect(plan.inexact.isEmpty)
        let got = try values(plan, try GGUFTranscoder(file: file).run(plan))
        let want = try reference(name)
        let differing = zip(got, want).filter { $0 != $1 }.count  // == treats -0 and +0 alike
        #expect(differing == 0, "\(name): \(differing) of \(want.count) values differ")
    }

    @Test(arguments: ["Q6_K", "Q2_K", "IQ4_NL", "MXFP4", "F32", "F16", "BF16"])
    func decodersEqualGGUFBitForBit(_ name: String) throws {
        let t = try #require(file.tensor(name))
        var got = [Float](repeating: 0, count: t.elementCount)
        got.withUnsafeMutableBufferPointer {
            GGUFBlocks.dequantize(t.type, file.data(t), count: t.elementCount, into: $0)
        }
        let want = try reference(name)
        #expect(got.map(\.bitPattern) == want.map(\.bitPattern), "\(name)")
    }

    /// MXFP4 → mlx mxfp4: same E2M1 codes (reordered nibbles) and E8M0 scale bytes.
    @Test func mxfp4TranscodesToMLXMxfp4() throws {
        let plan = try GGUFModulePlan.make(try module(["MXFP4"]), file: file, settings: .init(exact: true))
        #expect(plan.form == .mxfp4)
        let r = try GGUFTranscoder(file: file).run(plan)
        let words = r.tensors[0].withUnsafeBytes { Array($0.bindMemory(to: UInt32.self)) }
        var got = [Float](repeating: 0, count: 4 * 256)
        try words.withUnsafeBufferPointer { w in
            try r.tensors[1].withUnsafeBufferPointer { s in
                try got.withUnsafeMutableBufferPointer {
                    try MicroscaledQuantization(mode: .mxfp4).dequantize(
                        weight: w, scales: s, rows: 4, cols: 256, outDType: .f32, into: $0)
                }
            }
        }
        #expect(got == (try reference("MXFP4")))
    }

    @Test(arguments: ["Q6_K", "Q2_K", "IQ4_NL"])
    func inexactTypesAreRequantizedWithTheirError(_ name: String) throws {
        let plan = try GGUFModulePlan.make(try module([name]), file: file, settings: .init())
        #expect(plan.form == .affine(bits: 8, scales: .f32))
        let result = try GGUFTranscoder(file: file).run(plan)
        let got = try values(plan, result)
        let want = try reference(name)
        let error = zip(got, want).map { Double(abs($0 - $1)) }.max()!
        #expect(result.errors[name] == error)
        // Within half an 8-bit step of each group's range (plus float rounding).
        for g in 0..<(want.count / 32) {
            let group = want[(32 * g)..<(32 * g + 32)]
            let step = Double(group.max()! - group.min()!) / 255
            let worst = (0..<32).map { Double(abs(got[32 * g + $0] - want[32 * g + $0])) }.max()!
            #expect(worst <= step / 2 * 1.001 + 1e-12, "\(name) group \(g)")
        }
        #expect(throws: GGUFConvertError.self) {
            try GGUFModulePlan.make(try module([name]), file: file, settings: .init(exact: true))
        }
    }

    /// A fused tensor of Q4_K rows and Q6_K rows (llama Q4_K_M: q/k Q4_K, v Q6_K) is 8-bit:
    /// the Q4_K codes widen exactly, only the Q6_K rows move.
    @Test func fusedMixedTypesWidenExactly() throws {
        let plan = try GGUFModulePlan.make(try module(["Q4_K", "Q6_K"]), file: file, settings: .init())
        #expect(plan.form == .affine(bits: 8, scales: .f32))
        #expect(plan.inexact.map(\.name) == ["Q6_K"])
        let got = try values(plan, try GGUFTranscoder(file: file).run(plan))
        let q4 = try reference("Q4_K")
        #expect(Array(got[0..<q4.count]) == q4)
    }

    @Test func dtypeKeepsInexactTypesFloat() throws {
        let plan = try GGUFModulePlan.make(try module(["Q6_K"]), file: file, settings: .init(dtype: .f32))
        #expect(plan.form == .float(.f32) && plan.inexact.isEmpty)
        let got = try values(plan, try GGUFTranscoder(file: file).run(plan))
        #expect(got.map(\.bitPattern) == (try reference("Q6_K")).map(\.bitPattern))
    }
}
