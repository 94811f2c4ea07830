import PhiFormats

/// What a request asks the answer to look like; `compile()` turns it into the grammar a
/// `GrammarMatcher` enforces. Front ends (run, chat, serve) build one of these from their
/// flags or request fields and never see grammars.
public enum OutputFormat: Sendable, Equatable {
    /// Any JSON object (OpenAI's `{"type": "json_object"}`).
    case jsonObject
    /// JSON valid against the schema (the subset in docs/structured-output.md).
    case jsonSchema(JSONValue)
    /// Text the regular expression matches as a whole.
    case regex(String)
    /// Text llama.cpp's grammar format (GBNF) accepts from `root`.
    case grammar(String)

    /// `maxWhitespace` bounds whitespace between JSON tokens (0: compact).
    public func compile(maxWhitespace: Int = 0) throws(ConstraintError) -> Grammar {
        switch self {
        case .jsonObject:
            return try JSONSchemaCompiler.grammar(
                .object([(key: "type", value: .string("object"))]), maxWhitespace: maxWhitespace)
        case .jsonSchema(let schema):
            return try JSONSchemaCompiler.grammar(schema, maxWhitespace: maxWhitespace)
        case .regex(let pattern): return try RegexCompiler.grammar(pattern)
        case .grammar(let text): return try GBNFCompiler.grammar(text)
        }
    }

    /// A schema given as JSON text (a file's contents or a request field).
    public static func jsonSchema(text: String) throws(ConstraintError) -> OutputFormat {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: Array(text.utf8))
        } catch {
            throw ConstraintError(
                "the JSON schema is not valid JSON: \(error.reason)",
                hint: error.kind == .tooDeep ? "phikit reads schemas nested at most \(JSONValue.maxDepth) levels" : nil)
        }
        return .jsonSchema(value)
    }
}
