import PhiFormats

/// Where each output tensor of the MLX (Hugging Face layout) model comes from in a GGUF file:
/// one or more GGUF tensors whose rows are concatenated, some with their rows put back in
/// Hugging Face order. One file per GGUF architecture says its names: `phi3` → phi3
/// (GGUFPhi3Layout), `llama` → llama (GGUFLlamaLayout), `phi2` → phi (GGUFPhi2Layout).
struct GGUFModelLayout {
    struct Part {
        let tensor: GGUFTensorInfo
        /// Heads whose rows to put back from GGML's interleaved-pair order (llama q/k).
        let unpermuteHeads: Int?
        /// The tensor's rows (see `rowCount`) this part takes: all of them, or the q, k or v
        /// share of a fused tensor that the output keeps separate (phi2's attn_qkv).
        let rows: Range<Int>

        init(tensor: GGUFTensorInfo, unpermuteHeads: Int? = nil, rows: Range<Int>? = nil) {
            self.tensor = tensor
            self.unpermuteHeads = unpermuteHeads
            self.rows = rows ?? 0..<Self.rowCount(tensor)
        }

        /// Rows as the transcoder walks a tensor: a matrix's rows; a float vector's elements
        /// (so a fused bias splits like its matrix); a block-quantized vector is one row.
        static func rowCount(_ t: GGUFTensorInfo) -> Int {
            t.shape.count >= 2 ? t.shape[0] : t.type.blockSize == 1 ? t.elementCount : 1
        }
        var rowElements: Int { tensor.elementCount / max(1, Self.rowCount(tensor)) }
        var rowBytes: Int { tensor.byteCount / max(1, Self.rowCount(tensor)) }
        var elementCount: Int { rows.count * rowElements }
        var byteCount: Int { rows.count * rowBytes }
    }

    struct Module {
        /// Hugging Face tensor name, `.weight` included.
        let name: String
        let parts: [Part]
        /// Row-major output shape: the parts' rows stacked.
        let shape: [Int]
        var isMatrix: Bool { shape.count == 2 }

        init(name: String, parts: [Part]) {
            self.name = name
            self.parts = parts
            let first = parts[0].tensor.shape
            shape =
                first.count == 2
                ? [parts.reduce(0) { $0 + $1.rows.count }, first[1]]
                : [parts.reduce(0) { $0 + $1.elementCount }]
        }
    }

    let modules: [Module]
    let tied: Bool
    /// GGUF tensors that became config, not weights.
    let ropeFactorsLong: GGUFTensorInfo?
    let ropeFactorsShort: GGUFTensorInfo?

    /// The layout of `h.architecture` (GGUFShape admits only the ones below): each
    /// architecture's GGUF names live in its own file (GGUFPhi3Layout, GGUFLlamaLayout,
    /// GGUFPhi2Layout), beside the config.json keys it writes (GGUFConfig).
    static func make(_ file: GGUFFile, _ h: GGUFShape) throws -> GGUFModelLayout {
        switch h.architecture {
        case "phi2": try phi2(file, h)
        case "llama": try llama(file, h)
        default: try phi3(file, h)
        }
    }

    /// Whether the file's `output.weight` is the embedding: absent, or byte-identical to
    /// `token_embd.weight` (llama2.c exports duplicate it), as in a Hugging Face checkpoint
    /// with tied embeddings. Marks a duplicate as used and releases what it compared.
    static func outputIsTied(_ file: GGUFFile, embedding embed: GGUFTensorInfo, _ picker: GGUFTensorPicker) -> Bool {
        let output = file.tensor("output.weight")
        let tied =
            output == nil
            || (output!.type == embed.type && output!.shape == embed.shape
                && file.data(output!).elementsEqual(file.data(embed)))
        if let output, output.type == embed.type, output.shape == embed.shape {
            file.release(output)  // compared above: no reason to keep either resident
            file.release(embed)
        }
        if tied, output != nil { picker.used.insert("output.weight") }
        return tied
    }
}

/// Takes tensors out of a GGUF file by name, checking each shape, and at the end refuses a
/// file with tensors nobody took (a weight phikit would silently drop).
final class GGUFTensorPicker {
    let file: GGUFFile
    var used: Set<String> = []

    init(_ file: GGUFFile) { self.file = file }

    func take(_ name: String, _ shape: [Int]) throws -> GGUFTensorInfo {
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

    func checkNothingLeft() throws {
        // llama.cpp's rope frequency table is a cache some old converters stored; not a weight.
        for t in file.tensors where !used.contains(t.name) && !t.name.hasSuffix("rope_freqs.weight") {
            throw GGUFConvertError.unexpectedTensor(path: file.path, tensor: t.name)
        }
    }
}

/// The sizes a GGUF file's metadata gives, checked enough to lay out tensors.
struct GGUFShape {
    let architecture: String
    let vocab: Int
    let hidden: Int
    let intermediate: Int
    let layers: Int
    let heads: Int
    let kvHeads: Int
    let headDim: Int
    let ropeDim: Int
    let contextLength: Int

    init(_ file: GGUFFile, _ h: GGUFHyperparameters) throws {
        let path = file.path
        guard let arch = h.architecture else {
            throw GGUFConvertError.missingMetadata(path: path, key: "general.architecture")
        }
        guard ["phi3", "llama", "phi2"].contains(arch) else {
            throw GGUFConvertError.unsupportedArchitecture(path: path, architecture: arch)
        }
        func need(_ v: Int?, _ key: String, max: Int = 1 << 24) throws -> Int {
            guard let v, v > 0, v <= max else {
                throw GGUFConvertError.missingMetadata(path: path, key: "\(arch).\(key)")
            }
            return v
        }
        architecture = arch
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
