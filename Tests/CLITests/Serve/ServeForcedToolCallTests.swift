import Foundation
import Testing

/// `tool_choice` "required" and a named function on a random-weight Phi-4-mini-shaped model
/// (the real tokenizer and template, weights that favour no syntax at all): sampled answers
/// always come out as calls whose arguments follow the tool's `parameters`, through chat
/// completions and Anthropic's Messages alike — the engine's constraint, not luck.
@Suite("phikit serve: forced tool calls", .tags(.slow), .skippedWhenFast)
struct ServeForcedToolCallTests {
    static var weatherParameters: [String: Any] {
        [
            "type": "object",
            "properties": [
                "city": ["type": "string", "maxLength": 12],
                "unit": ["enum": ["c", "f"]],
                "days": ["type": "integer", "minimum": 1, "maximum": 7],
            ],
            "required": ["city", "unit"], "additionalProperties": false,
        ]
    }
    static var alarmParameters: [String: Any] {
        [
            "type": "object",
            "properties": [
                "hour": ["type": "integer", "minimum": 0, "maximum": 23], "on": ["type": "boolean"],
            ],
            "required": ["hour", "on"], "additionalProperties": false,
        ]
    }
    static var tools: [[String: Any]] {
        [
            ["type": "function", "function": ["name": "get_weather", "parameters": weatherParameters]],
            ["type": "function", "function": ["name": "set_alarm", "parameters": alarmParameters]],
        ]
    }
    static let messages = [["role": "user", "content": "Weather in Paris, and wake me at 7"]]

    /// Whether `arguments` (a JSON text, or an object already decoded) follows the tool's
    /// parameters above: the checks `jsonschema` would make for these two schemas (lengths
    /// in code points, as Python counts them).
    static func valid(_ name: String, _ arguments: Any?) -> Bool {
        var object = arguments as? [String: Any]
        if let text = arguments as? String {
            object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        }
        guard let object else { return false }
        func integer(_ key: String, _ range: ClosedRange<Int>) -> Bool {
            guard let value = object[key] else { return true }
            // An integer prints as one (a Bool prints "true", a fraction has a point).
            return Int("\(value)").map(range.contains) ?? false
        }
        switch name {
        case "get_weather":
            guard Set(object.keys).isSubset(of: ["city", "unit", "days"]),
                let city = object["city"] as? String, city.unicodeScalars.count <= 12,
                ["c", "f"].contains(object["unit"] as? String ?? "")
            else { return false }
            return integer("days", 1...7)
        case "set_alarm":
            guard Set(object.keys) == ["hour", "on"], object["on"] is Bool else { return false }
            return integer("hour", 0...23)
        default:
            return false
        }
    }

    @Test("sampled answers of a random model are always calls with valid arguments")
    func alwaysValid() throws {
        let model = try TinyChatModel.phi4mini.write(seed: 29)
        defer { try? FileManager.default.removeItem(at: model) }
        let server = try ServeProcess(model.path)
        let choices: [Any] = [
            "required", ["type": "function", "function": ["name": "set_alarm"]],
        ]
        var names: Set<String> = []
        for (c, choice) in choices.enumerated() {
            for seed in 0..<4 {
                let (status, body) = try server.post(
                    "/v1/chat/completions",
                    [
                        "messages": Self.messages, "tools": Self.tools, "tool_choice": choice,
                        "parallel_tool_calls": false, "temperature": 1, "seed": seed,
                        "max_tokens": 400,
                    ])
                #expect(status == 200)
                let answer = try #require((body["choices"] as? [[String: Any]])?.first)
                #expect(answer["finish_reason"] as? String == "tool_calls", "choice \(c) seed \(seed): \(answer)")
                let message = answer["message"] as? [String: Any]
                let calls = message?["tool_calls"] as? [[String: Any]] ?? []
                #expect(calls.count == 1)
                let function = calls.first?["function"] as? [String: Any]
                let name = function?["name"] as? String ?? ""
                names.insert(name)
                if c == 1 { #expect(name == "set_alarm") }
                #expect(Self.valid(name, function?["arguments"]), "seed \(seed): \(function ?? [:])")
            }
        }
        #expect(names.contains("set_alarm"))

        // Anthropic's Messages: tool_choice "any" comes through the same engine constraint.
        for _ in 0..<2 {  // no seed in this API: two draws of the model's own
            let (status, body) = try server.post(
                "/v1/messages",
                [
                    "model": model.path, "max_tokens": 400, "messages": Self.messages,
                    "temperature": 1,
                    "tools": [
                        ["name": "get_weather", "input_schema": Self.weatherParameters],
                        ["name": "set_alarm", "input_schema": Self.alarmParameters],
                    ],
                    "tool_choice": ["type": "any", "disable_parallel_tool_use": true],
                ])
            #expect(status == 200, "\(body)")
            let blocks = body["content"] as? [[String: Any]] ?? []
            let uses = blocks.filter { $0["type"] as? String == "tool_use" }
            #expect(body["stop_reason"] as? String == "tool_use" && uses.count == 1, "\(body)")
            for use in uses { #expect(Self.valid(use["name"] as? String ?? "", use["input"]), "\(use)") }
        }

        // Parameters the engine cannot enforce are refused, naming the keyword.
        let (refused, error) = try server.post(
            "/v1/chat/completions",
            [
                "messages": Self.messages, "tool_choice": "required",
                "tools": [["type": "function", "function": ["name": "f", "parameters": ["type": "object", "minProperties": 1]]]],
            ])
        #expect(refused == 400)
        let detail = error["error"] as? [String: Any]
        #expect(detail?["param"] as? String == "tools")
        #expect((detail?["message"] as? String)?.contains("minProperties") == true)
        #expect(server.stop() == 0)
    }
}
