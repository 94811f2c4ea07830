import CKernels
import PhiFormats

/// What every architecture's model class has in common: a model whose forward pass runs a
/// block of tokens that may belong to several sequences (a prompt block of one, or one decode
/// step of each in a `DecodeBatch`), every weight read once for the block while each span of
/// tokens keeps its keys and values in its own sequence's cache.
/// A model folder (Models/Phi3/, Models/Llama/, …) gives only its weights, buffers and forward
/// pass (and its shape, where `RMSNormShape` does not fit) and declares its schema
/// `RunnableSchema`; loading, what a loaded model holds (`LoadedModel`), the public model
/// properties, the sequence and batch states, the KV cache's shape, the buffers' allocation
/// and the position regimes are the defaults below, and the steps several forward passes
/// share are in ForwardSteps.swift and SpanAttention.swift.
protocol BlockForwardModel: CausalLanguageModel {
    associatedtype Shape: ArchitectureShape
    associatedtype Weights: ArchitectureWeights
    associatedtype Buffers: BlockBuffers where Buffers.Shape == Shape

    /// Whether LongRoPE scales cos/sin by `short_mscale`/`long_mscale` (phimoe) rather than
    /// by the attention factor. Default: false.
    static var ropeUsesMscales: Bool { get }
    /// Whether the weight files are mapped in 2 MiB pages (see the default below).
    static var readsAllWeightsEachToken: Bool { get }

    /// What `load` made of the directory: the same parts for every architecture.
    var loaded: LoadedModel<Shape, Weights> { get }

    init(_ loaded: LoadedModel<Shape, Weights>)

    /// Runs `tokens` (the spans cover them, in order), writing keys and values into each
    /// span's cache, then the logits of the last `logitRows` tokens into `buffers.logits`
    /// (logitRows × vocab).
    func forward(
        _ tokens: UnsafeBufferPointer<Int>, spans: some Collection<SequenceSpan<Self>>,
        buffers: Buffers, logitRows: Int, pool: WorkerPool)
}

/// A model as `load` made it from its directory: config.json and generation_config.json, the
/// threads it computes with, the architecture's shape and weights, and the rotary embedding
/// every architecture has (plain, scaled or LongRoPE, as config.json says).
struct LoadedModel<Shape: ArchitectureShape, Weights: ArchitectureWeights>: Sendable {
    let directory: String
    let config: ModelConfig
    let generationConfig: GenerationConfig?
    /// Threads a session uses by default: `threads` given to `load`, else every core.
    let threads: Int
    /// Run-time adapters a session may select (`InferenceSession.adapter` < this).
    let adapterCount: Int
    let shape: Shape
    let rope: RotaryEmbedding
    let weights: Weights
}

/// An architecture's weights bound from a checkpoint's files by its schema's module names.
protocol ArchitectureWeights: AnyObject, Sendable {
    init(_ files: ModelWeights, config: ModelConfig, adapters: [LowRankAdapters]) throws
    /// (vocab, hidden): the rows every forward pass starts from.
    var embedding: WeightMatrix { get }
    /// Bytes one decode step reads from the weights (every matrix it uses once; the
    /// embedding row, norms and biases are negligible).
    var bytesPerToken: Int { get }
    /// Keeps the mappings alive; the matrices point into them.
    var storage: WeightStorage { get }
    /// Starts reading the tensors a forward pass needs first, in the background. Default:
    /// every tensor.
    func prefetch()
}

extension ArchitectureWeights {
    func prefetch() { storage.prefetch() }
}

/// The engine side of an architecture's schema: the model class that runs it. Each model
/// folder declares it for its schema (`extension Phi3Schema: RunnableSchema`), so
/// `Architectures.all` in PhiFormats is the one `model_type` registry.
protocol RunnableSchema: ArchitectureSchema {
    associatedtype Model: BlockForwardModel
}

extension RunnableSchema {
    /// Whether `model` is the class that runs this schema's `model_type`.
    func isRun(by model: any BlockForwardModel.Type) -> Bool {
        ObjectIdentifier(Model.self) == ObjectIdentifier(model)
    }

    func loadModel(
        directory: String, config: ModelConfig, threads: Int?, adapters: [LowRankAdapters],
        placement: WeightPlacement?, cancellation: CancellationToken?
    ) throws -> any CausalLanguageModel {
        try Model.load(
            directory: directory, config: config, threads: threads, adapters: adapters,
            placement: placement, cancellation: cancellation)
    }
}

extension BlockForwardModel {
    /// Reads config.json (validated: other `model_type`s are refused), maps the safetensors
    /// files (dense models in 2 MiB pages, `readsAllWeightsEachToken`) and checks every tensor
    /// against the schema. Costs milliseconds: weights are read by the first forward pass
    /// (the kernel asked to read ahead right away where the pages are small).
    public static func load(directory: String, threads: Int? = nil) throws -> Self {
        try load(directory: directory, config: ModelConfig.load(directory: directory), threads: threads)
    }

