import Dispatch
import Foundation
import PhiFormats

/// Runs a `ConvertPlan`'s steps into a directory, streaming.
///
/// Memory stays bounded by the chunk size, not by the tensor: every step walks its tensor in
/// chunks of whole rows (at most `chunkElements` values), converts the chunk from the mapped
/// source into an output buffer, hands that to the writer thread, and tells the kernel to drop
/// the source pages it has read (the mapping would otherwise keep them resident, and a 7.6 GB
/// model would end up in RSS). Only per-group scales and biases are kept for a whole tensor
/// (they come after the packed weight in the file).
///
/// Parallelism (all cores): quantization runs on blocks of rows, each thread widening its own
/// rows from bf16/f16 straight before quantizing them while they are in its cache; the writer
/// thread copies the previous chunk to disk meanwhile (two output buffers, used in turn); the
/// kernel reads the next chunk ahead (`willNeed`).
final class Converter {
    /// Values per chunk (default 4 Mi: 16 MB as float32, small next to any RSS budget, large
    /// enough for the threads to amortise their start).
    let chunkElements: Int

    let plan: ConvertPlan
    let threads: Int
    /// Looked at between tensors.
    let cancellation: CancellationToken?
    let writer: ConvertWriter
    let floats: UnsafeMutableBufferPointer<Float>  // (chunk) widened values
    private let halves: UnsafeMutableRawBufferPointer  // (as floats, × 2 bytes) rounding scratch
    /// Floats of per-thread scratch for `QuantizeChunk` (a block of rows).
    private let scratchElements: Int
    /// Output buffers used in turn: one is being written while the other is filled.
    private let slots: [UnsafeMutableRawBufferPointer]  // 2 × (chunk × 4 bytes)
    private var nextSlot = 0
    private let freeSlots = DispatchSemaphore(value: 2)

    /// `blockElements`: values per quantization block (default 128 Ki: 512 KB of float32
    /// per thread, so widened rows are still in L2 when they are quantized).
    init(
        plan: ConvertPlan, directory: String, threads: Int, chunkElements: Int = 4 << 20,
        blockElements: Int = 128 << 10, cancellation: CancellationToken? = nil
    ) {
        self.plan = plan
        self.cancellation = cancellation
        self.threads = max(1, threads)
        self.chunkElements = max(1, chunkElements)
        writer = ConvertWriter(output: ConvertOutput(directory: directory, shards: plan.shards))
        // A chunk is whole rows: at least one row even if a row is longer than chunkElements.
        // Rows of inputs count too: a quantized weight's float rows are wider than its outputs'.
        let widest =
            plan.steps.flatMap { $0.inputs.map(\.info.shape) + $0.outputs.map(\.shape) }
            .compactMap(\.last).max() ?? 1
        let capacity = max(self.chunkElements, widest)
        scratchElements = max(blockElements, widest)
        let floatCount = max(capacity, self.threads * scratchElements)
        floats = .allocate(capacity: floatCount)
        halves = .allocate(byteCount: floatCount * 2, alignment: 64)
        slots = (0..<2).map { _ in .allocate(byteCount: capacity * 4, alignment: 64) }
    }

    deinit {
        floats.deallocate()
        halves.deallocate()
        slots.forEach { $0.deallocate() }
    }

    /// Writes every tensor. `report(tensorsDone, bytesRead, bytesWritten, name)` is called
    /// after each step (bytes written = handed to the writer).
    func run(
        _ report: (_ tensorsDone: Int, _ bytesRead: Int, _ bytesWritten: Int, _ tensor: String) ->
            Void
    ) throws {
        var done = 0
        var read = 0
        do {
            for step in plan.steps {
                try cancellation.check()
                switch step.kind {
                case .cast: try cast(step)
                case .quantize: try quantize(step)
                case .dequantize: try dequantize(step)
                case .fuse: try fuse(step)
                }
                try writer.check()
                done += step.outputs.count
                read += step.inputs.reduce(0) { $0 + $1.info.byteCount }
                report(done, read, writer.bytesSubmitted, step.outputs.last?.name ?? "")
            }
            try writer.finish()
        } catch {
            writer.abandon()
            throw error
        }
    }

    /// The next output buffer, once the writer is done with its previous contents.
    func takeSlot() -> UnsafeMutableRawBufferPointer {
        freeSlots.wait()
        defer { nextSlot = 1 - nextSlot }
        return slots[nextSlot]
    }

    func submit(_ slot: UnsafeMutableRawBufferPointer, bytes: Int) {
        let free = freeSlots
        writer.write(UnsafeRawBufferPointer(rebasing: slot[0..<bytes])) { free.signal() }
    }

