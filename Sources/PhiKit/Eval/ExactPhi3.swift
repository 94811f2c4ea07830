import Foundation
import PhiFormats

/// `eval --reference exact`: a model's own stored weights, dequantized exactly (ExactWeights),
/// run in float64 — what the weights mean with no rounding of the engine's, so the distance
/// of the engine's logits from it is the cost of computing in float32 alone (and, for a
/// quantized model compared with its float source, the quantization's cost is the difference
/// of the two distances). The Phi-3 forward pass as transformers and
/// scripts/engine/make_mx_oracle.py write it (RMSNorm, fused qkv, partial rotary with
/// LongRoPE's factors for the window's length and its attention factor, grouped-query causal
/// attention, SiLU-gated MLP, tied or separate head), a whole window at a time.
struct ExactPhi3 {
    let weights: ExactWeights
    var config: ModelConfig { weights.layout.config }

    /// `adapterPath`: an mlx-lm adapter folder added to the weights in float64.
    init(directory: String, adapterPath: String? = nil) throws {
        weights = try ExactWeights(directory: directory, adapterPath: adapterPath)
        guard weights.layout.config.modelType == "phi3" else {
            throw EvalError.exactUnsupported(modelType: weights.layout.config.modelType)
        }
    }

    /// The logits (n × vocab) after each of `tokens`.
    func logits(_ tokens: [Int]) throws -> [Double] {
        let c = config
        let (h, heads, kv, hd) = (c.hiddenSize, c.attentionHeads, c.kvHeads, c.headDim)
        let n = tokens.count
        let (cos, sin) = rotary(length: n)
        let rd = c.ropeDim

        // x (n × h): the embedding rows of the tokens
        var x = [Double](repeating: 0, count: n * h)
        var row = [Double](repeating: 0, count: h)
        let embed = weights.layout.module("model.embed_tokens")
        for (t, token) in tokens.enumerated() {
            try weights.row(token, of: embed, into: &row)
            for i in 0..<h { x[t * h + i] = row[i] }
        }
        for layer in 0..<c.layerCount {
            let p = "model.layers.\(layer)."
            let a = try norm(x, n, p + "input_layernorm.weight")
            let qkv = try weights.multiply(a, rows: n, by: p + "self_attn.qkv_proj")
            let width = (heads + 2 * kv) * hd
            // q (heads × n × hd), k and v (kv × n × hd), rotated on their first rd dims
            func head(_ offset: Int, _ count: Int) -> [Double] {
                var out = [Double](repeating: 0, count: count * n * hd)
                for hh in 0..<count {
                    for t in 0..<n {
                        for d in 0..<hd { out[(hh * n + t) * hd + d] = qkv[t * width + offset + hh * hd + d] }
                    }
                }
                return out
            }
            var q = head(0, heads)
            var k = head(heads * hd, kv)
            let v = head((heads + kv) * hd, kv)
            rotate(&q, count: heads, n: n, hd: hd, rd: rd, cos: cos, sin: sin)
            rotate(&k, count: kv, n: n, hd: hd, rd: rd, cos: cos, sin: sin)
            let attended = attention(q, k, v, heads: heads, kv: kv, n: n, hd: hd)
            let o = try weights.multiply(attended, rows: n, by: p + "self_attn.o_proj")
            for i in 0..<(n * h) { x[i] += o[i] }
            let b = try norm(x, n, p + "post_attention_layernorm.weight")
            let gu = try weights.multiply(b, rows: n, by: p + "mlp.gate_up_proj")
            let inter = c.intermediateSize
            var gated = [Double](repeating: 0, count: n * inter)
            for t in 0..<n {
                for i in 0..<inter {
                    let g = gu[t * 2 * inter + i]
                    gated[t * inter + i] = g / (1 + exp(-g)) * gu[t * 2 * inter + inter + i]
                }
            }
            let down = try weights.multiply(gated, rows: n, by: p + "mlp.down_proj")
            for i in 0..<(n * h) { x[i] += down[i] }
        }
        let final = try norm(x, n, "model.norm.weight")
        let head = c.tieWordEmbeddings ? "model.embed_tokens" : "lm_head"
        return try weights.multiply(final, rows: n, by: head)
    }

