import CKernels
import Foundation
import Testing

@testable import PhiFormats

// Golden files: scripts/make_mx_golden.py (mlx 0.32.4, CPU) → Fixtures/mxfp.

private struct MXManifest: Decodable {
    struct Case: Decodable {
        let dtype: String
        let mode: String
        let file: String
        let weight_bytes: Int
        let scales_bytes: Int
        let dequant_fnv1a64: [String: String]
    }
    struct Decode: Decodable {
        let mode: String
        let file: String
        let rows: Int
        let cols: Int
        let weight_bytes: Int
        let dequant_fnv1a64: [String: String]
    }
    let mlx_version: String
    let rows: Int
    let cols: Int
    let inputs: [String: String]
    let cases: [Case]
    let decode: [Decode]
}

private enum MXGolden {
    static let dir: URL = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/mxfp")
    static let manifest: MXManifest = try! JSONDecoder().decode(
        MXManifest.self, from: Data(contentsOf: dir.appendingPathComponent("manifest.json")))

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: dir.appendingPathComponent(name)))
    }

    /// Little-endian input bytes of `dtype` widened to Float (bf16 by shifting, f16 through
    /// the standard library: independent of the library's conversions).
    static func widen(_ raw: [UInt8], _ dtype: DType) -> [Float] {
        switch dtype {
        case .f32:
            stride(from: 0, to: raw.count, by: 4).map { i in
                Float(
                    bitPattern: UInt32(raw[i]) | UInt32(raw[i + 1]) << 8
                        | UInt32(raw[i + 2]) << 16 | UInt32(raw[i + 3]) << 24)
            }
        case .f16:
            stride(from: 0, to: raw.count, by: 2).map { i in
                Float(Float16(bitPattern: UInt16(raw[i]) | UInt16(raw[i + 1]) << 8))
            }
        default:
            stride(from: 0, to: raw.count, by: 2).map { i in
                Float(bitPattern: (UInt32(raw[i]) | UInt32(raw[i + 1]) << 8) << 16)
            }
        }
    }

    /// Values exact in `dtype` as its bytes, every NaN as the script writes it (canonical).
    static func narrow(_ v: [Float], _ dtype: DType) -> [UInt8] {
        var out: [UInt8] = []
        for x in v {
            switch dtype {
            case .f32:
                let u = x.isNaN ? 0x7fc0_0000 : x.bitPattern
                out += [
                    UInt8(u & 0xff), UInt8(u >> 8 & 0xff), UInt8(u >> 16 & 0xff), UInt8(u >> 24),
                ]
            case .f16:
                let h = x.isNaN ? 0x7e00 : Float16(x).bitPattern
                out += [UInt8(h & 0xff), UInt8(h >> 8)]
            default:
                let h = x.isNaN ? 0x7fc0 : UInt16(x.bitPattern >> 16)
                out += [UInt8(h & 0xff), UInt8(h >> 8)]
            }
        }
        return out
    }

    static func fnv1a64(_ bytes: [UInt8]) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        let s = String(h, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }

    static func words(_ raw: ArraySlice<UInt8>) -> [UInt32] {
        stride(from: raw.startIndex, to: raw.endIndex, by: 4).map { i in
            UInt32(raw[i]) | UInt32(raw[i + 1]) << 8 | UInt32(raw[i + 2]) << 16
                | UInt32(raw[i + 3]) << 24
        }
    }
}

private func dequantized(
    _ q: MicroscaledQuantization, _ weight: [UInt32], _ scales: [UInt8], rows: Int, cols: Int,
    _ out: DType
) throws -> [Float] {
    var result = [Float](repeating: 0, count: rows * cols)
    try weight.withUnsafeBufferPointer { w in
        try scales.withUnsafeBufferPointer { s in
            try result.withUnsafeMutableBufferPointer { o in
                try q.dequantize(
                    weight: w, scales: s, rows: rows, cols: cols, outDType: out, into: o,
                    threads: 2)
            }
        }
    }
    return result
}

@Suite struct MicroscaledQuantizationTests {
    static let cases = MXGolden.manifest.cases.map { "\($0.dtype) \($0.mode)" }

