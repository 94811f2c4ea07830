import PhiFormats

extension Converter {
    /// A `.fuse` step, streamed like the others: chunks of whole rows are read (widened, or
    /// dequantized as mlx's `mx.dequantize` does), fused in place (`ModuleAdapter.apply`:
    /// every row needs only its own values, DoRA's norm included) and written, narrowed to
    /// the output dtype or packed again; a packed output's scales and biases are kept for the
    /// whole tensor and written after it, as `quantize` does.
    func fuse(_ step: ConvertStep) throws {
        let adapter = step.adapter!
        let (rows, cols) = (adapter.outputs, adapter.inputs)
        let weightDType = step.computeDType
        let outDType = adapter.outputDType(weight: weightDType)
        let source = step.quantization  // nil: a float base weight
        let packedOutput = step.outputs.count > 1 ? source : nil

        // A packed base's scales and biases, whole (small), in the dequantized dtype.
        let sourceScales = source.map { castWhole(step.inputs[1], to: $0.scalesDType(weightDType: weightDType)) }
        let sourceBiases = source.flatMap { $0.hasBiases ? castWhole(step.inputs[2], to: weightDType) : nil }
        defer {
            sourceScales?.deallocate()
            sourceBiases?.deallocate()
        }
        let groupBytes = packedOutput.map { $0.groupsPerRow(cols) * $0.scalesDType(weightDType: outDType).size } ?? 0
        let outScales = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, rows * groupBytes), alignment: 64)
        let outBiases = UnsafeMutableRawBufferPointer.allocate(
            byteCount: packedOutput?.hasBiases == true ? rows * groupBytes : 1, alignment: 64)
        let owned = OwnedBuffers(outScales, outBiases)
        var handedOver = false
        defer { if !handedOver { owned.deallocate() } }

        let w = step.inputs[0]
        let chunkRows = max(1, chunkElements / cols)
        var row = 0
        while row < rows {
            try cancellation.check()
            let n = min(chunkRows, rows - row)
            let values = UnsafeMutableBufferPointer(rebasing: floats[0..<(n * cols)])
            let elements: Range<Int>
            if let q = source {
                let words = q.packedColumns(cols)
                elements = (row * words)..<((row + n) * words)
                try dequantizeRows(
                    w, q, row: row, rows: n, cols: cols, dtype: weightDType,
                    scales: sourceScales!, biases: sourceBiases, into: values)
            } else {
                elements = (row * cols)..<((row + n) * cols)
                let size = w.info.dtype.size
                widen(
                    UnsafeRawBufferPointer(rebasing: w.file.data(w.info)[(elements.lowerBound * size)..<(elements.upperBound * size)]),
                    w.info.dtype, into: values)
            }
            prefetch(w, elements: elements.upperBound..<min(elements.upperBound + elements.count, w.info.elementCount))
            adapter.apply(values, firstRow: row, rows: n, weightDType: weightDType, threads: threads)
            let slot = takeSlot()
            if let q = packedOutput {
                let words = q.packedColumns(cols)
                try q.quantize(
                    UnsafeBufferPointer(values), rows: n, cols: cols, dtype: outDType,
                    weight: slot.bindMemory(to: UInt32.self).extracting(0..<(n * words)),
                    scales: UnsafeMutableRawBufferPointer(rebasing: outScales[(row * groupBytes)..<((row + n) * groupBytes)]),
                    biases: q.hasBiases
                        ? UnsafeMutableRawBufferPointer(rebasing: outBiases[(row * groupBytes)..<((row + n) * groupBytes)]) : nil,
                    threads: threads)
                submit(slot, bytes: n * words * 4)
            } else {
                narrow(UnsafeBufferPointer(values), to: outDType, into: slot)
                submit(slot, bytes: n * cols * outDType.size)
            }
            pageRelease(w, elements: elements)()
            row += n
        }
        writer.endTensor(step.outputs[0].name)
        guard let q = packedOutput else { return }
        handedOver = true
        if q.hasBiases {
            writer.write(UnsafeRawBufferPointer(outScales))
            writer.endTensor(step.outputs[1].name)
            writer.write(UnsafeRawBufferPointer(outBiases)) { owned.deallocate() }
            writer.endTensor(step.outputs[2].name)
        } else {
            writer.write(UnsafeRawBufferPointer(outScales)) { owned.deallocate() }
            writer.endTensor(step.outputs[1].name)
        }
    }

    /// Rows `row ..< row + rows` of a packed weight, dequantized into `out`.
    private func dequantizeRows(
        _ w: SourceTensor, _ q: QuantizationScheme, row: Int, rows n: Int, cols: Int,
        dtype: DType, scales: UnsafeMutableRawBufferPointer,
        biases: UnsafeMutableRawBufferPointer?, into out: UnsafeMutableBufferPointer<Float>
    ) throws {
        let wordsPerRow = q.packedColumns(cols)
        let packed = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: n * wordsPerRow)
        defer { packed.deallocate() }
        // The mapped data need not be 4-byte aligned: copy the packed rows out.
        UnsafeMutableRawBufferPointer(packed).copyMemory(
            from: UnsafeRawBufferPointer(
                rebasing: w.file.data(w.info)[(row * wordsPerRow * 4)..<((row + n) * wordsPerRow * 4)]))
        let scaleSize = q.scalesDType(weightDType: dtype).size
        let groups = q.groupsPerRow(cols)
        let range = (row * groups * scaleSize)..<((row + n) * groups * scaleSize)
        try q.dequantize(
            weight: UnsafeBufferPointer(packed),
            scales: UnsafeRawBufferPointer(rebasing: scales[range]),
            biases: biases.map { UnsafeRawBufferPointer(rebasing: $0[range]) },
            rows: n, cols: cols, dtype: dtype, into: out, threads: threads)
    }
}
