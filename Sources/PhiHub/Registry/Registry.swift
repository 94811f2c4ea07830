import Foundation
import PhiFormats

/// The known models: registry.json shipped with phikit, plus the user's own
/// (`$XDG_CONFIG_HOME/phikit/registry.json`, else `~/.config/phikit/registry.json`), whose
/// entries add to the shipped ones or replace those of the same name.
public struct Registry: Sendable, Equatable {
    public var entries: [RegistryEntry]

    public init(entries: [RegistryEntry]) { self.entries = entries }

    /// Decodes registry.json (`{"models": [ … ]}`) and refuses ambiguous names. A bad entry is
    /// reported with the file, the entry and the field: `r.json: entry 'phi-x' (models[2]):
    /// field 'parameters' must be a positive integer`.
    public init(data: Data, source: String) throws(RegistryError) {
        let models: [JSONValue]
        do {
            let json = try JSONValue(parsing: Array(data))
            guard let list = json["models"]?.arrayValue else {
                throw ConfigError.missingField(path: source, field: "models")
            }
            models = list
        } catch let error as ConfigError {
            throw .invalid(path: source, detail: error.problem)
        } catch {
            throw .invalid(path: source, detail: ConfigError.wrapping(error, path: source).problem)
        }
        entries = []
        for (index, model) in models.enumerated() {
            let label =
                model["name"]?.stringValue.map { "entry '\($0)' (models[\(index)])" }
                ?? "entry models[\(index)]"
            do {
                var entry = try JSONDecoder().decode(
                    RegistryEntry.self, from: Data(model.serialized().utf8))
                entry.source = source
                entries.append(entry)
            } catch {
                let problem = ConfigError.wrapping(error, path: source).problem
                throw .invalid(path: source, detail: "\(label): \(problem)")
            }
        }
        let base = URL(fileURLWithPath: source).deletingLastPathComponent()
        for index in entries.indices {
            if let path = entries[index].path, !path.hasPrefix("/") {
                entries[index].path = base.appendingPathComponent(path).standardized.path
            }
        }
        try Self.checkNames(entries, source: source)
    }

    /// No name or alias may select two entries.
    private static func checkNames(_ entries: [RegistryEntry], source: String) throws(RegistryError)
    {
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

    /// `user`'s entries replace same-named ones (case-insensitively) and add the rest.
    public func merged(with user: Registry, source: String) throws(RegistryError) -> Registry {
        let replaced = Set(user.entries.map { $0.name.lowercased() })
        let all = entries.filter { !replaced.contains($0.name.lowercased()) } + user.entries
        try Self.checkNames(all, source: source)
        return Registry(entries: all)
    }

    /// The shipped registry (`$PHIKIT_REGISTRY`, then `<prefix>/share/phikit/` beside the
    /// installed binary, then the source checkout the binary was built in), merged with the
    /// user's. Throws `notFound` only when neither exists.
    public static func load(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        executablePath: String = ExecutablePath.current
    ) throws(RegistryError) -> Registry {
        let candidates = searchPaths(environment: environment, executablePath: executablePath)
        var shipped: Registry?
        for path in candidates {
            if let data = try readIfPresent(path) {
                shipped = try Registry(data: data, source: path)
                break
            }
        }
        let userPath = userRegistryPath(environment: environment)
        guard let data = try readIfPresent(userPath) else {
            guard let shipped else { throw .notFound(searched: candidates + [userPath]) }
            return shipped
        }
        let user = try Registry(data: data, source: userPath)
        return try (shipped ?? Registry(entries: [])).merged(with: user, source: userPath)
    }

    /// The file's bytes, nil when there is none; a directory, FIFO or device there (or a
    /// file over 64 MB) is an error naming it, not a hang or "not found".
    private static func readIfPresent(_ path: String) throws(RegistryError) -> Data? {
        do {
            return Data(try LocalFile.read(path, limit: 64 << 20))
        } catch {
            if error.errno == ENOENT && error.wrongType == nil { return nil }
            throw .unreadable(error)
        }
    }

    /// `$XDG_CONFIG_HOME/phikit/registry.json`, else `~/.config/phikit/registry.json`.
    public static func userRegistryPath(environment: [String: String]) -> String {
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            return xdg + "/phikit/registry.json"
        }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.config/phikit/registry.json"
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
    case unreadable(FileError)

    public var message: String {
        switch self {
        case .notFound(let searched):
            "registry.json not found (looked in \(searched.joined(separator: ", ")))"
        case .invalid(let path, let detail): "\(path): \(detail)"
        case .unreadable(let error): error.message
        }
    }
    public var hint: String? {
        switch self {
        case .notFound:
            "set PHIKIT_REGISTRY to the path of registry.json, or reinstall with `make install`"
        case .invalid: nil
        case .unreadable(let error): error.hint
        }
    }
    public var exitCode: ExitCode {
        switch self {
        case .notFound: .noInput
        case .invalid: .dataError
        case .unreadable(let error): error.exitCode
        }
    }
}