    /// `load` with config.json already read and validated, and `adapters` (LoRA/DoRA
    /// fine-tunes a session may select, applied at run time) checked against the schema's
    /// modules.
    /// `placement`: how a dense model's weight files are held (nil: in 2 MiB pages); a
    /// mixture of experts is always mapped on demand (`readsAllWeightsEachToken`).
    /// `cancellation` stops a resident copy's reads.
    static func load(
        directory: String, config: ModelConfig, threads: Int?, adapters: [LowRankAdapters] = [],
        placement: WeightPlacement? = nil, cancellation: CancellationToken? = nil
    ) throws -> Self {
        let schema = Architectures.schema(for: config.modelType) as? any RunnableSchema
        guard schema?.isRun(by: Self.self) == true else {
            throw ConfigError.unsupportedArchitecture(path: config.source, modelType: config.modelType)
        }
        if !adapters.isEmpty {
            let layout = try ModelLayout(config: config)
            for adapter in adapters { try adapter.check(against: layout) }
        }
        let generationConfig = try GenerationConfig.load(directory: directory)
        let weights = try Weights(
            ModelWeights(
                directory: directory,
                placement: readsAllWeightsEachToken ? placement ?? .hugePages : .mapped,
                cancellation: cancellation),
            config: config, adapters: adapters)
        weights.prefetch()
        return Self(
            LoadedModel(
                directory: directory, config: config, generationConfig: generationConfig,
                threads: max(1, threads ?? Int(pk_available_cores())), adapterCount: adapters.count,
                shape: Shape(config),
                rope: RotaryEmbedding(config, usesMscales: ropeUsesMscales), weights: weights))
    }

    static var ropeUsesMscales: Bool { false }

    /// Whether every token reads every weight (dense models): their files are then mapped in
    /// 2 MiB pages (`MappedFile`'s `hugePages`: decode streams them ~35% faster than through
    /// 4 KiB pages), or copied where the caller asks: always (`.resident`), or where the
    /// page cache cannot give them such pages (`.hugePagesOrResident`). Mixtures
    /// of experts read a few experts a token, on demand, and keep small pages, read ahead: a
    /// copy would read every expert.
    static var readsAllWeightsEachToken: Bool { true }

    public var directory: String { loaded.directory }
    public var config: ModelConfig { loaded.config }
    public var generationConfig: GenerationConfig? { loaded.generationConfig }
    public var threads: Int { loaded.threads }
    public var adapterCount: Int { loaded.adapterCount }
    public var bytesPerToken: Int { loaded.weights.bytesPerToken }
    public var residentWeightFiles: Int {
        loaded.weights.storage.files.files.count { $0.isResident }
    }
    var shape: Shape { loaded.shape }
    var weights: Weights { loaded.weights }
    var rope: RotaryEmbedding { loaded.rope }

    /// Vocabulary size (rows of the embedding; the tokenizer's ids must be below it).
    public var vocabularySize: Int { shape.vocab }

    /// Positions the model supports (`max_position_embeddings`).
    public var maxPositions: Int { shape.maxPositions }

    public func makeSequenceState(
        capacity: Int, block: Int, threads: Int, cacheWidth: KVCacheWidth
    ) throws -> any SequenceState {
        try ModelSequence(
            model: self, capacity: capacity, block: block, threads: threads,
            cacheWidth: cacheWidth)
    }

    public func makeBatchState(
        maxSequences: Int, maxTokens: Int, threads: Int
    ) throws -> any BatchState {
        try ModelBatch(
            model: self, maxSequences: maxSequences, maxTokens: maxTokens, threads: threads)
    }

    /// (layers, kvHeads, headDim) of the KV cache.
    var cacheShape: (layers: Int, kvHeads: Int, headDim: Int) {
        (shape.layers, shape.kvHeads, shape.headDim)
    }

    /// Activation buffers for blocks of up to `sizing.block` tokens over `sizing.capacity`
    /// cached positions, with the logits of the last `sizing.logitRows` tokens.
    func makeBuffers(_ sizing: BufferSizing) throws(SessionError) -> Buffers {
        try Buffers(shape: shape, sizing: sizing)
    }

    /// Which embedding of positions a sequence of `length` tokens uses: 1 once LongRoPE uses
    /// its long factors (and long mscale), else 0. Keys cached in one regime are invalid in
    /// another, so the session recomputes them; not part of the public model protocol.
    func positionRegime(sequenceLength length: Int) -> Int {
        rope.usesLongFactors(sequenceLength: length) ? 1 : 0
    }
}

/// The buffers a model's forward pass writes into: the ones every architecture has
/// (`BlockActivations`), read as its own members (`buffers.x`, `buffers.logits`), and its own.
@dynamicMemberLookup
protocol BlockBuffers: AnyObject {
    associatedtype Shape: ArchitectureShape
    var shared: BlockActivations { get }

    init(shape: Shape, sizing: BufferSizing) throws(SessionError)
}

/// What a set of buffers serves: blocks of up to `block` tokens over `capacity` cached
/// positions, on `threads` threads, with the logits of the last `logitRows` tokens.
struct BufferSizing {
    let block: Int
    let capacity: Int
    let threads: Int
    let logitRows: Int
}

