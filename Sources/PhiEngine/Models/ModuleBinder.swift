import PhiFormats

/// A checkpoint's modules checked against the architecture's schema and handed out by their
/// paths: what every architecture's weights are bound from. The schema decides what the
/// checkpoint must hold and which leftovers to drop, the same way for run, verify and
/// convert; the weights only name the modules they take.
struct ModuleBinder {
    let layout: ModelLayout
    let check: TensorSetCheck
    let reader: TensorReader

    /// `adapters`: LoRA/DoRA fine-tunes whose corrections the reader binds to the matrices
    /// they name.
    init(_ files: ModelWeights, config: ModelConfig, adapters: [LowRankAdapters] = []) throws {
        layout = try ModelLayout(config: config)
        check = try files.requireTensors(of: layout)
        reader = TensorReader(weights: files, quantization: config.quantization, adapters: adapters)
    }

    func matrix(_ path: String) throws -> WeightMatrix { try reader.matrix(layout.module(path)) }

    /// A norm's weight (float32).
    func vector(_ path: String) throws -> [Float] { try reader.vector(layout.module(path)) }

    func layerNorm(_ path: String) throws -> LayerNormWeights {
        let module = layout.module(path)
        return LayerNormWeights(weight: try reader.vector(module), bias: try reader.bias(module))
    }

    func linear(_ path: String) throws -> BiasedLinear {
        let module = layout.module(path)
        return BiasedLinear(
            matrix: try reader.matrix(module), bias: module.hasBias ? try reader.bias(module) : nil)
    }

    /// A stacked module's experts, stored stacked or one tensor per expert.
    func experts(_ path: String) throws -> [WeightMatrix] {
        try reader.experts(layout.module(path), split: check.splitModules[path])
    }

    /// The output head, or `embedding` itself when config.json ties the embeddings.
    func outputHead(tiedTo embedding: WeightMatrix) throws -> BiasedLinear {
        layout.config.tieWordEmbeddings
            ? BiasedLinear(matrix: embedding, bias: nil) : try linear(layout.schema.outputHead)
    }

    /// What keeps the bound matrices' memory alive (the mappings, the reader's copies).
    func storage(_ files: ModelWeights) -> WeightStorage { WeightStorage(files, taking: reader) }
}
