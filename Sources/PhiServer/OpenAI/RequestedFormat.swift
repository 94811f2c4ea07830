import PhiEngine
import PhiFormats

/// The shape a request asks the answer to have (structured output), read from each API's
/// field and compiled at once, so a schema keyword phikit does not enforce is a 400 naming
/// it before anything is queued. The grammar is matched token by token in the slot
/// (`GenerationRequest.makeConstraint`).
enum RequestedFormat {
    /// OpenAI's `response_format` (`text`, `json_object`, `json_schema`) and llama-server's
    /// `json_schema` (a schema) and `grammar` (GBNF) fields; at most one of them.
    static func read(_ f: RequestFields) throws(APIError) -> Grammar? {
        var found: [(param: String, format: OutputFormat)] = []
        if let format = try f.object("response_format") {
            let type = try format.string("type") ?? "text"
            switch type {
            case "text": break
            case "json_object": found.append(("response_format", .jsonObject))
            case "json_schema":
                guard let wrapper = try format.object("json_schema") else {
                    throw .invalidRequest(
                        "'response_format' of type \"json_schema\" needs 'json_schema': "
                            + "{\"name\", \"schema\"}", param: "response_format",
                        code: "missing_required_parameter")
                }
                found.append(("response_format", try schema(wrapper, param: "response_format")))
            default:
                throw .invalidRequest(
                    "'response_format.type' must be \"text\", \"json_object\" or "
                        + "\"json_schema\", not \"\(type)\"", param: "response_format",
                    code: "invalid_value")
            }
        }
        if let schema = f.value("json_schema") {
            guard case .object = schema else {
                throw .invalidType("json_schema", expected: "an object (a JSON schema)")
            }
            found.append(("json_schema", .jsonSchema(schema)))
        }
        if let grammar = try f.string("grammar") { found.append(("grammar", .grammar(grammar))) }
        guard found.count <= 1 else {
            throw .invalidRequest(
                "give one of " + found.map { "'\($0.param)'" }.joined(separator: ", ")
                    + ": each sets the whole answer's shape", param: found[1].param,
                code: "invalid_value")
        }
        guard let (param, format) = found.first else { return nil }
        return try compile(format, param: param)
    }

    /// `{"schema": {...}, "name", "strict"}`: OpenAI's `json_schema` object, and the
    /// Responses API's `text.format` (the same fields, one level up). `strict` may be either:
    /// the schema is always enforced.
    static func schema(_ f: RequestFields, param: String) throws(APIError) -> OutputFormat {
        _ = try f.string("name")
        _ = try f.string("description")
        _ = try f.bool("strict")
        guard let schema = try f.object("schema") else {
            throw .invalidRequest(
                "'\(f.path).schema' is missing: give the JSON schema the answer must follow",
                param: param, code: "missing_required_parameter")
        }
        return .jsonSchema(schema.object)
    }

    /// The format's grammar; what it cannot enforce is a 400 naming the keyword or pattern.
    static func compile(_ format: OutputFormat, param: String) throws(APIError) -> Grammar {
        do {
            return try format.compile()
        } catch {
            let hint = error.hint.map { " (\($0))" } ?? ""
            throw .invalidRequest(error.message + hint, param: param, code: "unsupported_value")
        }
    }
}