extension BlockBuffers {
    subscript<T>(dynamicMember path: KeyPath<BlockActivations, T>) -> T {
        shared[keyPath: path]
    }
}

/// Consecutive tokens of a block that belong to one sequence, at positions `p0`, `p0 + 1`, …
struct SequenceSpan<Model: BlockForwardModel> {
    let sequence: ModelSequence<Model>
    /// Index of the span's first token in the block.
    let first: Int
    let count: Int
    let p0: Int
    /// The sequence's position regime (1: LongRoPE's long factors).
    let regime: Int
}

/// One sequence of a model: its KV cache and activation buffers, allocated once.
final class ModelSequence<Model: BlockForwardModel>: SequenceState {
    let model: Model
    let cache: KVCache
    let state: Model.Buffers
    var block: Int { state.block }
    var capacity: Int { cache.capacity }
    /// Every token of a block can have its logits (speculative verification, scoring text);
    /// the rows are an anonymous mapping, so they cost memory only once written.
    var logitRows: Int { state.block }
    /// Rows the latest `forward` (or batch step) wrote.
    var rowsWritten = 1

    init(
        model: Model, capacity: Int, block: Int, threads: Int, cacheWidth: KVCacheWidth
    ) throws(SessionError) {
        let c = model.cacheShape
        self.model = model
        cache = try KVCache(
            layers: c.layers, kvHeads: c.kvHeads, headDim: c.headDim, capacity: capacity,
            width: cacheWidth)
        state = try model.makeBuffers(
            BufferSizing(block: block, capacity: capacity, threads: threads, logitRows: block))
    }

    var logits: UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: state.logits.pointer, count: rowsWritten * model.vocabularySize)
    }

    func forward(
        _ tokens: UnsafeBufferPointer<Int>, at p0: Int, regime: Int, logitRows: Int,
        pool: WorkerPool
    ) {
        let span = SequenceSpan(sequence: self, first: 0, count: tokens.count, p0: p0, regime: regime)
        model.forward(
            tokens, spans: CollectionOfOne(span), buffers: state, logitRows: logitRows, pool: pool)
        if logitRows > 0 { rowsWritten = logitRows }
    }

    /// Always possible: a position's cache rows are written when it is computed and read only
    /// by later positions, so the next `forward` overwrites them (8-bit keys calibrate again
    /// when the last of the first PK_KV_CALIBRATION positions is stored again).
    func rewind(to position: Int) -> Bool { true }

    func cacheRows(positions n: Int) -> [UInt8]? {
        n <= capacity ? cache.rows(positions: n) : nil
    }

    func loadCacheRows(
        positions n: Int, _ fill: (UnsafeMutableRawBufferPointer, Int) throws -> Void
    ) rethrows -> Bool {
        guard n <= capacity else { return false }
        try cache.load(positions: n, fill)
        return true
    }
}

/// Steps of up to `maxSequences` sequences of one model, `maxTokens` tokens in all, as one
/// forward pass: each weight is read once for all of them; each sequence keeps its own cache
/// and scores, and gets the logits after each of its tokens.
final class ModelBatch<Model: BlockForwardModel>: BatchState {
    let model: Model
    let buffers: Model.Buffers
    let maxSequences: Int
    let maxTokens: Int
    /// Reused across steps (nothing is allocated per token).
    private var spans: [SequenceSpan<Model>] = []

    init(model: Model, maxSequences: Int, maxTokens: Int, threads: Int) throws(SessionError) {
        self.model = model
        self.maxSequences = maxSequences
        self.maxTokens = max(maxTokens, maxSequences)
        // capacity 1: the attention scores are each sequence's own (its state's buffers)
        buffers = try model.makeBuffers(
            BufferSizing(
                block: self.maxTokens, capacity: 1, threads: threads, logitRows: self.maxTokens))
        spans.reserveCapacity(maxSequences)
    }

    func step(
        _ sequences: [any SequenceState], tokens: UnsafeBufferPointer<Int>, counts: [Int],
        positions: [Int], regimes: [Int], pool: WorkerPool
    ) {
        spans.removeAll(keepingCapacity: true)
        var first = 0
        for (i, sequence) in sequences.enumerated() {
            // swift-format-ignore: the session checked that every sequence is this model's
            let own = sequence as! ModelSequence<Model>
            spans.append(
                SequenceSpan(
                    sequence: own, first: first, count: counts[i], p0: positions[i],
                    regime: regimes[i]))
            first += counts[i]
        }
        precondition(first == tokens.count && first <= maxTokens, "tokens do not match the counts")
        // every token's logits: a drafted token's row is what checks the draft
        model.forward(tokens, spans: spans, buffers: buffers, logitRows: first, pool: pool)
        let vocab = model.vocabularySize
        for span in spans {
            span.sequence.state.logits.pointer.update(
                from: buffers.logits.pointer + span.first * vocab, count: span.count * vocab)
            span.sequence.rowsWritten = span.count
        }
    }
}
