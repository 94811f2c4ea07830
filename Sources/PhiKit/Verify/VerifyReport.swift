/// The checks of `phikit verify`, in the order they run; each looks at the model from one
/// side, so a finding says which side is broken.
public enum VerifyLayer: String, CaseIterable, Sendable, Encodable {
    /// Every file's bytes against what the Hub announced, the registry's pins and the
    /// manifest `convert` wrote; missing, extra and partial files; broken links.
    case bytes
    /// Every safetensors file well-formed; the shard index consistent with the shards.
    case structure
    /// The tensor set, shapes and dtypes config.json implies; quantized layouts.
    case model
    /// NaN/Inf anywhere; all-zero or constant tensors.
    case numbers
    /// Tokenizer, vocabulary vs embedding, chat template, stop tokens.
    case text
    /// A short greedy generation (`--smoke`).
    case smoke
    /// What the programs named by `--target` (mlx-swift, mlx-lm) need to load the model.
    case target
}

public enum FindingSeverity: String, Sendable, Encodable, Comparable {
    /// The model is broken or not what it claims to be: verify exits 1.
    case error
    /// Worth knowing, but the model is usable (a leftover partial download, a file nobody
    /// listed, a check that could not be made).
    case warning

    public static func < (a: Self, b: Self) -> Bool { a == .error && b == .warning }
}

/// One problem, with what it concerns: the file (relative to the model directory when it is
/// inside it) and the tensor, so the user knows what to fetch or convert again.
public struct VerifyFinding: Sendable, Encodable, Equatable {
    public var layer: VerifyLayer
    public var severity: FindingSeverity
    /// A stable identifier of the kind of problem (`hash_mismatch`, `missing_tensor`, …).
    public var code: String
    public var file: String?
    public var tensor: String?
    public var message: String
    public var hint: String?

    public init(
        _ layer: VerifyLayer, _ severity: FindingSeverity, _ code: String, file: String? = nil,
        tensor: String? = nil, _ message: String, hint: String? = nil
    ) {
        self.layer = layer
        self.severity = severity
        self.code = code
        self.file = file
        self.tensor = tensor
        self.message = message
        self.hint = hint
    }
}

/// How one layer went.
public struct LayerResult: Sendable, Encodable {
    public enum Status: String, Sendable, Encodable {
        case passed
        /// Passed, with warnings.
        case warnings
        case failed
        /// Not run: not asked for (`smoke` without `--smoke`), or nothing to check it against.
        case skipped
    }

    public var layer: VerifyLayer
    public var status: Status
    /// One line: what was checked against what (`12 files against the Hub's listing of
    /// 0a1b2c3`), or why it was skipped.
    public var summary: String
}

/// One file of the model directory as verify read it.
public struct VerifiedFile: Sendable, Encodable {
    /// Relative to the model directory.
    public var path: String
    /// nil when it could not be read (a broken link).
    public var size: Int?
    public var sha256: String?
    /// The git blob id, when something to compare it with asked for it.
    public var gitSHA1: String?
    /// The blob a snapshot link points to (HF cache).
    public var blob: String?

    enum CodingKeys: String, CodingKey {
        case path, size, sha256, blob
        case gitSHA1 = "git_sha1"
    }
}

/// One tensor's numbers (float tensors and packed words).
public struct VerifiedTensor: Sendable, Encodable {
    public var name: String
    public var file: String
    public var dtype: String
    public var shape: [Int]
    public var nan: Int
    public var inf: Int
    public var zeros: Int
    public var min: Double?
    public var max: Double?
    public var mean: Double?
}

/// What `--smoke` generated.
public struct SmokeResult: Sendable, Encodable {
    public var prompt: String
    public var tokens: [Int]
    public var text: String
    public var stopReason: String
    /// The registry's fingerprint (`smokeTokens`), when it has one.
    public var expectedTokens: [Int]?
    public var seconds: Double

    enum CodingKeys: String, CodingKey {
        case prompt, tokens, text, seconds
        case stopReason = "stop_reason"
        case expectedTokens = "expected_tokens"
    }
}

/// Everything `phikit verify` found; `--json` prints it whole.
public struct VerifyReport: Sendable, Encodable {
    public static let schemaVersion = 1

    /// MODEL as the user typed it.
    public var model: String
    public var directory: String
    /// `hub_snapshot`, `converted` or `directory`.
    public var kind: String
    public var repo: String?
    public var commit: String?
    /// What the bytes were compared with: `hub_listing` (saved), `hub_api`, `manifest`,
    /// `blob_names` or `none`.
    public var reference: String
    public var layers: [LayerResult]
    /// Errors first, then warnings; in layer order within each.
    public var findings: [VerifyFinding]
    public var files: [VerifiedFile]
    public var tensors: [VerifiedTensor]
    public var smoke: SmokeResult?
    /// Bytes of the files read (each read once, for its hashes and its tensors' numbers).
    public var bytesRead: Int
    public var seconds: Double

    /// No error among the findings.
    public var passed: Bool { !findings.contains { $0.severity == .error } }
    public var errorCount: Int { findings.filter { $0.severity == .error }.count }
    public var warningCount: Int { findings.filter { $0.severity == .warning }.count }

    enum CodingKeys: String, CodingKey {
        case model, directory, kind, repo, commit, reference, layers, findings, files, tensors
        case smoke, seconds, passed
        case schemaVersion = "schema_version"
        case bytesRead = "bytes_read"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Self.schemaVersion, forKey: .schemaVersion)
        try c.encode(model, forKey: .model)
        try c.encode(directory, forKey: .directory)
        try c.encode(kind, forKey: .kind)
        try c.encodeIfPresent(repo, forKey: .repo)
        try c.encodeIfPresent(commit, forKey: .commit)
        try c.encode(reference, forKey: .reference)
        try c.encode(passed, forKey: .passed)
        try c.encode(layers, forKey: .layers)
        try c.encode(findings, forKey: .findings)
        try c.encode(files, forKey: .files)
        try c.encode(tensors, forKey: .tensors)
        try c.encodeIfPresent(smoke, forKey: .smoke)
        try c.encode(bytesRead, forKey: .bytesRead)
        try c.encode(seconds, forKey: .seconds)
    }
}
