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

    /// All added tokens, in tokenizer.json order.
    public let addedTokens: [AddedToken]
    /// Where the tokenizer was read from, for messages.
    public let source: String

    /// Reads `<directory>/tokenizer.json`.
    public static func load(directory: String) throws -> Tokenizer {
        let path = (directory as NSString).appendingPathComponent("tokenizer.json")
        guard FileManager.default.fileExists(atPath: path) else {
            throw TokenizerError.missingFile(path: path)
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        } catch {
            throw TokenizerError.unreadable(path: path, reason: error.localizedDescription)
        }
        return try Tokenizer(tokenizerJSON: data, source: path)
    }

    public convenience init(tokenizerJSON data: Data, source: String) throws {
        try self.init(parts: data.withUnsafeBytes { raw in
            Result { () throws(TokenizerError) in
                try Self.parse(raw.bindMemory(to: UInt8.self), source: source)
            }
        }.get(), source: source)
    }

    public convenience init(tokenizerJSON bytes: [UInt8], source: String) throws {
        try self.init(parts: bytes.withUnsafeBufferPointer { buffer in
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
        do {
            let c = try TokenizerComponents(parts)
            normalizer = c.normalizer
            preTokenizer = c.preTokenizer
            model = c.model
            postProcessor = c.postProcessor
            decoder = c.decoder
            addedTokens = c.addedTokens
        } catch {
            throw error.error(path: source)
        }
        var byID: [Int: AddedToken] = [:]
        var byContent: [String: Int] = [:]
        for token in addedTokens {
            byID[token.id] = token
            byContent[token.content] = token.id
        }
        addedByID = byID
        addedIDByContent = byContent
        specialContents = Set(addedTokens.filter(\.special).map(\.content))
        // Later duplicates of an id replace earlier ones, as in tokenizers' map by id.
        let unique = addedTokens.filter { byID[$0.id] == $0 }
        var scratch = ScalarText()
        let normalizer = self.normalizer
        rawMatcher = AddedTokenMatcher(
            unique.filter { !$0.normalized }.map { .init(bytes: Array($0.content.utf8), token: $0) })
        normalizedMatcher = AddedTokenMatcher(
            unique.filter(\.normalized).map { token in
                let bytes = Array(token.content.utf8)
                return .init(
                    bytes: normalizer?.apply(bytes, scratch: &scratch) ?? bytes, token: token)
            })
    }

    /// The id of a vocabulary or added token.
    public func tokenID(for token: String) -> Int? {
        addedIDByContent[token] ?? model.id(forToken: token)
    }

    /// The string of a token id (as tokenizer.json spells it: `▁the`, `Ġthe`, `<0x0A>`).
    public func token(for id: Int) -> String? {
        addedByID[id]?.content ?? model.token(forID: id)
    }

    /// Highest id + 1, added tokens included: the size an embedding table needs.
    public var vocabularySize: Int {
        max(model.highestID, addedTokens.map(\.id).max() ?? -1) + 1
    }

    /// The ids of `text`; `addSpecialTokens` lets the post-processor add BOS/EOS.
    public func encode(_ text: String, addSpecialTokens: Bool = true) -> [Int] {
        var encoder = Encoder(tokenizer: self)
        let ids = encoder.encode(Array(text.utf8))
        return postProcessor?.process(ids, addSpecialTokens: addSpecialTokens) ?? ids
    }
}
