/// The spelling of each GGUF token id in tokenizer.json, so that every id 0..<n appears exactly
/// once (mlx-lm's detokenizer, `convert_ids_to_tokens(range(len(tokenizer)))`, fails on a gap).
///
/// Pieces are compared byte for byte, never with Swift's `==`: `String` equality is canonical
/// equivalence, under which Phi-3.5's 'ί' (U+1F77) and 'ί' (U+03AF), two distinct tokens, are
/// one string; a `Set<String>` once merged six such pairs and left their ids out.
///
/// A piece that really is written twice (same bytes) cannot be two vocabulary entries: the
/// `tokenizers` library maps text to one id and builds id → text from that map. The last
/// occurrence keeps the text, as in llama.cpp's `token_to_id` (and transformers' GGUF loader);
/// each earlier one is spelled `[DUPLICATE_<id>]`, so its id still exists and decodes to a
/// visible marker rather than to nothing.
enum GGUFVocabulary {
    /// One spelling per id, all distinct byte strings; unchanged where the file had no repeats.
    static func spellings(_ tokens: [String]) -> [String] {
        var lastID: [[UInt8]: Int] = [:]
        lastID.reserveCapacity(tokens.count)
        for (i, t) in tokens.enumerated() { lastID[Array(t.utf8)] = i }
        guard lastID.count < tokens.count else { return tokens }
        var out = tokens
        var taken = Set(lastID.keys)
        for (i, t) in tokens.enumerated() where lastID[Array(t.utf8)] != i {
            var name = "[DUPLICATE_\(i)]"
            while !taken.insert(Array(name.utf8)).inserted { name += "_" }
            out[i] = name
        }
        return out
    }
}
