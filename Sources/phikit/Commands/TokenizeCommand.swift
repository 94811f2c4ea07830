import Foundation
import PhiFormats
import PhiKit

/// `phikit tokenize MODEL [TEXT]`: the token ids of a text, or (`--decode`) the text of ids.
struct TokenizeCommand: Command {
    static let name = "tokenize"
    static let summary = "Show the token ids of a text, or decode ids back to text"
    static let usage = """
        phikit tokenize <model> [<text> | --file <path>] [--lines] [--json]
                        [--no-special-tokens] [--count] [--timings]
        phikit tokenize <model> --chat <conversation.json> [--json] [--count]
        phikit tokenize <model> --decode [<ids>] [--skip-special-tokens] [--json]
        """
    static let help = """
        Encodes <text> (default: stdin) with the model's tokenizer.json, exactly as the
        Hugging Face `tokenizers` library does, and prints the ids on one line, separated by
        spaces. With --decode, reads token ids (spaces, commas or a JSON array; default: stdin)
        and prints their text.

        arguments:
          <model>                  registry alias, Hub id or model directory
          <text>                   the text to encode (default: stdin)
          <ids>                    with --decode: the ids to decode (default: stdin)

        options:
          --file <path>            encode the contents of a file
          --chat <file.json>       render a conversation ([{"role": "user", "content": …}])
                                   with the model's chat template and the generation prompt,
                                   then encode it as `phikit run` does (--json adds "text")
          --lines                  encode each line on its own; print one line of ids per
                                   line (--json: {"ids": [[...], ...]})
          --json                   print {"ids": [...], "tokens": [...]} (with --decode:
                                   {"text": ...})
          --no-special-tokens      do not add what the tokenizer adds around a text (BOS)
          --count                  print only the number of tokens (with --json:
                                   {"count": n})
          --timings                print load and encode times to stderr
          --decode                 turn ids back into text
          --skip-special-tokens    with --decode: leave out special tokens such as <|end|>

        exit codes: 64 bad ids for --decode, 65 unsupported or broken tokenizer.json,
          66 model or tokenizer.json not found, 74 unreadable --file
        """

    var model: String
    var input: String?
    var file: String?
    var chat: String?
    var json: Bool
    var addSpecialTokens: Bool
    var countOnly: Bool
    var lines: Bool
    var timings: Bool
    var decode: Bool
    var skipSpecialTokens: Bool

    init(_ args: inout ArgumentReader) throws {
        file = try args.option("--file")
        chat = try args.option("--chat")
        json = args.flag("--json")
        addSpecialTokens = !args.flag("--no-special-tokens")
        countOnly = args.flag("--count")
        lines = args.flag("--lines")
        timings = args.flag("--timings")
        decode = args.flag("--decode")
        skipSpecialTokens = args.flag("--skip-special-tokens")
        model = try args.positional("model")
        input = args.optionalPositional()
        try args.finish()
        if input != nil, file != nil { throw UsageError("give either <text> or --file, not both") }
        if decode, file != nil || countOnly || !addSpecialTokens || lines {
            throw UsageError(
                "--decode takes ids; --file, --lines, --count and --no-special-tokens encode")
        }
        if !decode, skipSpecialTokens { throw UsageError("--skip-special-tokens needs --decode") }
        if chat != nil, input != nil || file != nil || decode || lines || !addSpecialTokens {
            throw UsageError(
                "--chat takes the conversation file alone (no <text>, --file, --lines, --decode "
                    + "or --no-special-tokens)")
        }
    }

    func run() throws {
        if let chat { return try runChat(chat) }
        let text = try input ?? readInput()
        if decode {
            let decoded = try PhiKit.detokenize(
                model: model, ids: text, skipSpecialTokens: skipSpecialTokens)
            try StandardOutput.print(json ? try Format.json(["text": decoded]) : decoded)
            return
        }
        if lines { return try runLines(text) }
        let result = try PhiKit.tokenize(
            model: model, text: text, addSpecialTokens: addSpecialTokens)
        try printEncoded(
            count: result.ids.count, bytes: text.utf8.count, load: result.loadSeconds,
            encode: result.encodeSeconds, json: Output(ids: result.ids, tokens: result.tokens)
        ) { result.ids.map(String.init).joined(separator: " ") }
    }

    private func runChat(_ conversationFile: String) throws {
        let result = try PhiKit.tokenizeChat(model: model, conversationFile: conversationFile)
        try printEncoded(
            count: result.ids.count, bytes: result.text.utf8.count, load: result.loadSeconds,
            encode: result.encodeSeconds,
            json: ChatOutput(ids: result.ids, tokens: result.tokens, text: result.text)
        ) { result.ids.map(String.init).joined(separator: " ") }
    }

    /// What every encoding prints: `--timings` on stderr, then the token count alone
    /// (`--count`, `{"count": n}` with --json), the JSON (`--json`) or the plain ids.
    private func printEncoded(
        count: Int, bytes: Int, load: Double, encode: Double, json value: some Encodable,
        plain: () -> String
    ) throws {
        if timings { report(load, encode, bytes, count) }
        if countOnly {
            try StandardOutput.print(json ? try Format.json(["count": count]) : String(count))
        } else if json {
            try StandardOutput.print(try Format.json(value))
        } else {
            try StandardOutput.print(plain())
        }
    }

    private func runLines(_ text: String) throws {
        let result = try PhiKit.tokenizeLines(
            model: model, text: text, addSpecialTokens: addSpecialTokens)
        try printEncoded(
            count: result.ids.reduce(0) { $0 + $1.count }, bytes: text.utf8.count,
            load: result.loadSeconds, encode: result.encodeSeconds, json: ["ids": result.ids]
        ) { result.ids.map { $0.map(String.init).joined(separator: " ") }.joined(separator: "\n") }
    }

    /// `--timings`, on stderr: `load 61.2 ms, encode 312.5 ms, 3500000 bytes, 812345 tokens`.
    private func report(_ load: Double, _ encode: Double, _ bytes: Int, _ tokens: Int) {
        Diagnostics.text(
            "load \(Format.fixed(load * 1000, decimals: 1)) ms, encode "
                + "\(Format.fixed(encode * 1000, decimals: 1)) ms, \(bytes) bytes, \(tokens) tokens"
        )
    }

    private struct Output: Encodable {
        var ids: [Int]
        var tokens: [String]
    }

    private struct ChatOutput: Encodable {
        var ids: [Int]
        var tokens: [String]
        var text: String
    }

    /// `--file`, else all of stdin; invalid UTF-8 is replaced (U+FFFD), as Python would with
    /// errors="replace".
    private func readInput() throws -> String {
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw InputError(path: file)
            }
            return String(decoding: data, as: UTF8.self)
        }
        return String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
    }

    struct InputError: UserFacingError {
        var path: String
        var message: String { "\(path): cannot read the file" }
        var exitCode: ExitCode {
            FileManager.default.fileExists(atPath: path) ? .ioError : .noInput
        }
    }
}
