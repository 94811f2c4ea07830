import Foundation

/// How llama.cpp's GGUF files store an architecture: what `phikit convert FILE.gguf` needs to
/// turn a file of it into a model directory of the schema's `model_type`. A schema that
/// llama.cpp files carry conforms beside its own module names (Phi3Schema.swift, …), so its
/// safetensors names, GGUF names and config keys are one file; `Architectures.gguf(named:)`
/// finds it by the file's `general.architecture`.
public protocol GGUFArchitecture: ArchitectureSchema {
    /// `general.architecture` of such files (`phi3`, `llama`, `phi2`).
    var ggufName: String { get }

    /// Where each Hugging Face tensor comes from, in the order the output stores them: the
    /// GGUF tensors `picker` hands out (each shape checked), concatenated or split by rows.
    func ggufLayout(_ picker: GGUFTensorPicker, _ shape: GGUFShape) throws -> GGUFModelLayout

    /// config.json's keys (transformers' config class of the `model_type`), unsorted, from the
    /// file's metadata and what the conversion found.
    func ggufConfig(_ c: GGUFConfigInputs) -> [(key: String, value: JSONValue)]
}

/// What a GGUF file gives config.json: its sizes and metadata, and what the conversion found
/// in its tensors and tokenizer.
public struct GGUFConfigInputs: Sendable {
    public let shape: GGUFShape
    public let metadata: GGUFHyperparameters
    /// The layout found no separate output head (`tie_word_embeddings`).
    public let tied: Bool
    /// LongRoPE from the file's `rope_factors_long/short` tensors, else null.
    public let ropeScaling: JSONValue
    public let bos: JSONValue
    public let eos: JSONValue
    /// `torch_dtype`.
    public let dtype: JSONValue

    public init(
        shape: GGUFShape, metadata: GGUFHyperparameters, tied: Bool, ropeScaling: JSONValue,
        bos: JSONValue, eos: JSONValue, dtype: JSONValue
    ) {
        (self.shape, self.metadata, self.tied, self.ropeScaling) = (shape, metadata, tied, ropeScaling)
        (self.bos, self.eos, self.dtype) = (bos, eos, dtype)
    }

    /// `rotary share` as config.json states it: rope dims / head dim (Phi-2: 32 / 80 = 0.4).
    public var partialRotaryFactor: JSONValue {
        .double(Double(shape.ropeDim) / Double(shape.headDim))
    }

    /// GGUF stores an epsilon as float32: 1e-5 comes back as 9.99999974738e-06. The shortest
    /// decimal that rounds to the same float32 is what the source config said.
    public static func shortestDecimal(_ e: Double) -> Double {
        let f = Float(e)
        for digits in 1...9 {
            let text = String(format: "%.\(digits)g", e)
            if let d = Double(text), Float(d) == f { return d }
        }
        return e
    }

    /// An epsilon (absent: 1e-5) as config.json states it.
    public static func epsilon(_ e: Double?) -> JSONValue { .double(shortestDecimal(e ?? 1e-5)) }
}
