import Foundation
import PhiFormats
import Testing

@testable import PhiKit

/// `verify` on correct models passes without a finding; each way of breaking one is found by
/// the right layer, naming the file and tensor, and fails the report (warnings for what
/// leaves the model usable).
@Suite("verify finds every breakage")
struct VerifyBreakageTests {
    typealias F = VerifyFixture
    static let scales = "model.layers.0.self_attn.o_proj.scales"

    // MARK: intact

    @Test("the intact converted model passes every layer against its manifest")
    func intactConverted() throws {
        let model = try F.convertedCopy("intact")
        let report = try F.verify(model)
        #expect(report.findings.isEmpty, "\(report.findings)")
        #expect(report.passed && report.kind == "converted" && report.reference == "manifest")
        for layer in [VerifyLayer.bytes, .structure, .model, .numbers, .text] {
            #expect(report.status(layer) == .passed, "\(layer)")
        }
        #expect(report.status(.smoke) == .skipped)
        let shards = report.files.filter { $0.path.hasSuffix(".safetensors") }
        #expect(shards.count == 2)
        #expect(report.tensors.count == 64)
        // The manifest's hashes are the files' own.
        let manifest = try #require(try ConvertManifest.read(directory: model.path))
        for file in report.files {
            #expect(manifest.files[file.path]?.sha256 == file.sha256, "\(file.path)")
        }
    }

    @Test("the intact snapshot passes against the Hub's saved listing")
    func intactSnapshot() throws {
        let (work, _) = try F.snapshot("snapshot")
        let report = try F.verify(F.repoID, work: work)
        #expect(report.findings.isEmpty, "\(report.findings)")
        #expect(report.passed && report.kind == "hub_snapshot")
        #expect(report.reference == "hub_listing" && report.commit == F.commit)
    }

    // MARK: bytes

    @Test("one flipped byte in a snapshot's shard fails its sha256 against the listing")
    func flippedByteInSnapshot() throws {
        let (work, snapshot) = try F.snapshot("flip")
        let shard = try F.shard(of: Self.scales, in: snapshot)
        let file = snapshot.appendingPathComponent(shard)
        let offset = try F.dataOffset(of: "model.layers.0.self_attn.o_proj.weight", in: file)
        let byte = try Data(contentsOf: file)[offset]
        try F.poke(file, at: offset, [byte ^ 0x10])
        let report = try F.verify(F.repoID, work: work)
        let found = report.findings("hash_mismatch")
        #expect(found.map(\.file) == [shard])
        #expect(found.first?.layer == .bytes && !report.passed)
        // Still a valid file of finite numbers: only the hash can tell.
        #expect(report.status(.structure) == .passed && report.status(.numbers) == .passed)
    }

    @Test("one flipped byte in a converted shard fails against convert's manifest")
    func flippedByteInConverted() throws {
        let model = try F.convertedCopy("flip-converted")
        let shard = try F.shard(of: Self.scales, in: model)
        let file = model.appendingPathComponent(shard)
        let offset = try F.dataOffset(of: "model.layers.0.self_attn.o_proj.weight", in: file)
        try F.poke(file, at: offset + 5, [0xA5])
        let report = try F.verify(model)
        #expect(report.findings("hash_mismatch").map(\.file) == [shard])
        #expect(!report.passed)
    }

    @Test("a truncated shard: size against the manifest, structure of the file")
    func truncatedShard() throws {
        let model = try F.convertedCopy("truncate")
        let shard = try F.shard(of: Self.scales, in: model)
        let file = model.appendingPathComponent(shard)
        let size = try Data(contentsOf: file).count
        try FileHandle(forUpdating: file).truncate(atOffset: UInt64(size / 2))
        let report = try F.verify(model)
        #expect(report.findings("size_mismatch").map(\.file) == [shard])
        #expect(report.findings("invalid_safetensors").map(\.file) == [shard])
        #expect(!report.passed)
    }

