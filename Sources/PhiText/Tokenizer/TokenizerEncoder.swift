/// One encode call's pipeline state (tokenizers' `encode_single_sequence` for one text).
struct Encoder {
    let tokenizer: Tokenizer
    private var scratch = ScalarText()
    private var bpe = BPEScratch()
    private var ids: [Int] = []

    init(tokenizer: Tokenizer) { self.tokenizer = tokenizer }

    /// True once a regex of the pipeline ran out of budget: the ids are not what HF gives.
    var regexBudgetExceeded: Bool { scratch.regexBudgetExceeded }

    mutating func encode(_ text: [UInt8]) -> [Int] {
        ids.reserveCapacity(text.count / 3)
        let segments = text.withUnsafeBufferPointer { tokenizer.rawMatcher.segments($0) }
        for segment in segments {
            if let id = segment.id {
                ids.append(id)
            } else if !segment.range.isEmpty {
                let raw = Array(text[segment.range])
                let normalized = tokenizer.normalizer?.apply(raw, scratch: &scratch) ?? raw
                encodeNormalized(normalized, atOrigin: segment.range.lowerBound == 0)
            }
        }
        return ids
    }

    /// Cuts out normalized added tokens, pre-tokenizes the rest and runs the model on each word.
    private mutating func encodeNormalized(_ text: [UInt8], atOrigin: Bool) {
        let segments = text.withUnsafeBufferPointer { tokenizer.normalizedMatcher.segments($0) }
        for segment in segments {
            if let id = segment.id {
                ids.append(id)
                continue
            }
            guard !segment.range.isEmpty else { continue }
            var pieces = Pieces(
                Array(text[segment.range]), atOrigin: atOrigin && segment.range.lowerBound == 0)
            tokenizer.preTokenizer?.apply(to: &pieces, scratch: &scratch)
            let model = tokenizer.model
            pieces.storage.withUnsafeBufferPointer { storage in
                for range in pieces.ranges {
                    model.encode(
                        UnsafeBufferPointer(rebasing: storage[range]), into: &ids, scratch: &bpe)
                }
            }
        }
    }
}
