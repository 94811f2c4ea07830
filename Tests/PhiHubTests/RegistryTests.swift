import Foundation
import Testing

@testable import PhiHub

@Suite("Registry: sizes, pins, the user's registry, errors that point at the field")
struct RegistryTests {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test("the shipped registry: sizes, parameter counts, the public pins, phi-3-mini-128k")
    func shipped() throws {
        let path = root.appendingPathComponent("registry.json").path
        let registry = try Registry.load(environment: [
            "PHIKIT_REGISTRY": path, "XDG_CONFIG_HOME": "/nonexistent",
        ])
        let phi4 = try #require(registry.entry(named: "phi-4-mini"))
        #expect(phi4.revision == "ac1c269cb4222a4e136a3d09edad301056c1f36a" && phi4.isPinned)
        #expect(phi4.downloadSize == 2_179_993_199)
        #expect(phi4.parameters == 3_836_021_760)
        let phi3 = try #require(registry.entry(named: "phi-3-mini-4k"))
        #expect(phi3.revision == "5b3819ed6317784fb20eddeae9bed984f778d0d0")
        #expect(phi3.downloadSize == 2_151_578_230)
        #expect(
            registry.entry(named: "phi-3-mini-128k")?.repo
                == "mlx-community/Phi-3-mini-128k-instruct-4bit")
        for entry in registry.entries {
            #expect(entry.parameters != nil, "\(entry.name) has a parameter count")
            #expect(entry.repo == nil || entry.downloadSize != nil, "\(entry.name) has a size")
            #expect(entry.source == path)
        }
        #expect(registry.entry(named: "stories-260k")?.parameters == 260_032)
        #expect(registry.entry(named: "phi-2")?.repo == "mlx-community/phi-2")
        #expect(registry.entry(named: "phi-2-hf")?.repo == "microsoft/phi-2")
    }

    @Test("the user's registry adds entries and replaces same-named ones")
    func userOverrides() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(
            atPath: dir + "/phikit", withIntermediateDirectories: true)
        try #"""
        {"models": [
          {"name": "phi-4-mini", "repo": "me/phi-4-mini-q8", "revision": "dev"},
          {"name": "mine", "aliases": ["m"], "repo": "me/model", "parameters": 5}
        ]}
        """#.write(toFile: dir + "/phikit/registry.json", atomically: true, encoding: .utf8)
        let env = [
            "PHIKIT_REGISTRY": root.appendingPathComponent("registry.json").path,
            "XDG_CONFIG_HOME": dir,
        ]
        let registry = try Registry.load(environment: env)
        #expect(registry.entry(named: "phi-4-mini")?.repo == "me/phi-4-mini-q8")
        #expect(registry.entry(named: "phi4-mini") == nil)  // the user's entry has no aliases
        #expect(registry.entry(named: "m")?.source == dir + "/phikit/registry.json")
        #expect(registry.entry(named: "phi-3.5-mini") != nil)
        #expect(
            try ModelReference.resolve("mine", environment: env)
                == .hub(repoID: "me/model", revision: "main", entry: registry.entry(named: "mine")))
        // Without a shipped registry, the user's is enough.
        let alone = try Registry.load(environment: [
            "PHIKIT_REGISTRY": dir + "/none.json", "XDG_CONFIG_HOME": dir,
        ])
        #expect(alone.entries.map(\.name) == ["phi-4-mini", "mine"])
        #expect(
            Registry.userRegistryPath(environment: ["HOME": "/h"])
                == "/h/.config/phikit/registry.json")
    }

    @Test(
        "an invalid entry names the file, the entry and the field",
        arguments: [
            (
                #"{"models": [{"name": "x", "repo": "a/b", "parameters": -3}]}"#,
                "entry 'x' (models[0]): field 'parameters' must be a positive integer"
            ),
            (
                #"{"models": [{"name": "o", "repo": "a/b"}, {"name": "y", "repo": "not a repo"}]}"#,
                "entry 'y' (models[1]): field 'repo' must be a Hub id (org/name)"
            ),
            (
                #"{"models": [{"name": "z", "repo": "a/b", "downloadSize": "big"}]}"#,
                "entry 'z' (models[0]): field 'downloadSize' must be a number"
            ),
            (#"{"models": [{"repo": "a/b"}]}"#, "entry models[0]: missing field 'name'"),
            (
                #"{"models": [{"name": "r", "repo": "a/b", "revision": "../x"}]}"#,
                "entry 'r' (models[0]): field 'revision' must be a branch, tag or commit"
            ),
            (#"{"model": []}"#, "missing field 'models'"),
        ])
    func invalid(_ json: String, _ detail: String) throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(
            atPath: dir + "/phikit", withIntermediateDirectories: true)
        let path = dir + "/phikit/registry.json"
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        let env = ["PHIKIT_REGISTRY": dir + "/none.json", "XDG_CONFIG_HOME": dir]
        #expect(throws: RegistryError.invalid(path: path, detail: detail)) {
            try Registry.load(environment: env)
        }
        #expect(RegistryError.invalid(path: path, detail: detail).message == "\(path): \(detail)")
    }
}
