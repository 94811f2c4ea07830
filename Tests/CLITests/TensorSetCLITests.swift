import Foundation
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

        /// `edit` sees the tensors as (name, header entry, data bytes), in file order.
        init(edit: (inout [Tensor]) -> Void) throws {
            work = try TinyModel.temporaryDirectory()
            try FileManager.default.copyItem(
                at: URL(fileURLWithPath: TensorSetCLITests.bundled), to: directory)
            let url = directory.appendingPathComponent("model.safetensors")
            var (tensors, metadata) = try Self.read(url)
            edit(&tensors)
            try Self.write(tensors, metadata: metadata, to: url)
        }

        typealias Tensor = (name: String, dtype: String, shape: [Int], bytes: Data)

        /// The file laid out by hand (8-byte header length, JSON header, data), as TinyModel
        /// writes them: these tests check the binary, not phikit's own reader and writer.
        static func read(_ url: URL) throws -> ([Tensor], Any?) {
            let data = try Data(contentsOf: url)
            let length = data.prefix(8).reversed().reduce(0) { $0 << 8 | Int($1) }
            let header = try #require(
                try JSONSerialization.jsonObject(with: data.subdata(in: 8..<8 + length))
                    as? [String: Any])
            let body = data.suffix(from: 8 + length)
            let tensors = header.compactMap { name, value -> (Int, Tensor)? in
                guard let entry = value as? [String: Any], let dtype = entry["dtype"] as? String,
                    let shape = entry["shape"] as? [Int],
                    let offsets = entry["data_offsets"] as? [Int]
                else { return nil }
                let start = body.startIndex + offsets[0]
                return (
                    offsets[0],
                    (name, dtype, shape, body.subdata(in: start..<start + offsets[1] - offsets[0]))
                )
            }
            return (tensors.sorted { $0.0 < $1.0 }.map(\.1), header["__metadata__"])
        }

        static func write(_ tensors: [Tensor], metadata: Any?, to url: URL) throws {
            var header: [String: Any] = [:]
            var offset = 0
            for t in tensors {
                header[t.name] = [
                    "dtype": t.dtype, "shape": t.shape,
                    "data_offsets": [offset, offset + t.bytes.count],
                ]
                offset += t.bytes.count
            }
            if let metadata { header["__metadata__"] = metadata }
            var json = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
            while json.count % 8 != 0 { json.append(UInt8(ascii: " ")) }
            var bytes = Data()
            withUnsafeBytes(of: UInt64(json.count).littleEndian) { bytes.append(contentsOf: $0) }
            bytes.append(json)
            for t in tensors { bytes.append(t.bytes) }
            try bytes.write(to: url)
        }

        func phikit(_ arguments: String...) throws -> PhikitResult {
            try Phikit.run(arguments, environment: environment)
        }

        func remove() { try? FileManager.default.removeItem(at: work) }
    }

    /// A float32 tensor of zeros (never read when ignored: zeros would change the story if
    /// the engine used a zero lm_head).
    static func zeros(_ name: String, _ shape: [Int]) -> Checkpoint.Tensor {
        (name, "F32", shape, Data(count: 4 * shape.reduce(1, *)))
    }

    /// The words of the leftover policy (PhiFormats' `IgnoredTensor.reason`).
    static let tiedHeadReason =
        "is not used: config.json ties the embeddings (tie_word_embeddings: true); "
        + "phikit ignores it and convert leaves it out, as transformers and mlx-lm do"
    static let rotaryReason =
        "is a rotary-embedding buffer of an old checkpoint (derived from config.json); "
        + "phikit ignores it, as transformers and mlx-lm do"

    /// run, verify, convert and inspect all accept the checkpoint: the same story as the
    /// bundled model, a verify warning naming the ignored tensor, a conversion byte-identical
    /// to the bundled model's (the tensor left out), an inspect warning.
    static func expectAccepted(_ name: String, reason: String) throws {
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
                "warning: model: model.safetensors, tensor \(name): \(reason)"))

        let out = model.work.appendingPathComponent("converted").path
        let convert = try model.phikit("convert", dir, "-o", out)
        #expect(convert.status == 0, "\(convert.stderr)")
        let reference = model.work.appendingPathComponent("reference").path
        #expect(try model.phikit("convert", Self.bundled, "-o", reference).status == 0)
        let converted = try Checkpoint.read(URL(fileURLWithPath: out + "/model.safetensors"))
        #expect(!converted.0.contains { $0.name == name })
        #expect(
            FileManager.default.contentsEqual(
                atPath: out + "/model.safetensors", andPath: reference + "/model.safetensors"))

        let inspect = try model.phikit("inspect", dir)
        #expect(inspect.status == 0)
        #expect(inspect.stderr.contains("warning: tensor '\(name)' \(reason)"))
    }

    /// run and convert fail with `message` (exit 65, convert writes nothing), verify reports
    /// `problem` for the tensor (exit 1), inspect warns with `message`.
    static func expectRefused(
        _ model: Checkpoint, message: String, problem: String, tensor: String
    ) throws {
        let dir = model.directory.path
        let run = try model.phikit("run", dir, "-p", "", "-m", "8")
        #expect(run.status == 65)
        #expect(run.stderr.hasPrefix("error: \(message)\n"), "\(run.stderr)")

        let out = model.work.appendingPathComponent("converted").path
        let convert = try model.phikit("convert", dir, "-o", out)
        #expect(convert.status == 65)
        #expect(convert.stderr.hasPrefix("error: \(message)\n"), "\(convert.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))

        let verify = try model.phikit("verify", dir)
        #expect(verify.status == 1)
        #expect(verify.stdout.contains("tensor \(tensor): \(problem)\n"), "\(verify.stdout)")

        let inspect = try model.phikit("inspect", dir)
        #expect(inspect.status == 0)
        #expect(inspect.stderr.contains("warning: \(message)\n"), "\(inspect.stderr)")
    }

    @Test("a tied checkpoint that still carries lm_head.weight is accepted; convert drops it")
    func tiedOutputHead() throws {
        try Self.expectAccepted("lm_head.weight", reason: Self.tiedHeadReason)
    }

    @Test("a rotary-embedding inv_freq buffer is ignored by every command")
    func rotaryBuffer() throws {
        try Self.expectAccepted(
            "model.layers.0.self_attn.rotary_emb.inv_freq", reason: Self.rotaryReason)
    }

    @Test("a foreign tensor is refused by every command with the same error")
    func foreignTensor() throws {
        let name = "model.layers.0.foo.weight"
        let model = try Checkpoint { $0.append(Self.zeros(name, [4])) }
        defer { model.remove() }
        let file = model.directory.appendingPathComponent("model.safetensors").path
        try Self.expectRefused(
            model,
            message: "tensor '\(name)' in \(file) is not part of the model config.json describes",
            problem: "is not part of the model config.json describes", tensor: name)
    }

    @Test("a missing tensor is refused by every command with the same error")
    func missingTensor() throws {
        let name = "model.layers.4.mlp.down_proj.weight"
        let model = try Checkpoint { $0.removeAll { $0.name == name } }
        defer { model.remove() }
        let dir = model.directory.path
        try Self.expectRefused(
            model, message: "tensor '\(name)' is missing from the weights in \(dir)",
            problem: "is missing", tensor: name)
    }
}
