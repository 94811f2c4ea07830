import Foundation
import Testing

/// `run --json-schema / --regex / --grammar / --json-object` and chat's `/format` on the
/// bundled stories-260k and a tiny random-weight chat model: every answer parses and follows
/// its format (checked here structurally: keys, types, bounds, enum values), greedy
/// constrained output differs from the free one yet is valid, and what the engine cannot
/// enforce is exit 64 naming it.
@Suite("phikit run/chat: structured output")
struct StructuredOutputCLITests {
    /// The answer of `run stories-260k` with `arguments`, greedy, checked to have succeeded.
    static func answer(_ arguments: [String], prompt: String = "Once upon a time") throws -> String {
        let r = try Phikit.run(["run", "stories-260k", "-p", prompt, "-m", "120", "--json"] + arguments)
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        return try #require(object["text"] as? String)
    }

    static func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    @Test("--json-schema: an object with typed, bounded and enumerated members")
    func objectSchema() throws {
        let schema = """
            {"type": "object", "properties": {
              "name": {"type": "string", "minLength": 1, "maxLength": 12},
              "age": {"type": "integer", "minimum": 0, "maximum": 120},
              "mood": {"enum": ["happy", "sad", "sleepy"]},
              "pets": {"type": "array", "items": {"type": "boolean"}, "maxItems": 3}},
             "required": ["name", "age", "mood", "pets"], "additionalProperties": false}
            """
        let text = try Self.answer(["--json-schema", schema])
        let object = try #require(try Self.json(text) as? [String: Any], "not an object: \(text)")
        #expect(Set(object.keys) == ["name", "age", "mood", "pets"], "\(text)")
        let name = try #require(object["name"] as? String)
        #expect((1...12).contains(name.count))
        let age = try #require(object["age"] as? Int)
        #expect((0...120).contains(age))
        #expect(["happy", "sad", "sleepy"].contains(object["mood"] as? String ?? ""))
        let pets = try #require(object["pets"] as? [Any])
        #expect(pets.count <= 3 && pets.allSatisfy { $0 is Bool })
    }

    @Test("--json-schema from a file: a tuple, and a string of a pattern")
    func fileSchemas() throws {
        let dir = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("schema.json")
        try #"""
            {"type": "array", "prefixItems": [{"type": "string", "pattern": "^[a-z]{2,5}$"},
              {"type": "number"}, {"const": null}], "items": false, "minItems": 3}
            """#.write(to: file, atomically: true, encoding: .utf8)
        let text = try Self.answer(["--json-schema", file.path])
        let array = try #require(try Self.json(text) as? [Any], "not an array: \(text)")
        #expect(array.count == 3, "\(text)")
        let word = try #require(array.first as? String)
        #expect(word.range(of: "^[a-z]{2,5}$", options: .regularExpression) != nil)
        #expect(array.count > 1 && array[1] is NSNumber && !(array[1] is Bool))
        #expect(array.count > 2 && array[2] is NSNull)
        #expect(try Self.answer(["--json-object"]).hasPrefix("{"))
    }

    @Test("--regex: the whole answer matches; greedy differs from the free answer")
    func regex() throws {
        let free = try Self.answer([])
        let pattern = "(Tom|Sue) (likes|hates) [a-z]{2,8}\\."
        let text = try Self.answer(["--regex", pattern])
        let regex = try NSRegularExpression(pattern: "^" + pattern + "$")
        let whole = NSRange(text.startIndex..., in: text)
        #expect(regex.firstMatch(in: text, range: whole) != nil, "\(text)")
        #expect(text != free)
    }

    @Test("--grammar: a GBNF file")
    func grammar() throws {
        let dir = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("answer.gbnf")
        try #"""
            root ::= "The " animal " is " colour "."
            animal ::= "cat" | "dog" | "bird"
            colour ::= [a-z]{1,10}
            """#.write(to: file, atomically: true, encoding: .utf8)
        let text = try Self.answer(["--grammar", file.path])
        #expect(text.range(of: "^The (cat|dog|bird) is [a-z]{1,10}\\.$", options: .regularExpression) != nil,
                "\(text)")
    }

    @Test("--max-tokens closes an unbounded array in time; below the shortest answer it is exit 64")
    func budget() throws {
        let schema = #"{"type": "object", "properties": {"words": {"type": "array", "items": {"type": "string"}}}, "required": ["words"]}"#
        for maxTokens in ["12", "30"] {
            let r = try Phikit.run(
                ["run", "stories-260k", "-p", "Once upon a time", "-m", maxTokens, "--json",
                 "--json-schema", schema])
            #expect(r.status == 0, "stderr: \(r.stderr)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            let text = try #require(object["text"] as? String)
            let answer = try #require(try Self.json(text) as? [String: Any], "-m \(maxTokens): \(text)")
            #expect(answer["words"] is [String], "\(text)")
        }
        let r = try Phikit.run(["run", "stories-260k", "-p", "x", "-m", "5", "--json-schema", schema])
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("error: --max-tokens 5") && r.stderr.contains("at least 12"), "\(r.stderr)")
    }

    @Test("what cannot be enforced is exit 64 naming it; the flags exclude each other",
          arguments: [
            (["--json-schema", #"{"type": "string", "not": {"const": "x"}}"#], "not"),
            (["--json-schema", #"{"type": "object""#], "JSON"),
            (["--regex", "(a)\\1"], "backreference"),
            (["--regex", "a", "--json-object"], "--json-schema"),
          ])
    func refused(_ arguments: [String], _ named: String) throws {
        let r = try Phikit.run(["run", "stories-260k", "-p", "x", "-m", "4"] + arguments)
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("error:") && r.stderr.contains(named), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    @Test("a missing --json-schema or --grammar file is exit 66")
    func missingFile() throws {
        for flag in ["--json-schema", "--grammar"] {
            let r = try Phikit.run(["run", "stories-260k", "-p", "x", flag, "/nonexistent/s.json"])
            #expect(r.status == 66, "\(flag): \(r.stderr)")
            #expect(r.stderr.contains("/nonexistent/s.json"))
        }
    }

    @Test("chat: /format json and schema shape the next answers, /format off frees them")
    func chatFormat() throws {
        let dir = try ChatTinyModel.phi35.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let schema = #"{"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}"#
        let input = [
            "/format json", "Hi", "/format schema \(schema)", "Hello", "/format", "/format off",
            "Hey", "/format yaml",
        ].joined(separator: "\n") + "\n"
        let r = try Phikit.run(["chat", dir.path, "-m", "40"], stdin: input)
        let answers = r.stdout.components(separatedBy: "\n\n").filter { !$0.isEmpty }
        // Random weights: any object may run past -m, so the first is only checked to start
        // as one; the schema's answer is bounded and must be whole.
        #expect(answers.count >= 3, "\(r.stdout)")
        guard answers.count >= 3 else { return }
        #expect(answers[0].hasPrefix("{"), "\(answers[0])")
        let object = try #require(try Self.json(answers[1]) as? [String: Any], "\(answers[1])")
        #expect(object.count == 1 && object["ok"] is Bool)
        #expect(r.stderr.contains("no answer format 'yaml'"))
        #expect(r.status == 64)  // the refused /format yaml, on a pipe
    }
}
