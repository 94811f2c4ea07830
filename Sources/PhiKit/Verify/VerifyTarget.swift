import Foundation
import PhiFormats
import PhiHub

/// The model `verify` looks at, and what its bytes can be checked against: a Hugging Face
/// cache snapshot (the Hub's listing, the blob names), a converted model (its manifest), or a
/// plain directory (nothing but its own files).
struct VerifyTarget {
    /// Where a snapshot lives in the cache.
    typealias Snapshot = HubCache.SnapshotPath

    var directory: String
    var name: String
    var snapshot: Snapshot?
    var manifest: ConvertManifest?
    /// A manifest that exists but cannot be read.
    var manifestProblem: ConfigError?
    var entry: RegistryEntry?

    var kind: String {
        if snapshot != nil { return "hub_snapshot" }
        return manifest != nil || manifestProblem != nil ? "converted" : "directory"
    }

    /// Finds MODEL as every command does (`ModelLocator`); a directory inside a Hugging Face
    /// cache (`…/models--ORG--NAME/snapshots/<commit>`) is recognised as that snapshot.
    static func locate(_ model: String, environment: [String: String]) throws -> VerifyTarget {
        let located = try ModelLocator.locate(model, environment: environment)
        let directory = URL(fileURLWithPath: located.directory).resolvingSymlinksInPath().path
        var target = VerifyTarget(
            directory: directory, name: located.name, snapshot: nil, manifest: nil,
            manifestProblem: nil, entry: located.entry)
        target.snapshot = HubCache.snapshotPath(of: directory)
        let registry = try? Registry.load(environment: environment)
        if target.entry == nil, let registry {
            target.entry =
                if let snapshot = target.snapshot {
                    registry.entry(named: snapshot.repoID)
                } else {
                    registry.entries.first { entry in
                        entry.path.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }
                            == directory
                    }
                }
        }
        if target.snapshot == nil {
            do {
                target.manifest = try ConvertManifest.read(directory: directory)
            } catch {
                target.manifestProblem = error
            }
        }
        return target
    }
}
