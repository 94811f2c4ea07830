import Foundation
import PhiFormats

/// A model's stored weights read as float64, exactly: float tensors widened; an affine packed
/// layer as `scale · q + bias` computed in float64 from its codes (not rounded back to the
/// scales' dtype, as running the model would); a micro-scaled one as `value · scale`, exact in
/// float32 already. Rows are dequantized when a product needs them, so the float64 model never
/// exists whole (a 3.8B model would be 30 GB).
final class ExactWeights {
    let layout: ModelLayout
    private let weights: ModelWeights
    /// An mlx-lm LoRA/DoRA adapter's modules, added to their weights in float64: the
    /// reference `run --adapter-path` is held to.
    private let adapter: [String: ModuleAdapter]

    init(directory: String, adapterPath: String? = nil) throws {
        let layout = try ModelLayout(config: try ModelConfig.load(directory: directory))
        self.layout = layout
        weights = try ModelWeights(directory: directory)
        let modules = try adapterPath.map { try LoRAAdapter.load(directory: $0, layout: layout).modules } ?? []
        adapter = Dictionary(uniqueKeysWithValues: modules.map { ($0.path, $0) })
    }

    /// A float tensor (a norm weight, a bias) as float64.
    func vector(_ name: String) throws -> [Double] {
        guard let (file, info) = weights.tensor(name) else {
            throw TensorSetError.missingTensor(name: name, directory: weights.directory)
        }
        var floats = [Float](repeating: 0, count: info.elementCount)
        floats.withUnsafeMutableBufferPointer { widen(file.data(info), info.dtype, into: $0) }
        return floats.map(Double.init)
    }

    /// `x · Wᵀ` for `x` (n × in) and the Linear/Embedding `module` (out × in): n × out.
    func multiply(_ x: [Double], rows n: Int, by module: String) throws -> [Double] {
        let spec = layout.module(module)
        let (outputs, inputs) = (spec.shape[0], spec.shape[1])
        var y = [Double](repeating: 0, count: n * outputs)
        var row = [Double](repeating: 0, count: inputs)
        let adapted = adapter[module]
        for o in 0..<outputs {
            try self.row(o, of: spec, into: &row)
            if let adapted { adapt(&row, o, adapted) }
            for t in 0..<n {
                var sum = 0.0
                for i in 0..<inputs { sum += x[t * inputs + i] * row[i] }
                y[t * outputs + o] = sum
            }
        }
        return y
    }

    /// Row `o` of W + scale·B·A (the adapter's factors as fuse reads them), and for DoRA
    /// scaled to the magnitude: m[o] / ‖row‖ · row, all in float64.
    private func adapt(_ row: inout [Double], _ o: Int, _ m: ModuleAdapter) {
        let r = m.rank
        for i in 0..<m.inputs {
            var delta = 0.0
            for k in 0..<r { delta += Double(m.scaledB[o * r + k]) * Double(m.a[i * r + k]) }
            row[i] += delta
        }
        guard let magnitude = m.magnitude else { return }
        let norm = row.reduce(0) { $0 + $1 * $1 }.squareRoot()
        let factor = Double(magnitude[o]) / norm
        for i in 0..<m.inputs { row[i] *= factor }
    }

    /// Row `r` of a module's weight, exactly, as float64.
    func row(_ r: Int, of spec: ModuleSpec, into out: inout [Double]) throws {
        let cols = spec.shape[1]
        guard let (wFile, wInfo) = weights.tensor(spec.weightName) else {
            throw TensorSetError.missingTensor(name: spec.weightName, directory: weights.directory)
        }
        guard case .quantized(let group, let bits, let mode) = layout.quantization(of: spec),
            let (sFile, sInfo) = weights.tensor(spec.scalesName)
        else {
            let size = wInfo.dtype.size
            let raw = wFile.data(wInfo)
            var floats = [Float](repeating: 0, count: cols)
            floats.withUnsafeMutableBufferPointer {
                widen(
                    UnsafeRawBufferPointer(rebasing: raw[(r * cols * size)..<((r + 1) * cols * size)]),
                    wInfo.dtype, into: $0)
            }
            for i in 0..<cols { out[i] = Double(floats[i]) }
            return
        }
        let scheme = try QuantizationScheme(mode: mode, bits: bits, groupSize: group)
        let words = scheme.packedColumns(cols)
        let groups = scheme.groupsPerRow(cols)
        var packed = [UInt32](repeating: 0, count: words)
        packed.withUnsafeMutableBytes {
            $0.copyMemory(
                from: UnsafeRawBufferPointer(rebasing: wFile.data(wInfo)[(r * words * 4)..<((r + 1) * words * 4)]))
        }
        var values = [Float](repeating: 0, count: cols)
        let scaleBytes = sInfo.dtype.size
        let scaleRow = UnsafeRawBufferPointer(
            rebasing: sFile.data(sInfo)[(r * groups * scaleBytes)..<((r + 1) * groups * scaleBytes)])
        if scheme.hasBiases {
            // The codes: dequantized with scale 1 and bias 0 in float32; then scale·q + bias.
            let ones = [Float](repeating: 1, count: groups)
            let zeros = [Float](repeating: 0, count: groups)
            try packed.withUnsafeBufferPointer { p in
                try ones.withUnsafeBytes { s in
                    try zeros.withUnsafeBytes { b in
                        try values.withUnsafeMutableBufferPointer { v in
                            try scheme.dequantize(
                                weight: p, scales: s, biases: b, rows: 1, cols: cols, dtype: .f32, into: v)
                        }
                    }
                }
            }
            guard let (bFile, bInfo) = weights.tensor(spec.biasesName) else {
                throw TensorSetError.missingTensor(name: spec.biasesName, directory: weights.directory)
            }
            var scales = [Float](repeating: 0, count: groups)
            var biases = [Float](repeating: 0, count: groups)
            scales.withUnsafeMutableBufferPointer { widen(scaleRow, sInfo.dtype, into: $0) }
            biases.withUnsafeMutableBufferPointer {
                widen(
                    UnsafeRawBufferPointer(
                        rebasing: bFile.data(bInfo)[(r * groups * scaleBytes)..<((r + 1) * groups * scaleBytes)]),
                    bInfo.dtype, into: $0)
            }
            for i in 0..<cols {
                let g = i / group
                out[i] = Double(scales[g]) * Double(values[i]) + Double(biases[g])
            }
        } else {
            try packed.withUnsafeBufferPointer { p in
                try values.withUnsafeMutableBufferPointer { v in
                    try scheme.dequantize(
                        weight: p, scales: scaleRow, biases: nil, rows: 1, cols: cols, dtype: .f32, into: v)
                }
            }
            for i in 0..<cols { out[i] = Double(values[i]) }
        }
    }
}