    // MARK: - Steps

    /// Copies a tensor (raw bytes straight from the mapping when the dtype is unchanged) or
    /// casts it, chunk by chunk; several inputs (experts) make one tensor, in order.
    private func cast(_ step: ConvertStep) throws {
        let out = step.outputs[0]
        for src in step.inputs { try cast(src, to: out) }
        writer.endTensor(out.name)
    }

    private func cast(_ src: SourceTensor, to out: TensorSpec) throws {
        let inSize = src.info.dtype.size
        let count = src.info.elementCount
        let data = src.file.data(src.info)
        var start = 0
        while start < count {
            let n = min(chunkElements, count - start)
            prefetch(src, elements: (start + n)..<min(count, start + 2 * n))
            let chunk = UnsafeRawBufferPointer(
                rebasing: data[(start * inSize)..<((start + n) * inSize)])
            if src.info.dtype == out.dtype {
                let release = pageRelease(src, elements: start..<(start + n))
                writer.write(chunk) { release() }
            } else {
                widen(chunk, src.info.dtype, into: floats)
                let slot = takeSlot()
                narrow(UnsafeBufferPointer(rebasing: floats[0..<n]), to: out.dtype, into: slot)
                submit(slot, bytes: n * out.dtype.size)
                pageRelease(src, elements: start..<(start + n))()
            }
            start += n
        }
    }

    /// Quantizes a float weight: rows chunk by chunk into the packed output, scales (and
    /// affine biases) into whole-tensor buffers written after the packed weight. Several
    /// inputs (experts) are the rows of one tensor, in order.
    private func quantize(_ step: ConvertStep) throws {
        let q = step.quantization!
        let rows = step.outputs[0].shape.dropLast().reduce(1, *)
        let cols = step.inputs[0].info.shape.last!
        let dt = step.computeDType
        // scale bytes per row
        let groupBytes = q.groupsPerRow(cols) * q.scalesDType(weightDType: dt).size
        let scales = UnsafeMutableRawBufferPointer.allocate(
            byteCount: rows * groupBytes, alignment: 64)
        let biases = UnsafeMutableRawBufferPointer.allocate(
            byteCount: q.hasBiases ? rows * groupBytes : 1, alignment: 64)
        var first = 0  // the input's first row in the output
        for src in step.inputs {
            let count = src.info.shape.dropLast().reduce(1, *)
            try quantize(
                src, q, cols: cols, dtype: dt, groupBytes: groupBytes,
                scales: scales.baseAddress! + first * groupBytes,
                biases: biases.baseAddress! + first * groupBytes)
            first += count
        }
        writer.endTensor(step.outputs[0].name)
        let owned = OwnedBuffers(scales, biases)
        guard q.hasBiases else {
            writer.write(UnsafeRawBufferPointer(scales)) { owned.deallocate() }
            writer.endTensor(step.outputs[1].name)
            return
        }
        writer.write(UnsafeRawBufferPointer(scales))
        writer.endTensor(step.outputs[1].name)
        writer.write(UnsafeRawBufferPointer(biases)) { owned.deallocate() }
        writer.endTensor(step.outputs[2].name)
    }

    /// One input's rows into the packed output (handed to the writer), its scales and biases
    /// at `scales` / `biases`.
    private func quantize(
        _ src: SourceTensor, _ q: QuantizationScheme, cols: Int, dtype dt: DType,
        groupBytes: Int, scales: UnsafeMutableRawPointer, biases: UnsafeMutableRawPointer
    ) throws {
        let rows = src.info.shape.dropLast().reduce(1, *)
        let data = src.file.data(src.info)
        let inSize = src.info.dtype.size
        let chunkRows = max(1, chunkElements / cols)
        var row = 0
        while row < rows {
            let n = min(chunkRows, rows - row)
            prefetch(src, elements: ((row + n) * cols)..<(min(rows, row + 2 * n) * cols))
            let slot = takeSlot()
            let job = QuantizeChunk(
                source: UInt(bitPattern: data.baseAddress! + row * cols * inSize),
                sourceDType: src.info.dtype,
                floats: UInt(bitPattern: floats.baseAddress!),
                halves: UInt(bitPattern: halves.baseAddress!),
                packed: UInt(bitPattern: slot.baseAddress!),
                scales: UInt(bitPattern: scales + row * groupBytes),
                biases: UInt(bitPattern: biases + row * groupBytes),
                rows: n, cols: cols, groupBytes: groupBytes, dtype: dt, quantization: q)
            try job.run(threads: threads, scratchElements: scratchElements)
            submit(slot, bytes: n * q.packedColumns(cols) * 4)
            pageRelease(src, elements: (row * cols)..<((row + n) * cols))()
            row += n
        }
    }

