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
        switch try ModelReference.resolve(text, environment: environment) {
        case .directory(let path, let entry):
            let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
            return LocalModel(
                directory: absolute, name: entry?.name ?? name(ofDirectory: absolute),
                hubRepo: nil, revision: nil, entry: entry)
        case .hub(let repoID, let revision, let entry):
            let cache = HubCache(root: HubCache.defaultRoot(environment: environment))
            let snapshot = try cache.snapshotDirectory(repoID: repoID, revision: revision)
            let name = repoID.split(separator: "/").last.map(String.init) ?? repoID
            return LocalModel(
                directory: snapshot, name: name, hubRepo: repoID, revision: revision, entry: entry)
        }
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

    public var message: String {
        switch self {
        case .notAName(let text): "'\(text)' is not a model name or directory"
        }
    }
    public var hint: String? { "`phikit list` shows the models on this machine" }
    public var exitCode: ExitCode { .usage }
}
