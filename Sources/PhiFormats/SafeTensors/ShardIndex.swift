import Foundation

/// `model.safetensors.index.json`: which shard file holds each tensor, plus totals.
/// mlx_lm.save_model always writes one (even for a single `model.safetensors`) as
/// `{"metadata": {"total_size": N, "total_parameters": N}, "weight_map": {sorted}}` via
/// `json.dump(indent=4)`; `jsonData()` reproduces those bytes.
public struct ShardIndex: Sendable, Equatable {
    public static let fileName = "model.safetensors.index.json"

    /// Bytes of tensor data (sum of `nbytes`, headers excluded).
    public var totalSize: Int?
    /// Parameters with quantized weights counted unpacked (mlx_lm's `get_total_parameters`).
    public var totalParameters: Int?
    /// Tensor name → shard file name (relative to the index's directory).
    public var weightMap: [String: String]

    public init(weightMap: [String: String], totalSize: Int? = nil, totalParameters: Int? = nil) {
        self.weightMap = weightMap
        self.totalSize = totalSize
        self.totalParameters = totalParameters
    }

    /// Reads `<directory>/model.safetensors.index.json`.
    public init(directory: String) throws(ConfigError) {
        let path = (directory as NSString).appendingPathComponent(Self.fileName)
        try self.init(data: readMetadataFile(path), source: path)
    }

    /// Parses index bytes; `source` names the file in errors.
    public init(data: some Collection<UInt8>, source: String) throws(ConfigError) {
        let root: JSONValue
        do {
            root = try JSONValue(parsing: data)
        } catch {
            throw .invalidJSON(path: source, detail: error.message)
        }
        guard root.objectValue != nil else {
            throw .invalidValue(path: source, field: "(root)", detail: "must be an object")
        }
        guard let mapValue = root["weight_map"] else {
            throw .missingField(path: source, field: "weight_map")
        }
        guard let members = mapValue.objectValue else {
            throw .invalidValue(path: source, field: "weight_map", detail: "must be an object")
        }
        var map: [String: String] = [:]
        map.reserveCapacity(members.count)
        for (name, value) in members {
            guard let file = value.stringValue else {
                throw .invalidValue(
                    path: source, field: "weight_map.\(name)", detail: "must be a string")
            }
            // The value becomes a path we open: keep it inside the model directory.
            guard Self.isSafeShardName(file) else {
                throw .invalidValue(
                    path: source, field: "weight_map.\(name)",
                    detail: "'\(file)' is not a file name inside the model directory")
            }
            map[name] = file
        }
        weightMap = map
        // Metadata is informational; HF indexes carry total_size (sometimes as a float
        // literal), mlx_lm's add total_parameters.
        let metadata = root["metadata"]
        totalSize = try Self.count(metadata?["total_size"], "metadata.total_size", source)
        totalParameters = try Self.count(
            metadata?["total_parameters"], "metadata.total_parameters", source)
    }

    /// The distinct shard files, sorted.
    public var shardFiles: [String] { Array(Set(weightMap.values)).sorted() }

    /// The file bytes mlx_lm.save_model writes: metadata first, weight_map sorted by name,
    /// 4-space indent, no trailing newline.
    public func jsonData() -> [UInt8] {
        var metadata: [(key: String, value: JSONValue)] = []
        if let totalSize { metadata.append(("total_size", .int(totalSize))) }
        if let totalParameters { metadata.append(("total_parameters", .int(totalParameters))) }
        let weights = JSONValue.object(weightMap.map { ($0.key, .string($0.value)) })
        let root = JSONValue.object([
            ("metadata", .object(metadata)), ("weight_map", weights.sortedKeys()),
        ])
        return Array(root.pythonJSONDump(indent: 4).utf8)
    }

    static func isSafeShardName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix("/") && !name.contains("\0")
            && !name.split(separator: "/", omittingEmptySubsequences: false).contains("..")
    }

    private static func count(
        _ value: JSONValue?, _ field: String, _ source: String
    )
        throws(ConfigError) -> Int?
    {
        guard let value, !value.isNull else { return nil }
        if let n = value.intValue, n >= 0 { return n }
        if let d = value.doubleValue, d >= 0, d < 9e18, d == d.rounded() { return Int(d) }
        throw .invalidValue(path: source, field: field, detail: "must be a non-negative integer")
    }
}
