import Foundation
import PhiFormats
import Testing

/// The bundled stories-260k (phi3, tied embeddings) with one tensor added or removed, through
/// `run`, `verify`, `convert` and `inspect`: all four read the tensor set through the same
/// schema, so they accept the leftovers mlx-lm and transformers drop and refuse the rest with
/// the same words.
@Suite("every command accepts and refuses the same checkpoints")
struct TensorSetCLITests {
    static let bundled = TokenizeCLITests.stories

    /// A private copy of stories-260k whose model.safetensors `edit` changed, and a clean
    /// environment (no Hub, no user store).
    struct Checkpoint {
        let work: URL
        var directory: URL { work.appendingPathComponent("model") }
        var environment: [String: String] {
            [
                "PHIKIT_HOME": work.appendingPathComponent("home").path,
                "HF_HUB_CACHE": work.appendingPathComponent("hub").path, "HF_HUB_OFFLINE": "1",
            ]
        }

        init(edit: (inout [(TensorSpec, [UInt8])]) -> Void) throws {
            work = try TinyModel.temporaryDirectory()
            try FileManager.default.copyItem(
                at: URL(fileURLWithPath: TensorSetCLITests.bundled), to: directory)
            let path = directory.appendingPathComponent("model.safetensors").path
            let file = try SafeTensorsFile(path: path)
            var tensors = file.tensors.map {
                (
                    TensorSpec(name: $0.name, dtype: $0.dtype, shape: $0.shape),
                    [UInt8](file.data($0))
                )
            }
            let metadata = file.metadata
            edit(&tensors)
            try FileManager.default.removeItem(atPath: path)
            try SafeTensorsWriter.write(path: path, tensors: tensors, metadata: metadata)
        }

        func phikit(_ arguments: String...) throws -> PhikitResult {
            try Phikit.run(arguments, environment: environment)
        }

        func remove() { try? FileManager.default.removeItem(at: work) }
    }

    /// A float32 tensor of `count` zeros (never read when ignored: zeros would change the
    /// story if the engine used a zero lm_head).
    static func zeros(_ name: String, _ shape: [Int]) -> (TensorSpec, [UInt8]) {
        (
            TensorSpec(name: name, dtype: .f32, shape: shape),
            [UInt8](repeating: 0, count: 4 * shape.reduce(1, *))
        )
    }

    /// run, verify, convert and inspect all accept the checkpoint: the same story as the
    /// bundled model, a verify warning naming the ignored tensor, a conversion byte-identical
    /// to the bundled model's (the tensor left out), an inspect warning.
    static func expectAccepted(_ name: String, _ why: IgnoredTensor) throws {
        let model = try Checkpoint {
            $0.append(zeros(name, name.hasPrefix("lm_head") ? [512, 64] : [4]))
        }
        defer { model.remove() }
        let dir = model.directory.path

        let run = try model.phikit("run", dir, "-p", "", "-m", "8")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("Once upon a time, there was a"))

        let verify = try model.phikit("verify", dir)
        #expect(verify.status == 0, "\(verify.stdout)")
        #expect(
            verify.stdout.contains(
                "warning: model: model.safetensors, tensor \(name): \(why.reason)"))

        let out = model.work.appendingPathComponent("converted").path
        let convert = try model.phikit("convert", dir, "-o", out)
        #expect(convert.status == 0, "\(convert.stderr)")
        let reference = model.work.appendingPathComponent("reference").path
        #expect(try model.phikit("convert", Self.bundled, "-o", reference).status == 0)
        let converted = try SafeTensorsFile(path: out + "/model.safetensors")
        #expect(converted.info(name) == nil)
        #expect(
            FileManager.default.contentsEqual(
                atPath: out + "/model.safetensors", andPath: reference + "/model.safetensors"))

        let inspect = try model.phikit("inspect", dir)
        #expect(inspect.status == 0)
        #expect(inspect.stderr.contains("warning: tensor '\(name)' \(why.reason)"))
    }

    /// run and convert fail with `error`'s line (exit 65, convert writes nothing), verify
    /// reports the same problem for the tensor (exit 1), inspect warns with the same line.
    static func expectRefused(_ model: Checkpoint, _ error: TensorSetError, tensor: String) throws {
        let dir = model.directory.path
        let run = try model.phikit("run", dir, "-p", "", "-m", "8")
        #expect(run.status == 65)
        #expect(run.stderr.hasPrefix("error: \(error.message)\n"), "\(run.stderr)")

        let out = model.work.appendingPathComponent("converted").path
        let convert = try model.phikit("convert", dir, "-o", out)
        #expect(convert.status == 65)
        #expect(convert.stderr.hasPrefix("error: \(error.message)\n"), "\(convert.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))

        let verify = try model.phikit("verify", dir)
        #expect(verify.status == 1)
        #expect(verify.stdout.contains("tensor \(tensor): \(error.problem)\n"), "\(verify.stdout)")

        let inspect = try model.phikit("inspect", dir)
        #expect(inspect.status == 0)
        #expect(inspect.stderr.contains("warning: \(error.message)\n"), "\(inspect.stderr)")
    }

    @Test("a tied checkpoint that still carries lm_head.weight is accepted; convert drops it")
    func tiedOutputHead() throws {
        try Self.expectAccepted("lm_head.weight", .tiedOutputHead)
    }

    @Test("a rotary-embedding inv_freq buffer is ignored by every command")
    func rotaryBuffer() throws {
        try Self.expectAccepted("model.layers.0.self_attn.rotary_emb.inv_freq", .rotaryBuffer)
    }

    @Test("a foreign tensor is refused by every command with the same error")
    func foreignTensor() throws {
        let name = "model.layers.0.foo.weight"
        let model = try Checkpoint { $0.append(Self.zeros(name, [4])) }
        defer { model.remove() }
        let file = model.directory.appendingPathComponent("model.safetensors").path
        try Self.expectRefused(
            model, .unexpectedTensor(name: name, file: file), tensor: name)
    }

    @Test("a missing tensor is refused by every command with the same error")
    func missingTensor() throws {
        let name = "model.layers.4.mlp.down_proj.weight"
        let model = try Checkpoint { $0.removeAll { $0.0.name == name } }
        defer { model.remove() }
        try Self.expectRefused(
            model, .missingTensor(name: name, directory: model.directory.path), tensor: name)
    }
}
