import Foundation
import PhiEngine
import PhiFormats

/// `--json-schema FILE|JSON`, `--regex PATTERN`, `--grammar FILE`, `--json-object`: the
/// structured-output flags `run` and `chat` share (at most one). The format is compiled here,
/// before any model loads, so an unsupported keyword or a bad pattern is exit 64 at once.
enum OutputFormatFlags {
    static let help = """
          --json-schema <s>        answer with JSON valid against the schema: a file, or
                                   the schema itself when it begins with `{` (the subset
                                   in docs/structured-output.md; other keywords are refused)
          --json-object            answer with any JSON object
          --regex <pattern>        answer with text the pattern matches as a whole
          --grammar <file>         answer with text a GBNF grammar (llama.cpp's) accepts
        """

    static func read(_ args: inout ArgumentReader) throws -> OutputFormat? {
        let schema = try args.textOption("--json-schema")
        let regex = try args.textOption("--regex")
        let grammar = try args.option("--grammar")
        let object = args.flag("--json-object")
        let given = [schema != nil, regex != nil, grammar != nil, object].filter { $0 }.count
        guard given <= 1 else {
            throw UsageError("--json-schema, --json-object, --regex and --grammar exclude each other")
        }
        let format: OutputFormat? =
            if let schema { try jsonSchema(schema) }
            else if let regex { .regex(regex) }
            else if let grammar { .grammar(try readFile(grammar, flag: "--grammar")) }
            else if object { .jsonObject } else { nil }
        if let format { try check(format) }
        return format
    }

    /// A schema given inline (it begins with `{`) or as a file.
    static func jsonSchema(_ value: String) throws -> OutputFormat {
        let inline = value.drop { $0.isWhitespace }.hasPrefix("{")
        return try OutputFormat.jsonSchema(
            text: inline ? value : try readFile(value, flag: "--json-schema"))
    }

    /// Compiles the format once to refuse what it cannot enforce (exit 64, naming it).
    static func check(_ format: OutputFormat) throws {
        _ = try format.compile()
    }

    static func readFile(_ path: String, flag: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FormatFileError(path: path, flag: flag)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw FormatFileError(path: path, flag: flag)
        }
        return text
    }
}

/// A `--json-schema` or `--grammar` file that is missing (66) or unreadable (74).
struct FormatFileError: UserFacingError {
    var path: String
    var flag: String
    var message: String {
        FileManager.default.fileExists(atPath: path)
            ? "cannot read \(flag) file \(path) as UTF-8 text"
            : "\(path): no such \(flag) file"
    }
    var hint: String? { flag == "--json-schema" ? "give a file, or the schema itself ({...})" : nil }
    var exitCode: ExitCode { FileManager.default.fileExists(atPath: path) ? .ioError : .noInput }
}
