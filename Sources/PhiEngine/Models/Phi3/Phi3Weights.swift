import Foundation
import PhiFormats

/// Every weight of a Phi-3 model, as views into the memory-mapped safetensors files (nothing
/// is converted except the small norm vectors, widened to float32). Tensor names are the
/// exact Hugging Face names; checked against config.json when built.
final class Phi3Weights: @unchecked Sendable {  // immutable after init
    struct Layer: Sendable {
        let inputNorm: [Float]  // (hidden)
        let qkv: WeightMatrix  // (qkvRows, hidden): queries, keys, values
        let output: WeightMatrix  // o_proj (hidden, heads*headDim)
        let postAttentionNorm: [Float]  // (hidden)
        let gateUp: WeightMatrix  // (2*intermediate, hidden): gate, then up
        let down: WeightMatrix  // (hidden, intermediate)
    }

    let embedding: WeightMatrix  // (vocab, hidden)
    let layers: [Layer]
    let finalNorm: [Float]  // (hidden)
    /// lm_head (vocab, hidden), or the embedding itself when tied.
    let lmHead: WeightMatrix
    /// Keeps the mappings alive; the matrices point into them.
    private let files: ModelWeights
    private let copies: [UnsafeMutableRawPointer]

    init(_ files: ModelWeights, config: ModelConfig) throws {
        let shape = Phi3Shape(config)
        let reader = TensorReader(weights: files, quantization: config.quantization)
        let h = shape.hidden
        embedding = try reader.matrix("model.embed_tokens", rows: shape.vocab, cols: h)
        layers = try (0..<shape.layers).map { i in
            let p = "model.layers.\(i)."
            return Layer(
                inputNorm: try reader.vector(p + "input_layernorm.weight", count: h),
                qkv: try reader.matrix(p + "self_attn.qkv_proj", rows: shape.qkvRows, cols: h),
                output: try reader.matrix(p + "self_attn.o_proj", rows: h, cols: shape.queryDim),
                postAttentionNorm: try reader.vector(
                    p + "post_attention_layernorm.weight", count: h),
                gateUp: try reader.matrix(
                    p + "mlp.gate_up_proj", rows: 2 * shape.intermediate, cols: h),
                down: try reader.matrix(p + "mlp.down_proj", rows: h, cols: shape.intermediate))
        }
        finalNorm = try reader.vector("model.norm.weight", count: h)
        lmHead =
            config.tieWordEmbeddings
            ? embedding : try reader.matrix("lm_head", rows: shape.vocab, cols: h)
        if let extra = reader.leftovers(tied: config.tieWordEmbeddings).first {
            throw ModelError.unexpectedTensor(name: extra, directory: files.directory)
        }
        self.files = files
        copies = reader.takeCopies()
    }

    deinit {
        for copy in copies { copy.deallocate() }
    }

    /// Asks the kernel to start reading every tensor now, in the background, so the first
    /// token does not wait for page faults one page at a time.
    func prefetch() {
        for file in files.files {
            for tensor in file.tensors { file.willNeed(tensor) }
        }
    }

    /// Bytes one decode step reads from the weights (every matrix once; the embedding row
    /// and norms are negligible).
    var bytesPerToken: Int {
        layers.reduce(lmHead.byteCount) {
            $0 + $1.qkv.byteCount + $1.output.byteCount + $1.gateUp.byteCount + $1.down.byteCount
        }
    }
}
