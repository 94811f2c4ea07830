import Foundation
import PhiFormats
import PhiText

/// `verify --target`: will this program load the model, and stop where a turn ends? Each
/// finding names the config.json key, file or token and says what the loader would do.
/// With `fix`, an end-of-turn token the loader would not stop at is added to
/// generation_config.json (the one repair that is unambiguous); the finding then says so.
struct TargetCheck {
    let directory: String
    let targets: [LoaderTarget]
    let fix: Bool
    private(set) var outcome = LayerOutcome(.target)
    /// What --fix changed (relative file names).
    private(set) var fixed: [String] = []

    init(directory: String, targets: [LoaderTarget], fix: Bool) {
        self.directory = directory
        self.targets = targets
        self.fix = fix
    }

    mutating func run() -> LayerOutcome {
        let raw: JSONValue
        do {
            raw = try JSONValue(parsing: try LocalFile.read(directory + "/config.json"))
        } catch {
            outcome.error("target_config", file: "config.json", "cannot be read as JSON")
            return outcome
        }
        var notes: [String] = []
        for target in targets {
            switch target {
            case .mlxSwift: checkMLXSwiftConfig(raw)
            case .mlxLM: checkMLXLMConfig(raw)
            case .llamaCpp:
                var check = LlamaCppCheck(directory: directory, outcome: outcome)
                check.run(raw)
                outcome = check.outcome
                notes += check.notes
            }
        }
        checkTokenizerFiles()
        checkEndOfTurn()
        outcome.summary =
            targets.map(\.rawValue).joined(separator: ", ") + " (facts from "
            + targets.map(\.sourceVersion).joined(separator: "; ") + ")"
            + notes.map { "; " + $0 }.joined()
            + (fixed.isEmpty ? "" : "; fixed " + fixed.joined(separator: ", "))
        return outcome
    }

    private mutating func checkMLXSwiftConfig(_ raw: JSONValue) {
        let type = raw["model_type"]?.stringValue ?? ""
        guard MLXSwiftFacts.modelTypes.contains(type) else {
            outcome.error(
                "target_model_type", file: "config.json",
                "mlx-swift: model_type '\(type)' is not one LLMModelFactory creates",
                hint: "MLX Swift would fail with unsupportedModelType")
            return
        }
        for key in MLXSwiftFacts.keys[type] ?? [] {
            let value = raw[key.name]
            if value == nil || value?.isNull == true {
                if key.required {
                    outcome.error(
                        "target_missing_key", file: "config.json",
                        "mlx-swift: '\(key.name)' is missing; \(type)'s configuration requires it",
                        hint: "MLX Swift would fail with \"Missing field '\(key.name)'\"")
                }
                continue
            }
            if !Self.decodes(value!, as: key.type) {
                outcome.error(
                    "target_key_type", file: "config.json",
                    "mlx-swift: '\(key.name)' must be \(key.type.rawValue)")
            }
        }
        checkQuantization(raw["quantization"], modes: MLXSwiftFacts.quantizationModes, target: "mlx-swift")
    }

    private mutating func checkMLXLMConfig(_ raw: JSONValue) {
        let type = raw["model_type"]?.stringValue ?? ""
        if !MLXLMFacts.modelTypes.contains(MLXLMFacts.remapping[type] ?? type) {
            outcome.error(
                "target_model_type", file: "config.json",
                "mlx-lm: model_type '\(type)' has no module in mlx_lm.models")
        }
        guard let q = raw["quantization"], let mode = q["mode"]?.stringValue else { return }
        if !MLXSwiftFacts.quantizationModes.contains(mode) {
            outcome.error(
                "target_quantization", file: "config.json",
                "mlx-lm: quantization mode '\(mode)' is not one mlx reads")
        }
    }

