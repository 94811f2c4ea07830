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
                judge(info, s, file: name, packed: isQuantizationData(info.name, weights), &outcome)
            }
        }
        let unscanned = weights.opened.values.reduce(0) { sum, file in
            sum + file.tensors.filter { !TensorStatistics.supports($0.dtype) }.count
        }
        outcome.summary =
            "\(scanned) tensors scanned"
            + (unscanned > 0 ? " (\(unscanned) of other dtypes not)" : "")
            + (outcome.hasErrors ? "" : ": all finite, none all-zero or constant")
        if scanned == 0 {
            outcome.skipped = true
            outcome.summary = "no readable safetensors to scan"
        }
        return (outcome, tensors)
    }

    /// Whether `name` is the `.scales` or `.biases` of a packed layer.
    private static func isQuantizationData(_ name: String, _ weights: WeightSet) -> Bool {
        guard name.hasSuffix(".scales") || name.hasSuffix(".biases"),
            let module = PackedTensorCount.modulePath(name)
        else { return false }
        return weights.tensors[module + ".weight"]?.info.dtype == .u32
    }

    private static func judge(
        _ info: TensorInfo, _ s: TensorStatistics, file: String, packed: Bool,
        _ outcome: inout LayerOutcome
    ) {
        guard s.count > 0 else { return }
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

    private static func record(
        _ info: TensorInfo, _ s: TensorStatistics, file: String
    ) -> VerifiedTensor {
        VerifiedTensor(
            name: info.name, file: file, dtype: info.dtype.rawValue, shape: info.shape,
            nan: s.nan, inf: s.inf, zeros: s.zeros, min: s.min, max: s.max,
            mean: info.dtype == .u32 ? nil : s.mean)
    }
}
