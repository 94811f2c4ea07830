import Foundation
import PhiFormats
import Testing

@testable import PhiKit

/// Correct models to break: stories-260k converted to MLX 4-bit in two shards (a converted
/// model, checked against convert's manifest), and the same files laid out as a Hugging Face
/// cache snapshot with the Hub's listing (checked against the listing's hashes). Each test
/// gets its own copy.
enum VerifyFixture {
    static let repoID = "test-org/Stories-4bit"
    static let commit = "0123456789abcdef0123456789abcdef01234567"

    /// Converted once per test process; tests copy it before breaking anything.
    static let converted: Result<URL, any Error> = Result {
        let work = try temporaryDirectory("converted")
        let output = work.appendingPathComponent("Stories-4bit")
        var options = ConvertOptions(
            source: "stories-260k", output: output.path, environment: environment(work))
        options.quantize = true
        options.bits = 4
        options.groupSize = 64
        options.maxShardSize = 200_000
        options.threads = 2
        _ = try convert(options)
        return output
    }

    static func temporaryDirectory(_ label: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("phikit-verify-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Nothing from the user's machine: a private Hub cache and store, never the network.
    static func environment(_ work: URL) -> [String: String] {
        [
            "HF_HUB_CACHE": work.appendingPathComponent("hub").path,
            "PHIKIT_HOME": work.appendingPathComponent("store").path,
            "XDG_CONFIG_HOME": "/nonexistent", "HF_HUB_OFFLINE": "1",
            "HOME": work.path,
        ]
    }

    /// A fresh copy of the converted model in its own folder.
    static func convertedCopy(_ label: String) throws -> URL {
        let work = try temporaryDirectory(label)
        let copy = work.appendingPathComponent("Stories-4bit")
        try FileManager.default.copyItem(at: try converted.get(), to: copy)
        return copy
    }

    /// The converted files (without the manifest) as a snapshot of `repoID` in a fresh cache
    /// under `work/hub`, with the Hub's listing saved beside it.
    static func snapshot(_ label: String) throws -> (work: URL, snapshot: URL) {
        let work = try temporaryDirectory(label)
        var files = try HandMadeCache.files(of: try converted.get())
        files[ConvertManifest.fileName] = nil
        let snapshot = try HandMadeCache.add(
            files, repoID: repoID, commit: commit, root: work.appendingPathComponent("hub"))
        return (work, snapshot)
    }

    static func verify(
        _ model: String, work: URL, smoke: Bool = false
    ) throws -> VerifyReport {
        var options = VerifyOptions(model: model, environment: environment(work))
        options.offline = true
        options.smoke = smoke
        options.threads = 2
        return try PhiKit.verify(options)
    }

    static func verify(_ directory: URL) throws -> VerifyReport {
        try verify(directory.path, work: directory.deletingLastPathComponent())
    }

    /// The shard that holds `tensor`, by the index.
    static func shard(of tensor: String, in directory: URL) throws -> String {
        let index = try JSONValue(
            parsing: Data(contentsOf: directory.appendingPathComponent(ShardIndex.fileName)))
        return try #require(index["weight_map"]?[tensor]?.stringValue)
    }

    /// Rewrites `file` with `edit` applied to its tensors (name, spec, bytes), and the index
    /// with `editIndex` applied to its weight map.
    static func rewrite(
        _ file: URL, in directory: URL,
        edit: (inout [(TensorSpec, [UInt8])]) -> Void,
        editIndex: (inout [String: String]) -> Void
    ) throws {
        let st = try SafeTensorsFile(path: file.path)
        var tensors = st.tensors.map { t in
            (TensorSpec(name: t.name, dtype: t.dtype, shape: t.shape), Array(st.data(t)))
        }
        edit(&tensors)
        try FileManager.default.removeItem(at: file)
        try SafeTensorsWriter.write(path: file.path, tensors: tensors, metadata: ["format": "mlx"])
        let indexURL = directory.appendingPathComponent(ShardIndex.fileName)
        var index =
            try JSONSerialization.jsonObject(with: Data(contentsOf: indexURL)) as! [String: Any]
        var map = index["weight_map"] as! [String: String]
        editIndex(&map)
        index["weight_map"] = map
        try JSONSerialization.data(withJSONObject: index, options: [.sortedKeys])
            .write(to: indexURL)
    }

    /// Overwrites bytes at `offset` of `file`.
    static func poke(_ file: URL, at offset: Int, _ bytes: [UInt8]) throws {
        let handle = try FileHandle(forUpdating: file)
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: bytes)
        try handle.close()
    }

    /// Where `tensor`'s data starts in `file`.
    static func dataOffset(of tensor: String, in file: URL) throws -> Int {
        let st = try SafeTensorsFile(path: file.path)
        let info = try #require(st.info(tensor))
        return st.dataSectionOffset + info.dataOffsets.lowerBound
    }
}

extension VerifyReport {
    /// The findings with `code`.
    func findings(_ code: String) -> [VerifyFinding] { findings.filter { $0.code == code } }

    func status(_ layer: VerifyLayer) -> LayerResult.Status? {
        layers.first { $0.layer == layer }?.status
    }
}