    @Test("a deleted shard is missing from the snapshot and from the index")
    func deletedShard() throws {
        let (work, snapshot) = try F.snapshot("delete")
        let shard = try F.shard(of: Self.scales, in: snapshot)
        try FileManager.default.removeItem(at: snapshot.appendingPathComponent(shard))
        let report = try F.verify(F.repoID, work: work)
        #expect(report.findings("missing_file").map(\.file) == [shard])
        #expect(report.findings("missing_shard").map(\.file) == [shard])
        // Its tensors are not reported missing once more by the model layer.
        #expect(report.findings("missing_tensor").isEmpty)
        #expect(!report.passed)
    }

    @Test("a broken snapshot link is named, and the tokenizer it held is missing")
    func brokenLink() throws {
        let (work, snapshot) = try F.snapshot("link")
        let link = snapshot.appendingPathComponent("tokenizer.json")
        let blob = try FileManager.default.destinationOfSymbolicLink(atPath: link.path)
        try FileManager.default.removeItem(
            at: link.deletingLastPathComponent().appendingPathComponent(blob))
        let report = try F.verify(F.repoID, work: work)
        #expect(report.findings("broken_link").map(\.file) == ["tokenizer.json"])
        #expect(report.findings("broken_link").first?.layer == .bytes)
        #expect(report.status(.text) == .failed && !report.passed)
    }

    @Test("leftover partial files and folders are warnings naming them")
    func leftovers() throws {
        let model = try F.convertedCopy("leftover")
        let partial = "model-00001-of-00002.safetensors.incomplete"
        try Data([1, 2, 3]).write(to: model.appendingPathComponent(partial))
        let temp = model.deletingLastPathComponent()
            .appendingPathComponent("Stories-4bit.incomplete-ab12CD")
        try FileManager.default.createDirectory(at: temp, withIntermediateDirectories: true)
        let report = try F.verify(model)
        let files = report.findings("leftover").compactMap(\.file)
        #expect(files.contains(partial))
        #expect(files.contains(temp.path))
        #expect(report.findings("leftover").allSatisfy { $0.severity == .warning })
        // The model itself is intact.
        #expect(report.passed && report.status(.bytes) == .warnings)
    }

    @Test("a partial blob in the snapshot's cache is a leftover warning")
    func partialBlob() throws {
        let (work, snapshot) = try F.snapshot("partial")
        let blobs = snapshot.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("blobs")
        let name = String(repeating: "ab", count: 32) + ".incomplete"
        try Data([0, 1]).write(to: blobs.appendingPathComponent(name))
        let report = try F.verify(F.repoID, work: work)
        #expect(report.findings("leftover").map(\.file) == [blobs.path + "/" + name])
        #expect(report.passed)
    }

    // MARK: model

