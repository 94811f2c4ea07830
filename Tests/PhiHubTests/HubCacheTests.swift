import Foundation
import Testing

@testable import PhiHub

/// A throwaway directory per test, removed afterwards.
func makeTemporaryDirectory() throws -> String {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("phikit-hub-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

@Suite("HubCache")
struct HubCacheTests {
    @Test("cache root follows huggingface_hub's environment order")
    func rootOrder() {
        #expect(HubCache.defaultRoot(environment: ["HF_HUB_CACHE": "/a", "HF_HOME": "/b"]) == "/a")
        #expect(
            HubCache.defaultRoot(environment: ["HF_HOME": "/b", "XDG_CACHE_HOME": "/c"]) == "/b/hub"
        )
        #expect(
            HubCache.defaultRoot(environment: ["XDG_CACHE_HOME": "/c", "HOME": "/h"])
                == "/c/huggingface/hub")
        #expect(HubCache.defaultRoot(environment: ["HOME": "/h"]) == "/h/.cache/huggingface/hub")
        #expect(
            HubCache.defaultRoot(environment: ["HF_HUB_CACHE": "", "HOME": "/h"])
                == "/h/.cache/huggingface/hub")
    }

    @Test("a snapshot is found through refs/main and by commit hash")
    func resolvesSnapshot() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let commit = String(repeating: "ab", count: 20)
        let repo = root + "/models--mlx-community--Phi-3.5-mini-instruct-4bit"
        try FileManager.default.createDirectory(
            atPath: repo + "/snapshots/" + commit, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            atPath: repo + "/refs", withIntermediateDirectories: true)
        try (commit + "\n").write(toFile: repo + "/refs/main", atomically: true, encoding: .utf8)

        let cache = HubCache(root: root)
        let id = "mlx-community/Phi-3.5-mini-instruct-4bit"
        #expect(try cache.snapshotDirectory(repoID: id) == repo + "/snapshots/" + commit)
        #expect(
            try cache.snapshotDirectory(repoID: id, revision: commit) == repo + "/snapshots/"
                + commit)
        #expect(throws: HubCacheError.notCached(repoID: id, revision: "dev", root: root)) {
            try cache.snapshotDirectory(repoID: id, revision: "dev")
        }
    }

    @Test("cache folder names and snapshot paths are read back into repo ids and commits")
    func folderNamesAndSnapshotPaths() {
        let id = "mlx-community/Phi-3.5-mini-instruct-4bit"
        let folder = HubCache.folderName(repoID: id)
        #expect(folder == "models--mlx-community--Phi-3.5-mini-instruct-4bit")
        #expect(HubCache.repoID(folderName: folder) == id)
        for other in ["datasets--a--b", ".locks", "CACHEDIR.TAG", "models--"] {
            #expect(HubCache.repoID(folderName: other) == nil, "\(other)")
        }
        let commit = String(repeating: "0a", count: 20)
        let snapshot = HubCache.snapshotPath(of: "/c/hub/\(folder)/snapshots/\(commit)")
        #expect(snapshot?.cache.root == "/c/hub")
        #expect(snapshot?.repoID == id)
        #expect(snapshot?.commit == commit)
        #expect(HubCache.snapshotPath(of: "/\(folder)/snapshots/\(commit)")?.cache.root == "/")
        for notSnapshot in [
            "/c/hub/\(folder)/snapshots/main",  // a branch name is not a snapshot folder
            "/c/hub/\(folder)/snapshots/\(commit)/sub",
            "/c/hub/datasets--a--b/snapshots/\(commit)",
            "/models/Phi-3.5-mini-instruct",
        ] {
            #expect(HubCache.snapshotPath(of: notSnapshot) == nil, "\(notSnapshot)")
        }
    }

    @Test("a model that was never pulled is exit 66 with a pull hint")
    func notCached() {
        let error = HubCacheError.notCached(repoID: "a/b", revision: "main", root: "/nowhere")
        #expect(error.exitCode == .noInput)
        #expect(error.hint == "run `phikit pull a/b` first")
        #expect(error.message.contains("a/b"))
    }
}

