import Foundation
import TestSupport
import Testing

/// Issue 27: chat templates that killed `tokenize --chat` (and every command that renders a
/// template) with SIGILL, SIGSEGV or the kernel's OOM killer now end in a template error, or
/// render what jinja2 renders.
@Suite("chat templates that crashed the process")
struct TemplateTrapsCLITests {
    /// `tokenize --chat` on the bundled model given `template`.
    static func tokenize(_ template: String) throws -> PhikitResult {
        let dir = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = dir.appendingPathComponent("model")
        try FileManager.default.copyItem(at: TestPaths.storiesModel, to: model)
        try Data(template.utf8).write(to: model.appendingPathComponent("chat_template.jinja"))
        let conversation = dir.appendingPathComponent("chat.json")
        try Data(#"[{"role": "user", "content": "hi"}]"#.utf8).write(to: conversation)
        return try Phikit.run(["tokenize", model.path, "--chat", conversation.path, "--json"])
    }

    @Test(
        "a self-holding namespace, a doubled string, a deep value: template errors",
        arguments: [
            "{% set ns = namespace(s='a') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
            "{% set ns = namespace(x=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}",
        ])
    func refused(_ template: String) throws {
        let r = try Self.tokenize(template)
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("error: chat template "), "\(r.stderr)")
        #expect(r.stderr.contains("rendering budget"), "\(r.stderr)")
    }

    @Test(
        "integer edges and self-reference render as jinja2 renders them",
        arguments: [
            ("{{ (-2**63) is divisibleby(-1) }}|{{ 'abc'|center(-2**63) }}", "True|abc"),
            (
                "{% set ns = namespace() %}{% set ns.x = ns %}{{ ns }}",
                "<Namespace {'x': <Namespace {...}>}>"
            ),
        ])
    func rendered(_ template: String, _ expected: String) throws {
        let r = try Self.tokenize(template)
        #expect(r.status == 0, "\(r.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect(object?["text"] as? String == expected, "\(r.stdout)")
    }
}
