import Dispatch

/// Token strings as the JSON reader collects them: all bytes in one buffer, each string a
/// (start, length) into it.
struct StringList: Sendable {
    var bytes: [UInt8] = []
    var starts: [Int32] = []
    var lengths: [Int32] = []

    var count: Int { starts.count }

    mutating func append(_ string: UnsafeBufferPointer<UInt8>) {
        starts.append(Int32(bytes.count))
        lengths.append(Int32(string.count))
        bytes.append(contentsOf: string)
    }

    func withString<R>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        bytes.withUnsafeBufferPointer { all in
            let start = Int(starts[index])
            return body(UnsafeBufferPointer(rebasing: all[start..<(start + Int(lengths[index]))]))
        }
    }

    func string(_ index: Int) -> String {
        withString(index) { String(decoding: $0, as: UTF8.self) }
    }
}

/// The `model` object of tokenizer.json when its type is BPE: options only; vocab and merges
/// are read separately by the fast path.
struct BPEOptions: Sendable {
    var unkToken: String?
    var continuingSubwordPrefix: String?
    var endOfWordSuffix: String?
    var fuseUnk = false
    var byteFallback = false
    var ignoreMerges = false
    var dropout: Double?
}

/// A byte-pair-encoding model (tokenizers' `models::bpe::BPE`): vocabulary, merge ranks and
/// the options that decide what happens to characters outside the vocabulary.
///
/// In byte-level mode (the pre-tokenizer ends with ByteLevel) the vocabulary is keyed by the
/// raw bytes each token stands for, so words are merged straight from the input's UTF-8
/// instead of first being rewritten into GPT-2's alphabet.
final class BPEModel: Sendable {
    let options: BPEOptions
    let byteLevel: Bool
    /// Token bytes (raw bytes in byte-level mode) → id.
    let table: ByteStringTable
    /// Tokens that have no raw-byte form in byte-level mode, by their string bytes.
    let otherTokens: ByteStringTable
    let merges: MergeTable
    /// (merge count) the id each merge rank produces, to recognise stale queue entries.
    let rankNewIDs: [Int32]
    /// (256) the id of each single byte in byte-level mode, or -1.
    let byteIDs: [Int32]
    /// (256) the id of `<0xNN>` for byte fallback, or -1.
    let fallbackIDs: [Int32]
    let unkID: Int32?
    let prefix: [UInt8]
    let suffix: [UInt8]
    /// Strings of the vocabulary; `stringIndexForID[id]` indexes them (-1: no such id).
    let strings: StringList
    let stringIndexForID: [Int32]
    let cache = WordCache()

    /// Ids index dense tables; no real vocabulary comes near this, and a hostile file must not
    /// make us allocate gigabytes.
    static let maxID: Int32 = 1 << 24

    /// Number of vocabulary entries (tokenizers' `get_vocab_size` of the model).
    var size: Int { strings.count }