    @Test("config.json's hidden size edited: the tensors no longer match it")
    func hiddenSizeEdited() throws {
        let model = try F.convertedCopy("hidden")
        let config = model.appendingPathComponent("config.json")
        let text = try String(contentsOf: config, encoding: .utf8)
        #expect(text.contains("\"hidden_size\": 64"))
        try text.replacingOccurrences(of: "\"hidden_size\": 64", with: "\"hidden_size\": 128")
            .write(to: config, atomically: true, encoding: .utf8)
        let report = try F.verify(model)
        let shapes = report.findings("wrong_shape")
        #expect(shapes.contains { $0.tensor == "model.embed_tokens.weight" })
        #expect(shapes.contains { $0.tensor == "model.norm.weight" })
        #expect(
            shapes.allSatisfy { $0.layer == .model && $0.file?.hasSuffix(".safetensors") == true })
        #expect(report.findings("size_mismatch").map(\.file) == ["config.json"])
        #expect(!report.passed)
    }

    @Test("a dropped tensor is missing (index updated) or not in its shard (index not)")
    func droppedTensor() throws {
        let tensor = "model.layers.2.post_attention_layernorm.weight"
        for updateIndex in [true, false] {
            let model = try F.convertedCopy("drop")
            let shard = try F.shard(of: tensor, in: model)
            try F.rewrite(
                model.appendingPathComponent(shard), in: model,
                edit: { $0.removeAll { $0.0.name == tensor } },
                editIndex: { if updateIndex { $0[tensor] = nil } })
            let report = try F.verify(model)
            if updateIndex {
                #expect(report.findings("missing_tensor").map(\.tensor) == [tensor])
            } else {
                let found = report.findings("tensor_not_in_shard")
                #expect(found.map(\.tensor) == [tensor] && found.first?.file == shard)
            }
            #expect(!report.passed)
        }
    }

    @Test("a stray tensor is not part of the model config.json describes")
    func strayTensor() throws {
        let model = try F.convertedCopy("stray")
        let stray = "model.layers.1.mlp.extra_proj.weight"
        let shard = try F.shard(of: "model.layers.1.mlp.down_proj.weight", in: model)
        try F.rewrite(
            model.appendingPathComponent(shard), in: model,
            edit: {
                $0.append(
                    (
                        TensorSpec(name: stray, dtype: .f32, shape: [2, 2]),
                        [UInt8](repeating: 63, count: 16)
                    ))
            },
            editIndex: { $0[stray] = shard })
        let report = try F.verify(model)
        let found = report.findings("unexpected_tensor")
        #expect(found.map(\.tensor) == [stray] && found.first?.file == shard)
        #expect(!report.passed)
    }

    // MARK: numbers

    @Test("a NaN in a quantization scale is named with its tensor")
    func nanScale() throws {
        let model = try F.convertedCopy("nan")
        let shard = try F.shard(of: Self.scales, in: model)
        let file = model.appendingPathComponent(shard)
        let info = try #require(try SafeTensorsFile(path: file.path).info(Self.scales))
        #expect(info.dtype == .f32)
        let offset = try F.dataOffset(of: Self.scales, in: file)
        try F.poke(file, at: offset + 4 * 3, [0x00, 0x00, 0xC0, 0x7F])
        let report = try F.verify(model)
        let found = report.findings("non_finite_scale")
        #expect(found.map(\.tensor) == [Self.scales] && found.first?.file == shard)
        #expect(found.first?.message.contains("element 3") == true)
        let stats = try #require(report.tensors.first { $0.name == Self.scales })
        #expect(stats.nan == 1)
        #expect(!report.passed)
    }

    @Test("an all-zero matrix is flagged")
    func zeroTensor() throws {
        let model = try F.convertedCopy("zero")
        let tensor = "model.layers.3.mlp.down_proj.weight"
        let shard = try F.shard(of: tensor, in: model)
        try F.rewrite(
            model.appendingPathComponent(shard), in: model,
            edit: { tensors in
                let i = tensors.firstIndex { $0.0.name == tensor }!
                tensors[i].1 = [UInt8](repeating: 0, count: tensors[i].1.count)
            },
            editIndex: { _ in })
        let report = try F.verify(model)
        #expect(report.findings("all_zero").map(\.tensor) == [tensor])
        #expect(!report.passed)
    }

    // MARK: text

    @Test("a broken tokenizer_config.json is one finding naming it, not a template error")
    func brokenTokenizerConfig() throws {
        let model = try F.convertedCopy("tokenizer-config")
        try Data("{\"eos_token\": ".utf8).write(
            to: model.appendingPathComponent("tokenizer_config.json"))
        let report = try F.verify(model)
        let found = report.findings("invalid_tokenizer_config")
        #expect(found.map(\.file) == ["tokenizer_config.json"])
        #expect(found.first?.message.hasPrefix("not valid JSON") == true)
        #expect(report.findings("invalid_chat_template").isEmpty)
        #expect(!report.passed)
    }

    @Test("a tokenizer without the eos token: the stop token is named")
    func tokenizerWithoutEOS() throws {
        let model = try F.convertedCopy("eos")
        let tokenizer = model.appendingPathComponent("tokenizer.json")
        let text = try String(contentsOf: tokenizer, encoding: .utf8)
        #expect(text.contains("\"</s>\""))
        try text.replacingOccurrences(of: "</s>", with: "</x>")
            .write(to: tokenizer, atomically: true, encoding: .utf8)
        let report = try F.verify(model)
        let found = report.findings("missing_stop_token")
        #expect(found.map(\.file) == ["tokenizer_config.json"])
        #expect(found.first?.message.contains("'</s>'") == true)
        #expect(!report.passed)
    }
}
