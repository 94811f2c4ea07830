import PhiFormats

/// Layer 4: the numbers inside the tensors, from the one scan of every file: NaN or Inf
/// anywhere (non-finite quantization scales and biases named as such), and per-tensor
/// statistics that give away an all-zero or constant tensor (a zero-filled hole, a tensor
/// written from a buffer that was never filled).
enum NumbersCheck {
    /// Packed weights of real models almost never hold a zero word (every value of the word at
    /// its group's minimum); more than this fraction of them means zero-filled data.
    static let zeroWordFraction = 0.01

    static func run(
        weights: WeightSet, statistics: [String: [String: TensorStatistics]], directory: String,
        ignored: Set<String> = []
    ) -> (LayerOutcome, [VerifiedTensor]) {
        var outcome = LayerOutcome(.numbers)
        var tensors: [VerifiedTensor] = []
        var scanned = 0
        for name in weights.opened.keys.sorted() {
            guard let file = weights.opened[name],
                let stats = statistics[directory + "/" + name]
            else { continue }
            for info in file.tensors {
                guard let s = stats[info.name] else { continue }
                scanned += 1
                tensors.append(record(info, s, file: name))
                // Leftovers every loader drops (the model layer warns about them) are never
                // read, so their numbers cannot make the model fail.
                guard !ignored.contains(info.name) else { continue }
                let weight = packedWeight(info.name, weights)
                judge(info, s, file: name, packedWeight: weight, &outcome)
            }
        }
        let unscanned = weights.opened.values.reduce(0) { sum, file in
            sum + file.tensors.filter { !TensorStatistics.supports($0.dtype) }.count
        }
        outcome.summary =
            "\(scanned) tensors scanned"
            + (unscanned > 0 ? " (\(unscanned) of other dtypes not)" : "")
            + (outcome.findings.isEmpty ? ": all finite, none all-zero or constant" : "")
        if scanned == 0 {
            outcome.skipped = true
            outcome.summary = "no readable safetensors to scan"
        }
        return (outcome, tensors)
    }

    /// The packed `.weight` beside `name` when that is the `.scales` or `.biases` of a
    /// quantized layer.
    private static func packedWeight(_ name: String, _ weights: WeightSet) -> TensorInfo? {
        guard name.hasSuffix(".scales") || name.hasSuffix(".biases"),
            let module = PackedTensorCount.modulePath(name),
            let weight = weights.tensors[module + ".weight"]?.info, weight.dtype == .u32
        else { return nil }
        return weight
    }

    private static func judge(
        _ info: TensorInfo, _ s: TensorStatistics, file: String, packedWeight: TensorInfo?,
        _ outcome: inout LayerOutcome
    ) {
        guard s.count > 0 else { return }
        let packed = packedWeight != nil
        if info.dtype == .u8 {
            if let packedWeight { judgeScaleBytes(info, s, packedWeight, file: file, &outcome) }
            return
        }
        if s.nan > 0 || s.inf > 0 {
            let what =
                [s.nan > 0 ? "\(s.nan) NaN" : nil, s.inf > 0 ? "\(s.inf) Inf" : nil]
                .compactMap { $0 }.joined(separator: " and ")
            let role =
                !packed ? "values" : info.name.hasSuffix(".scales") ? "scales" : "biases"
            outcome.error(
                packed ? "non_finite_scale" : "non_finite", file: file, tensor: info.name,
                "has \(what) \(role) (first at element \(s.firstNonFinite ?? 0) of \(s.count))",
                hint: "the file is corrupt, or the model was saved from a diverged run")
            return
        }
        if s.zeros == s.count && info.shape.count == 1 && info.name.hasSuffix(".bias") {
            // transformers initialises a Linear's or LayerNorm's bias to zeros: an untrained
            // (random) phi model has them, a trained one does not.
            outcome.warning(
                "all_zero", file: file, tensor: info.name,
                "is all zeros (\(s.count) values): an untrained model?")
            return
        }
        if s.zeros == s.count {
            outcome.error(
                "all_zero", file: file, tensor: info.name,
                "is all zeros (\(s.count) \(info.dtype == .u32 ? "words" : "values"))",
                hint: "a zero-filled file or a tensor that was never written")
            return
        }
        if s.count > 1, let lo = s.min, lo == s.max {
            let value = info.dtype == .u32 ? "word \(UInt32(lo))" : "value \(lo)"
            if info.shape.count >= 2 {
                outcome.error(
                    "constant_tensor", file: file, tensor: info.name,
                    "holds one \(value) in all \(s.count) elements")
            } else {
                outcome.warning(
                    "constant_tensor", file: file, tensor: info.name,
                    "holds one \(value) in all \(s.count) elements (an untrained model?)")
            }
            return
        }
        if info.dtype == .u32, Double(s.zeros) > zeroWordFraction * Double(s.count) {
            outcome.warning(
                "zero_words", file: file, tensor: info.name,
                "has \(s.zeros) zero words of \(s.count): part of it looks zero-filled")
        }
    }

    /// uint8 scales of an mxfp4/mxfp8 layer are E8M0: 255 is NaN. nvfp4's are E4M3: 0x7F and
    /// 0xFF are NaN and a set sign bit a negative scale, which mlx never writes (scales are
    /// max |w| / 6). nvfp4 is told apart by its scales' shape: groups of 16, so twice as many
    /// scales per row as packed words / 2 (mxfp4: a quarter, mxfp8: an eighth of the words).
    private static func judgeScaleBytes(
        _ info: TensorInfo, _ s: TensorStatistics, _ weight: TensorInfo, file: String,
        _ outcome: inout LayerOutcome
    ) {
        guard let hi = s.max, let words = weight.shape.last, let groups = info.shape.last,
            groups > 0
        else { return }
        let nvfp4 = words / groups == 2
        let limit: Double = nvfp4 ? 0x7e : 254
        guard hi > limit else { return }
        outcome.error(
            "non_finite_scale", file: file, tensor: info.name,
            "holds scale byte \(Int(hi)) (\(nvfp4 ? "E4M3: NaN or negative" : "E8M0: NaN")); "
                + "\(nvfp4 ? "nvfp4" : "mxfp4/mxfp8") scales stay below \(Int(limit) + 1)",
            hint: "the file is corrupt, or was not written by an MLX quantizer")
    }

    private static func record(
        _ info: TensorInfo, _ s: TensorStatistics, file: String
    ) -> VerifiedTensor {
        VerifiedTensor(
            name: info.name, file: file, dtype: info.dtype.rawValue, shape: info.shape,
            nan: s.nan, inf: s.inf, zeros: s.zeros, min: s.min, max: s.max,
            mean: info.dtype == .u32 || info.dtype == .u8 ? nil : s.mean)
    }
}
