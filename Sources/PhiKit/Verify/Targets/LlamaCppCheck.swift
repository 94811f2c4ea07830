import Foundation
import PhiFormats
import PhiText

/// `verify --target llama.cpp`: would `convert_hf_to_gguf.py` turn this directory into a GGUF
/// that llama.cpp loads, with the vocabulary's pre-tokenizer and end tokens right
/// (`LlamaCppFacts`)? Findings go into the target layer's outcome like the MLX targets'.
struct LlamaCppCheck {
    let directory: String
    var outcome: LayerOutcome
    /// What the summary line adds (the pre-tokenizer the GGUF will name).
    var notes: [String] = []

    static let name = LoaderTarget.llamaCpp.rawValue

    mutating func run(_ raw: JSONValue) {
        guard let architecture = checkArchitecture(raw) else { return }
        checkWeights(raw)
        if architecture == "phi3" || architecture == "phimoe" { checkRope(raw) }
        checkVocabulary(architecture: architecture)
        checkEndOfGeneration()
    }

    /// `architectures[0]` must be a converter class; the model_type must agree with it.
    private mutating func checkArchitecture(_ raw: JSONValue) -> String? {
        let type = raw["model_type"]?.stringValue ?? ""
        let expectedClass = Self.expectedClass(type)
        func refuse(_ message: String, hint: String?) -> String? {
            outcome.error("target_architecture", file: "config.json", "\(Self.name): " + message, hint: hint)
            return nil
        }
        guard let first = raw["architectures"]?.arrayValue?.first?.stringValue else {
            return refuse(
                "'architectures' is missing; convert_hf_to_gguf.py picks its converter by "
                    + "architectures[0]",
                hint: expectedClass.map { "add \"architectures\": [\"\($0)\"]" })
        }
        guard let architecture = LlamaCppFacts.architectures[first] else {
            return refuse(
                "architectures[0] '\(first)' is not a converter class of convert_hf_to_gguf.py "
                    + "for the Phi or Llama families",
                hint: expectedClass.map { "a \(type) model is \($0)" })
        }
        let expected = ["phi3": "phi3", "phi": "phi2", "phimoe": "phimoe", "llama": "llama"][type]
        if let expected, expected != architecture {
            outcome.error(
                "target_architecture", file: "config.json",
                "\(Self.name): architectures[0] '\(first)' converts as \(architecture), but "
                    + "model_type is '\(type)'")
        }
        return architecture
    }

    private static func expectedClass(_ modelType: String) -> String? {
        ["phi3": "Phi3ForCausalLM", "phi": "PhiForCausalLM", "phimoe": "PhiMoEForCausalLM",
         "llama": "LlamaForCausalLM"][modelType]
    }

    /// MLX packed weights are not something the converter de-quantizes.
    private mutating func checkWeights(_ raw: JSONValue) {
        guard let q = raw["quantization"] ?? raw["quantization_config"], !q.isNull,
            (raw["quantization_config"]?["quant_method"]).map({ $0.isNull }) ?? true
        else { return }
        let mode = q["mode"]?.stringValue ?? "affine"
        let bits = q["bits"]?.intValue.map { "\($0)-bit " } ?? ""
        outcome.error(
            "target_quantization", file: "config.json",
            "\(Self.name): MLX \(bits)\(mode) weights (packed .weight with .scales) are not read by "
                + "convert_hf_to_gguf.py: it stops at \"Can not map tensor\" (….scales, ….biases)",
            hint: "convert a float copy first (phikit convert MODEL --dequantize -o DIR), then "
                + "convert_hf_to_gguf.py DIR and llama-quantize")
    }

    /// Phi-3's rotary settings as Phi3MiniModel reads them.
    private mutating func checkRope(_ raw: JSONValue) {
        if raw["original_max_position_embeddings"]?.intValue == nil
            && raw["rope_scaling"]?["original_max_position_embeddings"]?.intValue == nil
        {
            outcome.error(
                "target_missing_key", file: "config.json",
                "\(Self.name): 'original_max_position_embeddings' is missing; the phi3 converter "
                    + "requires it")
        }
        guard let scaling = raw["rope_scaling"], !scaling.isNull,
            let long = scaling["long_factor"]?.arrayValue
        else { return }
        let type = (scaling["type"] ?? scaling["rope_type"])?.stringValue?.lowercased() ?? ""
        if !["su", "longrope", "yarn"].contains(type) {
            outcome.error(
                "target_rope", file: "config.json",
                "\(Self.name): rope_scaling type '\(type)' is not su, longrope or yarn")
        }
        let hidden = raw["hidden_size"]?.intValue ?? 0
        let heads = max(1, raw["num_attention_heads"]?.intValue ?? 1)
        let fraction = raw["partial_rotary_factor"]?.doubleValue ?? 1
        let half = Int(fraction * Double(hidden)) / heads / 2
        let short = scaling["short_factor"]?.arrayValue?.count ?? -1
        if long.count != half || short != half {
            outcome.error(
                "target_rope", file: "config.json",
                "\(Self.name): rope_scaling long_factor (\(long.count)) and short_factor "
                    + "(\(short)) must have \(half) values each (rotary dimensions / 2)")
        }
    }

