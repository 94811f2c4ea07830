import Foundation
import PhiFormats
import PhiText

/// What `phikit tokenize` shows: the ids of a text and their token strings, plus how long
/// loading and encoding took (for `--timings` and the tokenizer benchmark).
public struct TokenizeResult: Sendable {
    public var ids: [Int]
    public var tokens: [String]
    /// The text that was encoded (a rendered chat prompt is shown with `--json`).
    public var text: String
    public var loadSeconds: Double
    public var encodeSeconds: Double
}

/// `--decode` input that is not a list of token ids of this tokenizer.
public enum TokenIDError: UserFacingError, Equatable {
    case notAnID(String)
    case outOfRange(id: Int, vocabularySize: Int)

    public var message: String {
        switch self {
        case .notAnID(let word): "'\(word)' is not a token id"
        case .outOfRange(let id, let size):
            "token id \(id) is outside this tokenizer's vocabulary (0…\(size - 1))"
        }
    }

    public var hint: String? {
        switch self {
        case .notAnID: "give ids separated by spaces or commas, or as a JSON array: 15043 3186"
        case .outOfRange: "were the ids made with another model's tokenizer?"
        }
    }

    /// The ids come from the user, not from the model files: a usage error.
    public var exitCode: ExitCode { .usage }
}

/// Loads MODEL's tokenizer (MODEL as every command takes it: directory, alias or Hub id).
public func loadTokenizer(model: String) throws -> (Tokenizer, seconds: Double) {
    let located = try ModelLocator.locate(model)
    let start = DispatchTime.now().uptimeNanoseconds
    let tokenizer = try Tokenizer.load(directory: located.directory)
    return (tokenizer, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
}

/// The ids of `text` under MODEL's tokenizer. `addSpecialTokens` lets the tokenizer add what
/// its post-processor adds (BOS for Phi-3.5).
public func tokenize(
    model: String, text: String, addSpecialTokens: Bool = true
) throws
    -> TokenizeResult
{
    let (tokenizer, loadSeconds) = try loadTokenizer(model: model)
    let start = DispatchTime.now().uptimeNanoseconds
    let ids = try tokenizer.encode(text, addSpecialTokens: addSpecialTokens)
    let encodeSeconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    return TokenizeResult(
        ids: ids, tokens: ids.map { tokenizer.token(for: $0) ?? "" }, text: text,
        loadSeconds: loadSeconds, encodeSeconds: encodeSeconds)
}

/// A conversation (`--chat FILE.json`) rendered with MODEL's chat template and the generation
/// prompt, then encoded as `run` encodes it (see `ChatPrompt`).
public func tokenizeChat(model: String, conversationFile: String) throws -> TokenizeResult {
    let conversation = try ChatPrompt.conversation(fromFile: conversationFile)
    let located = try ModelLocator.locate(model)
    let start = DispatchTime.now().uptimeNanoseconds
    let tokenizer = try Tokenizer.load(directory: located.directory)
    guard let template = try ChatTemplate.load(modelDirectory: located.directory) else {
        throw ChatPromptError.noChatTemplate(directory: located.directory)
    }
    let loaded = DispatchTime.now().uptimeNanoseconds
    let prompt = try ChatPrompt.render(
        conversation: conversation, template: template, tokenizer: tokenizer)
    let end = DispatchTime.now().uptimeNanoseconds
    return TokenizeResult(
        ids: prompt.ids, tokens: prompt.ids.map { tokenizer.token(for: $0) ?? "" },
        text: prompt.text, loadSeconds: Double(loaded - start) / 1e9,
        encodeSeconds: Double(end - loaded) / 1e9)
}

/// Each line of `text` encoded on its own (no line ends), as `tokenizers`' `encode_batch`
/// would: for files with one text per line.
public func tokenizeLines(
    model: String, text: String, addSpecialTokens: Bool = true
) throws
    -> (ids: [[Int]], loadSeconds: Double, encodeSeconds: Double)
{
    let (tokenizer, loadSeconds) = try loadTokenizer(model: model)
    let start = DispatchTime.now().uptimeNanoseconds
    // Split on LF bytes: a Swift Character would keep "\r\n" together.
    var lines = text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false)
    if text.utf8.last == 0x0A { lines.removeLast() }
    let ids = try lines.map {
        try tokenizer.encode(
            String(decoding: $0, as: UTF8.self), addSpecialTokens: addSpecialTokens)
    }
    let encodeSeconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    return (ids, loadSeconds, encodeSeconds)
}

/// Parses ids written as `1 2 3`, `1,2,3` or `[1, 2, 3]` and checks each against the
/// tokenizer's vocabulary.
public func parseTokenIDs(_ text: String, vocabularySize: Int) throws(TokenIDError) -> [Int] {
    var body = text.trimmingCharacters(in: .whitespacesAndNewlines)
    if body.hasPrefix("["), body.hasSuffix("]") { body = String(body.dropFirst().dropLast()) }
    let words = body.split { $0 == "," || $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
    var ids: [Int] = []
    for word in words {
        guard let id = Int(word) else { throw .notAnID(String(word)) }
        guard id >= 0, id < vocabularySize else {
            throw .outOfRange(id: id, vocabularySize: vocabularySize)
        }
        ids.append(id)
    }
    return ids
}

/// The text of ids written as `parseTokenIDs` reads them.
public func detokenize(
    model: String, ids text: String, skipSpecialTokens: Bool = false
) throws
    -> String
{
    let (tokenizer, _) = try loadTokenizer(model: model)
    let ids = try parseTokenIDs(text, vocabularySize: tokenizer.vocabularySize)
    return tokenizer.decode(ids, skipSpecialTokens: skipSpecialTokens)
}
