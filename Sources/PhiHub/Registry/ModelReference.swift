import Foundation
import PhiFormats

/// What the user typed as MODEL: a directory, a Hub id (`org/name[@rev]`), or a registry alias
/// (`phi-4-mini`). Resolution order: an existing directory wins, then a registry alias, then
/// anything shaped like `org/name`. A registry alias of a bundled model is a directory that
/// keeps its registry entry (default prompt, extra stop tokens).
public enum ModelReference: Sendable, Equatable {
    case directory(String, entry: RegistryEntry?)
    case hub(repoID: String, revision: String, entry: RegistryEntry?)

    public static func parse(
        _ text: String, registry: Registry?
    ) throws(ModelReferenceError)
        -> ModelReference
    {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: text, isDirectory: &isDirectory),
            isDirectory.boolValue
        {
            return .directory(text, entry: nil)
        }
        if text.hasPrefix("/") || text.hasPrefix("./") || text.hasPrefix("../")
            || text.hasPrefix("~")
        {
            throw .noSuchDirectory(text)
        }
        let (name, explicitRevision) = splitRevision(text)
        if let entry = registry?.entry(named: name) {
            if let path = entry.path { return .directory(path, entry: entry) }
            if let repo = entry.repo {
                return .hub(
                    repoID: repo, revision: explicitRevision ?? entry.revision, entry: entry)
            }
        }
        guard isRepoID(name) else { throw .unknown(text) }
        return .hub(
            repoID: name, revision: explicitRevision ?? "main", entry: registry?.entry(named: name))
    }

    /// Parses `text`, reading registry.json only when `text` is not a directory: a missing
    /// registry means no aliases (a name that needed one reports the missing file), a broken
    /// one is reported rather than hidden behind "not a registry alias".
    public static func resolve(
        _ text: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> ModelReference {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: text, isDirectory: &isDirectory),
            isDirectory.boolValue
        {
            return .directory(text, entry: nil)
        }
        let registry: Registry
        do {
            registry = try Registry.load(environment: environment)
        } catch .notFound(let searched) {
            // Without registry.json a Hub id still works; an alias cannot, and the missing
            // file (where it was looked for) is the real problem, not the name.
            do {
                return try parse(text, registry: nil)
            } catch .unknown {
                throw RegistryError.notFound(searched: searched)
            }
        }
        return try parse(text, registry: registry)
    }

    /// `org/name@rev` → (`org/name`, `rev`); also accepts the `hf://` prefix hf users type.
    static func splitRevision(_ text: String) -> (String, String?) {
        var body = Substring(text)
        if body.hasPrefix("hf://") { body = body.dropFirst(5) }
        if let at = body.lastIndex(of: "@") {
            let revision = body[body.index(after: at)...]
            return (String(body[..<at]), revision.isEmpty ? nil : String(revision))
        }
        return (String(body), nil)
    }

    /// The Hub's rule: two non-empty parts of letters, digits, `-`, `_`, `.`.
    public static func isRepoID(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        return parts.allSatisfy { part in
            !part.isEmpty
                && part.utf8.allSatisfy { byte in
                    (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90)
                        || (byte >= 97 && byte <= 122)
                        || byte == 45 || byte == 95 || byte == 46
                }
        }
    }
}

public enum ModelReferenceError: UserFacingError, Equatable {
    case noSuchDirectory(String)
    case unknown(String)

    public var message: String {
        switch self {
        case .noSuchDirectory(let path): "no such model directory: \(path)"
        case .unknown(let name):
            "'\(name)' is not a directory, a registry alias or a Hub id (org/name)"
        }
    }
    public var hint: String? {
        switch self {
        case .noSuchDirectory: nil
        case .unknown: "`phikit list` shows local models; registry aliases are in registry.json"
        }
    }
    public var exitCode: ExitCode { .noInput }
}
