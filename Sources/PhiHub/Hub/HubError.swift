import PhiFormats

/// Everything that can go wrong between phikit and the Hub, each case distinct so the user
/// knows what to do: a typo (not found), a missing licence click or token (gated/unauthorized),
/// a busy Hub (rate limit, server error), a broken network, or a file that is not what the Hub
/// announced. Messages name the repo, file or URL; they never contain the token.
public enum HubError: UserFacingError, Equatable {
    case repoNotFound(repoID: String, endpoint: String, token: TokenSource?)
    case revisionNotFound(repoID: String, revision: String)
    case entryNotFound(repoID: String, revision: String, path: String)
    /// 401/403 on a gated or private repo: the licence was not accepted, or no token was sent.
    case gated(repoID: String, status: Int, endpoint: String, token: TokenSource?)
    /// 401 "Invalid credentials": the token itself was refused.
    case invalidToken(token: TokenSource)
    case rateLimited(url: String, retryAfter: Double?)
    case serverError(status: Int, url: String)
    case unexpectedStatus(status: Int, url: String)
    /// No HTTP response: DNS, refused connection, timeout, connection dropped too often.
    case network(url: String, detail: String)
    /// The server answered something phikit cannot use (bad JSON, missing headers).
    case badResponse(url: String, detail: String)
    /// A file's bytes hash to something other than what the Hub announced; it was discarded.
    case hashMismatch(path: String, algorithm: String, expected: String, actual: String)
    case sizeMismatch(path: String, expected: Int, actual: Int)
    /// The Hub's listing and its `resolve` headers disagree about a file.
    case inconsistentMetadata(path: String, detail: String)
    /// A repo file name that would land outside the snapshot directory.
    case unsafePath(repoID: String, path: String, reason: String)
    /// `HF_HUB_OFFLINE` is set and the cache does not hold the whole snapshot.
    case offline(repoID: String, revision: String, missing: [String])
    case notEnoughDiskSpace(path: String, needed: Int, available: Int)
    case lockTimeout(path: String, holder: String?)
    /// The local disk failed us (permissions, full disk, rename).
    case local(FileError)
    case interrupted

    public var message: String {
        switch self {
        case .repoNotFound(let repo, let endpoint, _):
            "repository '\(repo)' not found on \(endpoint)"
        case .revisionNotFound(let repo, let revision):
            "revision '\(revision)' not found in '\(repo)'"
        case .entryNotFound(let repo, let revision, let path):
            "file '\(path)' not found in '\(repo)' at \(revision)"
        case .gated(let repo, let status, _, let token):
            token == nil
                ? "'\(repo)' is gated or private (HTTP \(status)) and no token was sent"
                : "access to '\(repo)' denied (HTTP \(status)) with the token from "
                    + token!.description
        case .invalidToken(let token):
            "the Hub refused the token from \(token.description) (invalid or expired)"
        case .rateLimited(let url, let retryAfter):
            "rate-limited by the Hub (HTTP 429) at \(url)"
                + (retryAfter.map { "; it asks to wait \(Int($0.rounded())) s" } ?? "")
        case .serverError(let status, let url): "Hub server error (HTTP \(status)) at \(url)"
        case .unexpectedStatus(let status, let url): "unexpected HTTP \(status) from \(url)"
        case .network(let url, let detail): "cannot reach \(url): \(detail)"
        case .badResponse(let url, let detail): "unusable answer from \(url): \(detail)"
        case .hashMismatch(let path, let algorithm, let expected, let actual):
            "\(path): downloaded bytes have \(algorithm) \(actual), the Hub announced "
                + "\(expected); the file was discarded"
        case .sizeMismatch(let path, let expected, let actual):
            "\(path): received \(actual) bytes, the Hub announced \(expected)"
        case .inconsistentMetadata(let path, let detail): "\(path): \(detail)"
        case .unsafePath(let repo, let path, let reason):
            "'\(repo)' lists a file '\(path)' that \(reason); refusing to download it"
        case .offline(let repo, let revision, let missing):
            missing.isEmpty
                ? "'\(repo)' (revision \(revision)) is not in the cache and HF_HUB_OFFLINE is set"
                : "'\(repo)' (revision \(revision)) is incomplete in the cache "
                    + "(\(missing.count) missing: \(missing.prefix(3).joined(separator: ", "))"
                    + (missing.count > 3 ? ", …" : "") + ") and HF_HUB_OFFLINE is set"
        case .notEnoughDiskSpace(let path, let needed, let available):
            "not enough disk space in \(path): the download needs \(needed) bytes, "
                + "\(available) are free"
        case .lockTimeout(let path, let holder):
            "timed out waiting for the lock \(path)"
                + (holder.map { " (held by \($0))" } ?? "")
        case .local(let error): error.message
        case .interrupted:
            "interrupted; partial downloads are kept and resume on the next pull"
        }
    }

    public var hint: String? {
        switch self {
        case .repoNotFound(_, _, let token):
            token == nil
                ? "check the name; a private repo needs a token (HF_TOKEN or --token)"
                : "check the name, and that the token from \(token!.description) can read it"
        case .revisionNotFound: "check the branch, tag or commit (default: main)"
        case .gated(let repo, _, let endpoint, let token):
            token == nil
                ? "accept the licence at \(endpoint)/\(repo), then set HF_TOKEN or pass --token"
                : "accept the licence at \(endpoint)/\(repo) with the account of that token"
        case .invalidToken: "create a new token at https://huggingface.co/settings/tokens"
        case .rateLimited, .serverError: "try again later"
        case .network: "check the network connection (and HF_ENDPOINT if set), then pull again"
        case .hashMismatch, .sizeMismatch: "pull again; if it keeps failing the Hub copy is broken"
        case .offline: "unset HF_HUB_OFFLINE to download the missing files"
        case .notEnoughDiskSpace: "free some space or point HF_HUB_CACHE at a larger disk"
        case .local(let error): error.hint
        case .lockTimeout:
            "another process is downloading the same file; wait for it, or end it"
        default: nil
        }
    }

    /// 66 for a name that does not exist (or an offline cache miss), 65 for bytes that are
    /// not what the Hub announced, 74 for the local disk, 130 for Ctrl-C, 69 for the rest of
    /// the network and HTTP failures.
    public var exitCode: ExitCode {
        switch self {
        case .repoNotFound, .revisionNotFound, .entryNotFound, .offline: .noInput
        case .hashMismatch, .sizeMismatch, .inconsistentMetadata, .unsafePath: .dataError
        case .notEnoughDiskSpace, .lockTimeout: .ioError
        case .local(let error): error.exitCode
        case .interrupted: .interrupted
        default: .unavailable
        }
    }
}
