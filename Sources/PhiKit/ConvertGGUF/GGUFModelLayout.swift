import PhiFormats

/// Where each output tensor of the MLX (Hugging Face phi3 layout) model comes from in a GGUF
/// file: one or more GGUF tensors whose rows are concatenated, some with their rows put back
/// in Hugging Face order.
///
/// - `phi3` GGUF (llama.cpp's Phi3MiniModel): fused `attn_qkv` and gate+up `ffn_up`, nothing
///   permuted (NeoX rope), LongRoPE factors as `rope_factors_long/short` (read into config).
///   Files with separate `attn_q/k/v` are fused here.
/// - `llama` GGUF: separate q/k/v and gate/up, fused here into `qkv_proj` (q, k, v rows) and
///   `gate_up_proj` (gate rows, then up rows: Phi3MLP applies SiLU to the first half); q and k
///   rows carry llama.cpp's permutation for GGML's interleaved rope, undone per head.
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

    static func make(_ file: GGUFFile, _ h: GGUFShape) throws -> GGUFModelLayout {
        if h.architecture == "phi2" { return try phi2(file, h) }
        let llama = h.architecture == "llama"
        let picker = GGUFTensorPicker(file)
        func tensor(_ name: String, _ shape: [Int]) throws -> GGUFTensorInfo {
            try picker.take(name, shape)
        }
        func part(_ name: String, _ shape: [Int], heads: Int? = nil) throws -> Part {
            Part(tensor: try tensor(name, shape), unpermuteHeads: llama ? heads : nil)
        }
        let hidden = h.hidden
        let qRows = h.heads * h.headDim
        let kvRows = h.kvHeads * h.headDim
        var modules: [Module] = []
        func add(_ name: String, _ parts: [Part]) {
            modules.append(Module(name: name, parts: parts))
        }
        add("model.embed_tokens.weight", [try part("token_embd.weight", [h.vocab, hidden])])
        for l in 0..<h.layers {
            let b = "blk.\(l)."
            let p = "model.layers.\(l)."
            add(p + "input_layernorm.weight", [try part(b + "attn_norm.weight", [hidden])])
            if file.tensor(b + "attn_qkv.weight") != nil {
                add(
                    p + "self_attn.qkv_proj.weight",
                    [try part(b + "attn_qkv.weight", [qRows + 2 * kvRows, hidden])])
            } else {
                add(
                    p + "self_attn.qkv_proj.weight",
                    [
                        try part(b + "attn_q.weight", [qRows, hidden], heads: h.heads),
                        try part(b + "attn_k.weight", [kvRows, hidden], heads: h.kvHeads),
                        try part(b + "attn_v.weight", [kvRows, hidden]),
                    ])
            }
            add(p + "self_attn.o_proj.weight", [try part(b + "attn_output.weight", [hidden, qRows])])
            add(p + "post_attention_layernorm.weight", [try part(b + "ffn_norm.weight", [hidden])])
            if file.tensor(b + "ffn_gate.weight") != nil {
                add(
                    p + "mlp.gate_up_proj.weight",
                    [
                        try part(b + "ffn_gate.weight", [h.intermediate, hidden]),
                        try part(b + "ffn_up.weight", [h.intermediate, hidden]),
                    ])
            } else {
                add(
                    p + "mlp.gate_up_proj.weight",
                    [try part(b + "ffn_up.weight", [2 * h.intermediate, hidden])])
            }
            add(p + "mlp.down_proj.weight", [try part(b + "ffn_down.weight", [hidden, h.intermediate])])
        }
        add("model.norm.weight", [try part("output_norm.weight", [hidden])])
        // An output matrix byte-identical to the embedding (llama2.c exports duplicate it) is
        // a tied embedding: no lm_head, as in the Hugging Face checkpoint.
        let output = file.tensor("output.weight")
        let embed = modules[0].parts[0].tensor
        let tied =
            output == nil
            || (output!.type == embed.type && output!.shape == embed.shape
                && file.data(output!).elementsEqual(file.data(embed)))
        if let output, output.type == embed.type, output.shape == embed.shape {
            file.release(output)  // compared above: no reason to keep either resident
            file.release(embed)
        }
        if tied, output != nil { picker.used.insert("output.weight") }
        if !tied { add("lm_head.weight", [try part("output.weight", [h.vocab, hidden])]) }

        let factors = h.ropeDim / 2
        let long = try file.tensor("rope_factors_long.weight").map { _ in
            try tensor("rope_factors_long.weight", [factors])
        }
        let short = try file.tensor("rope_factors_short.weight").map { _ in
            try tensor("rope_factors_short.weight", [factors])
        }
        try picker.checkNothingLeft()
        return GGUFModelLayout(
            modules: modules, tied: tied, ropeFactorsLong: long, ropeFactorsShort: short)
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
