import Foundation

/// Scheme, host and port of a URL: the unit a credential belongs to. The token goes only to
/// the endpoint's own origin; a redirect to any other origin (the CDN holding LFS files, a
/// different port on the same host) is followed without it — the rule huggingface_hub and
/// browsers apply.
struct URLOrigin: Sendable, Equatable {
    var scheme: String
    var host: String
    var port: Int

    init?(_ text: String) {
        guard let components = URLComponents(string: text),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        self.scheme = scheme
        self.host = host
        port = components.port ?? (scheme == "https" ? 443 : 80)
    }

    /// `Location` resolved against the URL that sent it; only http(s) targets are accepted.
    static func resolve(location: String, against base: String) -> String? {
        guard let baseURL = URL(string: base),
            let target = URL(string: location, relativeTo: baseURL)?.absoluteString,
            URLOrigin(target) != nil
        else { return nil }
        return target
    }
}

enum URLPath {
    /// Characters left as they are in one path segment; everything else is %-escaped, as
    /// Python's `quote(…, safe="")` does for revisions.
    private static let unreserved = CharacterSet(
        charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

    static func escapeSegment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// A repo file path: each segment escaped, the `/` between them kept (`quote(filename)`).
    static func escapePath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false)
            .map { escapeSegment(String($0)) }.joined(separator: "/")
    }
}
