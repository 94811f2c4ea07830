import Foundation
import PhiFormats

/// Rotary position embedding as transformers 5 computes it for every architecture phikit runs
/// (`…RotaryEmbedding` + `modeling_rope_utils`):
/// - default: `inv_freq[i] = 1 / theta^(2i/ropeDim)`;
/// - linear: the same divided by `factor`;
/// - llama3: wavelengths `2π / inv_freq` longer than `original / low_freq_factor` divided by
///   `factor`, shorter than `original / high_freq_factor` kept, the band between blended
///   (`_compute_llama3_parameters`);
/// - LongRoPE (`longrope`/`su`): `1 / (factor_i * theta^(2i/ropeDim))` with the short factors
///   while the sequence length (largest position + 1) is at most
///   `original_max_position_embeddings`, the long ones beyond, and cos/sin multiplied by the
///   attention factor (`rope_scaling.attention_factor`, else
///   `sqrt(1 + ln(factor) / ln(original))` with `factor = max / original`, 1 when ≤ 1).
/// phimoe (`usesMscales`) scales by `rope_scaling.short_mscale` / `long_mscale` instead, on
/// the same side of the switch as the factors (transformers 4.x's PhimoeRotaryEmbedding;
/// transformers 5.x drops the length and keeps the short factors, a regression
/// scripts/engine/make_phimoe_goldens.py works around).
/// The switch applies to every position at once: keys cached with the short factors are
/// not valid once the sequence is long, which `InferenceSession` handles as transformers'
/// `generate` does (it recomputes the whole sequence).
struct RotaryEmbedding: Sendable {
    /// (ropeDim / 2) inverse frequencies in use up to `originalMax`, or always.
    let shortInverseFrequencies: [Float]
    /// LongRoPE only: the inverse frequencies beyond `originalMax`.
    let longInverseFrequencies: [Float]?
    let originalMax: Int
    /// Multiplies cos and sin (LongRoPE's magnitude correction; 1 otherwise).
    let attentionScaling: Float
    /// The same with the long factors.
    let longAttentionScaling: Float

    init(_ config: ModelConfig, usesMscales: Bool = false) {
        let dim = config.ropeDim
        let theta = config.ropeTheta
        // transformers computes arange(0, dim, 2) / dim in float32, then theta ** that.
        let exponents = stride(from: 0, to: dim, by: 2).map { Double(Float($0) / Float(dim)) }
        func inverse(_ factors: [Double]?) -> [Float] {
            exponents.enumerated().map { i, e in
                let factor = factors.map { Double(Float($0[i])) } ?? 1
                return Float(1 / (factor * pow(theta, e)))
            }
        }
        originalMax = config.originalMaxPositionEmbeddings ?? 4096
        let scaling = config.ropeScaling
        if let scaling, scaling.isLongRope {
            shortInverseFrequencies = inverse(scaling.shortFactor)
            longInverseFrequencies = inverse(scaling.longFactor)
            let factor =
                scaling.factor ?? Double(config.maxPositionEmbeddings) / Double(originalMax)
            let attention =
                scaling.attentionFactor
                ?? (factor <= 1 ? 1 : (1 + log(factor) / log(Double(originalMax))).squareRoot())
            attentionScaling = Float(usesMscales ? scaling.shortMscale ?? attention : attention)
            longAttentionScaling = Float(usesMscales ? scaling.longMscale ?? attention : attention)
        } else if let scaling, scaling.type == "linear", let factor = scaling.factor {
            shortInverseFrequencies = inverse(nil).map { $0 / Float(factor) }
            longInverseFrequencies = nil
            attentionScaling = 1
            longAttentionScaling = 1
        } else if let scaling, scaling.type == "llama3", let factor = scaling.factor {
            shortInverseFrequencies = Self.llama3(inverse(nil), scaling, factor: factor)
            longInverseFrequencies = nil
            attentionScaling = 1
            longAttentionScaling = 1
        } else {
            shortInverseFrequencies = inverse(nil)
            longInverseFrequencies = nil
            attentionScaling = 1
            longAttentionScaling = 1
        }
    }

    /// Llama 3's scaling of the default inverse frequencies, in float32 as transformers.
    private static func llama3(_ base: [Float], _ scaling: RopeScaling, factor: Double) -> [Float] {
        let factor = Float(factor)
        let low = Float(scaling.lowFreqFactor ?? 1), high = Float(scaling.highFreqFactor ?? 4)
        let original = Float(scaling.originalMaxPositionEmbeddings ?? 8192)
        let lowWavelength = original / low, highWavelength = original / high
        return base.map { f in
            let wavelength = 2 * Float.pi / f
            let scaled = wavelength > lowWavelength ? f / factor : f
            guard wavelength >= highWavelength, wavelength <= lowWavelength else { return scaled }
            let smooth = (original / wavelength - low) / (high - low)
            return (1 - smooth) * scaled / factor + smooth * scaled
        }
    }

    /// Whether a sequence of `length` tokens is embedded with the long factors.
    func usesLongFactors(sequenceLength length: Int) -> Bool {
        longInverseFrequencies != nil && length > originalMax
    }

    /// cos/sin [ropeDim / 2] at `position`, scaled by the attention factor. The angle is a
    /// float32 product as in transformers (`position_ids.float() * inv_freq`).
    func angles(
        position: Int, long: Bool, cos: UnsafeMutablePointer<Float>,
        sin: UnsafeMutablePointer<Float>
    ) {
        let frequencies = long ? longInverseFrequencies! : shortInverseFrequencies
        let scaling = long ? longAttentionScaling : attentionScaling
        for (i, f) in frequencies.enumerated() {
            let angle = Double(Float(position) * f)
            cos[i] = Float(Foundation.cos(angle)) * scaling
            sin[i] = Float(Foundation.sin(angle)) * scaling
        }
    }
}
