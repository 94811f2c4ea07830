import Foundation

/// A model directory seen as one tensor name → tensor map over its safetensors files.
///
/// Which files, in order (mlx-swift-lm `Load.swift`'s `.automatic` policy, made strict about
/// incomplete downloads):
/// 1. the shards named by `model.safetensors.index.json`. When any of them is on disk the
///    index is live and every shard it names must be there: a missing one is an incomplete
///    download, an error naming the shard (never "the tensors of the shards that are there");
/// 2. else `model*.safetensors` — a stale index, carried over from the unquantized repo, that
///    names none of the files present (mlx-community uploads have these);
/// 3. else `weight*.safetensors`;
/// 4. else every top-level `*.safetensors`.
/// An index whose shards are all absent with nothing to fall back on is an error too.
public final class ModelWeights: @unchecked Sendable {  // immutable after init
    public enum Selection: String, Sendable { case index, modelFiles, weightFiles, allFiles }

    public let directory: String
    /// Open files in the order above (sorted by name within a rule).
    public let files: [SafeTensorsFile]
    /// The rule that chose `files`.
    public let selection: Selection
    /// The index file, when present and readable (even if rule 1 did not apply).
    public let index: ShardIndex?
    /// Sorted tensor names over all files.
    public let tensorNames: [String]
    private let lookup: [String: (file: Int, info: TensorInfo)]

    /// `placement`: how every file is held (`WeightPlacement`); `cancellation` stops a
    /// resident copy's reads (`Interrupted`).
    public init(
        directory: String, placement: WeightPlacement = .mapped,
        cancellation: CancellationToken? = nil
    ) throws {
        self.directory = directory
        let names = try Self.listSafetensors(directory)
        let indexPath = (directory as NSString).appendingPathComponent(ShardIndex.fileName)
        let index =
            FileManager.default.fileExists(atPath: indexPath)
            ? try ShardIndex(directory: directory) : nil
        self.index = index

        let choice = WeightFileChoice(names: names, shards: index?.shardFiles ?? [])
        if let missing = choice.missingShards.first {
            throw WeightsError.missingShard(directory: directory, file: missing)
        }
        guard let selection = choice.selection else {
            throw WeightsError.noSafetensors(directory: directory)
        }
        self.selection = selection
        let chosen = choice.files

        var files: [SafeTensorsFile] = []
        var lookup: [String: (file: Int, info: TensorInfo)] = [:]
        for (i, name) in chosen.enumerated() {
            let path = (directory as NSString).appendingPathComponent(name)
            let file =
                switch placement {
                case .mapped: try SafeTensorsFile(path: path)
                case .hugePages: try SafeTensorsFile(path: path, hugePages: true)
                case .hugePagesOrResident:
                    try SafeTensorsFile(mappedOrResidentCopyOf: path, cancellation: cancellation)
                case .resident:
                    try SafeTensorsFile(residentCopyOf: path, cancellation: cancellation)
                }
            for info in file.tensors {
                if let first = lookup[info.name] {
                    throw WeightsError.duplicateTensor(
                        name: info.name, first: chosen[first.file], second: name)
                }
                lookup[info.name] = (i, info)
            }
            files.append(file)
        }
        if selection == .index, let index {
            // The index is a promise about the files; a broken promise is a corrupt model.
            for (tensor, shard) in index.weightMap.sorted(by: { $0.key < $1.key }) {
                guard let found = lookup[tensor], chosen[found.file] == shard else {
                    throw WeightsError.tensorNotInShard(name: tensor, file: shard)
                }
            }
        }
        self.files = files
        self.lookup = lookup
        tensorNames = lookup.keys.sorted()
    }

    public func tensor(_ name: String) -> (file: SafeTensorsFile, info: TensorInfo)? {
        lookup[name].map { (files[$0.file], $0.info) }
    }

    /// Bytes of tensor data over all files (headers excluded), as the index's `total_size`.
    public var totalBytes: Int { lookup.values.reduce(0) { $0 + $1.info.byteCount } }

    /// Parameter count as mlx_lm's `get_total_parameters`: a quantized `P.weight` (uint32
    /// with a sibling `P.scales`) counts `elements * 32 / bits`; its `P.scales`/`P.biases`
    /// count nothing. Bits come from `quantization` (per-layer overrides first), else from this
    /// directory's config.json, else are inferred assuming mlx's default group size 64.
    public func parameterCount(quantization: QuantizationConfig?) -> Int {
        let quantization = quantization ?? directoryQuantization()
        return lookup.values.reduce(0) { total, entry in
            total
                + PackedTensorCount(entry.info, quantization: quantization) {
                    self.lookup[$0]?.info
                }.parameters
        }
    }

    /// `parameterCount(quantization: nil)`.
    public var parameterCount: Int { parameterCount(quantization: nil) }