    /// Dequantizes a packed layer into a float weight, chunk by chunk.
    private func dequantize(_ step: ConvertStep) throws {
        let (w, s) = (step.inputs[0], step.inputs[1])
        let q = step.quantization!
        let out = step.outputs[0]
        let dt = step.computeDType
        let rows = out.shape.dropLast().reduce(1, *)
        let cols = out.shape.last!
        let groups = q.groupsPerRow(cols)
        let wordsPerRow = q.packedColumns(cols)
        // Affine scales and biases, cast first (mlx's dtype pass runs before dequantize) into
        // aligned buffers of `dt`; uint8 scales are copied as they are.
        let scaleType = q.scalesDType(weightDType: dt)
        let scales = castWhole(s, to: scaleType)
        let biases = q.hasBiases ? castWhole(step.inputs[2], to: dt) : nil
        defer {
            scales.deallocate()
            biases?.deallocate()
        }
        let wData = w.file.data(w.info)
        let chunkRows = max(1, chunkElements / cols)
        let packed = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: chunkRows * wordsPerRow)
        defer { packed.deallocate() }
        var row = 0
        while row < rows {
            let n = min(chunkRows, rows - row)
            prefetch(
                w, elements: ((row + n) * wordsPerRow)..<(min(rows, row + 2 * n) * wordsPerRow))
            let words = n * wordsPerRow
            // The mapped data need not be 4-byte aligned: copy the packed rows out.
            UnsafeMutableRawBufferPointer(packed).copyMemory(
                from: UnsafeRawBufferPointer(
                    rebasing: wData[(row * wordsPerRow * 4)..<((row + n) * wordsPerRow * 4)]))
            let sb = row * groups * scaleType.size
            let se = (row + n) * groups * scaleType.size
            try q.dequantize(
                weight: UnsafeBufferPointer(rebasing: packed[0..<words]),
                scales: UnsafeRawBufferPointer(rebasing: scales[sb..<se]),
                biases: biases.map { UnsafeRawBufferPointer(rebasing: $0[sb..<se]) },
                rows: n, cols: cols, dtype: dt,
                into: UnsafeMutableBufferPointer(rebasing: floats[0..<(n * cols)]), threads: threads
            )
            let slot = takeSlot()
            narrow(UnsafeBufferPointer(rebasing: floats[0..<(n * cols)]), to: out.dtype, into: slot)
            submit(slot, bytes: n * cols * out.dtype.size)
            pageRelease(w, elements: (row * wordsPerRow)..<((row + n) * wordsPerRow))()
            row += n
        }
        writer.endTensor(out.name)
    }

    // MARK: - Helpers

    /// A whole (small) float tensor cast to `dtype`, in a fresh aligned buffer.
    func castWhole(_ t: SourceTensor, to dtype: DType) -> UnsafeMutableRawBufferPointer {
        let n = t.info.elementCount
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: max(1, n * dtype.size), alignment: 64)
        let raw = t.file.data(t.info)
        if t.info.dtype == dtype {
            buffer.copyMemory(from: raw)
            return buffer
        }
        let f = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, n))
        defer { f.deallocate() }
        widen(raw, t.info.dtype, into: f)
        narrow(UnsafeBufferPointer(rebasing: f[0..<n]), to: dtype, into: buffer)
        return buffer
    }

    /// Element range of a tensor as a sub-tensor entry, for page advice.
    private func slice(_ t: SourceTensor, _ elements: Range<Int>) -> TensorInfo? {
        guard !elements.isEmpty else { return nil }
        let size = t.info.dtype.size
        let base = t.info.dataOffsets.lowerBound
        let range = (base + elements.lowerBound * size)..<(base + elements.upperBound * size)
        return TensorInfo(
            name: t.info.name, dtype: t.info.dtype, shape: [elements.count], dataOffsets: range)
    }

    func prefetch(_ t: SourceTensor, elements: Range<Int>) {
        if let s = slice(t, elements) { t.file.willNeed(s) }
    }

    /// Drops the source pages of `elements` when called (after their last use).
    func pageRelease(_ t: SourceTensor, elements: Range<Int>) -> @Sendable () -> Void {
        let file = t.file
        let s = slice(t, elements)
        return { if let s { file.release(s) } }
    }
}

/// Source bytes (f32/f16/bf16, any alignment) → float32 (exact).
func widen(
    _ raw: UnsafeRawBufferPointer, _ dtype: DType, into dst: UnsafeMutableBufferPointer<Float>
) {
    switch dtype {
    case .bf16, .f16:
        HalfConvert.widen(raw, dtype: dtype, into: dst)
    default:  // .f32 (the plan admits nothing else)
        UnsafeMutableRawBufferPointer(dst).copyMemory(from: raw)
    }
}

