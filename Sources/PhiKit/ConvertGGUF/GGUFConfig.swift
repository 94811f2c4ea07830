import PhiFormats

/// config.json of the converted model (the Hugging Face keys of the architecture it becomes;
/// sorted, as mlx_lm's `save_config` writes them) from the GGUF metadata.
enum GGUFConfig {
    /// The architecture's keys (its layout file says them: `phi3Keys`, `llamaKeys`,
    /// `phiKeys`), then `quantization`, sorted.
    static func json(
        _ file: GGUFFile, _ shape: GGUFShape, _ h: GGUFHyperparameters, _ layout: GGUFModelLayout,
        tokenizer: GGUFTokenizer?, quantization: JSONValue?, floatType: DType
    ) throws -> JSONValue {
        let common = Common(
            bos: tokenizer?.bosID.map { .int($0) } ?? .null, eos: eosValue(tokenizer?.eosIDs ?? []),
            dtype: .string(floatType.pythonName))
        let keys: [(key: String, value: JSONValue)] =
            switch shape.architecture {
            case "phi2": GGUFModelLayout.phiKeys(shape, h, common)
            case "llama": GGUFModelLayout.llamaKeys(shape, h, layout, common)
            default: try GGUFModelLayout.phi3Keys(file, shape, h, layout, common)
            }
        return finished(keys, quantization: quantization)
    }

    /// The values every architecture's config.json takes from the tokenizer and the tensors.
    struct Common {
        let bos: JSONValue
        let eos: JSONValue
        /// `torch_dtype`.
        let dtype: JSONValue
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
    static func ropeScaling(_ file: GGUFFile, _ layout: GGUFModelLayout) throws
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