    /// Which way the converter reads the vocabulary, and for BPE whether it knows the
    /// pre-tokenizer (`LlamaCppFacts.preTokenizers`).
    private mutating func checkVocabulary(architecture: String) {
        let fm = FileManager.default
        let hasSentencePiece = fm.fileExists(atPath: directory + "/tokenizer.model")
        let tokenizerConfig = (try? LocalFile.read(directory + "/tokenizer_config.json"))
            .flatMap { try? JSONValue(parsing: $0) }
        switch architecture {
        case "phi3", "phimoe":
            guard let tokenizerConfig else { break }
            guard let name = tokenizerConfig["tokenizer_class"]?.stringValue else {
                outcome.error(
                    "target_tokenizer_class", file: "tokenizer_config.json",
                    "\(Self.name): no tokenizer_class; the phi3 converter reads it (KeyError)")
                return
            }
            if name == "GPT2Tokenizer" { break }
            if !hasSentencePiece {
                outcome.error(
                    "target_tokenizer", file: "tokenizer.model",
                    "\(Self.name): is missing; the phi3 converter reads a \(name) vocabulary "
                        + "from the SentencePiece model",
                    hint: "copy tokenizer.model from the original checkpoint")
            }
            return
        case "llama":
            if hasSentencePiece || Self.isLlamaHFVocabulary(directory) { return }
        default: break
        }
        checkPreTokenizer(architecture: architecture)
    }

    /// tokenizer.json is a BPE with byte fallback and a Sequence decoder (LlamaHfVocab).
    private static func isLlamaHFVocabulary(_ directory: String) -> Bool {
        guard let data = try? LocalFile.read(directory + "/tokenizer.json"),
            let json = try? JSONValue(parsing: data), let model = json["model"]
        else { return false }
        return model["type"]?.stringValue == "BPE" && model["byte_fallback"]?.boolValue == true
            && json["decoder"]?["type"]?.stringValue == "Sequence"
    }

    private mutating func checkPreTokenizer(architecture: String) {
        do {
            let tokenizer = try Tokenizer.load(directory: directory)
            let hash = try Self.preTokenizerHash(tokenizer)
            if let pre = LlamaCppFacts.preTokenizers[hash] {
                notes.append("\(Self.name): general.architecture \(architecture), tokenizer.ggml.pre \(pre)")
            } else {
                outcome.error(
                    "target_pre_tokenizer", file: "tokenizer.json",
                    "\(Self.name): the BPE pre-tokenizer is not one convert_hf_to_gguf.py "
                        + "recognizes (chkhsh \(hash)): it stops with NotImplementedError",
                    hint: "a tokenizer.json changed from the original's, or a model "
                        + "convert_hf_to_gguf_update.py does not list yet")
            }
        } catch {
            outcome.error("target_pre_tokenizer", file: "tokenizer.json", failure: error)
        }
    }

    /// `get_vocab_base_pre`'s identifier: SHA-256 of Python's `str()` of the check text's ids
    /// (special tokens added, as AutoTokenizer's `encode`).
    static func preTokenizerHash(_ tokenizer: Tokenizer) throws -> String {
        let ids = try tokenizer.encode(LlamaCppFacts.checkText, addSpecialTokens: true)
        let text = "[" + ids.map(String.init).joined(separator: ", ") + "]"
        return SHA256Hasher.hex(of: Array(text.utf8))
    }

    /// The template's end-of-turn token must be an end-of-generation token of llama.cpp's:
    /// the GGUF's eos, or a token text llama.cpp always stops at.
    private mutating func checkEndOfGeneration() {
        do {
            let tokenizer = try Tokenizer.load(directory: directory)
            guard let end = try EndOfTurnToken.find(directory: directory, tokenizer: tokenizer) else {
                return
            }
            if LlamaCppFacts.endOfGenerationTexts.contains(end.content) { return }
            let eos =
                try TokenizerConfig.load(directory: directory)?.eosToken.flatMap(tokenizer.tokenID(for:))
                ?? ModelConfig.load(directory: directory).eosTokenIds.first
            if eos == end.id { return }
            outcome.error(
                "target_end_token", file: "tokenizer_config.json",
                "\(Self.name): the chat template ends turns with \(end.content) (\(end.id)), which "
                    + "is neither the GGUF's eos nor a token llama.cpp always stops at: it would "
                    + "generate past the end of the answer",
                hint: "llama.cpp reads no generation_config.json; run it with "
                    + "--override-kv tokenizer.ggml.eos_token_id=int:\(end.id)")
        } catch {
            outcome.error("target_end_token", failure: error)
        }
    }
}
