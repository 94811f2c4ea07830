import Foundation

/// The Hub look-alike (Tests/PhiHubTests/Server/hub_server.py, Python standard library only)
/// for the command-line tests, serving one repo: `org/model` at one commit, with three JSON
/// files, a README and a 1 MB LFS weight file. Started on a free port, stopped in `deinit`.
final class HubServerProcess {
    static let repoID = "org/model"
    static let commit = String(repeating: "c", count: 40)
    static let weights: [UInt8] = (0..<1_000_000).map { UInt8(($0 * 31 + 7) % 251) }
    static let weightsSHA256 = "03e13961ed7fa418171dcd51141cf32b71b1baee49433b42aea7764eccfc0405"

    let endpoint: String
    let root: URL
    private let process = Process()
    private let input = Pipe()

    struct Request: Decodable {
        var id: Int
        var server: String
        var path: String
        var range: String?
        var auth: Bool
        var status: Int
    }

    /// `gatedToken`: the repo answers 401/403 unless this token is sent. `model`: serve the
    /// files of this directory instead (safetensors in LFS), e.g. a `TinyModel`.
    init(gatedToken: String? = nil, model: URL? = nil) throws {
        root = try TinyModel.temporaryDirectory()
        var files: [(String, [UInt8], Bool)] = [
            ("config.json", Array(#"{"model_type": "phi3"}"#.utf8), false),
            ("tokenizer.json", Array(#"{"version": "1.0"}"#.utf8), false),
            ("sub/extra.json", Array("{}".utf8), false),
            ("README.md", Array("# model\n".utf8), false),
            ("model.safetensors", Self.weights, true),
        ]
        if let model {
            files = try FileManager.default.contentsOfDirectory(atPath: model.path).sorted().map {
                (
                    $0, Array(try Data(contentsOf: model.appendingPathComponent($0))),
                    $0.hasSuffix(".safetensors")
                )
            }
        }
        var entries: [[String: Any]] = []
        for (index, (path, bytes, lfs)) in files.enumerated() {
            let source = root.appendingPathComponent("file\(index)")
            try Data(bytes).write(to: source)
            entries.append(["path": path, "source": source.path, "lfs": lfs])
        }
        var repo: [String: Any] = [
            "id": Self.repoID, "refs": ["main": Self.commit],
            "commits": [Self.commit: ["files": entries]],
        ]
        if let gatedToken { repo["gated_token"] = gatedToken }
        try JSONSerialization.data(withJSONObject: ["repos": [repo]])
            .write(to: root.appendingPathComponent("spec.json"))
        try Data("[]".utf8).write(to: root.appendingPathComponent("faults.json"))
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("PhiHubTests/Server/hub_server.py")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", script.path, "--spec", root.appendingPathComponent("spec.json").path,
            "--faults", root.appendingPathComponent("faults.json").path,
            "--log", root.appendingPathComponent("log.jsonl").path,
        ]
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let urls = try? JSONSerialization.jsonObject(with: line) as? [String: String]
        endpoint = urls?["hub"] ?? "http://127.0.0.1:9"  // no server: every test then fails loudly
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: root)
    }

    /// The environment of a phikit run against this server, with its own cache and store.
    var environment: [String: String] {
        [
            "HF_ENDPOINT": endpoint, "HF_HUB_CACHE": root.appendingPathComponent("cache").path,
            "PHIKIT_HOME": root.appendingPathComponent("store").path,
            "XDG_CONFIG_HOME": root.appendingPathComponent("config").path,
            "HF_TOKEN": "", "HF_HOME": root.appendingPathComponent("hf-home").path,
            "PHIKIT_RETRY_BASE_SECONDS": "0.01",
        ]
    }

    var repoDirectory: URL { root.appendingPathComponent("cache/models--org--model") }
    var snapshot: String { repoDirectory.appendingPathComponent("snapshots/" + Self.commit).path }

    func setFaults(_ json: String) throws {
        let path = root.appendingPathComponent("faults.json")
        try? FileManager.default.removeItem(at: path)
        try Data(json.utf8).write(to: path)
    }

    /// Answered requests in arrival order, once none is still being answered (at most 5 s).
    var requests: [Request] {
        let deadline = Date().addingTimeInterval(5)
        while true {
            let data = (try? Data(contentsOf: root.appendingPathComponent("log.jsonl"))) ?? Data()
            let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
            let starts = lines.filter { $0.contains(#""phase": "start""#) }.count
            let ends = lines.compactMap {
                try? JSONDecoder().decode(Request.self, from: Data($0.utf8))
            }
            if ends.count >= starts || Date() > deadline { return ends.sorted { $0.id < $1.id } }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    func clearLog() {
        try? FileManager.default.removeItem(at: root.appendingPathComponent("log.jsonl"))
    }
}
