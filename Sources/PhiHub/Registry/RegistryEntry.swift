import Foundation

/// Known models: a short name and aliases for a Hub repo (or for a model directory shipped with
/// phikit), the prompt `run` uses when given none, and the stop tokens the model's own files
/// forget (Phi-3's `<|end|>`: the most common "generation doesn't stop" complaint in other tools).
public struct RegistryEntry: Codable, Sendable, Equatable {
    public var name: String
    public var aliases: [String]
    /// The Hub repo (`org/name`); nil for a bundled model.
    public var repo: String?
    /// A model directory shipped with phikit (the demo model), written relative to the
    /// registry file and made absolute when the registry is read; nil for a Hub model.
    public var path: String?
    /// Branch, tag or — pinned — a 40-hex commit.
    public var revision: String
    public var description: String?
    public var defaultPrompt: String?
    public var extraEOSTokens: [String]
    /// Parameter count (as mlx_lm counts them: a 4-bit weight is still one parameter).
    public var parameters: Int?
    /// Bytes a default `phikit pull` fetches: exact for a pinned revision, an estimate
    /// from the architecture otherwise.
    public var downloadSize: Int?
    /// The token ids a greedy generation of `defaultPrompt` starts with (chat template applied
    /// when the model has one): `phikit verify --smoke` generates as many and compares.
    public var smokeTokens: [Int]?
    /// The sampling temperature `chat` uses unless told otherwise (the Phi entries: 0.6, as
    /// the MLX Swift chat app samples them).
    public var defaultTemperature: Double?
    /// The most tokens a `chat` answer gets unless told otherwise (the Phi entries: 1024).
    public var defaultMaxTokens: Int?
    /// The registry file this entry came from (not part of the JSON).
    public var source: String = ""

    enum CodingKeys: String, CodingKey {
        case name, aliases, repo, path, revision, description, defaultPrompt, extraEOSTokens
        case parameters, downloadSize, smokeTokens, defaultTemperature, defaultMaxTokens
    }

    /// Whether `revision` pins a commit (so `downloadSize` is exact).
    public var isPinned: Bool { HubCache.isCommitHash(revision) }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        guard !name.isEmpty, !name.contains("/") else {
            throw DecodingError.dataCorruptedError(
                forKey: .name, in: c, debugDescription: "must be a non-empty name without '/'")
        }
        aliases = try c.decodeIfPresent([String].self, forKey: .aliases) ?? []
        repo = try c.decodeIfPresent(String.self, forKey: .repo)
        path = try c.decodeIfPresent(String.self, forKey: .path)
        guard (repo == nil) != (path == nil) else {
            throw DecodingError.dataCorruptedError(
                forKey: .repo, in: c, debugDescription: "or 'path' must be given, not both")
        }
        if let repo, !ModelReference.isRepoID(repo) {
            throw DecodingError.dataCorruptedError(
                forKey: .repo, in: c, debugDescription: "must be a Hub id (org/name)")
        }
        revision = try c.decodeIfPresent(String.self, forKey: .revision) ?? "main"
        guard !revision.isEmpty, RepoPath.problem(revision) == nil else {
            throw DecodingError.dataCorruptedError(
                forKey: .revision, in: c, debugDescription: "must be a branch, tag or commit")
        }
        description = try c.decodeIfPresent(String.self, forKey: .description)
        defaultPrompt = try c.decodeIfPresent(String.self, forKey: .defaultPrompt)
        extraEOSTokens = try c.decodeIfPresent([String].self, forKey: .extraEOSTokens) ?? []
        parameters = try Self.positive(c, .parameters)
        downloadSize = try Self.positive(c, .downloadSize)
        smokeTokens = try c.decodeIfPresent([Int].self, forKey: .smokeTokens)
        defaultTemperature = try c.decodeIfPresent(Double.self, forKey: .defaultTemperature)
        if let t = defaultTemperature, !(t >= 0 && t.isFinite) {
            throw DecodingError.dataCorruptedError(
                forKey: .defaultTemperature, in: c, debugDescription: "must be 0 or more")
        }
        defaultMaxTokens = try Self.positive(c, .defaultMaxTokens)
    }

    private static func positive(
        _ c: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys
    ) throws -> Int? {
        guard let value = try c.decodeIfPresent(Int.self, forKey: key) else { return nil }
        guard value > 0 else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: c, debugDescription: "must be a positive integer")
        }
        return value
    }
}
