import PhiFormats

/// Turns a plan's steps for the adapted modules into `.fuse` steps, keeping mlx_lm's save
/// order (the module's weight, scales, biases in place; its `bias` step untouched):
/// - a float weight (`.cast` without a cast) → its fused weight, in the adapter's output
///   dtype;
/// - a packed weight carried over (`.cast` of weight, scales, biases) → dequantized, fused
///   and packed again with the same mode, bits and group size (`nn.QuantizedLinear
///   .from_linear`); scales and biases then have the fused weight's dtype;
/// - a packed weight being dequantized (`--de-quantize`) → the fused float weight.
enum FuseSteps {
    static func rewrite(
        _ steps: inout [ConvertStep], layout: ModelLayout, adapter: LoRAAdapter
    ) throws {
        for module in adapter.modules {
            let weightName = module.path + ".weight"
            guard let at = steps.firstIndex(where: { $0.outputs.first?.name == weightName }),
                let spec = layout.modules.first(where: { $0.path == module.path })
            else {
                throw FuseError.unsupported("the base model has no tensor \(weightName) to fuse into")
            }
            let step = steps[at]
            let shape = [module.outputs, module.inputs]
            switch step.kind {
            case .cast where step.inputs[0].info.dtype.isFloat:
                let dtype = module.outputDType(weight: step.inputs[0].info.dtype)
                steps[at] = fused(
                    step.inputs, source: nil, weightDType: step.inputs[0].info.dtype,
                    outputs: [TensorSpec(name: weightName, dtype: dtype, shape: shape)],
                    module: module, parameters: step.parameters)
            case .cast:
                guard case .quantized(let group, let bits, let mode) = layout.quantization(of: spec),
                    let scheme = try? QuantizationScheme(mode: mode, bits: bits, groupSize: group)
                else { throw FuseError.unsupported("cannot read the quantization of \(module.path)") }
                let count = scheme.hasBiases ? 3 : 2
                let inputs = steps[at..<(at + count)].flatMap(\.inputs)
                let weightDType = scheme.hasBiases ? inputs[1].info.dtype : .bf16
                let dtype = module.outputDType(weight: weightDType)
                let (wShape, sShape) = scheme.quantizedShapes(for: shape)
                var outputs = [
                    TensorSpec(name: weightName, dtype: .u32, shape: wShape),
                    TensorSpec(
                        name: module.path + ".scales", dtype: scheme.scalesDType(weightDType: dtype),
                        shape: sShape),
                ]
                if scheme.hasBiases {
                    outputs.append(TensorSpec(name: module.path + ".biases", dtype: dtype, shape: sShape))
                }
                let parameters = steps[at..<(at + count)].reduce(0) { $0 + $1.parameters }
                steps.replaceSubrange(
                    at..<(at + count),
                    with: [
                        fused(
                            inputs, source: scheme, weightDType: weightDType, outputs: outputs,
                            module: module, parameters: parameters)
                    ])
            case .dequantize:
                let dtype = module.outputDType(weight: step.computeDType)
                steps[at] = fused(
                    step.inputs, source: step.quantization, weightDType: step.computeDType,
                    outputs: [TensorSpec(name: weightName, dtype: dtype, shape: shape)],
                    module: module, parameters: step.parameters)
            case .quantize, .fuse:
                throw FuseError.unsupported("\(module.path) cannot be fused twice")
            }
        }
    }

    private static func fused(
        _ inputs: [SourceTensor], source: QuantizationScheme?, weightDType: DType,
        outputs: [TensorSpec], module: ModuleAdapter, parameters: Int
    ) -> ConvertStep {
        ConvertStep(
            kind: .fuse, inputs: inputs, outputs: outputs, quantization: source,
            computeDType: weightDType, parameters: parameters, adapter: module)
    }
}
