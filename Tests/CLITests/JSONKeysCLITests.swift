import Foundation
import TestSupport
import Testing

/// Every `--json` speaks one key style, snake_case (as the Hub API and OpenAI do; docs/json.md
/// shows each command's object): pull, list, convert, verify, inspect, tokenize, run, rm.
@Suite("--json keys are snake_case")
struct JSONKeysCLITests {
    /// Keys that break the style, with their paths. The values of `dtype_bytes` and
    /// `metadata` are maps whose keys are data (dtype names, safetensors metadata).
    static func badKeys(_ value: Any, path: String = "") -> [String] {
        if let object = value as? [String: Any] {
            return object.flatMap { key, child -> [String] in
                let ok = key.unicodeScalars.allSatisfy {
                    ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
                }
                let inner =
                    ["dtype_bytes", "metadata"].contains(key)
                    ? [] : badKeys(child, path: path + "/" + key)
                return (ok ? [] : [path + "/" + key]) + inner
            }
        }
        if let array = value as? [Any] {
            return array.flatMap { badKeys($0, path: path + "[]") }
        }
        return []
    }

    static func check(_ arguments: [String], _ environment: [String: String]) throws {
        let r = try Phikit.run(arguments, environment: environment)
        #expect(r.status == 0, "\(arguments): \(r.stderr)")
        let lines =
            arguments.contains("--stream") ? r.stdout.split(separator: "\n") : [r.stdout[...]]
        for line in lines {
            let value = try JSONSerialization.jsonObject(with: Data(line.utf8))
            #expect(badKeys(value).isEmpty, "\(arguments): \(badKeys(value))")
        }
    }

    @Test("pull, list, convert, verify, inspect, tokenize, run and rm")
    func everyCommand() throws {
        let hub = try HubServerProcess(model: TestPaths.storiesModel)
        let env = hub.environment
        let out = hub.root.appendingPathComponent("store/models/stories-q4").path
        for arguments in [
            ["pull", "org/model", "--json"], ["pull", "org/model", "--dry-run", "--json"],
            ["convert", "org/model", "-q", "-o", out, "--json"], ["list", "--json"],
            ["list", "--available", "--json"], ["verify", "org/model", "--json"],
            ["inspect", "stories-q4", "--json"], ["tokenize", "org/model", "Hi", "--json"],
            ["tokenize", "org/model", "Hi", "--json", "--count"],
            ["tokenize", "org/model", "1 403", "--decode", "--json"],
            ["run", "org/model", "-p", "", "-m", "3", "--json"],
            ["run", "org/model", "-p", "", "-m", "3", "--json", "--stream"],
            ["rm", "org/model", "--dry-run", "--json"], ["rm", "--partials", "--json", "-y"],
            ["rm", "stories-q4", "-y", "--json"],
        ] {
            try Self.check(arguments, env)
        }
    }

    @Test("tokenize --json --count is an object")
    func countObject() throws {
        let r = try Phikit.run([
            "tokenize", "stories-260k", "Once upon a time", "--json", "--count",
        ])
        #expect(r.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Int]
        #expect(object == ["count": 5])
    }
}
