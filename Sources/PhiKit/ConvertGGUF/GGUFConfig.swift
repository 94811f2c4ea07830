import PhiFormats

/// config.json of the converted model (the Hugging Face keys of the architecture it becomes;
/// sorted, as mlx_lm's `save_config` writes them) from the GGUF metadata.
enum GGUFConfig {
    /// The architecture's keys (its schema says them: `GGUFArchitecture.ggufConfig`), then
    /// `quantization`, sorted.
    static func json(
        _ file: GGUFFile, _ shape: GGUFShape, _ h: GGUFHyperparameters, _ layout: GGUFModelLayout,
        tokenizer: GGUFTokenizer?, quantization: JSONValue?, floatType: DType
    ) throws -> JSONValue {
        let inputs = GGUFConfigInputs(
            shape: shape, metadata: h, tied: layout.tied,
            ropeScaling: try ropeScaling(file, layout),
            bos: tokenizer?.bosID.map { .int($0) } ?? .null, eos: eosValue(tokenizer?.eosIDs ?? []),
            dtype: .string(floatType.pythonName))
        return finished(shape.schema.ggufConfig(inputs), quantization: quantization)
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
            return out.map { .double(GGUFConfigInputs.shortestDecimal(Double($0))) }
        }
        return .object([
            ("long_factor", .array(try values(long))),
            ("short_factor", .array(try values(short))),
            ("type", .string("longrope")),
        ])
    }
}
