import Foundation
import PhiFormats
import PhiHub

/// A model on this machine, found from what the user typed as MODEL.
public struct LocalModel: Sendable, Equatable {
    /// The directory holding config.json, the weights and the tokenizer files.
    public var directory: String
    /// Short name (`Phi-3.5-mini-instruct-4bit`, `stories-260k`), for output names and reports.
    public var name: String
    /// The Hub repo and revision when the model came from the Hugging Face cache.
    public var hubRepo: String?
    public var revision: String?
    /// The registry entry, when MODEL was an alias or a known repo: default prompt, extra
    /// stop tokens.
    public var entry: RegistryEntry?
}

/// The one place that turns MODEL (as every command takes it) into a local directory.
/// Never touches the network: a Hub model must already be in the cache.
///
/// Order: an existing directory; then, for a bare name, a model in phikit's converted-model
/// store (`convert` without `-o` writes there); then a registry alias (a bundled model is a
/// directory shipped with phikit); then a Hub id, looked up in the Hugging Face cache.
public enum ModelLocator {
    public static func locate(
        _ text: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> LocalModel {
        guard ModelName.isUsable(text) else { throw ModelLocatorError.notAName(text) }
        try GGUFConvertError.refuseGGUF(text)
        if !text.contains("/"), !text.hasPrefix("."), !text.hasPrefix("~") {
            let stored = ModelStore.modelsDirectory(environment: environment) + "/" + text
            if isDirectory(stored) {
                return LocalModel(
                    directory: stored, name: text, hubRepo: nil, revision: nil, entry: nil)
            }
        }
        switch try reference(text, environment: environment) {
        case .directory(let path, let entry):
            let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
            return LocalModel(
                directory: absolute, name: entry?.name ?? name(ofDirectory: absolute),
                hubRepo: nil, revision: nil, entry: entry)
        case .hub(let repoID, let revision, let entry):
            let cache = HubCache(root: HubCache.defaultRoot(environment: environment))
            let snapshot: String
            do {
                snapshot = try cache.snapshotDirectory(repoID: repoID, revision: revision)
            } catch {
                throw ModelLocatorError.notDownloaded(
                    typed: text, repoID: repoID, revision: revision, cache: cache.root,
                    suggestion: entry == nil
                        ? Suggestion.nearest(
                            to: repoID, in: localNames(environment: environment)) : nil)
            }
            let name = repoID.split(separator: "/").last.map(String.init) ?? repoID
            return LocalModel(
                directory: snapshot, name: name, hubRepo: repoID, revision: revision, entry: entry)
        }
    }

    /// What MODEL names (`ModelReference.resolve`), for the commands that do not need it on
    /// this machine (`pull`, `rm`) as for those that do: a name that is neither a directory,
    /// an alias nor a Hub id gets the nearest registry or local name as "did you mean".
    public static func reference(
        _ text: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> ModelReference {
        do {
            return try ModelReference.resolve(text, environment: environment)
        } catch ModelReferenceError.unknown(let name) {
            throw ModelLocatorError.unknown(
                name, suggestion: Suggestion.nearest(to: name, in: knownNames(environment)))
        }
    }

    /// Registry names and aliases, then the models on this machine.
    static func knownNames(_ environment: [String: String]) -> [String] {
        let registry = (try? Registry.load(environment: environment))?.entries ?? []
        return registry.flatMap { [$0.name] + $0.aliases } + localNames(environment: environment)
    }

    /// The models on this machine by the names commands take: converted models in the store,
    /// then Hub repos in the cache (`org/name`). `completions` offers them too.
    public static func localNames(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [String] {
        let store = ModelStore.modelsDirectory(environment: environment)
        let stored = ((try? FileManager.default.contentsOfDirectory(atPath: store)) ?? [])
            .filter { !$0.hasPrefix(".") && isDirectory(store + "/" + $0) }.sorted()
        let cache = HubCache(root: HubCache.defaultRoot(environment: environment))
        return stored + cache.scan().map(\.repoID).sorted()
    }

    /// The directory's own name, except for HF cache snapshots
    /// (`…/models--org--NAME/snapshots/<commit>`), which are named after the repo.
    static func name(ofDirectory path: String) -> String {
        if let snapshot = HubCache.snapshotPath(of: path),
            let repoName = snapshot.repoID.split(separator: "/").last
        {
            return String(repoName)
        }
        return path.split(separator: "/").last.map(String.init) ?? "model"
    }

    private static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            && isDirectory.boolValue
    }
}

public enum ModelLocatorError: UserFacingError, Equatable {
    /// Empty or blank: an unset variable in a script, not a model.
    case notAName(String)
    /// Not a directory, a registry alias or a Hub id; `suggestion` is the nearest known name.
    case unknown(String, suggestion: String?)
    /// A Hub model (named as `typed`: an alias or an id) that is not in the cache.
    case notDownloaded(
        typed: String, repoID: String, revision: String, cache: String, suggestion: String?)

    public var message: String {
        switch self {
        case .notAName(let text): "'\(text)' is not a model name or directory"
        case .unknown(let name, _):
            "'\(name)' is not a directory, a registry alias or a Hub id (org/name)"
        case .notDownloaded(let typed, let repoID, let revision, let cache, _):
            (typed == repoID ? "model '\(repoID)'" : "model '\(typed)' (\(repoID))")
                // A pinned registry revision is the registry's business, not the user's.
                + (typed == repoID && revision != "main" ? " at revision \(revision)" : "")
                + " is not downloaded (Hugging Face cache: \(cache))"
        }
    }

    public var hint: String? {
        switch self {
        case .notAName: "`phikit list` shows the models on this machine"
        case .unknown(_, let suggestion?):
            "did you mean '\(suggestion)'? `phikit list` shows local models, "
                + "`phikit list --available` the registry's"
        case .notDownloaded(let typed, _, _, _, let suggestion?):
            "did you mean '\(suggestion)'? If not, run `phikit pull \(typed)` first"
        case .unknown:
            "`phikit list` shows local models, `phikit list --available` the registry's"
        case .notDownloaded(let typed, _, _, _, nil):
            // The name as typed: `phikit pull phi-4-mini`, not a long id with a commit.
            "run `phikit pull \(typed)` first"
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .notAName: .usage
        case .unknown, .notDownloaded: .noInput
        }
    }
}
