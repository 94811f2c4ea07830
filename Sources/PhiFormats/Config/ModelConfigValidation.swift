import Foundation

// MARK: - Validation (strict: everything the engine indexes with)

extension ModelConfig {
    /// The checks every architecture shares, then the schema's own (`ArchitectureSchema
    /// .validate`), so an architecture's fields are checked only where they mean something.
    public func validate() throws(ConfigError) {
        guard let schema = Architectures.schema(for: modelType) else {
            throw .unsupportedArchitecture(path: source, modelType: modelType)
        }
        // Upper bounds far above any Phi model (Phi-3.5-mini: 3072, 8192, 32, 32, 32064,
        // 131072) but low enough that every shape and byte count derived from them fits in
        // an Int: a lying config.json must fail here, not overflow later (found by fuzzing).
        for (field, value, limit) in [
            ("hidden_size", hiddenSize, 1 << 16), ("intermediate_size", intermediateSize, 1 << 18),
            ("num_hidden_layers", layerCount, 1 << 10),
            ("num_attention_heads", attentionHeads, 1 << 10),
            ("num_key_value_heads", kvHeads, 1 << 10), ("vocab_size", vocabSize, 1 << 22),
            ("max_position_embeddings", maxPositionEmbeddings, 1 << 24),
        ] where value <= 0 || value > limit {
            throw invalid(
                field,
                value <= 0
                    ? "must be positive, got \(value)"
                    : "is \(value), more than phikit supports (\(limit))")
        }
        guard hiddenSize % attentionHeads == 0 else {
            throw invalid(
                "num_attention_heads", "(\(attentionHeads)) must divide hidden_size (\(hiddenSize))"
            )
        }
        if let stated = statedHeadDim, stated != headDim {
            throw invalid(
                "head_dim",
                "is \(stated); phikit needs hidden_size / num_attention_heads (\(headDim))")
        }
        guard attentionHeads % kvHeads == 0 else {
            throw invalid(
                "num_key_value_heads",
                "(\(kvHeads)) must divide num_attention_heads (\(attentionHeads))")
        }
        guard partialRotaryFactor > 0, partialRotaryFactor <= 1 else {
            throw invalid("partial_rotary_factor", "must be in (0, 1], got \(partialRotaryFactor)")
        }
        guard ropeDim > 0, ropeDim % 2 == 0 else {
            throw invalid(
                "partial_rotary_factor",
                "gives an odd or empty rotary dimension \(ropeDim) (head_dim \(headDim))")
        }
        guard rmsNormEps > 0, rmsNormEps.isFinite else {
            throw invalid("rms_norm_eps", "must be positive")
        }
        // Below 1 the inverse frequencies theta^-e overflow to infinity and every angle is NaN.
        guard ropeTheta >= 1, ropeTheta.isFinite else {
            throw invalid("rope_theta", "must be at least 1, got \(ropeTheta)")
        }
        if let original = originalMaxPositionEmbeddings, original <= 0 {
            throw invalid("original_max_position_embeddings", "must be positive, got \(original)")
        }
        if let window = slidingWindow, window <= 0 {
            throw invalid("sliding_window", "must be positive, got \(window)")
        }
        for id in eosTokenIds + (bosTokenId.map { [$0] } ?? []) where id < 0 || id >= vocabSize {
            let field = eosTokenIds.contains(id) ? "eos_token_id" : "bos_token_id"
            throw invalid(field, "\(id) is outside the vocabulary (vocab_size \(vocabSize))")
        }
        if let scaling = ropeScaling { try validate(scaling) }
        if let quantization { try validate(quantization) }
        if let method = foreignQuantMethod {
            throw invalid(
                "quantization_config.quant_method", "'\(method)' is not supported (only MLX affine)"
            )
        }
        try schema.validate(self)
    }

