import Foundation
import PhiFormats

/// A Hugging Face `tokenizers` tokenizer read from tokenizer.json: the same ids as the
/// `tokenizers` library for any text, and the same text back from `decode`.
///
/// The pipeline is the library's: added tokens are cut out of the raw text, the rest is
/// normalized (where normalized added tokens are cut out next), pre-tokenized into words, and
/// each word is encoded by the BPE model; the post-processor then adds BOS/EOS. Components
/// phikit does not implement make `init` throw rather than tokenize differently.
public final class Tokenizer: Sendable {
    let normalizer: Normalizer?
    let preTokenizer: PreTokenizer?
    let model: BPEModel
    let postProcessor: PostProcessor?
    let decoder: TokenDecoder?
    /// Added tokens matched against the raw input / against normalized text.
    let rawMatcher: AddedTokenMatcher
    let normalizedMatcher: AddedTokenMatcher
    let addedByID: [Int: AddedToken]
    let addedIDByContent: [String: Int]
    /// Contents of the special added tokens (decode skips tokens whose string is one).
    let specialContents: Set<String>

    /// All added tokens, by id (with the ids tokenizers gives them).
    public let addedTokens: [AddedToken]
    /// Token strings of normalized added tokens whose normalized form differs from their
    /// content: tokenizers shows and decodes that form.
    let addedTokenStrings: [Int: String]
    /// Where the tokenizer was read from, for messages.
    public let source: String

    /// Reads `<directory>/tokenizer.json`.
    public static func load(directory: String) throws -> Tokenizer {
        let path = (directory as NSString).appendingPathComponent("tokenizer.json")
        guard FileManager.default.fileExists(atPath: path) else {
            throw TokenizerError.missingFile(path: path)
        }
        // One reader for every model file: a FIFO in its place blocked, and Foundation said
        // "error 256" for a directory (now 65, as for config.json).
        let data = try LocalFile.read(path)
        return try Tokenizer(tokenizerJSON: data, source: path)
    }

    public convenience init(tokenizerJSON data: Data, source: String) throws {
        try self.init(
            parts: data.withUnsafeBytes { raw in
                Result { () throws(TokenizerError) in
                    try Self.parse(raw.bindMemory(to: UInt8.self), source: source)
                }
            }.get(), source: source)
    }

    public convenience init(tokenizerJSON bytes: [UInt8], source: String) throws {
        try self.init(
            parts: bytes.withUnsafeBufferPointer { buffer in
                Result { () throws(TokenizerError) in try Self.parse(buffer, source: source) }
            }.get(), source: source)
    }

    private static func parse(
        _ bytes: UnsafeBufferPointer<UInt8>, source: String
    ) throws(TokenizerError) -> TokenizerJSON {
        do { return try TokenizerJSON(parsing: bytes) } catch { throw error.error(path: source) }
    }

    private init(parts: TokenizerJSON, source: String) throws(TokenizerError) {
        self.source = source
        let c: TokenizerComponents
        do { c = try TokenizerComponents(parts) } catch { throw error.error(path: source) }
        normalizer = c.normalizer
        preTokenizer = c.preTokenizer
        model = c.model
        postProcessor = c.postProcessor
        decoder = c.decoder
        let fileTokens = c.addedTokens
        // Ids as tokenizers assigns them when it reads added_tokens: the id of the same
        // content in the vocabulary (or earlier in the list), else the next free id after the
        // model's vocabulary. A file saved by tokenizers already agrees; an edited one may not.
        var byID: [Int: AddedToken] = [:]
        var byContent: [String: Int] = [:]
        var nextID = model.size
        for var token in fileTokens where !token.content.isEmpty {
            if let id = byContent[token.content] ?? model.id(forToken: token.content) {
                token.id = id
            } else {
                token.id = nextID
                nextID += 1
            }
            byContent[token.content] = token.id
            byID[token.id] = token
        }
        let unique = byID.values.sorted { $0.id < $1.id }
        self.addedTokens = unique
        addedByID = byID
        addedIDByContent = byContent
        specialContents = Set(unique.filter(\.special).map(\.content))
        var scratch = ScalarText()
        // Normalized tokens are matched, shown and decoded in their normalized form.
        var normalizedForms: [Int: String] = [:]
        var normalizedPatterns: [AddedTokenMatcher.Pattern] = []
        for token in unique where token.normalized {
            let bytes = Array(token.content.utf8)
            let normalized = normalizer?.apply(bytes, scratch: &scratch) ?? bytes
            if normalized != bytes {
                normalizedForms[token.id] = String(decoding: normalized, as: UTF8.self)
            }
            normalizedPatterns.append(.init(bytes: normalized, token: token))
        }
        addedTokenStrings = normalizedForms
        rawMatcher = AddedTokenMatcher(
            unique.filter { !$0.normalized }.map { .init(bytes: Array($0.content.utf8), token: $0) }
        )
        normalizedMatcher = AddedTokenMatcher(normalizedPatterns)
    }

    /// The id of a vocabulary or added token.
    public func tokenID(for token: String) -> Int? {
        addedIDByContent[token] ?? model.id(forToken: token)
    }

    /// The string of a token id (as tokenizer.json spells it: `▁the`, `Ġthe`, `<0x0A>`).
    public func token(for id: Int) -> String? {
        addedTokenStrings[id] ?? addedByID[id]?.content ?? model.token(forID: id)
    }

    /// Highest id + 1, added tokens included: the size an embedding table needs.
    public var vocabularySize: Int {
        max(model.highestID, addedTokens.map(\.id).max() ?? -1) + 1
    }

    /// The ids of `text`; `addSpecialTokens` lets the post-processor add BOS/EOS.
    /// Throws only when a `Split`/`Replace` regex of tokenizer.json backtracks past its
    /// budget on this text (HF tokenizers fails with a retry-limit error there too).
    public func encode(_ text: String, addSpecialTokens: Bool = true) throws -> [Int] {
        var encoder = Encoder(tokenizer: self)
        let ids = encoder.encode(Array(text.utf8))
        if encoder.regexBudgetExceeded { throw TokenizerError.regexBudgetExceeded(path: source) }
        return postProcessor?.process(ids, addSpecialTokens: addSpecialTokens) ?? ids
    }
}
