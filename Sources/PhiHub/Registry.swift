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
    public var revision: String
    public var description: String?
    public var defaultPrompt: String?
    public var extraEOSTokens: [String]

    enum CodingKeys: String, CodingKey {
        case name, aliases, repo, path, revision, description, defaultPrompt, extraEOSTokens
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        aliases = try c.decodeIfPresent([String].self, forKey: .aliases) ?? []
        repo = try c.decodeIfPresent(String.self, forKey: .repo)
        path = try c.decodeIfPresent(String.self, forKey: .path)
        guard (repo == nil) != (path == nil) else {
            throw DecodingError.dataCorruptedError(
                forKey: .repo, in: c, debugDescription: "or 'path' must be given, not both")
        }
        revision = try c.decodeIfPresent(String.self, forKey: .revision) ?? "main"
        description = try c.decodeIfPresent(String.self, forKey: .description)
        defaultPrompt = try c.decodeIfPresent(String.self, forKey: .defaultPrompt)
        extraEOSTokens = try c.decodeIfPresent([String].self, forKey: .extraEOSTokens) ?? []
    }
}

public struct Registry: Sendable, Equatable {
    public var entries: [RegistryEntry]

    public init(entries: [RegistryEntry]) { self.entries = entries }

    /// Decodes registry.json (`{"models": [ … ]}`) and refuses ambiguous names.
    public init(data: Data, source: String) throws(RegistryError) {
        struct File: Decodable { var models: [RegistryEntry] }
        do {
            entries = try JSONDecoder().decode(File.self, from: data).models
        } catch {
            throw .invalid(path: source, detail: ConfigError.wrapping(error, path: source).problem)
        }
        let base = URL(fileURLWithPath: source).deletingLastPathComponent()
        for index in entries.indices {
            if let path = entries[index].path, !path.hasPrefix("/") {
                entries[index].path = base.appendingPathComponent(path).standardized.path
            }
        }
        var seen: [String: String] = [:]
        for entry in entries {
            for name in [entry.name] + entry.aliases {
                let key = name.lowercased()
                if let other = seen[key], other != entry.name {
                    throw .invalid(
                        path: source,
                        detail: "name '\(name)' is used by both '\(other)' and '\(entry.name)'")
                }
                seen[key] = entry.name
            }
        }
    }

    /// The entry whose name, alias or repo id matches (names and aliases case-insensitively).
    public func entry(named name: String) -> RegistryEntry? {
        let key = name.lowercased()
        return entries.first { entry in
            entry.name.lowercased() == key || entry.aliases.contains { $0.lowercased() == key }
                || entry.repo == name
        }
    }

    /// Loads the first registry.json found: `$PHIKIT_REGISTRY`, then `<prefix>/share/phikit/`
    /// beside the installed binary, then the source checkout the binary was built in.
    public static func load(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        executablePath: String = CommandLine.arguments.first ?? ""
    ) throws(RegistryError) -> Registry {
        let candidates = searchPaths(environment: environment, executablePath: executablePath)
        for path in candidates {
            if let data = FileManager.default.contents(atPath: path) {
                return try Registry(data: data, source: path)
            }
        }
        throw .notFound(searched: candidates)
    }

    static func searchPaths(environment: [String: String], executablePath: String) -> [String] {
        if let explicit = environment["PHIKIT_REGISTRY"], !explicit.isEmpty { return [explicit] }
        let binary = URL(fileURLWithPath: executablePath).resolvingSymlinksInPath()
        let binDir = binary.deletingLastPathComponent()
        var paths = [
            binDir.appendingPathComponent("../share/phikit/registry.json").standardized.path
        ]
        // A development build lives in <checkout>/.build*/<config>/phikit: walk up to the
        // directory that has Package.swift.
        var dir = binDir
        for _ in 0..<5 {
            if FileManager.default.fileExists(
                atPath: dir.appendingPathComponent("Package.swift").path)
            {
                paths.append(dir.appendingPathComponent("registry.json").path)
                break
            }
            dir = dir.deletingLastPathComponent()
        }
        return paths
    }
}

public enum RegistryError: UserFacingError, Equatable {
    case notFound(searched: [String])
    case invalid(path: String, detail: String)

    public var message: String {
        switch self {
        case .notFound(let searched):
            "registry.json not found (looked in \(searched.joined(separator: ", ")))"
        case .invalid(let path, let detail): "\(path): \(detail)"
        }
    }
    public var hint: String? {
        switch self {
        case .notFound:
            "set PHIKIT_REGISTRY to the path of registry.json, or reinstall with `make install`"
        case .invalid: nil
        }
    }
    public var exitCode: ExitCode {
        switch self {
        case .notFound: .noInput
        case .invalid: .dataError
        }
    }
}
