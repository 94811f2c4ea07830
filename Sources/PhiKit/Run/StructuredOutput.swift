import Foundation
import PhiEngine
import PhiFormats

/// An `OutputFormat` compiled for one model: the grammar, and the model's tokens as bytes.
/// Compiled once per request (run, a chat's `/format`, a server request), it gives each
/// sequence a fresh `GrammarMatcher` (`makeConstraint`), the generator's `TokenConstraint`.
public struct StructuredOutput: Sendable {
    public let format: OutputFormat
    public let grammar: Grammar
    public let vocabulary: TokenVocabulary

    /// A matcher at the start of the answer, for one sequence.
    public func makeConstraint() -> GrammarMatcher {
        GrammarMatcher(grammar: grammar, vocabulary: vocabulary)
    }
}

extension ModelContainer {
    /// Compiles `format` against this model's tokenizer; an unsupported keyword, a bad
    /// pattern or grammar is a `ConstraintError` (exit 64, HTTP 400) naming it. The end
    /// tokens are left out of the vocabulary: the generator allows them only where the
    /// answer may end (`canEnd`).
    public func structuredOutput(_ format: OutputFormat) throws -> StructuredOutput {
        let grammar = try format.compile()
        return StructuredOutput(format: format, grammar: grammar, vocabulary: try tokenVocabulary())
    }

    /// The tokenizer's pieces as a `TokenVocabulary`, built on first use and kept (a trie
    /// over up to 200k tokens: worth building once per model, not once per request), with
    /// the tokenizer's encoding, so that text the grammar forces is fed as one block of the
    /// tokens the tokenizer would write it with.
    public func tokenVocabulary() throws -> TokenVocabulary {
        let stops = try stopTokens().ids
        let tokenizer = self.tokenizer
        return vocabularyCache.value {
            TokenVocabulary(
                pieces: tokenizer.tokenPieces(), special: stops,
                encode: { text in (try? tokenizer.encode(text, addSpecialTokens: false)) ?? [] })
        }
    }
}

/// A value computed once, on first use, from any thread.
final class LazyValue<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value?

    func value(_ make: () -> Value) -> Value {
        lock.lock()
        defer { lock.unlock() }
        if let stored { return stored }
        let made = make()
        stored = made
        return made
    }
}