    private func validate(_ scaling: RopeScaling) throws(ConfigError) {
        guard RopeScaling.supportedTypes.contains(scaling.type) else {
            throw invalid(
                "rope_scaling.type", "'\(scaling.type)' is not supported (longrope, su, linear, llama3)")
        }
        for (field, value) in [
            ("factor", scaling.factor), ("attention_factor", scaling.attentionFactor),
            ("short_mscale", scaling.shortMscale), ("long_mscale", scaling.longMscale),
        ]
        where value.map({ !($0 > 0) || !$0.isFinite }) ?? false {
            throw invalid("rope_scaling.\(field)", "must be a positive number")
        }
        if scaling.isLongRope {
            // The attention factor divides by ln(original): at 1 it is infinite and the model
            // generated <unk> after passing verify. The original window also cannot exceed the
            // extended one it was extended to.
            let original = originalMaxPositionEmbeddings ?? 4096
            guard original >= 2, original <= maxPositionEmbeddings else {
                throw invalid(
                    "original_max_position_embeddings",
                    "is \(original); LongRoPE needs 2 to max_position_embeddings "
                        + "(\(maxPositionEmbeddings))")
            }
            // One divisor per rotary frequency pair: ropeDim/2 (48 on Phi-3.5 and Phi-4-mini).
            for (field, list) in [
                ("short_factor", scaling.shortFactor), ("long_factor", scaling.longFactor),
            ] {
                guard list.count == ropeDim / 2 else {
                    throw invalid(
                        "rope_scaling.\(field)",
                        "has \(list.count) entries, expected \(ropeDim / 2) (rotary dimension \(ropeDim) / 2)"
                    )
                }
                // Real factors lie between 1 and about 100; far outside, 1 / (factor × theta^e)
                // leaves float range and the angles become infinite or zero.
                if let bad = list.firstIndex(where: { !($0 >= 1e-3 && $0 <= 1e6) }) {
                    throw invalid(
                        "rope_scaling.\(field)",
                        "entry \(bad) (\(list[bad])) must be a number from 0.001 to 1e6")
                }
            }
        }
        if scaling.type == "llama3" {
            // transformers' _compute_llama3_parameters: factor, the band edges (defaults 1
            // and 4 as mlx-lm) and the trained context (8192 when absent, as mlx-lm).
            guard let factor = scaling.factor else {
                throw .missingField(path: source, field: "rope_scaling.factor")
            }
            let low = scaling.lowFreqFactor ?? 1, high = scaling.highFreqFactor ?? 4
            guard factor >= 1, factor.isFinite else {
                throw invalid("rope_scaling.factor", "must be at least 1 for llama3, got \(factor)")
            }
            guard low > 0, high > low, high.isFinite else {
                throw invalid(
                    "rope_scaling.high_freq_factor",
                    "must be above low_freq_factor (\(low)), both positive; got \(high)")
            }
            if let original = scaling.originalMaxPositionEmbeddings, original <= 0 {
                throw invalid(
                    "rope_scaling.original_max_position_embeddings", "must be positive, got \(original)")
            }
        }
        if scaling.type == "linear" {
            guard let factor = scaling.factor else {
                throw .missingField(path: source, field: "rope_scaling.factor")
            }
            guard factor > 0, factor.isFinite else {
                throw invalid("rope_scaling.factor", "must be positive")
            }
        }
    }

    private func validate(_ q: QuantizationConfig) throws(ConfigError) {
        let key = quantization != nil ? "quantization" : "quantization_config"
        let layers =
            [(key, LayerQuantization.quantized(groupSize: q.groupSize, bits: q.bits, mode: q.mode))]
            + q.overrides.sorted { $0.key < $1.key }.map { ("\(key).\($0.key)", $0.value) }
        for (field, layer) in layers {
            guard case .quantized(let groupSize, let bits, let mode) = layer else { continue }
            if let m = MicroscaledMode(rawValue: mode) {
                guard bits == m.bits, groupSize == m.groupSize else {
                    throw invalid(
                        field,
                        "\(mode) is \(m.bits)-bit in groups of \(m.groupSize), got "
                            + "bits \(bits), group_size \(groupSize)")
                }
                continue
            }
            guard mode == "affine" else {
                throw invalid(
                    "\(field).mode",
                    "'\(mode)' is not supported (affine, mxfp4, nvfp4 or mxfp8)")
            }
            guard [2, 3, 4, 5, 6, 8].contains(bits) else {
                throw invalid("\(field).bits", "must be 2, 3, 4, 5, 6 or 8, got \(bits)")
            }
            guard [32, 64, 128].contains(groupSize) else {
                throw invalid("\(field).group_size", "must be 32, 64 or 128, got \(groupSize)")
            }
        }
    }

    /// The error for `field` of this config.json (schemas use it for their own fields).
    func invalid(_ field: String, _ detail: String) -> ConfigError {
        .invalidValue(path: source, field: field, detail: detail)
    }
}
