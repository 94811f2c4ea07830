import Foundation
import PhiHub
import Testing

/// The registry's chat defaults: the Phi entries sample at 0.6 with up to 1024 new tokens (as
/// the MLX Swift chat app does); nonsense values are refused at the field.
@Suite("chat defaults from the registry")
struct ChatDefaultsTests {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func phiEntriesHaveChatDefaults() throws {
        let path = root.appendingPathComponent("registry.json").path
        let registry = try Registry.load(environment: [
            "PHIKIT_REGISTRY": path, "XDG_CONFIG_HOME": "/nonexistent",
        ])
        // Phi-2 is a base model without a chat template: chat refuses it, so no chat defaults.
        for entry in registry.entries
        where entry.name.hasPrefix("phi-") && !entry.name.hasPrefix("phi-2") {
            #expect(entry.defaultTemperature == 0.6, "\(entry.name)")
            #expect(entry.defaultMaxTokens == 1024, "\(entry.name)")
        }
        #expect(registry.entry(named: "stories-260k")?.defaultTemperature == nil)
    }

    @Test(arguments: [
        (#""defaultTemperature": -1"#, "field 'defaultTemperature' must be 0 or more"),
        (#""defaultMaxTokens": 0"#, "field 'defaultMaxTokens' must be a positive integer"),
    ])
    func refusesNonsense(_ field: String, _ detail: String) throws {
        let json = #"{"models": [{"name": "z", "repo": "a/b", "# + field + "}]}"
        #expect {
            try Registry(data: Data(json.utf8), source: "r.json")
        } throws: { error in
            (error as? RegistryError)?.message.contains(detail) == true
        }
    }
}
