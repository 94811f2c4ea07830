import PhiFormats

/// The contents of tokenizer.json, split into the small components (as `JSONValue`s, decoded
/// by the component types) and the model's vocabulary and merges (read by the fast path).
struct TokenizerJSON {
    /// Top-level members other than `model`, e.g. `normalizer`, `added_tokens`.
    var members: [String: JSONValue] = [:]
    /// `model` members other than `vocab` and `merges`.
    var model: [(key: String, value: JSONValue)] = []
    var vocab = StringList()
    /// (vocab.count) the id of each vocabulary string.
    var vocabIDs: [Int32] = []
    /// Two strings per merge, in rank order.
    var merges = StringList()
    var hasVocab = false
    var hasMerges = false

    init(parsing data: UnsafeBufferPointer<UInt8>) throws(TokenizerBuildError) {
        var scanner = TokenizerJSONScanner(data)
        do throws(TokenizerJSONScanner.Failure) {
            try scanner.object { (s, key) throws(TokenizerJSONScanner.Failure) in
                let name = String(decoding: key, as: UTF8.self)
                if name == "model", try s.peek() == 0x7B {
                    try readModel(&s)
                } else {
                    members[name] = try Self.value(&s)
                }
            }
            scanner.skipWhitespace()
            guard scanner.position == data.count else {
                throw scanner.fail("unexpected data after the JSON value")
            }
        } catch {
            throw .invalid("", "invalid JSON at byte \(error.offset): \(error.reason)")
        }
    }

    private static func value(
        _ s: inout TokenizerJSONScanner
    ) throws(TokenizerJSONScanner.Failure) -> JSONValue {
        let range = try s.skipValue()
        do {
            return try JSONValue(parsing: UnsafeBufferPointer(rebasing: s.bytes[range]))
        } catch {
            throw TokenizerJSONScanner.Failure(
                offset: range.lowerBound + error.offset, reason: error.reason)
        }
    }

    private mutating func readModel(
        _ s: inout TokenizerJSONScanner
    ) throws(TokenizerJSONScanner.Failure) {
        try s.object { (s, key) throws(TokenizerJSONScanner.Failure) in
            switch String(decoding: key, as: UTF8.self) {
            case "vocab" where try s.peek() == 0x7B:
                try readVocab(&s)
            case "merges" where try s.peek() == 0x5B:
                try readMerges(&s)
            case let name:
                model.append((name, try Self.value(&s)))
            }
        }
    }

    /// `{"token": id, …}`, read straight into the string list.
    private mutating func readVocab(
        _ s: inout TokenizerJSONScanner
    ) throws(TokenizerJSONScanner.Failure) {
        hasVocab = true
        var strings = StringList()
        var ids: [Int32] = []
        try s.expect(0x7B)
        if try !s.eat(0x7D) {
            repeat {
                let start = strings.bytes.count
                _ = try s.peek()
                let keyOffset = s.position
                try s.string(into: &strings.bytes)
                // Longer tokens do not fit the vocabulary table (and no tokenizer has one).
                guard strings.bytes.count - start < Self.maxTokenBytes else {
                    throw TokenizerJSONScanner.Failure(
                        offset: keyOffset,
                        reason: "a vocabulary token of \(strings.bytes.count - start) bytes "
                            + "(at most \(Self.maxTokenBytes - 1))")
                }
                strings.starts.append(Int32(start))
                strings.lengths.append(Int32(strings.bytes.count - start))
                try s.expect(0x3A)
                ids.append(try s.int32())
            } while try s.eat(0x2C)
            try s.expect(0x7D)
        }
        vocab = strings
        vocabIDs = ids
    }

    /// `["a b", …]` (legacy, one space) or `[["a", "b"], …]`; lines starting `#version` are
    /// skipped, as tokenizers does.
    private mutating func readMerges(
        _ s: inout TokenizerJSONScanner
    ) throws(TokenizerJSONScanner.Failure) {
        hasMerges = true
        var list = StringList()
        var index = 0
        try s.array { (s) throws(TokenizerJSONScanner.Failure) in
            index += 1
            let start = list.bytes.count
            if try s.peek() == 0x5B {
                var count = 0
                try s.array { (s) throws(TokenizerJSONScanner.Failure) in
                    let itemStart = list.bytes.count
                    try s.string(into: &list.bytes)
                    list.starts.append(Int32(itemStart))
                    list.lengths.append(Int32(list.bytes.count - itemStart))
                    count += 1
                }
                guard count == 2 else { throw s.fail("merge \(index) is not a pair") }
                return
            }
            try s.string(into: &list.bytes)
            let end = list.bytes.count
            if list.bytes[start..<end].starts(with: Self.versionLine) {
                list.bytes.removeSubrange(start..<end)
                return
            }
            var space = -1
            for i in start..<end where list.bytes[i] == 0x20 {
                guard space < 0 else { throw s.fail("merge \(index) has more than one space") }
                space = i
            }
            guard space >= 0 else {
                throw s.fail("merge \(index) is not two tokens separated by a space")
            }
            list.starts.append(Int32(start))
            list.lengths.append(Int32(space - start))
            list.starts.append(Int32(space + 1))
            list.lengths.append(Int32(end - space - 1))
        }
        merges = list
    }

    private static let versionLine = Array("#version".utf8)
    /// ByteStringTable keeps key lengths in 16 bits.
    static let maxTokenBytes = 0xFFFF
}
