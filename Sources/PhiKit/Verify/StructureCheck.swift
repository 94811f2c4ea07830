import Foundation
import PhiFormats

/// The weights of a model directory as the structure layer found them; the model and numbers
/// layers work from this.
struct WeightSet: @unchecked Sendable {  // SafeTensorsFile is immutable after init
    /// Top-level `*.safetensors` files that passed the format's checks, by file name.
    var opened: [String: SafeTensorsFile] = [:]
    var index: ShardIndex?
    /// The weight files, chosen the way loaders choose them (see ModelWeights).
    var selected: [String] = []
    /// The rule that chose them.
    var selection: ModelWeights.Selection?
    /// Tensor name → the selected file that holds it and its entry.
    var tensors: [String: (file: String, info: TensorInfo)] = [:]
    /// Tensors the index places in a shard that is missing or unreadable (already reported:
    /// the model layer does not report them as missing again).
    var unavailable: Set<String> = []
}

/// Layer 2: every safetensors file valid (PhiFormats' full structural validation), and the
/// shard index consistent with the shards: every shard it names exists, every tensor is
/// where it says and appears once, and no tensor or shard is left out of it.
enum StructureCheck {
    static func run(files: ModelFiles) -> (WeightSet, LayerOutcome) {
        var outcome = LayerOutcome(.structure)
        var weights = WeightSet()
        let candidates = files.files.filter {
            !$0.path.contains("/") && $0.path.hasSuffix(".safetensors") && $0.size != nil
        }
        for file in candidates {
            do {
                weights.opened[file.path] = try SafeTensorsFile(path: file.absolute)
            } catch {
                outcome.error(
                    "invalid_safetensors", file: file.path, tensor: tensorName(in: error),
                    withoutPath(error.message, file.absolute),
                    hint: "the file is truncated or corrupt; download or convert it again")
            }
        }
        let names = candidates.map(\.path)
        if files.file(ShardIndex.fileName) != nil {
            do {
                weights.index = try ShardIndex(
                    data: readBytes(files, ShardIndex.fileName),
                    source: ShardIndex.fileName)
            } catch {
                outcome.error("invalid_index", file: ShardIndex.fileName, error.problem)
            }
        }
        select(&weights, names: names, &outcome)
        collectTensors(&weights, &outcome)
        if weights.selection == .index {
            checkIndex(&weights, names: names, &outcome)
        }
        let count = weights.tensors.count
        outcome.summary =
            "\(names.count) safetensors \(names.count == 1 ? "file" : "files"), "
            + "\(count) tensors"
            + (weights.selection == .index ? ", index consistent" : "")
        if outcome.hasErrors {
            outcome.summary = "\(names.count) safetensors \(names.count == 1 ? "file" : "files")"
        }
        return (weights, outcome)
    }

    /// The files loaders read (PhiFormats' `WeightFileChoice`, the rule `ModelWeights`
    /// follows), with every problem of the choice reported rather than only the first.
    private static func select(
        _ weights: inout WeightSet, names: [String], _ outcome: inout LayerOutcome
    ) {
        let choice = WeightFileChoice(names: names, shards: weights.index?.shardFiles ?? [])
        for shard in choice.missingShards {
            outcome.error(
                "missing_shard", file: shard, "is named by \(ShardIndex.fileName) but missing",
                hint: "the download looks incomplete; pull the model again")
        }
        if choice.indexIsStale {
            outcome.warning(
                "stale_index", file: ShardIndex.fileName,
                "names none of the weight files present (an index left from another model?); "
                    + "loaders that follow it will fail")
        }
        weights.selected = choice.files
        weights.selection = choice.selection
        if choice.selection == nil && choice.missingShards.isEmpty {
            outcome.error("no_weights", "no safetensors weights in the model directory")
        }
    }

    /// Tensors of the selected files; one tensor in two files is an error.
    private static func collectTensors(_ weights: inout WeightSet, _ outcome: inout LayerOutcome) {
        for name in weights.selected {
            guard let file = weights.opened[name] else { continue }
            for info in file.tensors {
                if let first = weights.tensors[info.name] {
                    outcome.error(
                        "duplicate_tensor", file: name, tensor: info.name,
                        "is also in \(first.file)")
                    continue
                }
                weights.tensors[info.name] = (name, info)
            }
        }
        // A shard that exists but failed validation: what the index puts there is unavailable.
        for (tensor, shard) in weights.index?.weightMap ?? [:] where weights.opened[shard] == nil {
            weights.unavailable.insert(tensor)
        }
    }

    private static func checkIndex(
        _ weights: inout WeightSet, names: [String], _ outcome: inout LayerOutcome
    ) {
        guard let index = weights.index else { return }
        for (tensor, shard) in index.weightMap.sorted(by: { $0.key < $1.key })
        where weights.opened[shard] != nil {
            guard let found = weights.tensors[tensor], found.file == shard else {
                let elsewhere = weights.tensors[tensor].map { " (it is in \($0.file))" } ?? ""
                outcome.error(
                    "tensor_not_in_shard", file: shard, tensor: tensor,
                    "\(ShardIndex.fileName) places it in \(shard), which does not hold it"
                        + elsewhere)
                continue
            }
        }
        for (tensor, location) in weights.tensors.sorted(by: { $0.key < $1.key })
        where index.weightMap[tensor] == nil {
            outcome.error(
                "tensor_not_in_index", file: location.file, tensor: tensor,
                "is not listed in \(ShardIndex.fileName); loaders that follow the index "
                    + "would not load it")
        }
        let bytes = weights.tensors.values.reduce(0) { $0 + $1.info.byteCount }
        if let total = index.totalSize, total != bytes, weights.unavailable.isEmpty {
            outcome.warning(
                "index_total_size", file: ShardIndex.fileName,
                "metadata.total_size is \(total), the shards hold \(bytes) bytes of tensors")
        }
        for name in names where !index.shardFiles.contains(name) {
            if name.hasPrefix("model") {
                outcome.error(
                    "stray_shard", file: name,
                    "is not named by \(ShardIndex.fileName), but mlx_lm loads every "
                        + "model*.safetensors")
            } else {
                outcome.warning(
                    "unused_weights", file: name, "is not named by \(ShardIndex.fileName)")
            }
        }
    }

    /// The tensor a safetensors error is about, if it names one.
    static func tensorName(in error: SafeTensorsError) -> String? {
        switch error {
        case .duplicateTensor(_, let t), .badTensorEntry(_, let t, _), .unknownDType(_, let t, _),
            .badShape(_, let t, _), .sizeMismatch(_, let t, _, _),
            .offsetsOutOfBounds(_, let t, _, _, _), .offsetsOverlap(_, let t, _):
            t
        case .gapBetweenTensors(_, let t, _, _): t
        default: nil
        }
    }

    /// "<path>: problem" → "problem" (findings name the file separately).
    static func withoutPath(_ message: String, _ path: String) -> String {
        message.hasPrefix(path + ": ") ? String(message.dropFirst(path.count + 2)) : message
    }

    private static func readBytes(_ files: ModelFiles, _ name: String) -> [UInt8] {
        guard let file = files.file(name),
            let data = FileManager.default.contents(
                atPath: file.absolute)
        else { return [] }
        return Array(data)
    }
}
