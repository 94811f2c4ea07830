import PhiFormats

/// What an `InferenceSession` refuses: input that does not fit the model or the context.
public enum SessionError: UserFacingError, Equatable {
    /// `needed` positions (what is cached plus the new tokens) do not fit in `limit`.
    case contextFull(needed: Int, limit: Int)
    /// A token id outside the embedding, e.g. from a tokenizer that does not fit the model.
    case tokenOutOfRange(token: Int, vocabularySize: Int)
    /// prefill of no tokens on an empty session: there is nothing to predict from.
    case emptyPrompt
    /// A context larger than the model's `max_position_embeddings`, or below 1.
    case invalidContext(requested: Int, maximum: Int)
    /// `verify` of no tokens, or of more than one block holds.
    case invalidBlock(tokens: Int, maximum: Int)
    case outOfMemory(bytes: Int)
    /// A `KVSnapshot` this session cannot take: `reason` says what differs.
    case snapshotMismatch(reason: String)

    public var message: String {
        switch self {
        case .contextFull(let needed, let limit):
            "the prompt needs \(needed) positions but the context holds \(limit)"
        case .tokenOutOfRange(let token, let vocabularySize):
            "token id \(token) is outside the model's vocabulary (\(vocabularySize) entries)"
        case .emptyPrompt:
            "the prompt has no tokens"
        case .invalidContext(let requested, let maximum):
            "a context of \(requested) tokens is not possible (1 to \(maximum))"
        case .invalidBlock(let tokens, let maximum):
            "cannot verify \(tokens) tokens in one block (1 to \(maximum))"
        case .outOfMemory(let bytes):
            "cannot reserve \(bytes) bytes for the session's buffers"
        case .snapshotMismatch(let reason):
            "the saved KV cache does not fit this session: \(reason)"
        }
    }

    public var hint: String? {
        switch self {
        case .contextFull: "use a shorter prompt or fewer tokens"
        case .tokenOutOfRange: "the tokenizer does not belong to this model"
        default: nil
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .contextFull, .emptyPrompt, .invalidContext, .invalidBlock: .usage
        case .tokenOutOfRange, .snapshotMismatch: .dataError
        case .outOfMemory: .ioError
        }
    }
}
