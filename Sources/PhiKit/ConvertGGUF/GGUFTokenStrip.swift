import PhiFormats

/// Which added tokens eat the whitespace beside them (tokenizer.json's `lstrip` / `rstrip`).
///
/// GGUF has no field for these flags: llama.cpp's vocabulary loader (`llama-vocab.cpp`, "set
/// attributes by model/tokenizer name") derives them from the metadata, and so does phikit,
/// with the same rules, so that a converted tokenizer splits text where llama.cpp does:
/// - `general.name` containing "phi-3" or "phi3" (case-insensitive): every control, user-defined
///   and unknown token, and `</s>`, strips whitespace on its right, except `<unk>`, `<s>` and
///   `<|endoftext|>` (what Phi-3's own tokenizer.json says: `<|user|>\n` loses the newline);
/// - `tokenizer.ggml.pre` jina-v2-de/-es/-code or `general.architecture` nomic-bert-moe or
///   jina-bert-v3: `<mask>` strips on its left; a name containing "modern-bert": `[MASK]` does.
/// Every other token strips nothing. A file named otherwise (for instance "Phi 3.5 Mini
/// Instruct", as recent converters write it) keeps its whitespace, in llama.cpp and here.
struct GGUFTokenStrip {
    private(set) var left: Set<Int> = []
    private(set) var right: Set<Int> = []

    init(_ file: GGUFFile, tokens: [String], isAdded: (Int) -> Bool) {
        let name = (file.value("general.name")?.stringValue ?? "").lowercased()
        let pre = file.value("tokenizer.ggml.pre")?.stringValue ?? ""
        let arch = file.value("general.architecture")?.stringValue ?? ""
        func first(_ text: String) -> Int? { tokens.firstIndex(of: text) }
        if ["jina-v2-de", "jina-v2-es", "jina-v2-code"].contains(where: pre.contains)
            || ["nomic-bert-moe", "jina-bert-v3"].contains(where: arch.contains)
        {
            if let mask = first("<mask>") { left.insert(mask) }
        } else if name.contains("phi-3") || name.contains("phi3") {
            right = Set(tokens.indices.filter(isAdded))
            if let end = first("</s>") { right.insert(end) }
            for keep in ["<unk>", "<s>", "<|endoftext|>"] {
                if let id = first(keep) { right.remove(id) }
            }
        } else if name.contains("modern-bert"), let mask = first("[MASK]") {
            left.insert(mask)
        }
    }
}