    private func norm(_ x: [Double], _ n: Int, _ name: String) throws -> [Double] {
        let g = try weights.vector(name)
        let h = g.count
        var out = x
        for t in 0..<n {
            var ms = 0.0
            for i in 0..<h { ms += x[t * h + i] * x[t * h + i] }
            let scale = 1 / (ms / Double(h) + config.rmsNormEps).squareRoot()
            for i in 0..<h { out[t * h + i] = x[t * h + i] * scale * g[i] }
        }
        return out
    }

    /// cos/sin (n × rd/2), scaled by the attention factor; LongRoPE's long factors when the
    /// window is longer than `original_max_position_embeddings`.
    private func rotary(length n: Int) -> ([Double], [Double]) {
        let c = config
        let rd = c.ropeDim
        let half = rd / 2
        var factors = [Double](repeating: 1, count: half)
        var mscale = 1.0
        if let s = c.ropeScaling, s.isLongRope {
            let original = c.originalMaxPositionEmbeddings ?? c.maxPositionEmbeddings
            factors = n > original ? s.longFactor : s.shortFactor
            let ratio = s.factor ?? Double(c.maxPositionEmbeddings) / Double(original)
            mscale = s.attentionFactor ?? (ratio <= 1 ? 1 : (1 + log(ratio) / log(Double(original))).squareRoot())
        } else if let s = c.ropeScaling, s.type == "linear", let f = s.factor {
            factors = [Double](repeating: f, count: half)
        }
        var cos = [Double](repeating: 0, count: n * half)
        var sin = cos
        for i in 0..<half {
            let inverse = 1 / (factors[i] * pow(c.ropeTheta, Double(2 * i) / Double(rd)))
            for t in 0..<n {
                let angle = Double(t) * inverse
                cos[t * half + i] = Foundation.cos(angle) * mscale
                sin[t * half + i] = Foundation.sin(angle) * mscale
            }
        }
        return (cos, sin)
    }

    /// NeoX halves ("rotate_half") on the first rd dims of each head.
    private func rotate(
        _ x: inout [Double], count: Int, n: Int, hd: Int, rd: Int, cos: [Double], sin: [Double]
    ) {
        let half = rd / 2
        for hh in 0..<count {
            for t in 0..<n {
                let base = (hh * n + t) * hd
                for i in 0..<half {
                    let (a, b) = (x[base + i], x[base + half + i])
                    let (cs, sn) = (cos[t * half + i], sin[t * half + i])
                    x[base + i] = a * cs - b * sn
                    x[base + half + i] = b * cs + a * sn
                }
            }
        }
    }

    /// Causal softmax attention → n × (heads · hd).
    private func attention(
        _ q: [Double], _ k: [Double], _ v: [Double], heads: Int, kv: Int, n: Int, hd: Int
    ) -> [Double] {
        var out = [Double](repeating: 0, count: n * heads * hd)
        let scale = 1 / Double(hd).squareRoot()
        var scores = [Double](repeating: 0, count: n)
        for hh in 0..<heads {
            let kh = hh / (heads / kv)
            for t in 0..<n {
                var best = -Double.infinity
                for s in 0...t {
                    var dot = 0.0
                    for d in 0..<hd { dot += q[(hh * n + t) * hd + d] * k[(kh * n + s) * hd + d] }
                    scores[s] = dot * scale
                    best = max(best, scores[s])
                }
                var total = 0.0
                for s in 0...t {
                    scores[s] = exp(scores[s] - best)
                    total += scores[s]
                }
                for s in 0...t {
                    let w = scores[s] / total
                    for d in 0..<hd { out[t * heads * hd + hh * hd + d] += w * v[(kh * n + s) * hd + d] }
                }
            }
        }
        return out
    }
}
