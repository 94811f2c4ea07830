extension Tokenizer {
    /// Every token's bytes as it appears in generated text, by id — what structured output
    /// (PhiEngine's `TokenVocabulary`) matches against a grammar: byte-level pieces mapped
    /// back to bytes, `<0xNN>` as the byte, SentencePiece's ▁ as a space. Each piece stands
    /// alone (the decoder's start-of-text stripping is not applied). Special added tokens and
    /// unused ids are nil: they never count as text.
    public func tokenPieces() -> [[UInt8]?] {
        (0..<vocabularySize).map { id in
            guard let token = token(for: id), !token.isEmpty else { return nil }
            if let added = addedByID[id] {
                return added.special ? nil : Array(added.content.utf8)
            }
            guard let decoder else { return Array(token.utf8) }
            return decoder.pieceBytes(token)
        }
    }
}

extension TokenDecoder {
    /// One token's bytes through the decoder's per-token steps.
    func pieceBytes(_ token: String) -> [UInt8] {
        switch self {
        case .sequence(let steps):
            var text = token
            for step in steps {
                switch step {
                case .byteLevel, .byteFallback:
                    if let bytes = step.rawPiece(text) { return bytes }
                default:
                    text = step.transformPiece(text)
                }
            }
            return Array(text.utf8)
        case .byteLevel, .byteFallback:
            return rawPiece(token) ?? Array(token.utf8)
        default:
            return Array(transformPiece(token).utf8)
        }
    }

    /// The bytes of a byte-level or `<0xNN>` piece, nil when it is not one.
    private func rawPiece(_ token: String) -> [UInt8]? {
        switch self {
        case .byteLevel:
            let utf8 = Array(token.utf8)
            return utf8.withUnsafeBufferPointer { ByteLevelAlphabet.rawBytes(of: $0) } ?? utf8
        case .byteFallback:
            return Self.fallbackByte(token).map { [$0] }
        default: return nil
        }
    }

    /// Text steps on one piece in the middle of a text: a metaspace is a space, nothing is
    /// stripped (stripping belongs to the start of the whole text).
    private func transformPiece(_ token: String) -> String {
        var incomplete = false
        switch self {
        case .metaspace:
            return decodeChain(["", token], final: true, incomplete: &incomplete)[1]
        case .replace:
            return decodeChain([token], final: true, incomplete: &incomplete).joined()
        default:
            return token
        }
    }
}