/// float32 → `dtype` bytes in `dst`, rounding to nearest even.
func narrow(
    _ src: UnsafeBufferPointer<Float>, to dtype: DType, into dst: UnsafeMutableRawBufferPointer
) {
    switch dtype {
    case .f32:
        dst.copyMemory(from: UnsafeRawBufferPointer(src))
    case .bf16:
        HalfConvert.f32ToBF16(src, into: dst.bindMemory(to: UInt16.self))
    default:  // .f16
        HalfConvert.f32ToF16(src, into: dst.bindMemory(to: UInt16.self))
    }
}

/// Scales and biases of one tensor, freed by the writer once written.
final class OwnedBuffers: @unchecked Sendable {
    let a: UnsafeMutableRawBufferPointer, b: UnsafeMutableRawBufferPointer
    init(_ a: UnsafeMutableRawBufferPointer, _ b: UnsafeMutableRawBufferPointer) {
        (self.a, self.b) = (a, b)
    }
    func deallocate() {
        a.deallocate()
        b.deallocate()
    }
}

/// One chunk of rows to widen and quantize, split into blocks over threads. Addresses are
/// carried as integers so the blocks can cross threads under Swift 6 checking; each block
/// touches only its own rows of every buffer.
private struct QuantizeChunk: Sendable {
    let source: UInt, sourceDType: DType, floats: UInt, halves: UInt, packed: UInt
    let scales: UInt, biases: UInt
    let rows: Int, cols: Int, groupBytes: Int, dtype: DType
    let quantization: QuantizationScheme

    /// Splits the rows into one contiguous part per thread; each thread walks its part block
    /// by block through its own scratch (`scratchElements` floats at `floats + part·scratch`),
    /// so the widened values are still in its L2 cache when they are quantized.
    func run(threads: Int, scratchElements: Int) throws {
        let blockRows = max(1, min(rows, scratchElements / cols))
        let parts = max(1, min(threads, (rows + blockRows - 1) / blockRows))
        let failure = FailureBox()
        let body: @Sendable (Int) -> Void = { part in
            let begin = rows * part / parts
            let end = rows * (part + 1) / parts
            var r = begin
            while r < end {
                let n = min(blockRows, end - r)
                do { try self.block(r, n, scratch: part * scratchElements) } catch {
                    failure.set(error)
                }
                r += n
            }
        }
        if parts == 1 {
            body(0)
        } else {
            DispatchQueue.concurrentPerform(iterations: parts, execute: body)
        }
        if let error = failure.error { throw error }
    }

    private func block(_ r0: Int, _ n: Int, scratch: Int) throws {
        let count = n * cols
        let f = UnsafeMutableBufferPointer(
            start: UnsafeMutablePointer<Float>(bitPattern: floats)! + scratch,
            count: count)
        widen(
            UnsafeRawBufferPointer(
                start: UnsafeRawPointer(bitPattern: source)! + r0 * cols * sourceDType.size,
                count: count * sourceDType.size), sourceDType, into: f)
        if dtype != sourceDType && dtype != .f32 {
            // mlx casts the model before quantizing: round to the target type and back.
            let h = UnsafeMutableRawBufferPointer(
                start: UnsafeMutableRawPointer(bitPattern: halves)! + scratch * 2,
                count: count * 2)
            narrow(UnsafeBufferPointer(f), to: dtype, into: h)
            widen(UnsafeRawBufferPointer(h), dtype, into: f)
        }
        let words = quantization.packedColumns(cols)
        try quantization.quantize(
            UnsafeBufferPointer(f), rows: n, cols: cols, dtype: dtype,
            weight: UnsafeMutableBufferPointer(
                start: UnsafeMutablePointer<UInt32>(bitPattern: packed)! + r0 * words,
                count: n * words),
            scales: UnsafeMutableRawBufferPointer(
                start: UnsafeMutableRawPointer(bitPattern: scales)! + r0 * groupBytes,
                count: n * groupBytes),
            biases: quantization.hasBiases
                ? UnsafeMutableRawBufferPointer(
                    start: UnsafeMutableRawPointer(bitPattern: biases)! + r0 * groupBytes,
                    count: n * groupBytes) : nil,
            threads: 1)
    }
}

private final class FailureBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: (any Error)?
    func set(_ e: any Error) { lock.withLock { if stored == nil { stored = e } } }
    var error: (any Error)? { lock.withLock { stored } }
}