    @Test("quantize and dequantize match mlx bit for bit", arguments: cases)
    func golden(_ name: String) throws {
        let m = MXGolden.manifest
        let c = try #require(m.cases.first { "\($0.dtype) \($0.mode)" == name })
        let dtype = try #require(DType(pythonName: c.dtype))
        let q = MicroscaledQuantization(mode: try #require(MicroscaledMode(rawValue: c.mode)))
        let input = MXGolden.widen(try MXGolden.bytes(m.inputs[c.dtype]!), dtype)
        let golden = try MXGolden.bytes(c.file)
        var weight = [UInt32](repeating: 0, count: m.rows * q.packedColumns(m.cols))
        var scales = [UInt8](repeating: 0, count: m.rows * q.groupsPerRow(m.cols))
        try input.withUnsafeBufferPointer { w in
            try weight.withUnsafeMutableBufferPointer { wq in
                try scales.withUnsafeMutableBufferPointer { s in
                    try q.quantize(
                        w, rows: m.rows, cols: m.cols, sourceDType: dtype, weight: wq,
                        scales: s, threads: 3)
                }
            }
        }
        #expect(weight == MXGolden.words(golden[0..<c.weight_bytes]))
        #expect(scales == Array(golden[c.weight_bytes..<(c.weight_bytes + c.scales_bytes)]))
        let bf16 = golden[(c.weight_bytes + c.scales_bytes)...]
        for (outName, hash) in c.dequant_fnv1a64 {
            let out = try #require(DType(pythonName: outName))
            let d = try dequantized(q, weight, scales, rows: m.rows, cols: m.cols, out)
            let bytes = MXGolden.narrow(d, out)
            #expect(MXGolden.fnv1a64(bytes) == hash, "dequantize to \(outName)")
            if out == .bf16 { #expect(bytes == Array(bf16)) }
        }
    }

    @Test(
        "every scale byte with every code decodes as mlx does",
        arguments: ["mxfp4", "nvfp4", "mxfp8"])
    func decodeTable(_ mode: String) throws {
        let c = try #require(MXGolden.manifest.decode.first { $0.mode == mode })
        let q = MicroscaledQuantization(mode: try #require(MicroscaledMode(rawValue: mode)))
        let raw = try MXGolden.bytes(c.file)
        let weight = MXGolden.words(raw[0..<c.weight_bytes])
        let scales = Array(raw[c.weight_bytes...])
        for (outName, hash) in c.dequant_fnv1a64 {
            let out = try #require(DType(pythonName: outName))
            let d = try dequantized(q, weight, scales, rows: c.rows, cols: c.cols, out)
            #expect(MXGolden.fnv1a64(MXGolden.narrow(d, out)) == hash, "\(mode) to \(outName)")
        }
    }

    @Test func nonFiniteValuesAreRefused() throws {
        let q = MicroscaledQuantization(mode: .mxfp4)
        for bad in [Float.nan, .infinity, -.infinity] {
            var w = [Float](repeating: 0.5, count: 2 * 64)
            w[64 + 7] = bad
            var wq = [UInt32](repeating: 0, count: 2 * 8)
            var s = [UInt8](repeating: 0, count: 2 * 2)
            #expect(throws: QuantizationError.nonFinite(row: 1, column: 7)) {
                try w.withUnsafeBufferPointer { wp in
                    try wq.withUnsafeMutableBufferPointer { qp in
                        try s.withUnsafeMutableBufferPointer { sp in
                            try q.quantize(
                                wp, rows: 2, cols: 64, sourceDType: .bf16, weight: qp, scales: sp,
                                threads: 1)
                        }
                    }
                }
            }
        }
    }

    @Test func modesFixTheirBitsAndGroupSize() throws {
        #expect(throws: QuantizationError.modeParameters(mode: "mxfp4", bits: nil, groupSize: 64)) {
            try MicroscaledQuantization(mode: .mxfp4, bits: nil, groupSize: 64)
        }
        #expect(throws: QuantizationError.modeParameters(mode: "mxfp8", bits: 4, groupSize: nil)) {
            try MicroscaledQuantization(mode: .mxfp8, bits: 4, groupSize: nil)
        }
        let nv = try MicroscaledQuantization(mode: .nvfp4, bits: 4, groupSize: 16)
        #expect(nv.quantizedShapes(for: [3, 5, 64]) == ([3, 5, 8], [3, 5, 4]))
        #expect(
            MicroscaledQuantization(mode: .mxfp8).quantizedShapes(for: [7, 96]) == (
                [7, 24], [7, 3]
            ))
        #expect(!nv.canQuantize(shape: [4, 24]) && nv.canQuantize(shape: [4, 32]))
    }

    @Test func e4m3RoundTripsEveryByte() {
        for b in 0...255 {
            let v = pk_mx_e4m3_to_f32(UInt8(b))
            if b & 0x7f == 0x7f {
                #expect(v.isNaN)
            } else {
                #expect(pk_mx_f32_to_e4m3(v) == UInt8(b), "byte \(b) reads \(v)")
            }
        }
        #expect(pk_mx_f32_to_e4m3(470) == 0x7e && pk_mx_f32_to_e4m3(-1e9) == 0xfe)
    }
}
