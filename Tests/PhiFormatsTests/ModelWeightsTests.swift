import Foundation
import Testing

@testable import PhiFormats

/// A scratch model directory, written by hand.
extension TempDir {
    /// Writes a safetensors file by hand (8-byte LE header length, JSON header padded with
    /// spaces to 8 bytes, zeroed data), independent of phikit's writer.
    fileprivate func writeSafetensors(_ name: String, _ tensors: [(String, DType, [Int])]) throws {
        var entries: [String] = [#""__metadata__":{"format":"mlx"}"#]
        var offset = 0
        for (tensor, dtype, shape) in tensors {
            let size = shape.reduce(1, *) * dtype.size
            let dims = shape.map(String.init).joined(separator: ",")
            entries.append(
                #""\#(tensor)":{"dtype":"\#(dtype.rawValue)","shape":[\#(dims)],"data_offsets":[\#(offset),\#(offset + size)]}"#
            )
            offset += size
        }
        var header = Array("{\(entries.joined(separator: ","))}".utf8)
        while header.count % 8 != 0 { header.append(UInt8(ascii: " ")) }
        try write(name, stImage(header, data: [UInt8](repeating: 0, count: offset)))
    }

    fileprivate func write(_ name: String, _ text: String) throws {
        try write(name, Array(text.utf8))
    }

    fileprivate func writeIndex(_ map: [String: String]) throws {
        try write(ShardIndex.fileName, ShardIndex(weightMap: map).jsonData())
    }
}

private func weightsError(_ dir: TempDir) -> WeightsError? {
    do {
        _ = try ModelWeights(directory: dir.path)
        return nil
    } catch let error as WeightsError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}

private let shard1 = "model-00001-of-00002.safetensors"
private let shard2 = "model-00002-of-00002.safetensors"

@Suite struct ModelWeightsTests {
    @Test func singleFile() throws {
        let dir = try TempDir()
        try dir.writeSafetensors(
            "model.safetensors", [("b.weight", .f32, [2, 3]), ("a.weight", .bf16, [4])])
        let w = try ModelWeights(directory: dir.path)
        #expect(w.selection == .modelFiles)
        #expect(w.files.count == 1)
        #expect(w.tensorNames == ["a.weight", "b.weight"])
        let b = try #require(w.tensor("b.weight"))
        #expect(b.info.shape == [2, 3] && b.info.dtype == .f32)
        #expect(b.file.path.hasSuffix("/model.safetensors"))
        #expect(w.tensor("nope") == nil)
        #expect(w.totalBytes == 24 + 8)
        #expect(w.parameterCount == 10)
    }

    @Test func shardsWithIndex() throws {
        let dir = try TempDir()
        try dir.writeSafetensors(shard1, [("a", .f32, [2])])
        try dir.writeSafetensors(shard2, [("b", .f32, [3])])
        // A stray file the index does not name is not loaded.
        try dir.writeSafetensors("consolidated.safetensors", [("a", .f32, [2])])
        try dir.writeIndex(["a": shard1, "b": shard2])
        let w = try ModelWeights(directory: dir.path)
        #expect(w.selection == .index)
        #expect(w.files.map { ($0.path as NSString).lastPathComponent } == [shard1, shard2])
        #expect(w.tensorNames == ["a", "b"])
        #expect(w.tensor("b")?.file === w.files[1])
        #expect(w.index?.weightMap.count == 2)
    }

    @Test func shardsWithoutIndex() throws {
        let dir = try TempDir()
        try dir.writeSafetensors(shard2, [("b", .f32, [3])])
        try dir.writeSafetensors(shard1, [("a", .f32, [2])])
        try dir.write("config.json", "{}")
        let w = try ModelWeights(directory: dir.path)
        #expect(w.selection == .modelFiles && w.index == nil)
        #expect(w.files.map { ($0.path as NSString).lastPathComponent } == [shard1, shard2])
    }

    @Test func indexNamingAMissingShardIsAnError() throws {
        let dir = try TempDir()
        try dir.writeSafetensors("weights.safetensors", [("a", .f32, [2])])  // not a fallback
        try dir.writeIndex(["a": shard1, "b": shard2])
        let error = weightsError(dir)
        #expect(error == .missingShard(directory: dir.path, file: shard1))
        #expect(error?.message.contains(shard1) == true)
        #expect(error?.exitCode == .dataError)
    }

