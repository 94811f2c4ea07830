import PhiFormats

/// tokenizer.json's `post_processor`: adds the special tokens around an encoded text when
/// `addSpecialTokens` is on (BOS for the Llama/Phi-3 family). Only the single-sequence case
/// is needed: phikit never encodes pairs.
indirect enum PostProcessor: Sendable {
    /// The ids to put before and after the sequence.
    case template(prefix: [Int], suffix: [Int])
    case sequence([PostProcessor])
    /// ByteLevel's post-processor only trims offsets; ids are unchanged.
    case none

    init(_ r: ComponentReader) throws(TokenizerBuildError) {
        switch try r.type() {
        case "TemplateProcessing": self = try Self.template(r)
        case "ByteLevel": self = .none
        case "Sequence": self = .sequence(try r.array("processors").map(PostProcessor.init))
        case "BertProcessing", "RobertaProcessing":
            let cls = try Self.tokenPair(r, "cls")
            let sep = try Self.tokenPair(r, "sep")
            self = .template(prefix: [cls], suffix: [sep])
        default: try r.unsupported("post-processor")
        }
    }

    func process(_ ids: [Int], addSpecialTokens: Bool) -> [Int] {
        guard addSpecialTokens else { return ids }
        switch self {
        case .template(let prefix, let suffix): return prefix + ids + suffix
        case .sequence(let steps):
            return steps.reduce(ids) { $1.process($0, addSpecialTokens: true) }
        case .none: return ids
        }
    }

    /// `["[CLS]", 101]`
    private static func tokenPair(
        _ r: ComponentReader, _ key: String
    ) throws(TokenizerBuildError) -> Int {
        guard let pair = r.optional(key)?.arrayValue, pair.count == 2, let id = pair[1].intValue
        else { throw .invalid(r.path + "." + key, "expected [token, id]") }
        return id
    }

    /// `single: [{"SpecialToken": {"id": "<s>"}}, {"Sequence": {"id": "A"}}]` with the ids of
    /// each special token from `special_tokens`.
    private static func template(_ r: ComponentReader) throws(TokenizerBuildError) -> PostProcessor
    {
        let special = try r.object("special_tokens")
        var prefix: [Int] = []
        var suffix: [Int] = []
        var seenSequence = false
        for piece in try r.array("single") {
            if let seq = piece.optional("Sequence") {
                guard seq["id"]?.stringValue == "A", !seenSequence else {
                    throw .unsupported(piece.path, "template piece (only one sequence 'A')")
                }
                seenSequence = true
            } else if let token = piece.optional("SpecialToken") {
                guard let name = token["id"]?.stringValue else {
                    throw .invalid(piece.path + ".SpecialToken.id", "expected a string")
                }
                guard let entry = special.optional(name), let ids = entry["ids"]?.arrayValue else {
                    throw .invalid(special.path, "no special token '\(name)' used by the template")
                }
                var resolved: [Int] = []
                for id in ids {
                    guard let value = id.intValue else {
                        throw .invalid(special.path + ".\(name).ids", "expected integers")
                    }
                    resolved.append(value)
                }
                if seenSequence { suffix += resolved } else { prefix += resolved }
            } else {
                throw .invalid(piece.path, "expected {\"Sequence\": …} or {\"SpecialToken\": …}")
            }
        }
        return .template(prefix: prefix, suffix: suffix)
    }
}