    /// The `quantization` of config.json beside the weights, read leniently (nil on any problem:
    /// counting parameters must not fail because a config is odd).
    private func directoryQuantization() -> QuantizationConfig? {
        struct Partial: Decodable {
            var quantization: QuantizationConfig?
            var quantizationConfig: QuantizationConfig?
            enum CodingKeys: String, CodingKey {
                case quantization
                case quantizationConfig = "quantization_config"
            }
            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                quantization = try? c.decodeIfPresent(
                    QuantizationConfig.self, forKey: .quantization)
                quantizationConfig = try? c.decodeIfPresent(
                    QuantizationConfig.self, forKey: .quantizationConfig)
            }
        }
        let path = (directory as NSString).appendingPathComponent("config.json")
        guard let data = try? LocalFile.read(path),
            let partial = try? JSONDecoder().decode(Partial.self, from: Data(data))
        else { return nil }
        return partial.quantization ?? partial.quantizationConfig
    }

    /// Top-level `*.safetensors` names (files or symlinks to files, as in HF cache snapshots),
    /// sorted so the choice and order never depend on the file system.
    static func listSafetensors(_ directory: String) throws(WeightsError) -> [String] {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw .notADirectory(directory: directory)
        }
        let entries: [String]
        do {
            entries = try fm.contentsOfDirectory(atPath: directory)
        } catch {
            throw .cannotList(directory: directory, detail: error.localizedDescription)
        }
        return entries.filter { name in
            guard name.hasSuffix(".safetensors"), !name.hasPrefix(".") else { return false }
            var dir: ObjCBool = false
            let path = (directory as NSString).appendingPathComponent(name)
            return fm.fileExists(atPath: path, isDirectory: &dir) && !dir.boolValue
        }.sorted()
    }
}

/// How a model's safetensors files are held in memory.
public enum WeightPlacement: String, Sendable, CaseIterable {
    /// Mapped, paged in on demand in small pages, read ahead: tensors a model reads a few at a
    /// time (a mixture of experts' experts), a convert's stream.
    case mapped
    /// Mapped in 2 MiB pages where the kernel can (`MappedFile`'s `hugePages`): the page
    /// cache's copy, shared by every process that runs the model, at the file's alignment.
    case hugePages
    /// Read into the process's own 2 MiB pages with each file's data section on a 64-byte line
    /// (`ResidentFile`): weights every token streams, for kernels whose loads must not split
    /// a line. Costs a read of the whole model at load and memory of its own.
    case resident
    /// `hugePages`, faulted in whole at load, unless the page cache can map less than 95% of
    /// a file in 2 MiB pages: then a resident copy of that file (`SafeTensorsFile`'s
    /// `init(mappedOrResidentCopyOf:)`). The page cache holds parts of a file in small folios
    /// once they were read by `cat` or a checksum, or paged out while no process mapped them
    /// and read back in pieces (DAMON pageout schemes reclaim such pages): decode then
    /// streams those parts through 4 KiB pages (~30% slower). A copy costs 0.3-6 s for 2 GB
    /// from memory (more the first time this VM's host must back it) and the check a look at
    /// /proc: worth it for a conversation (`chat`), not for a one-shot (`run` maps).
    case hugePagesOrResident
}

/// The weight files of a model directory are missing or inconsistent.
public enum WeightsError: UserFacingError, Equatable {
    case notADirectory(directory: String)
    case cannotList(directory: String, detail: String)
    case noSafetensors(directory: String)
    /// The index names a shard that is not on disk.
    case missingShard(directory: String, file: String)
    case duplicateTensor(name: String, first: String, second: String)
    /// The index maps a tensor to a shard that does not hold it.
    case tensorNotInShard(name: String, file: String)

    public var message: String {
        switch self {
        case .notADirectory(let dir): "\(dir) is not a directory"
        case .cannotList(let dir, let detail): "cannot list \(dir): \(detail)"
        case .noSafetensors(let dir): "no safetensors files in \(dir)"
        case .missingShard(let dir, let file):
            "\(ShardIndex.fileName) in \(dir) names \(file), which is missing"
        case .duplicateTensor(let name, let first, let second):
            "tensor '\(name)' is in both \(first) and \(second)"
        case .tensorNotInShard(let name, let file):
            "\(ShardIndex.fileName) maps tensor '\(name)' to \(file), which does not contain it"
        }
    }

    public var hint: String? {
        switch self {
        case .missingShard: "the download looks incomplete; pull the model again"
        case .noSafetensors: "phikit reads safetensors weights only (not .bin / .pth / .gguf)"
        default: nil
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .notADirectory, .noSafetensors: .noInput
        case .cannotList: .ioError
        // A model directory with a shard missing is broken model data, like a truncated one.
        case .missingShard, .duplicateTensor, .tensorNotInShard: .dataError
        }
    }
}
