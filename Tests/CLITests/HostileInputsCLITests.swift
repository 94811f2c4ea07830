import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 17's contract, second round: hostile arguments, tokenizers, chat templates and the
/// files around a model (registry, token, conversation). Every one is refused with exit
/// 1…127 and an `error:` line, never a signal or a hang, and the model's folder is left as
/// it was (`Hostile.expectRefused` and `unchanged`).
@Suite("hostile arguments, tokenizers, templates and side files")
struct HostileInputsCLITests {
    /// Names and sizes of every file under `dir`, to show a refused command wrote nothing.
    private func tree(_ dir: URL) -> [String] {
        let files = FileManager.default.enumerator(atPath: dir.path)?.allObjects as? [String]
        return (files ?? []).sorted().map { name in
            let size =
                (try? FileManager.default.attributesOfItem(
                    atPath: dir.appendingPathComponent(name).path))?[.size] as? NSNumber
            return "\(name) \(size?.intValue ?? -1)"
        }
    }

    static let stories = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("models/stories-260k").path

    @Test(
        "values no command can use are usage errors",
        arguments: [
            ["run", stories, "-p", "hi", "-m", "-1"],
            ["run", stories, "-p", "hi", "--temp", "nan"],
            ["run", stories, "-p", "hi", "--top-p", "2"],
            ["run", stories, "-p", "hi", "--threads", "0"],
            ["run", stories, "-p", "hi", "--threads", "99999999999999999999"],
            ["run", stories, "-p", "hi", "--repetition-penalty", "0"], ["run", "", "-p", "hi"],
            ["verify", ""], ["tokenize", stories, "--decode", "99999999999999999999"],
            ["serve", stories, "--port", "99999"], ["convert", stories, "-o", ""],
            ["rm", ""],
        ])
    func hostileArguments(arguments: [String]) throws {
        try Hostile.expectRefused(arguments, timeout: 30, status: 64)
    }

    /// stories-260k's tokenizer.json with the first `target` replaced.
    private static func tokenizer(_ target: String, _ replacement: String) -> String {
        let text = (try? String(contentsOfFile: stories + "/tokenizer.json", encoding: .utf8)) ?? ""
        return text.replacingOccurrences(
            of: target, with: replacement, range: text.range(of: target))
    }

    @Test(
        "a hostile tokenizer.json is bad model data (65) for tokenize and run",
        arguments: [
            ("duplicate key", tokenizer("\"version\"", "\"padding\": null, \"version\"")),
            ("byte-order mark", "\u{FEFF}" + tokenizer("{", "{")),
            (
                "a regex cut off after a backslash (a fuzz finding)",
                tokenizer(
                    "\"pre_tokenizer\": null",
                    #""pre_tokenizer": {"type": "Split", "pattern": {"Regex": "[^\\"}, "#
                        + #""behavior": "Isolated", "invert": false}"#)
            ),
            (
                "a 70,000-byte token",
                tokenizer(
                    "\"<0x00>\": 3,",
                    "\"<0x00>\": 3, \"" + String(repeating: "a", count: 70_000) + "\": 9999,")
            ),
        ])
    func hostileTokenizer(what: String, text: String) throws {
        let model = try Hostile.storiesCopy()
        defer { try? FileManager.default.removeItem(at: model.deletingLastPathComponent()) }
        try Data(text.utf8).write(to: model.appendingPathComponent("tokenizer.json"))
        let before = tree(model)
        for command in [["tokenize", model.path, "hi"], ["run", model.path, "-p", "hi"]] {
            try Hostile.expectRefused(
                command, timeout: 60, status: 65, mentioning: "tokenizer.json")
        }
        #expect(tree(model) == before, "\(what)")
    }

    @Test(
        "a hostile chat template stops with 65, not a trap, an abort or a hang",
        arguments: [
            "{{ 'a' * 10**12 }}", "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}",
            "{{ 2 ** 9223372036854775807 }}", "{{ (-9223372036854775807 - 1) // -1 }}",
            "{{ '%.99999f' % 1.5 }}", "{{ " + String(repeating: "1 + ", count: 20_000) + "1 }}",
        ])
    func hostileTemplate(template: String) throws {
        let model = try Hostile.storiesCopy()
        let work = model.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: work) }
        try Data(template.utf8).write(to: model.appendingPathComponent("chat_template.jinja"))
        let conversation = work.appendingPathComponent("conversation.json")
        try Data(#"[{"role": "user", "content": "hi"}]"#.utf8).write(to: conversation)
        let before = tree(model)
        try Hostile.expectRefused(
            ["run", model.path, "--chat", conversation.path], timeout: 90, status: 65)
        try Hostile.expectRefused(
            ["chat", model.path], stdin: "hi\n", timeout: 90, status: 65)
        #expect(tree(model) == before)
    }

    @Test("a FIFO or a directory as registry.json, the token file or a --chat file")
    func hostileSideFiles() throws {
        let hub = try HubServerProcess()
        let model = try Hostile.storiesCopy()
        defer { try? FileManager.default.removeItem(at: model.deletingLastPathComponent()) }
        try Data("{% for m in messages %}{{ m.content }}{% endfor %}".utf8).write(
            to: model.appendingPathComponent("chat_template.jinja"))
        let fifo = hub.root.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let folder = hub.root.appendingPathComponent("folder").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (path, kind) in [(fifo, "a FIFO"), (folder, "a directory")] {
            try Hostile.expectRefused(
                ["list", "--available"], environment: ["PHIKIT_REGISTRY": path], timeout: 30,
                mentioning: kind)
            try Hostile.expectRefused(
                ["pull", "org/model"],
                environment: hub.environment.merging(
                    ["HF_TOKEN_PATH": path]) { $1 }, timeout: 30, status: 65, mentioning: kind)
            try Hostile.expectRefused(
                ["run", model.path, "--chat", path], timeout: 30, status: 65, mentioning: kind)
            try Hostile.expectRefused(
                ["tokenize", model.path, "--chat", path], timeout: 30, status: 65,
                mentioning: kind)
        }
        // The refused pulls fetched nothing.
        #expect(!hub.requests.contains { $0.path.contains("/resolve/") })
    }
}