@Suite("ModelReference and Registry")
struct ModelReferenceTests {
    let registry = try! Registry(
        data: Data(
            #"""
            {"models": [{"name": "phi-4-mini", "aliases": ["phi4-mini"],
              "repo": "mlx-community/Phi-4-mini-instruct-4bit", "extraEOSTokens": ["<|end|>"]}]}
            """#.utf8), source: "test")

    @Test("aliases, Hub ids, revisions and directories")
    func parse() throws {
        let entry = try #require(registry.entry(named: "PHI4-MINI"))
        #expect(entry.repo == "mlx-community/Phi-4-mini-instruct-4bit")
        #expect(entry.revision == "main")
        #expect(
            try ModelReference.parse("phi-4-mini", registry: registry)
                == .hub(
                    repoID: "mlx-community/Phi-4-mini-instruct-4bit", revision: "main", entry: entry
                ))
        #expect(
            try ModelReference.parse("phi-4-mini@v2", registry: registry)
                == .hub(
                    repoID: "mlx-community/Phi-4-mini-instruct-4bit", revision: "v2", entry: entry))
        #expect(
            try ModelReference.parse("hf://org/model@abc", registry: registry)
                == .hub(repoID: "org/model", revision: "abc", entry: nil))
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try ModelReference.parse(dir, registry: registry) == .directory(dir, entry: nil))
    }

    @Test("nonsense and missing directories are refused with exit 66")
    func refuses() {
        #expect(throws: ModelReferenceError.unknown("not a model")) {
            try ModelReference.parse("not a model", registry: registry)
        }
        #expect(throws: ModelReferenceError.noSuchDirectory("/no/such/dir")) {
            try ModelReference.parse("/no/such/dir", registry: registry)
        }
        #expect(ModelReferenceError.unknown("x").exitCode == .noInput)
    }

    @Test("the project's registry.json decodes; every Phi-3-family entry stops at <|end|>, SmolLM2 at <|im_end|>")
    func projectRegistry() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("registry.json"))
        let registry = try Registry(data: data, source: "registry.json")
        #expect(registry.entries.count >= 2)
        #expect(
            registry.entry(named: "phi-3.5-mini")?.repo
                == "mlx-community/Phi-3.5-mini-instruct-4bit")
        #expect(
            registry.entry(named: "phi-4-mini")?.repo == "mlx-community/Phi-4-mini-instruct-4bit")
        // Phi-2's vocabulary has no <|end|>: its end of text is the tokenizer's own eos.
        for entry in registry.entries
        where entry.repo != nil && (entry.name.hasPrefix("phi-3") || entry.name.hasPrefix("phi-4")) {
            #expect(entry.extraEOSTokens.contains("<|end|>"), "\(entry.name)")
        }
        // SmolLM2's ChatML turns end at <|im_end|>.
        let smol = try #require(registry.entry(named: "smollm2-135m"))
        #expect(smol.repo == "HuggingFaceTB/SmolLM2-135M-Instruct" && smol.extraEOSTokens == ["<|im_end|>"])
        #expect(registry.entry(named: "phi-2")?.extraEOSTokens == [])
        // The bundled demo model resolves to the directory shipped beside registry.json.
        let demo = try #require(registry.entry(named: "stories-260k")?.path)
        #expect(FileManager.default.fileExists(atPath: demo + "/model.safetensors"))
    }

    @Test("resolve: directories need no registry, a broken registry.json is reported")
    func resolveReportsBrokenRegistry() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let broken = dir + "/registry.json"
        try #"{"models": [{"name": "a"}]}"#.write(toFile: broken, atomically: true, encoding: .utf8)
        let env = ["PHIKIT_REGISTRY": broken]
        #expect(try ModelReference.resolve(dir, environment: env) == .directory(dir, entry: nil))
        #expect(
            throws: RegistryError.invalid(
                path: broken,
                detail: "entry 'a' (models[0]): field 'repo' or 'path' must be given, not both")
        ) {
            try ModelReference.resolve("phi-4-mini", environment: env)
        }
        let missing = ["PHIKIT_REGISTRY": dir + "/absent.json"]
        #expect(
            try ModelReference.resolve("org/model", environment: missing)
                == .hub(repoID: "org/model", revision: "main", entry: nil))
        // A name only the registry could resolve reports the missing registry, not the name.
        #expect(throws: RegistryError.self) {
            try ModelReference.resolve("stories-260k", environment: missing)
        }
    }

    @Test("a registry that gives one alias to two models is refused")
    func ambiguous() {
        let data = Data(
            #"{"models": [{"name": "a", "repo": "x/a"}, {"name": "b", "aliases": ["A"], "repo": "x/b"}]}"#
                .utf8)
        #expect(throws: RegistryError.self) { try Registry(data: data, source: "r.json") }
    }
}
