/// Where each output tensor of the MLX (Hugging Face layout) model comes from in a GGUF file:
/// one or more GGUF tensors whose rows are concatenated, some with their rows put back in
/// Hugging Face order. Each architecture's schema says its GGUF names (`GGUFArchitecture`:
/// Phi3Schema for `phi3`, LlamaSchema for `llama`, PhiSchema for `phi2`); `phikit convert`
/// reads the file through this.
public struct GGUFModelLayout: Sendable {
    public struct Part: Sendable {
        public let tensor: GGUFTensorInfo
        /// Heads whose rows to put back from GGML's interleaved-pair order (llama q/k).
        public let unpermuteHeads: Int?
        /// The tensor's rows (see `rowCount`) this part takes: all of them, or the q, k or v
        /// share of a fused tensor that the output keeps separate (phi2's attn_qkv).
        public let rows: Range<Int>

        public init(tensor: GGUFTensorInfo, unpermuteHeads: Int? = nil, rows: Range<Int>? = nil) {
            self.tensor = tensor
            self.unpermuteHeads = unpermuteHeads
            self.rows = rows ?? 0..<Self.rowCount(tensor)
        }

        /// Rows as the transcoder walks a tensor: a matrix's rows; a float vector's elements
        /// (so a fused bias splits like its matrix); a block-quantized vector is one row.
        public static func rowCount(_ t: GGUFTensorInfo) -> Int {
            t.shape.count >= 2 ? t.shape[0] : t.type.blockSize == 1 ? t.elementCount : 1
        }
        public var rowElements: Int { tensor.elementCount / max(1, Self.rowCount(tensor)) }
        public var rowBytes: Int { tensor.byteCount / max(1, Self.rowCount(tensor)) }
        public var elementCount: Int { rows.count * rowElements }
        public var byteCount: Int { rows.count * rowBytes }
    }

    public struct Module: Sendable {
        /// Hugging Face tensor name, `.weight` included.
        public let name: String
        public let parts: [Part]
        /// Row-major output shape: the parts' rows stacked.
        public let shape: [Int]
        public var isMatrix: Bool { shape.count == 2 }

        public init(name: String, parts: [Part]) {
            self.name = name
            self.parts = parts
            let first = parts[0].tensor.shape
            shape =
                first.count == 2
                ? [parts.reduce(0) { $0 + $1.rows.count }, first[1]]
                : [parts.reduce(0) { $0 + $1.elementCount }]
        }
    }

    public let modules: [Module]
    public let tied: Bool
    /// GGUF tensors that became config, not weights.
    public let ropeFactorsLong: GGUFTensorInfo?
    public let ropeFactorsShort: GGUFTensorInfo?

    public init(
        modules: [Module], tied: Bool, ropeFactorsLong: GGUFTensorInfo? = nil,
        ropeFactorsShort: GGUFTensorInfo? = nil
    ) {
        self.modules = modules
        self.tied = tied
        self.ropeFactorsLong = ropeFactorsLong
        self.ropeFactorsShort = ropeFactorsShort
    }

    /// The layout of the file's architecture, as its schema names the tensors; a file with a
    /// tensor nobody took is refused (a weight phikit would silently drop).
    public static func make(_ file: GGUFFile, _ shape: GGUFShape) throws -> GGUFModelLayout {
        let picker = GGUFTensorPicker(file)
        let layout = try shape.schema.ggufLayout(picker, shape)
        try picker.checkNothingLeft()
        return layout
    }
}

/// Takes tensors out of a GGUF file by name, checking each shape, and at the end refuses a
/// file with tensors nobody took (a weight phikit would silently drop).
public final class GGUFTensorPicker {
    public let file: GGUFFile
    private var used: Set<String> = []

    init(_ file: GGUFFile) { self.file = file }

    /// Whether the file has a tensor of that name (taken or not).
    public func has(_ name: String) -> Bool { file.tensor(name) != nil }

    public func take(_ name: String, _ shape: [Int]) throws -> GGUFTensorInfo {
        guard let t = file.tensor(name) else {
            throw GGUFConvertError.missingTensor(path: file.path, tensor: name)
        }
        guard t.shape == shape else {
            throw GGUFConvertError.wrongShape(
                path: file.path, tensor: name, expected: shape, actual: t.shape)
        }
        used.insert(name)
        return t
    }

    /// Whether the file's `output.weight` is the embedding: absent, or byte-identical to
    /// `token_embd.weight` (llama2.c exports duplicate it), as in a Hugging Face checkpoint
    /// with tied embeddings. Takes a duplicate and releases what it compared.
    public func outputIsTied(embedding embed: GGUFTensorInfo) -> Bool {
        let output = file.tensor("output.weight")
        let tied =
            output == nil
            || (output!.type == embed.type && output!.shape == embed.shape
                && file.data(output!).elementsEqual(file.data(embed)))
        if let output, output.type == embed.type, output.shape == embed.shape {
            file.release(output)  // compared above: no reason to keep either resident
            file.release(embed)
        }
        if tied, output != nil { used.insert("output.weight") }
        return tied
    }

    func checkNothingLeft() throws {
        // llama.cpp's rope frequency table is a cache some old converters stored; not a weight.
        for t in file.tensors where !used.contains(t.name) && !t.name.hasSuffix("rope_freqs.weight") {
            throw GGUFConvertError.unexpectedTensor(path: file.path, tensor: t.name)
        }
    }
}

/// The sizes a GGUF file's metadata gives, checked enough to lay out tensors, and the schema
/// of its architecture.
public struct GGUFShape: Sendable {
    /// `general.architecture` (phi3, llama, phi2).
    public let architecture: String
    public let schema: any GGUFArchitecture
    public let vocab: Int
    public let hidden: Int
    public let intermediate: Int
    public let layers: Int
    public let heads: Int
    public let kvHeads: Int
    public let headDim: Int
    public let ropeDim: Int
    public let contextLength: Int

    public init(_ file: GGUFFile, _ h: GGUFHyperparameters) throws {
        let path = file.path
        guard let arch = h.architecture else {
            throw GGUFConvertError.missingMetadata(path: path, key: "general.architecture")
        }
        guard let schema = Architectures.gguf(named: arch) else {
            throw GGUFConvertError.unsupportedArchitecture(path: path, architecture: arch)
        }
        func need(_ v: Int?, _ key: String, max: Int = 1 << 24) throws -> Int {
            guard let v, v > 0, v <= max else {
                throw GGUFConvertError.missingMetadata(path: path, key: "\(arch).\(key)")
            }
            return v
        }
        architecture = arch
        self.schema = schema
        hidden = try need(h.embeddingLength, "embedding_length")
        intermediate = try need(h.feedForwardLength, "feed_forward_length")
        layers = try need(h.blockCount, "block_count", max: 1024)
        heads = try need(h.headCount, "attention.head_count", max: 4096)
        kvHeads = try need(h.headCountKV ?? h.headCount, "attention.head_count_kv", max: heads)
        guard hidden % heads == 0, heads % kvHeads == 0 else {
            throw GGUFConvertError.missingMetadata(path: path, key: "\(arch).attention.head_count")
        }
        headDim = hidden / heads
        ropeDim = try need(h.ropeDimensionCount ?? headDim, "rope.dimension_count", max: headDim)
        contextLength = try need(h.contextLength, "context_length", max: 1 << 30)
        guard let embed = file.tensor("token_embd.weight"), embed.dimensions.count == 2 else {
            throw GGUFConvertError.missingTensor(path: path, tensor: "token_embd.weight")
        }
        vocab = embed.dimensions[1]
    }
}
