import Foundation
import PhiFormats

/// Where a token came from, for messages ("the token from HF_TOKEN was refused"). The token
/// itself never appears in any message, log or `description`.
public enum TokenSource: Sendable, Equatable, CustomStringConvertible {
    case commandLine
    case environment(String)
    case file(String)

    public var description: String {
        switch self {
        case .commandLine: "--token"
        case .environment(let name): name
        case .file(let path): "the token file \(path)"
        }
    }
}

/// A Hub access token. Printing it (or an error holding it) shows only where it came from.
public struct HubToken: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    let value: String
    public let source: TokenSource

    public init(_ value: String, source: TokenSource) {
        self.value = value
        self.source = source
    }

    public var description: String { "token from \(source)" }
    public var customMirror: Mirror { Mirror(self, children: ["source": source]) }
}

/// How phikit talks to the Hub, read from the environment huggingface_hub users already set:
/// `HF_ENDPOINT`, `HF_TOKEN` (then `HF_TOKEN_PATH`, else `$HF_HOME/token`), `HF_HUB_OFFLINE`
/// (or `TRANSFORMERS_OFFLINE`), `HF_HUB_DOWNLOAD_TIMEOUT`, `HF_HUB_DISABLE_IMPLICIT_TOKEN`.
public struct HubConfiguration: Sendable {
    /// `https://huggingface.co`, or a mirror; no trailing slash.
    public var endpoint: String
    public var token: HubToken?
    /// Never touch the network: use only what the cache holds.
    public var offline: Bool
    public var retry: RetryPolicy
    /// Seconds without a byte before a transfer is abandoned and retried.
    public var stallTimeout: Int
    public var userAgent: String
    /// The token file is there but cannot be read (a directory, a FIFO, no permission): said
    /// when the Hub is first contacted (`HubClient`), not taken as "no token".
    public var tokenFileError: FileError?
    /// Cancels what is done with this configuration (a pull, the listing before it): retries
    /// stop waiting, transfers abort, no further file starts, and a lock wait ends.
    public var cancellation: CancellationToken?

    public init(
        endpoint: String = "https://huggingface.co", token: HubToken? = nil,
        offline: Bool = false, retry: RetryPolicy = RetryPolicy(), stallTimeout: Int = 30,
        userAgent: String = "phikit"
    ) {
        self.endpoint = Self.trimmed(endpoint)
        self.token = token
        self.offline = offline
        self.retry = retry
        self.stallTimeout = stallTimeout
        self.userAgent = userAgent
    }

    /// The configuration the environment describes; `token` (from `--token`) wins over the
    /// environment and the token file.
    public static func from(
        environment: [String: String], token explicitToken: String? = nil,
        userAgent: String = "phikit"
    ) -> HubConfiguration {
        let endpoint = environment["HF_ENDPOINT"].flatMap { $0.isEmpty ? nil : $0 }
        var tokenFileError: FileError?
        var configuration = HubConfiguration(
            endpoint: endpoint ?? "https://huggingface.co",
            token: resolveToken(
                explicit: explicitToken, environment: environment, fileError: &tokenFileError),
            offline: isTrue(environment["HF_HUB_OFFLINE"])
                || isTrue(environment["TRANSFORMERS_OFFLINE"]),
            retry: RetryPolicy.from(environment: environment),
            stallTimeout: environment["HF_HUB_DOWNLOAD_TIMEOUT"].flatMap(Int.init)
                .map { max(1, $0) } ?? 30,
            userAgent: userAgent)
        configuration.tokenFileError = tokenFileError
        return configuration
    }

    /// `--token`, then `HF_TOKEN` (`HUGGING_FACE_HUB_TOKEN` for older setups), then the token
    /// file — huggingface_hub's order. Blank values count as absent.
    static func resolveToken(
        explicit: String?, environment: [String: String], fileError: inout FileError?
    ) -> HubToken? {
        if let explicit = clean(explicit) { return HubToken(explicit, source: .commandLine) }
        if isTrue(environment["HF_HUB_DISABLE_IMPLICIT_TOKEN"]) { return nil }
        for name in ["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"] {
            if let value = clean(environment[name]) {
                return HubToken(value, source: .environment(name))
            }
        }
        let path = tokenPath(environment: environment)
        let data: [UInt8]
        do {
            // LocalFile: a FIFO or device there must not block the pull (1 MB: tokens are short).
            data = try LocalFile.read(path, limit: 1 << 20)
        } catch {
            if error.errno != ENOENT || error.wrongType != nil { fileError = error }
            return nil
        }
        return clean(String(decoding: data, as: UTF8.self)).map {
            HubToken($0, source: .file(path))
        }
    }

    /// `HF_TOKEN_PATH`, else `$HF_HOME/token`, with huggingface_hub's HF_HOME default.
    static func tokenPath(environment: [String: String]) -> String {
        if let path = environment["HF_TOKEN_PATH"], !path.isEmpty { return path }
        return huggingFaceHome(environment: environment) + "/token"
    }

    /// `HF_HOME`, else `$XDG_CACHE_HOME/huggingface`, else `~/.cache/huggingface`.
    static func huggingFaceHome(environment: [String: String]) -> String {
        if let home = environment["HF_HOME"], !home.isEmpty { return home }
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty { return xdg + "/huggingface" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.cache/huggingface"
    }

    /// huggingface_hub's `_is_true`: 1, ON, YES, TRUE in any case.
    static func isTrue(_ value: String?) -> Bool {
        guard let value else { return false }
        return ["1", "ON", "YES", "TRUE"].contains(value.uppercased())
    }

    private static func clean(_ token: String?) -> String? {
        guard let token else { return nil }
        let cleaned = token.replacingOccurrences(of: "\r", with: "")
            .replacingOccurrences(of: "\n", with: "").trimmingCharacters(in: .whitespaces)
        return cleaned.isEmpty ? nil : cleaned
    }

    private static func trimmed(_ endpoint: String) -> String {
        var text = endpoint
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}