    /// `quantization` as BaseConfiguration decodes it: integer `group_size` and `bits` at the
    /// top and in every per-layer object (or `false`), a known `mode`.
    private mutating func checkQuantization(_ q: JSONValue?, modes: Set<String>, target: String) {
        guard let q, !q.isNull else { return }
        guard let members = q.objectValue else {
            outcome.error("target_quantization", file: "config.json", "\(target): quantization is not an object")
            return
        }
        func checkEntry(_ entry: JSONValue, _ where_: String) {
            for field in ["group_size", "bits"] where entry[field].map({ !Self.decodes($0, as: .int) }) ?? true {
                outcome.error(
                    "target_quantization", file: "config.json",
                    "\(target): \(where_).\(field) must be an integer (it is "
                        + (entry[field].map { $0.isNull ? "null" : "not" } ?? "missing") + ")",
                    hint: field == "group_size"
                        ? "mlx_lm writes null per layer for a mixed recipe without --q-group-size; "
                            + "convert again with --group-size 64" : nil)
            }
            if let mode = entry["mode"]?.stringValue, !modes.contains(mode) {
                outcome.error(
                    "target_quantization", file: "config.json",
                    "\(target): \(where_).mode '\(mode)' is not a QuantizationMode")
            }
        }
        checkEntry(q, "quantization")
        for (key, value) in members where value.objectValue != nil {
            checkEntry(value, "quantization[\"\(key)\"]")
        }
    }

    private mutating func checkTokenizerFiles() {
        guard FileManager.default.fileExists(atPath: directory + "/tokenizer.json") else {
            outcome.error("target_tokenizer", file: "tokenizer.json", "is missing; swift-transformers and mlx-lm need it")
            return
        }
        guard targets.contains(.mlxSwift) else { return }
        let config = (try? LocalFile.read(directory + "/tokenizer_config.json")).flatMap { try? JSONValue(parsing: $0) }
        guard let name = config?["tokenizer_class"]?.stringValue else {
            outcome.error(
                "target_tokenizer_class", file: "tokenizer_config.json",
                "mlx-swift: no tokenizer_class; swift-transformers refuses the tokenizer",
                hint: "add \"tokenizer_class\" (LlamaTokenizer for Phi-3, GPT2Tokenizer for Phi-4)")
            return
        }
        let base = name.replacingOccurrences(of: "Fast", with: "")
        if !MLXSwiftFacts.tokenizerClasses.contains(base) {
            outcome.error(
                "target_tokenizer_class", file: "tokenizer_config.json",
                "mlx-swift: tokenizer_class '\(name)' is not one swift-transformers knows")
        }
    }

    /// For the MLX targets (llama.cpp's end tokens are LlamaCppCheck's).
    private mutating func checkEndOfTurn() {
        let targets = targets.filter { $0 != .llamaCpp }
        guard !targets.isEmpty else { return }
        do {
            let tokenizer = try Tokenizer.load(directory: directory)
            guard let end = try EndOfTurnToken.find(directory: directory, tokenizer: tokenizer) else { return }
            let (ids, file) = try LoaderStopTokens.ids(directory: directory, tokenizer: tokenizer)
            guard !ids.contains(end.id) else { return }
            let names = targets.map(\.rawValue).joined(separator: " and ")
            if fix {
                try LoaderStopTokens.add(end.id, directory: directory)
                try ConvertManifest.refresh("generation_config.json", directory: directory)
                fixed.append("generation_config.json")
                outcome.warning(
                    "target_end_token_fixed", file: "generation_config.json",
                    "\(end.content) (\(end.id)) ends the template's turns and was not a stop "
                        + "token of \(names); added to eos_token_id")
            } else {
                outcome.error(
                    "target_end_token", file: file,
                    "the chat template ends turns with \(end.content) (\(end.id)), which is not "
                        + "in eos_token_id (\(ids.sorted().map(String.init).joined(separator: ", "))): "
                        + "\(names) would generate past the end of the answer",
                    hint: "--fix adds it to generation_config.json (what an MLX Swift app "
                        + "otherwise sets by hand as extraEOSTokens: [\"\(end.content)\"])")
            }
        } catch {
            outcome.error("target_end_token", failure: error)
        }
    }

    /// Whether Swift's JSONDecoder decodes `value` as `type` (integers must be written as
    /// integers; any number decodes as a Float).
    static func decodes(_ value: JSONValue, as type: MLXSwiftFacts.KeyType) -> Bool {
        switch (type, value) {
        case (.int, .number(let literal)): literal.allSatisfy { $0.isNumber || $0 == "-" }
        case (.float, .number): true
        case (.bool, .bool): true
        case (.string, .string): true
        case (.object, .object): true
        default: false
        }
    }
}
