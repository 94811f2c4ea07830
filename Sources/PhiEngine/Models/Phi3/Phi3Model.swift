import CKernels
import Foundation
import PhiFormats

/// A Phi-3 family model (Phi-3, Phi-3.5-mini, Phi-4-mini: `model_type` "phi3") loaded from a
/// directory, weights memory-mapped in place. Immutable and shareable; text is produced by an
/// `InferenceSession` (which owns a `ModelSequence<Phi3Model>`: the KV cache and the
/// activations).
///
///     let model = try Phi3Model.load(directory: dir)
///     let session = try InferenceSession(model: model)
///     let logits = try session.prefill(promptTokens)
public final class Phi3Model: CausalLanguageModel, BlockForwardModel {
    public let directory: String
    public let config: ModelConfig
    /// `generation_config.json`, when the directory has one (its `eos_token_id` list is one
    /// of the inputs of `StopTokens`).
    public let generationConfig: GenerationConfig?
    /// Threads a session uses by default: `threads` given to `load`, else every core.
    public let threads: Int
    let shape: Phi3Shape
    let rope: RotaryEmbedding
    let weights: Phi3Weights

    init(
        directory: String, config: ModelConfig, generationConfig: GenerationConfig?,
        weights: Phi3Weights, threads: Int
    ) {
        self.directory = directory
        self.config = config
        self.generationConfig = generationConfig
        self.weights = weights
        self.threads = threads
        shape = Phi3Shape(config)
        rope = RotaryEmbedding(config)
    }

    /// Reads config.json (validated: other `model_type`s are refused), maps the safetensors
    /// files and checks every tensor against the config. Costs milliseconds: weights are
    /// read by the first forward pass (the kernel is asked to read ahead right away).
    public static func load(directory: String, threads: Int? = nil) throws -> Phi3Model {
        let config = try ModelConfig.load(directory: directory)
        let generationConfig = try GenerationConfig.load(directory: directory)
        let files = try ModelWeights(directory: directory)
        let weights = try Phi3Weights(files, config: config)
        weights.prefetch()
        return Phi3Model(
            directory: directory, config: config, generationConfig: generationConfig,
            weights: weights, threads: max(1, threads ?? Int(pk_available_cores())))
    }

    /// Vocabulary size (rows of the embedding; the tokenizer's ids must be below it).
    public var vocabularySize: Int { shape.vocab }

    /// Positions the model supports (`max_position_embeddings`).
    public var maxPositions: Int { shape.maxPositions }

    /// Bytes of weights one decode step reads: divide a memory bandwidth by it for the
    /// decode speed limit.
    public var bytesPerToken: Int { weights.bytesPerToken }

    public func makeSequenceState(
        capacity: Int, block: Int, threads: Int, cacheWidth: KVCacheWidth
    ) throws -> any SequenceState {
        try ModelSequence(
            model: self, capacity: capacity, block: block, threads: threads,
            cacheWidth: cacheWidth)
    }

    public func makeBatchState(maxSequences: Int, threads: Int) throws -> any BatchState {
        try ModelBatch(model: self, maxSequences: maxSequences, threads: threads)
    }

    var cacheShape: (layers: Int, kvHeads: Int, headDim: Int) {
        (shape.layers, shape.kvHeads, shape.headDim)
    }

    func makeBuffers(
        block: Int, capacity: Int, threads: Int, logitRows: Int
    ) throws(SessionError) -> Phi3Buffers {
        try Phi3Buffers(
            shape: shape, block: block, capacity: capacity, threads: threads, logitRows: logitRows)
    }

    /// 1 once LongRoPE uses its long factors for a sequence of this length, else 0.
    public func positionRegime(sequenceLength length: Int) -> Int {
        rope.usesLongFactors(sequenceLength: length) ? 1 : 0
    }
}
