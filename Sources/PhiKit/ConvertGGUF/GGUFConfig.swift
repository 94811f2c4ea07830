import PhiFormats

/// config.json of the converted model (Hugging Face phi3 keys, or phi for a phi2 GGUF;
/// sorted, as mlx_lm's `save_config` writes them) from the GGUF metadata.
enum GGUFConfig {
    static func json(
        _ file: GGUFFile, _ shape: GGUFShape, _ h: GGUFHyperparameters, _ layout: GGUFModelLayout,
        tokenizer: GGUFTokenizer?, quantization: JSONValue?, floatType: DType
    ) throws -> JSONValue {
        if shape.architecture == "phi2" {
            return phiJSON(shape, h, tokenizer: tokenizer, quantization: quantization, floatType: floatType)
        }
        let c: [(key: String, value: JSONValue)] = [
            ("architectures", .array([.string("Phi3ForCausalLM")])),
            ("attention_bias", .bool(false)), ("attention_dropout", .double(0)),
            ("bos_token_id", tokenizer?.bosID.map { .int($0) } ?? .null),
            ("embd_pdrop", .double(0)),
            ("eos_token_id", eosValue(tokenizer?.eosIDs ?? [])),
            ("hidden_act", .string("silu")), ("hidden_size", .int(shape.hidden)),
            ("initializer_range", .double(0.02)),
            ("intermediate_size", .int(shape.intermediate)),
            ("max_position_embeddings", .int(shape.contextLength)),
            ("model_type", .string("phi3")),
            ("num_attention_heads", .int(shape.heads)),
            ("num_hidden_layers", .int(shape.layers)),
            ("num_key_value_heads", .int(shape.kvHeads)),
            (
                "original_max_position_embeddings",
                .int(h.ropeOriginalContextLength ?? shape.contextLength)
            ),
            ("partial_rotary_factor", .double(Double(shape.ropeDim) / Double(shape.headDim))),
            ("resid_pdrop", .double(0)),
            ("rms_norm_eps", .double(shortestDecimal(h.rmsEpsilon ?? 1e-5))),
            ("rope_scaling", try ropeScaling(file, layout)),
            ("rope_theta", .double(h.ropeFreqBase ?? 10000)),
            ("sliding_window", h.slidingWindow.flatMap { $0 > 0 ? .int($0) : nil } ?? .null),  // 0: none
            ("tie_word_embeddings", .bool(layout.tied)),
            ("torch_dtype", .string(floatType.pythonName)),
            ("use_cache", .bool(true)),
            ("vocab_size", .int(shape.vocab)),
        ]
        return finished(c, quantization: quantization)
    }

    /// `model_type: phi` (transformers' PhiConfig keys) for a phi2 GGUF: LayerNorm epsilon,
    /// rotary share as rope dims / head dim (Phi-2: 32 / 80 = 0.4), plain RoPE.
    private static func phiJSON(
        _ shape: GGUFShape, _ h: GGUFHyperparameters, tokenizer: GGUFTokenizer?,
        quantization: JSONValue?, floatType: DType
    ) -> JSONValue {
        let c: [(key: String, value: JSONValue)] = [
            ("architectures", .array([.string("PhiForCausalLM")])),
            ("attention_dropout", .double(0)),
            ("bos_token_id", tokenizer?.bosID.map { .int($0) } ?? .null),
            ("embd_pdrop", .double(0)),
            ("eos_token_id", eosValue(tokenizer?.eosIDs ?? [])),
            ("hidden_act", .string("gelu_new")), ("hidden_size", .int(shape.hidden)),
            ("initializer_range", .double(0.02)),
            ("intermediate_size", .int(shape.intermediate)),
            ("layer_norm_eps", .double(shortestDecimal(h.layerNormEpsilon ?? 1e-5))),
            ("max_position_embeddings", .int(shape.contextLength)),
            ("model_type", .string("phi")),
            ("num_attention_heads", .int(shape.heads)),
            ("num_hidden_layers", .int(shape.layers)),
            ("num_key_value_heads", .int(shape.kvHeads)),
            ("partial_rotary_factor", .double(Double(shape.ropeDim) / Double(shape.headDim))),
            ("qk_layernorm", .bool(false)), ("resid_pdrop", .double(0)),
            ("rope_scaling", .null), ("rope_theta", .double(h.ropeFreqBase ?? 10000)),
            ("tie_word_embeddings", .bool(false)),
            ("torch_dtype", .string(floatType.pythonName)),
            ("use_cache", .bool(true)),
            ("vocab_size", .int(shape.vocab)),
        ]
        return finished(c, quantization: quantization)
    }

    /// The keys plus `quantization` and its identical `quantization_config`, sorted.
    private static func finished(
        _ keys: [(key: String, value: JSONValue)], quantization: JSONValue?
    ) -> JSONValue {
        var c = keys
        if let quantization {
            c.append(("quantization", quantization))
            c.append(("quantization_config", quantization))
        }
        return JSONValue.object(c).sortedKeys()
    }

    private static func eosValue(_ ids: [Int]) -> JSONValue {
        ids.count == 1 ? .int(ids[0]) : ids.isEmpty ? .null : .array(ids.map { .int($0) })
    }

    /// GGUF stores the epsilon as float32: 1e-5 comes back as 9.99999974738e-06. The shortest
    /// decimal that rounds to the same float32 is what the source config said.
    static func shortestDecimal(_ e: Double) -> Double {
        let f = Float(e)
        for digits in 1...9 {
            let text = String(format: "%.\(digits)g", e)
            if let d = Double(text), Float(d) == f { return d }
        }
        return e
    }

    /// LongRoPE from `rope_factors_long/short` (llama.cpp stores HF's long_factor and
    /// short_factor lists as these two tensors).
    private static func ropeScaling(_ file: GGUFFile, _ layout: GGUFModelLayout) throws
        -> JSONValue
    {
        guard let long = layout.ropeFactorsLong else { return .null }
        let short = layout.ropeFactorsShort ?? long
        func values(_ t: GGUFTensorInfo) throws -> [JSONValue] {
            guard GGUFBlocks.canDecode(t.type) else {
                throw GGUFConvertError.unsupportedType(path: file.path, tensor: t.name, type: t.type.name)
            }
            var out = [Float](repeating: 0, count: t.elementCount)
            out.withUnsafeMutableBufferPointer {
                GGUFBlocks.dequantize(t.type, file.data(t), count: t.elementCount, into: $0)
            }
            return out.map { .double(shortestDecimal(Double($0))) }
        }
        return .object([
            ("long_factor", .array(try values(long))),
            ("short_factor", .array(try values(short))),
            ("type", .string("longrope")),
        ])
    }
}
