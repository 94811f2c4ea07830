import Foundation
import PhiFormats
import TestSupport
import Testing

@testable import PhiKit

/// Adapters that do not fit their base are refused with an error naming the tensor (or the
/// adapter_config.json field), exit code 65, and nothing written: no output, no temporary
/// directory beside it.
@Suite("fuse refuses bad adapters")
struct FuseRefusalTests {
    /// phi4-lora-partial: layer 1's qkv_proj (128 → 256) and down_proj (160 → 128), rank 4.
    static let good = FuseGoldenCase.adapter("phi4-lora-partial")

    typealias Tensors = [(TensorSpec, [UInt8])]

    /// The good adapter's tensors and config, changed by `edit`, written to a new folder.
    static func adapter(
        in work: URL, tensors edit: (inout Tensors) -> Void = { _ in },
        config: (inout [String: Any]) -> Void = { _ in }
    ) throws -> URL {
        let dir = work.appendingPathComponent("adapter")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let st = try SafeTensorsFile(path: good.appendingPathComponent("adapters.safetensors").path)
        var tensors: Tensors = st.tensors.map {
            (TensorSpec(name: $0.name, dtype: $0.dtype, shape: $0.shape), Array(st.data($0)))
        }
        edit(&tensors)
        try SafeTensorsWriter.write(
            path: dir.appendingPathComponent("adapters.safetensors").path, tensors: tensors,
            metadata: nil)
        let data = try Data(contentsOf: good.appendingPathComponent("adapter_config.json"))
        var json = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        config(&json)
        try JSONSerialization.data(withJSONObject: json).write(
            to: dir.appendingPathComponent("adapter_config.json"))
        return dir
    }

    /// Runs fuse on phi4-bf16 with `adapter`; returns the error after checking nothing was
    /// written.
    static func refusal(_ adapter: URL, work: URL) throws -> FuseError {
        let base = try FuseGoldenCase.base("phi4-bf16")
        let out = work.appendingPathComponent("out")
        let error = #expect(throws: FuseError.self) {
            _ = try fuse(
                FuseOptions(
                    model: base.path, adapterPath: adapter.path, output: out.path,
                    environment: [:]))
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: work.path)
        #expect(left == ["adapter"], "fuse left \(left.sorted())")
        return try #require(error)
    }

    static func zeros(_ name: String, _ dtype: DType, _ shape: [Int]) -> (TensorSpec, [UInt8]) {
        (
            TensorSpec(name: name, dtype: dtype, shape: shape),
            [UInt8](repeating: 0, count: shape.reduce(1, *) * dtype.size)
        )
    }

    func check(
        _ expected: (FuseError) -> Bool, _ mentions: String,
        tensors: (inout Tensors) -> Void = { _ in }, config: (inout [String: Any]) -> Void = { _ in }
    ) throws {
        let work = try ConvertFixtures.temporaryDirectory("fuse-refusal")
        defer { try? FileManager.default.removeItem(at: work) }
        let error = try Self.refusal(Self.adapter(in: work, tensors: tensors, config: config), work: work)
        #expect(expected(error), "\(error)")
        #expect(error.exitCode == .dataError || error.exitCode == .noInput)
        #expect(error.message.contains(mentions), "\(error.message)")
    }

    @Test func rankMismatch() throws {
        try check(
            { if case .badAdapterTensor = $0 { true } else { false } },
            "model.layers.1.self_attn.qkv_proj.lora_a",
            config: { c in
                var p = c["lora_parameters"] as! [String: Any]
                p["rank"] = 8
                c["lora_parameters"] = p
            })
    }

    @Test func tensorNamingAnAbsentModule() throws {
        try check(
            { if case .badAdapterTensor = $0 { true } else { false } },
            "model.layers.1.self_attn.q_proj.lora_a",
            tensors: { $0.append(Self.zeros("model.layers.1.self_attn.q_proj.lora_a", .f32, [128, 4])) })
    }

    @Test func tensorOfAModuleOutsideNumLayers() throws {
        try check(
            { if case .badAdapterTensor = $0 { true } else { false } },
            "model.layers.0.mlp.down_proj.lora_b",
            tensors: { $0.append(Self.zeros("model.layers.0.mlp.down_proj.lora_b", .f32, [4, 128])) })
    }

    @Test func keyNamingNoModule() throws {
        try check(
            { if case .badAdapterConfig = $0 { true } else { false } }, "'self_attn.q_proj'",
            config: { c in
                var p = c["lora_parameters"] as! [String: Any]
                p["keys"] = ["self_attn.q_proj"]
                c["lora_parameters"] = p
            })
    }

    @Test func integerAdapterTensor() throws {
        try check(
            { if case .badAdapterTensor = $0 { true } else { false } },
            "model.layers.1.mlp.down_proj.lora_a",
            tensors: { t in
                let i = t.firstIndex { $0.0.name == "model.layers.1.mlp.down_proj.lora_a" }!
                t[i] = Self.zeros(t[i].0.name, .i32, t[i].0.shape)
            })
    }

    @Test func missingLoraB() throws {
        try check(
            { if case .missingAdapterTensor = $0 { true } else { false } },
            "model.layers.1.mlp.down_proj.lora_b",
            tensors: { $0.removeAll { $0.0.name == "model.layers.1.mlp.down_proj.lora_b" } })
    }

    @Test func doraMagnitudeOfTheWrongSize() throws {
        try check(
            { if case .badAdapterTensor = $0 { true } else { false } },
            "model.layers.1.self_attn.qkv_proj.m",
            tensors: { t in
                t.append(Self.zeros("model.layers.1.self_attn.qkv_proj.m", .f32, [255]))
                t.append(Self.zeros("model.layers.1.mlp.down_proj.m", .f32, [128]))
            },
            config: { $0["fine_tune_type"] = "dora" })
    }

    @Test func magnitudeInALoRAAdapter() throws {
        try check(
            { if case .badAdapterTensor = $0 { true } else { false } },
            "model.layers.1.mlp.down_proj.m",
            tensors: { $0.append(Self.zeros("model.layers.1.mlp.down_proj.m", .f32, [128])) })
    }

    @Test func scaleSpelledAlpha() throws {
        try check(
            { if case .badAdapterConfig(_, _, let hint) = $0 { hint?.contains("alpha") == true } else { false } },
            "lora_parameters.scale",
            config: { c in
                var p = c["lora_parameters"] as! [String: Any]
                p["alpha"] = p.removeValue(forKey: "scale")
                c["lora_parameters"] = p
            })
    }

    @Test func fullFineTune() throws {
        try check(
            { if case .badAdapterConfig = $0 { true } else { false } }, "fine_tune_type 'full'",
            config: { $0["fine_tune_type"] = "full" })
    }

    @Test func missingAdapterFolder() throws {
        let work = try ConvertFixtures.temporaryDirectory("fuse-refusal")
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.createDirectory(
            at: work.appendingPathComponent("adapter"), withIntermediateDirectories: true)
        let error = try Self.refusal(work.appendingPathComponent("adapter"), work: work)
        #expect(error.exitCode == .noInput)
        #expect(error.message.contains("adapter_config.json"))
    }
}
