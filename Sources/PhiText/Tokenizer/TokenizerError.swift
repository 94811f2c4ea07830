import PhiFormats

/// Why a tokenizer could not be loaded. Encoding and decoding never fail: every text has an
/// encoding and unknown ids decode to nothing, as in `tokenizers`.
public enum TokenizerError: UserFacingError, Equatable {
    /// The directory has no tokenizer.json (66).
    case missingFile(path: String)
    /// The file exists but could not be read (74).
    case unreadable(path: String, reason: String)
    /// Not valid JSON, or a field with the wrong type or an impossible value (65).
    case malformed(path: String, field: String, reason: String)
    /// A component or option phikit does not implement; encoding with it would give different
    /// ids than `tokenizers`, so the tokenizer is refused (65).
    case unsupported(path: String, field: String, what: String)
    /// A regex of the pipeline backtracked past `RegexBudget` on the text being encoded.
    case regexBudgetExceeded(path: String)

    public var message: String {
        switch self {
        case .missingFile(let path): "\(path): no such file"
        case .unreadable(let path, let reason): "\(path): cannot read: \(reason)"
        case .malformed(let path, let field, let reason):
            field.isEmpty ? "\(path): \(reason)" : "\(path): \(field): \(reason)"
        case .unsupported(let path, let field, let what):
            "\(path): \(field): unsupported \(what)"
        case .regexBudgetExceeded(let path):
            "\(path): a regular expression of the tokenizer exceeded its backtracking limit "
                + "on this text"
        }
    }

    public var hint: String? {
        switch self {
        case .missingFile: "the model directory needs the tokenizer.json of its Hugging Face repo"
        case .unsupported:
            "phikit implements the BPE tokenizers of the Phi family and their relatives "
                + "(SentencePiece-style and byte-level); this tokenizer needs another component"
        default: nil
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .missingFile: .noInput
        case .unreadable: .ioError
        case .malformed, .unsupported, .regexBudgetExceeded: .dataError
        }
    }
}

/// A load problem before the file name is known: the JSON path of the field, and what is
/// wrong with it. `Tokenizer.init` turns it into a `TokenizerError`.
enum TokenizerBuildError: Error {
    case invalid(String, String)
    case unsupported(String, String)

    func error(path: String) -> TokenizerError {
        switch self {
        case .invalid(let field, let reason): .malformed(path: path, field: field, reason: reason)
        case .unsupported(let field, let what): .unsupported(path: path, field: field, what: what)
        }
    }
}