    init(
        options: BPEOptions, vocab: StringList, ids: [Int32], merges mergeList: StringList,
        byteLevel: Bool
    ) throws(TokenizerBuildError) {
        guard options.dropout == nil || options.dropout == 0 else {
            throw .unsupported(
                "model.dropout", "BPE dropout \(options.dropout!) (random tokenization)")
        }
        self.options = options
        self.byteLevel = byteLevel
        strings = vocab
        var table = ByteStringTable(capacity: vocab.count)
        var others = ByteStringTable(capacity: 16)
        var maxID: Int32 = -1
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, vocab.bytes.count))
        defer { scratch.deallocate() }
        for index in 0..<vocab.count {
            let id = ids[index]
            guard id >= 0, id < Self.maxID else {
                throw .invalid("model.vocab", "id \(id) is outside 0…\(Self.maxID - 1)")
            }
            maxID = max(maxID, id)
            let added = vocab.withString(index) { token in
                if !byteLevel {
                    table.insert(token, value: id)
                } else if let n = ByteLevelAlphabet.rawBytes(of: token, into: scratch) {
                    table.insert(UnsafeBufferPointer(start: scratch, count: n), value: id)
                } else {
                    others.insert(token, value: id)
                }
            }
            guard added else {
                throw .invalid(
                    "model.vocab", "duplicate key \"\(vocab.string(index))\" (token \(id))")
            }
        }
        var indexForID = [Int32](repeating: -1, count: Int(maxID) + 1)
        for index in 0..<vocab.count { indexForID[Int(ids[index])] = Int32(index) }
        self.table = table
        self.otherTokens = others
        self.stringIndexForID = indexForID

        func key(_ text: String) -> [UInt8] {
            let bytes = Array(text.utf8)
            guard byteLevel else { return bytes }
            return bytes.withUnsafeBufferPointer { ByteLevelAlphabet.rawBytes(of: $0) } ?? bytes
        }
        prefix = options.continuingSubwordPrefix.map(key) ?? []
        suffix = options.endOfWordSuffix.map(key) ?? []
        byteIDs = (0..<256).map { b in table.lookup([UInt8(b)]) ?? -1 }
        fallbackIDs = (0..<256).map { b in
            let name = "<0x" + (b < 16 ? "0" : "") + String(b, radix: 16, uppercase: true) + ">"
            return table.lookup(Array(name.utf8)) ?? -1
        }
        if let unk = options.unkToken {
            guard let id = table.lookup(key(unk)) ?? otherTokens.lookup(Array(unk.utf8)) else {
                throw .invalid("model.unk_token", "'\(unk)' is not in the vocabulary")
            }
            unkID = id
        } else {
            unkID = nil
        }
        (merges, rankNewIDs) = try Self.buildMerges(
            mergeList, vocab: vocab, indexForID: indexForID, table: table, prefix: prefix,
            byteLevel: byteLevel)
    }

    /// Resolves each merge `a b` to (id a, id b) → (rank, id of a+b), as `BpeBuilder::build`.
    ///
    /// Most vocabularies give merge results consecutive ids in rank order (o200k: id = 256 +
    /// rank), so the id after the previous merge's is tried first, with one comparison of
    /// strings that sit next to each other in memory, before the hash table.
    private static func buildMerges(
        _ list: StringList, vocab: StringList, indexForID: [Int32], table: ByteStringTable,
        prefix: [UInt8], byteLevel: Bool
    ) throws(TokenizerBuildError) -> (MergeTable, [Int32]) {
        let count = list.count / 2
        // Resolving strings to ids only reads the tables, and is most of the work: split it
        // over two threads, then fill the merge table in rank order.
        let resolved = UnsafeMutablePointer<(Int32, Int32, Int32)>.allocate(capacity: max(1, count))
        defer { resolved.deallocate() }
        let parts = count >= 4096 ? 2 : 1
        // Each part writes only its own ranks of `output` and its own failure slot.
        let failures = UnsafeMutablePointer<TokenizerBuildError?>.allocate(capacity: parts)
        failures.initialize(repeating: nil, count: parts)
        defer { failures.deinitialize(count: parts).deallocate() }
        nonisolated(unsafe) let (output, failed) = (resolved, failures)
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            let range = (count * part / parts)..<(count * (part + 1) / parts)
            do throws(TokenizerBuildError) {
                try resolveMerges(
                    range, list, vocab, indexForID, table, prefix, byteLevel, into: output)
            } catch {
                failed[part] = error
            }
        }
        for part in 0..<parts { if let failure = failures[part] { throw failure } }
        var merges = MergeTable(capacity: count)
        var newIDs = [Int32](repeating: -1, count: count)
        for rank in 0..<count {
            let (a, b, newID) = resolved[rank]
            merges.insert(left: a, right: b, rank: Int32(rank), newID: newID)
            newIDs[rank] = newID
        }
        return (merges, newIDs)
    }

    /// (id a, id b, id of a+b) of the merges in `ranks`, written to `out[rank]`.
    private static func resolveMerges(
        _ ranks: Range<Int>, _ list: StringList, _ vocab: StringList, _ indexForID: [Int32],
        _ table: ByteStringTable, _ prefix: [UInt8], _ byteLevel: Bool,
        into out: UnsafeMutablePointer<(Int32, Int32, Int32)>
    ) throws(TokenizerBuildError) {
        let longest = Int(list.lengths.max() ?? 0)
        // left, right (each at most `longest` bytes), then their join (at most twice that).
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 4 * longest + 1)
        defer { buffer.deallocate() }
        let (left, right, joined) = (buffer, buffer + longest, buffer + 2 * longest)
        var offset: Int32 = 0  // new id - rank of the previous merge
        for rank in ranks {
            let (a, aLength) = try resolve(list, 2 * rank, rank, left, table, byteLevel)
            let (b, bLength) = try resolve(list, 2 * rank + 1, rank, right, table, byteLevel)
            let drop = min(prefix.count, bLength)
            joined.update(from: left, count: aLength)
            (joined + aLength).update(from: right + drop, count: bLength - drop)
            let merged = UnsafeBufferPointer(start: joined, count: aLength + bLength - drop)
            let guess = Int(Int32(rank) + offset)
            let guessed =
                guess >= 0 && guess < indexForID.count && indexForID[guess] >= 0
                && vocabString(vocab, Int(indexForID[guess]), equals: merged, byteLevel: byteLevel)
            guard let newID = guessed ? Int32(guess) : table.lookup(merged) else {
                throw .invalid(
                    "model.merges",
                    "merge \(rank + 1): '\(list.string(2 * rank))\(list.string(2 * rank + 1))' "
                        + "is not in the vocabulary")
            }
            offset = newID - Int32(rank)
            out[rank] = (a, b, newID)
        }
    }

    /// The id of merge string `index`, written in key form (raw bytes when byte-level) to
    /// `out`, and the key's length.
    private static func resolve(
        _ list: StringList, _ index: Int, _ rank: Int, _ out: UnsafeMutablePointer<UInt8>,
        _ table: ByteStringTable, _ byteLevel: Bool
    ) throws(TokenizerBuildError) -> (Int32, Int) {
        let n = list.withString(index) { s -> Int? in
            if byteLevel { return ByteLevelAlphabet.rawBytes(of: s, into: out) }
            if let base = s.baseAddress { out.update(from: base, count: s.count) }
            return s.count
        }
        guard let n, let id = table.lookup(UnsafeBufferPointer(start: out, count: n)) else {
            throw .invalid(
                "model.merges",
                "merge \(rank + 1): '\(list.string(index))' is not in the vocabulary")
        }
        return (id, n)
    }

    /// Whether vocabulary string `index`, in key form, is `key`.
    private static func vocabString(
        _ vocab: StringList, _ index: Int, equals key: UnsafeBufferPointer<UInt8>, byteLevel: Bool
    ) -> Bool {
        vocab.withString(index) { s in
            if !byteLevel { return s.elementsEqual(key) }
            // Compare by decoding the alphabet characters one by one.
            var i = 0
            var k = 0
            while i < s.count {
                let (scalar, length) = decodeUTF8(s, at: i)
                guard k < key.count, scalar < 0x144,
                    ByteLevelAlphabet.byteForScalar[Int(scalar)] == Int16(key[k])
                else { return false }
                i += length
                k += 1
            }
            return k == key.count
        }
    }

    /// The id of a token given as its vocabulary string.
    func id(forToken token: String) -> Int? {
        let bytes = Array(token.utf8)
        guard byteLevel else { return table.lookup(bytes).map(Int.init) }
        guard let raw = bytes.withUnsafeBufferPointer({ ByteLevelAlphabet.rawBytes(of: $0) }) else {
            return otherTokens.lookup(bytes).map(Int.init)
        }
        return table.lookup(raw).map(Int.init)
    }

    /// The vocabulary string of `id`, if the vocabulary has that id.
    func token(forID id: Int) -> String? {
        guard id >= 0, id < stringIndexForID.count, stringIndexForID[id] >= 0 else { return nil }
        return strings.string(Int(stringIndexForID[id]))
    }

    var highestID: Int { stringIndexForID.count - 1 }
}
