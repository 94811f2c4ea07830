/// Which safetensors files of a model directory a loader reads: the rule `ModelWeights`
/// documents, as a value, so that `ModelWeights` (which stops at the first problem) and
/// `verify` (which reports every problem) follow the same rule.
public struct WeightFileChoice: Sendable, Equatable {
    /// The files to read, in order; empty when none can be chosen.
    public var files: [String]
    /// The rule that chose `files`; nil when none applies.
    public var selection: ModelWeights.Selection?
    /// Shards the index names that are not on disk although it must be followed: an
    /// incomplete download.
    public var missingShards: [String]
    /// The index names none of the files present, and `model*.safetensors` stand in for it.
    public var indexIsStale: Bool

    /// `names`: the directory's top-level `*.safetensors` files, sorted; `shards`: the files
    /// the shard index names (empty without an index).
    public init(names: [String], shards: [String]) {
        let model = names.filter { $0.hasPrefix("model") }
        let weight = names.filter { $0.hasPrefix("weight") }
        (files, selection, missingShards, indexIsStale) = ([], nil, [], false)
        if shards.contains(where: names.contains) {
            (files, selection) = (shards, .index)
            missingShards = shards.filter { !names.contains($0) }
        } else if !model.isEmpty {
            (files, selection) = (model, .modelFiles)
            indexIsStale = !shards.isEmpty
        } else if !shards.isEmpty {
            missingShards = shards
        } else if !weight.isEmpty {
            (files, selection) = (weight, .weightFiles)
        } else if !names.isEmpty {
            (files, selection) = (names, .allFiles)
        }
    }
}
