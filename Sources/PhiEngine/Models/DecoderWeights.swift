import PhiFormats

/// One layer of an architecture's weights: what an architecture's weights file gives. The
/// rest of a model's weights (`DecoderWeights`: embedding, final norm, output head, what keeps
/// them mapped) is the same for every architecture.
protocol DecoderLayer: Sendable {
    /// The final norm's weights: `[Float]` for an RMSNorm, `LayerNormWeights`.
    associatedtype Norm: Sendable

    /// Binds the layer whose modules start with `prefix` (`model.layers.3.`) by their names.
    init(_ m: ModuleBinder, prefix: String) throws

    /// The norm before the output head.
    static func finalNorm(_ m: ModuleBinder) throws -> Norm

    /// Bytes one decode step reads of this layer's matrices (norms and biases are
    /// negligible).
    var bytesPerToken: Int { get }

    /// Tensors the background prefetch leaves alone, read only when a token needs them.
    /// Default: none.
    static func readOnDemand(_ tensor: String) -> Bool
}

extension DecoderLayer {
    static func readOnDemand(_ tensor: String) -> Bool { false }
}

/// Every weight of a model, as views into the memory-mapped safetensors files (only the small
/// norm and bias vectors are widened to float32 copies): the embedding, the architecture's
/// layers, the final norm and the output head, bound in that order by the schema's module
/// names and checked against config.json (`ModuleBinder`).
final class DecoderWeights<Layer: DecoderLayer>: ArchitectureWeights, @unchecked Sendable {
    // immutable after init
    let embedding: WeightMatrix  // (vocab, hidden)
    let layers: [Layer]
    let finalNorm: Layer.Norm  // (hidden)
    /// lm_head (vocab, hidden) and its bias where it has one, or the embedding when tied.
    let lmHead: BiasedLinear
    let storage: WeightStorage

    init(_ files: ModelWeights, config: ModelConfig, adapters: [LowRankAdapters]) throws {
        let m = try ModuleBinder(files, config: config, adapters: adapters)
        embedding = try m.matrix("model.embed_tokens")
        layers = try (0..<config.layerCount).map { try Layer(m, prefix: "model.layers.\($0).") }
        finalNorm = try Layer.finalNorm(m)
        lmHead = try m.outputHead(tiedTo: embedding)
        storage = m.storage(files)
    }

    var bytesPerToken: Int { layers.reduce(lmHead.matrix.byteCount) { $0 + $1.bytesPerToken } }

    func prefetch() { storage.prefetch(skipping: Layer.readOnDemand) }
}