    /// A half-finished download: one shard of two is there, and a `model*` name would make it
    /// look like a complete model. The index is live, so the missing shard is an error.
    @Test func liveIndexWithAShardMissingIsAnError() throws {
        let dir = try TempDir()
        try dir.writeSafetensors(shard1, [("a", .f32, [2])])
        try dir.writeIndex(["a": shard1, "b": shard2])
        let error = weightsError(dir)
        #expect(error == .missingShard(directory: dir.path, file: shard2))
        #expect(error?.exitCode == .dataError)
    }

    /// An index carried over from the unquantized repo names shards that were never uploaded;
    /// the model*.safetensors that are there win (mlx-swift-lm does the same).
    @Test func staleIndexFallsBackToModelFiles() throws {
        let dir = try TempDir()
        try dir.writeSafetensors("model.safetensors", [("a", .f32, [2]), ("b", .f32, [3])])
        try dir.writeIndex(["a": shard1, "b": shard2])
        let w = try ModelWeights(directory: dir.path)
        #expect(w.selection == .modelFiles)
        #expect(w.tensorNames == ["a", "b"])
    }

    @Test func duplicateTensorAcrossShards() throws {
        let dir = try TempDir()
        try dir.writeSafetensors(shard1, [("a", .f32, [2]), ("x", .f32, [1])])
        try dir.writeSafetensors(shard2, [("x", .f32, [1])])
        let error = weightsError(dir)
        #expect(error == .duplicateTensor(name: "x", first: shard1, second: shard2))
        #expect(error?.exitCode == .dataError)
    }

    @Test func indexEntryPointingAtTheWrongShard() throws {
        let dir = try TempDir()
        try dir.writeSafetensors(shard1, [("a", .f32, [2])])
        try dir.writeSafetensors(shard2, [("b", .f32, [3])])
        try dir.writeIndex(["a": shard1, "b": shard1])
        #expect(weightsError(dir) == .tensorNotInShard(name: "b", file: shard1))
    }

    @Test func weightFilesThenAnyFile() throws {
        let dir = try TempDir()
        try dir.writeSafetensors("other.safetensors", [("o", .f32, [1])])
        #expect(try ModelWeights(directory: dir.path).selection == .allFiles)
        try dir.writeSafetensors("weights.safetensors", [("w", .f32, [1])])
        let w = try ModelWeights(directory: dir.path)
        #expect(w.selection == .weightFiles && w.tensorNames == ["w"])
    }

    @Test func emptyOrMissingDirectory() throws {
        let dir = try TempDir()
        try dir.write("config.json", "{}")
        let error = weightsError(dir)
        #expect(error == .noSafetensors(directory: dir.path))
        #expect(error?.message == "no safetensors files in \(dir.path)")
        #expect(throws: WeightsError.notADirectory(directory: dir.path + "/nope")) {
            try ModelWeights(directory: dir.path + "/nope")
        }
    }

    /// mlx_lm's get_total_parameters: packed uint32 weights count unpacked; scales/biases don't.
    @Test func parameterCountOfQuantizedWeights() throws {
        let dir = try TempDir()
        try dir.writeSafetensors(
            "model.safetensors",
            [
                ("model.layers.0.mlp.down_proj.weight", .u32, [8, 16]),  // 8 x 128 at 4 bits
                ("model.layers.0.mlp.down_proj.scales", .f16, [8, 2]),
                ("model.layers.0.mlp.down_proj.biases", .f16, [8, 2]),
                ("lm_head.weight", .u32, [8, 32]),  // 8 x 128 at 8 bits (override)
                ("lm_head.scales", .f16, [8, 2]),
                ("lm_head.biases", .f16, [8, 2]),
                ("model.norm.weight", .f16, [128]),
            ])
        let q = QuantizationConfig(
            groupSize: 64, bits: 4,
            overrides: ["lm_head": .quantized(groupSize: 64, bits: 8, mode: "affine")])
        let w = try ModelWeights(directory: dir.path)
        #expect(w.parameterCount(quantization: q) == 8 * 128 + 8 * 128 + 128)
        // Without a config, bits are inferred from the shapes (group 64 assumed).
        #expect(w.parameterCount == 8 * 128 + 8 * 128 + 128)
        // With config.json beside the weights, its quantization is used.
        try dir.write("config.json", #"{"quantization": {"group_size": 64, "bits": 4}}"#)
        #expect(w.parameterCount == 8 * 128 + 8 * 32 * 32 / 4 + 128)
    }
}
