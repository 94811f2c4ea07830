/// The tiny random models' weight generator of scripts/engine/tiny_models.py, shared by the
/// test targets that rebuild those models (no weights are committed):
///
///     r(k, i) = 2 * (mix(seed * 0x9E3779B97F4A7C15 + (k << 32) + i) >> 40) / 2^24 - 1
///
/// with mix splitmix64's finalizer; k numbers the model's tensors, i the element.
public enum SeededWeights {
    /// splitmix64's finalizer.
    public static func mix(_ x: UInt64) -> UInt64 {
        var z = x
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// r(k, i) for i < count, in [-1, 1), exact in float32.
    public static func uniform(seed: UInt64, tensor k: Int, count: Int) -> [Float] {
        let base = seed &* 0x9E37_79B9_7F4A_7C15 &+ (UInt64(k) << 32)
        return (0..<count).map { i in
            let u = Float(mix(base &+ UInt64(i)) >> 40) * 0x1p-24
            return 2 * u - 1
        }
    }

    /// Tensors numbered in the given order (k = index): norm weights 1 + r/4, biases r/10,
    /// everything else r × amplitude (tiny_models.weights).
    public static func numbered(
        _ tensors: [(name: String, shape: [Int])], seed: UInt64, amplitude: Float
    ) -> [Tensor] {
        tensors.enumerated().map { k, t in
            let r = uniform(seed: seed, tensor: k, count: t.shape.reduce(1, *))
            let values =
                t.name.hasSuffix(".bias")
                ? r.map { $0 * 0.1 }
                : t.name.hasSuffix("norm.weight") ? r.map { 1 + $0 * 0.25 } : r.map { $0 * amplitude }
            return Tensor(name: t.name, shape: t.shape, values: values)
        }
    }

    /// The sizes of a tiny phimoe model (its config.json's fields).
    public struct PhiMoESizes {
        public var hidden, intermediate, layers, heads, kvHeads, vocab, experts: Int
        public var attentionBias, lmHeadBias: Bool
        public init(
            hidden: Int, intermediate: Int, layers: Int, heads: Int, kvHeads: Int, vocab: Int,
            experts: Int, attentionBias: Bool, lmHeadBias: Bool
        ) {
            (self.hidden, self.intermediate, self.layers) = (hidden, intermediate, layers)
            (self.heads, self.kvHeads, self.vocab, self.experts) = (heads, kvHeads, vocab, experts)
            (self.attentionBias, self.lmHeadBias) = (attentionBias, lmHeadBias)
        }
    }

    /// A named float32 tensor.
    public struct Tensor {
        public let name: String
        public let shape: [Int]
        public let values: [Float]
    }

    /// tiny_models.phimoe_weights: the stacked (mlx) layout, numbered in its order.
    public static func phimoe(_ s: PhiMoESizes, seed: UInt64, amplitude: Float) -> [Tensor] {
        let hd = s.hidden / s.heads
        var shapes: [(String, [Int])] = [("model.embed_tokens.weight", [s.vocab, s.hidden])]
        for l in 0..<s.layers {
            let p = "model.layers.\(l)."
            for (name, rows) in [
                ("q_proj", s.heads * hd), ("k_proj", s.kvHeads * hd), ("v_proj", s.kvHeads * hd),
                ("o_proj", s.hidden),
            ] {
                let cols = name == "o_proj" ? s.heads * hd : s.hidden
                shapes.append((p + "self_attn.\(name).weight", [rows, cols]))
                if s.attentionBias { shapes.append((p + "self_attn.\(name).bias", [rows])) }
            }
            let moe = p + "block_sparse_moe."
            shapes += [
                (moe + "gate.weight", [s.experts, s.hidden]),
                (moe + "switch_mlp.gate_proj.weight", [s.experts, s.intermediate, s.hidden]),
                (moe + "switch_mlp.up_proj.weight", [s.experts, s.intermediate, s.hidden]),
                (moe + "switch_mlp.down_proj.weight", [s.experts, s.hidden, s.intermediate]),
                (p + "input_layernorm.weight", [s.hidden]), (p + "input_layernorm.bias", [s.hidden]),
                (p + "post_attention_layernorm.weight", [s.hidden]),
                (p + "post_attention_layernorm.bias", [s.hidden]),
            ]
        }
        shapes += [
            ("model.norm.weight", [s.hidden]), ("model.norm.bias", [s.hidden]),
            ("lm_head.weight", [s.vocab, s.hidden]),
        ]
        if s.lmHeadBias { shapes.append(("lm_head.bias", [s.vocab])) }
        return shapes.enumerated().map { k, entry in
            let r = uniform(seed: seed, tensor: k, count: entry.1.reduce(1, *))
            let isNorm = entry.0.hasSuffix("norm.weight")
            return Tensor(
                name: entry.0, shape: entry.1,
                values: isNorm ? r.map { 1 + $0 * 0.25 } : r.map { $0 * amplitude })
        }
    }

    /// tiny_models.phimoe_hf_layout: each stacked expert projection as one tensor per expert
    /// (`experts.E.w1` gate_proj, `w2` down_proj, `w3` up_proj), the Hugging Face layout.
    public static func splitExperts(_ tensors: [Tensor]) -> [Tensor] {
        let names = ["gate_proj": "w1", "down_proj": "w2", "up_proj": "w3"]
        return tensors.flatMap { t -> [Tensor] in
            guard let range = t.name.range(of: "switch_mlp.") else { return [t] }
            let prefix = t.name[..<range.lowerBound]
            let projection = t.name[range.upperBound...].split(separator: ".")[0]
            let size = t.shape[1] * t.shape[2]
            return (0..<t.shape[0]).map { e in
                Tensor(
                    name: "\(prefix)experts.\(e).\(names[String(projection)]!).weight",
                    shape: Array(t.shape.dropFirst()),
                    values: Array(t.values[(e * size)..<((e + 1) * size)]))
            }
        }
    }
}
