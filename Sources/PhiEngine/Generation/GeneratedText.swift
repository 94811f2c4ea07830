/// Turns the tokens of one reply into the text a reader may see: whole UTF-8 characters,
/// stop strings held back and cut. The engine knows no tokenizer; PhiKit conforms PhiText's
/// `ReplyText` (the one implementation `run`, `chat` and `serve` share), and an app may
/// bring its own.
public protocol GeneratedText {
    /// Adds a generated token; returns the text that may be shown now ("" while a character
    /// is unfinished or text might begin a stop string).
    mutating func append(_ token: Int) -> String
    /// A stop string has appeared: generation ends (the stop string is never shown).
    var isStopped: Bool { get }
    /// UTF-8 bytes decoded so far, text held back included (where the next token's text
    /// starts: the `text_offset` of OpenAI's log-probabilities).
    var decodedByteCount: Int { get }
    /// Generation has ended: the text still held back (an unfinished character, text that
    /// might have begun a stop string and did not).
    mutating func finish() -> String
}
