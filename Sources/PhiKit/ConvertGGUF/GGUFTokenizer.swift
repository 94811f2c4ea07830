import PhiFormats

/// tokenizer.json and tokenizer_config.json from a GGUF file's `tokenizer.ggml.*` metadata,
/// laid out as Hugging Face writes them for the two tokenizer families Phi models use:
///
/// - `llama`: SentencePiece BPE (Phi-3/3.5, Llama-2). Vocabulary = the pieces; merges =
///   every split of a normal piece into two normal pieces, ranked by the merged piece's score
///   (higher first, then lower id), splits by left length — what transformers'
///   SentencePieceExtractor derives from a tokenizer.model; byte fallback; the normalizer
///   prepends '▁' (unless `add_space_prefix` is false) and turns spaces into '▁'.
/// - `gpt2`: byte-level BPE (Phi-4-mini) with `tokenizer.ggml.merges` and the pre-tokenizer
///   regex that `tokenizer.ggml.pre` names.
///
/// Control and unknown tokens become special added tokens, user-defined ones plain added
/// tokens; their lstrip/rstrip follow llama.cpp's rules from the metadata (GGUFTokenStrip).
struct GGUFTokenizer {
    let tokenizerJSON: JSONValue
    let configJSON: JSONValue
    let bosID: Int?
    let eosIDs: [Int]

    /// GGUF token types (llama.cpp's `llama_token_type`).
    enum TokenType: Int {
        case undefined = 0, normal, unknown, control, userDefined, unused, byte
    }

    init(_ file: GGUFFile, contextLength: Int) throws {
        let path = file.path
        func fail(_ detail: String) -> GGUFConvertError {
            .badTokenizer(path: path, detail: detail)
        }
        guard let model = file.value("tokenizer.ggml.model")?.stringValue else {
            throw fail("'tokenizer.ggml.model' is missing")
        }
        guard let written = file.value("tokenizer.ggml.tokens")?.arrayValue?.strings,
            !written.isEmpty
        else { throw fail("'tokenizer.ggml.tokens' is missing or not strings") }
        let tokens = GGUFVocabulary.spellings(written)
        let n = tokens.count
        let types: [TokenType] =
            try (file.value("tokenizer.ggml.token_type")?.arrayValue?.ints).map { raw in
                guard raw.count == n else { throw fail("token_type has \(raw.count) entries, tokens \(n)") }
                return raw.map { TokenType(rawValue: $0) ?? .normal }
            } ?? [TokenType](repeating: .normal, count: n)
        func id(_ key: String) -> Int? {
            guard let v = file.value("tokenizer.ggml.\(key)")?.intValue, v >= 0, v < n else {
                return nil
            }
            return v
        }
        let bos = id("bos_token_id")
        let eos = id("eos_token_id")
        let unk = id("unknown_token_id")
        let pad = id("padding_token_id")
        func flag(_ key: String, _ fallback: Bool) -> Bool {
            file.value("tokenizer.ggml.\(key)")?.boolValue ?? fallback
        }
        let addBOS = flag("add_bos_token", model == "llama")
        let addEOS = flag("add_eos_token", false)

        // Every id, in id order; `tokens` has no two equal byte strings (GGUFVocabulary).
        let vocab = tokens.enumerated().map { (key: $1, value: JSONValue.int($0)) }
        let merges: [JSONValue]
        var modelJSON: [(key: String, value: JSONValue)] = [("type", .string("BPE")), ("dropout", .null)]
        let normalizer: JSONValue
        let preTokenizer: JSONValue
        let decoder: JSONValue
        switch model {
        case "llama":
            let scores = file.value("tokenizer.ggml.scores")?.arrayValue?.doubles
            guard let scores, scores.count == n else { throw fail("'scores' is missing or the wrong length") }
            merges = Self.sentencePieceMerges(tokens, scores, types).map {
                .array([.string($0.0), .string($0.1)])
            }
            modelJSON += [
                ("unk_token", unk.map { .string(tokens[$0]) } ?? .null),
                ("continuing_subword_prefix", .null), ("end_of_word_suffix", .null),
                ("fuse_unk", .bool(true)), ("byte_fallback", .bool(true)),
                ("ignore_merges", .bool(false)),
            ]
            let prefix = flag("add_space_prefix", true)
            let replace = JSONValue.object([
                ("type", .string("Replace")), ("pattern", .object([("String", .string(" "))])),
                ("content", .string("\u{2581}")),
            ])
            normalizer = .object([
                ("type", .string("Sequence")),
                (
                    "normalizers",
                    .array(
                        (prefix
                            ? [.object([("type", .string("Prepend")), ("prepend", .string("\u{2581}"))])]
                            : []) + [replace])
                ),
            ])
            preTokenizer = .null
            decoder = .object([
                ("type", .string("Sequence")),
                (
                    "decoders",
                    .array(
                        [
                            .object([
                                ("type", .string("Replace")),
                                ("pattern", .object([("String", .string("\u{2581}"))])),
                                ("content", .string(" ")),
                            ]),
                            .object([("type", .string("ByteFallback"))]),
                            .object([("type", .string("Fuse"))]),
                        ]
                            + (prefix
                                ? [
                                    .object([
                                        ("type", .string("Strip")), ("content", .string(" ")),
                                        ("start", .int(1)), ("stop", .int(0)),
                                    ])
                                ] : []))
                ),
            ])
        case "gpt2":
            guard let raw = file.value("tokenizer.ggml.merges")?.arrayValue?.strings else {
                throw fail("'tokenizer.ggml.merges' is missing")
            }
            merges = try raw.map { line in
                let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2 else { throw fail("merge '\(line)' is not two pieces") }
                return .array([.string(String(parts[0])), .string(String(parts[1]))])
            }
            modelJSON += [
                ("unk_token", .null), ("continuing_subword_prefix", .null),
                ("end_of_word_suffix", .null), ("fuse_unk", .bool(false)),
                ("byte_fallback", .bool(false)), ("ignore_merges", .bool(true)),
            ]
            let pre = file.value("tokenizer.ggml.pre")?.stringValue ?? "default"
            guard let split = Self.preTokenizer(named: pre) else {
                throw fail("names pre-tokenizer '\(pre)', which phikit does not know")
            }
            normalizer = .null
            preTokenizer = split
            decoder = .object([
                ("type", .string("ByteLevel")), ("add_prefix_space", .bool(true)),
                ("trim_offsets", .bool(true)), ("use_regex", .bool(true)),
            ])
        default:
            throw fail("model '\(model)' is not supported (phikit reads 'llama' and 'gpt2')")
        }
        modelJSON += [("vocab", .object(vocab)), ("merges", .array(merges))]

        var added: [JSONValue] = []
        var addedDecoder: [(key: String, value: JSONValue)] = []
        let isAdded = { (i: Int) in [TokenType.control, .unknown, .userDefined].contains(types[i]) }
        let strip = GGUFTokenStrip(file, tokens: tokens, isAdded: isAdded)
        for (i, t) in types.enumerated() where isAdded(i) {
            let special = t != .userDefined
            // llama.cpp matches every control and user-defined token in the raw text, before
            // SentencePiece's space escaping: `normalized: false` (as Phi-3.5's own file has
            // `</s>`). `true` made tokenizers match `</s>` after the escaping ("a</s>b",
            // " </s>" split differently from llama.cpp) and show id 2 as "▁</s>".
            let normalized = JSONValue.bool(false)
            let lstrip = JSONValue.bool(strip.left.contains(i))
            let rstrip = JSONValue.bool(strip.right.contains(i))
            // Key order as the tokenizers library writes each object.
            added.append(
                .object([
                    ("id", .int(i)), ("content", .string(tokens[i])), ("single_word", .bool(false)),
                    ("lstrip", lstrip), ("rstrip", rstrip), ("normalized", normalized),
                    ("special", .bool(special)),
                ]))
            addedDecoder.append(
                (
                    String(i),
                    .object([
                        ("content", .string(tokens[i])), ("lstrip", lstrip),
                        ("normalized", normalized), ("rstrip", rstrip),
                        ("single_word", .bool(false)), ("special", .bool(special)),
                    ])
                ))
        }
        func template(_ withBOS: Bool, _ withEOS: Bool) -> JSONValue {
            var single: [JSONValue] = []
            var specials: [(key: String, value: JSONValue)] = []
            func special(_ id: Int, _ typeID: Int) -> JSONValue {
                if !specials.contains(where: { $0.key == tokens[id] }) {
                    specials.append(
                        (tokens[id], .object([
                            ("id", .string(tokens[id])), ("ids", .array([.int(id)])),
                            ("tokens", .array([.string(tokens[id])])),
                        ])))
                }
                return .object([("SpecialToken", .object([("id", .string(tokens[id])), ("type_id", .int(typeID))]))])
            }
            func seq(_ name: String, _ typeID: Int) -> JSONValue {
                .object([("Sequence", .object([("id", .string(name)), ("type_id", .int(typeID))]))])
            }
            if withBOS, let bos { single.append(special(bos, 0)) }
            single.append(seq("A", 0))
            if withEOS, let eos { single.append(special(eos, 0)) }
            var pair = single
            if withBOS, let bos { pair.append(special(bos, 1)) }
            pair.append(seq("B", 1))
            if withEOS, let eos { pair.append(special(eos, 1)) }
            return .object([
                ("type", .string("TemplateProcessing")), ("single", .array(single)),
                ("pair", .array(pair)), ("special_tokens", .object(specials)),
            ])
        }
        tokenizerJSON = .object([
            ("version", .string("1.0")), ("truncation", .null), ("padding", .null),
            ("added_tokens", .array(added)), ("normalizer", normalizer),
            ("pre_tokenizer", preTokenizer),
            ("post_processor", model == "llama" || addBOS || addEOS ? template(addBOS, addEOS) : .null),
            ("decoder", decoder), ("model", .object(modelJSON)),
        ])

        var config: [(key: String, value: JSONValue)] = [
            ("add_bos_token", .bool(addBOS)), ("add_eos_token", .bool(addEOS)),
            ("added_tokens_decoder", .object(addedDecoder)),
            ("bos_token", bos.map { .string(tokens[$0]) } ?? .null),
            ("clean_up_tokenization_spaces", .bool(false)),
            ("eos_token", eos.map { .string(tokens[$0]) } ?? .null),
            ("model_max_length", .int(contextLength)),
            ("pad_token", pad.map { .string(tokens[$0]) } ?? .null),
            ("tokenizer_class", .string(model == "llama" ? "LlamaTokenizer" : "GPT2Tokenizer")),
            ("unk_token", unk.map { .string(tokens[$0]) } ?? .null),
        ]
        if model == "llama" { config.append(("legacy", .bool(false))) }
        if let chat = file.value("tokenizer.chat_template")?.stringValue {
            config.append(("chat_template", .string(chat)))
        }
        configJSON = .object(config)
        bosID = bos
        // Generation stops at eos, the end-of-turn tokens the file names, and the control
        // tokens llama.cpp itself treats as end of generation.
        var stops: [Int] = []
        for id in [eos, id("eot_token_id"), id("eom_token_id")].compactMap({ $0 })
        where !stops.contains(id) { stops.append(id) }
        for (i, t) in tokens.enumerated()
        where types[i] == .control || types[i] == .userDefined {
            if Self.endOfGeneration.contains(t), !stops.contains(i) { stops.append(i) }
        }
        eosIDs = stops
    }

    /// Token texts llama.cpp's vocabulary loader counts as end of generation.
    static let endOfGeneration: Set<String> = [
        "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>",
        "<|end_of_text|>", "<|return|>", "<|call|>",
    ]

    /// SentencePiece merges as transformers derives them (see the type's comment).
    static func sentencePieceMerges(
        _ tokens: [String], _ scores: [Double], _ types: [TokenType]
    ) -> [(String, String)] {
        // Keyed by bytes: String keys would fold canonically equivalent pieces (GGUFVocabulary).
        var index: [[UInt8]: Int] = [:]
        for (i, t) in tokens.enumerated() where types[i] == .normal && index[Array(t.utf8)] == nil {
            index[Array(t.utf8)] = i
        }
        var merges: [(String, String)] = []
        let ranked = index.values.sorted { (-scores[$0], $0) < (-scores[$1], $1) }
        for id in ranked {
            // Split by code points, as Python does (not by grapheme clusters).
            let piece = Array(tokens[id].unicodeScalars)
            guard piece.count > 1 else { continue }
            for cut in 1..<piece.count {
                var left = ""
                left.unicodeScalars.append(contentsOf: piece[..<cut])
                var right = ""
                right.unicodeScalars.append(contentsOf: piece[cut...])
                if index[Array(left.utf8)] != nil && index[Array(right.utf8)] != nil {
                    merges.append((left, right))
                }
            }
        }
        return merges
    }

    static func byteLevelPreTokenizer(regex: String?) -> JSONValue {
        let byteLevel = JSONValue.object([
            ("type", .string("ByteLevel")), ("add_prefix_space", .bool(false)),
            ("trim_offsets", .bool(true)), ("use_regex", .bool(regex == nil)),
        ])
        guard let regex else { return byteLevel }
        return .object([
            ("type", .string("Sequence")),
            (
                "pretokenizers",
                .array([
                    .object([
                        ("type", .string("Split")), ("pattern", .object([("Regex", .string(regex))])),
                        ("behavior", .string("Isolated")), ("invert", .bool(false)),
                    ]), byteLevel,
                ])
            ),
        ])
    }

    /// tokenizer.json's `pre_tokenizer` for `tokenizer.ggml.pre`, as llama.cpp's
    /// llama-vocab.cpp splits text for that name; nil for a name phikit does not know.
    static func preTokenizer(named pre: String) -> JSONValue? {
        if individualDigits.contains(pre) {
            // llama.cpp splits off every `\p{N}` first, then applies GPT-2's regex to the rest:
            // what Hugging Face's own file for these models says as Digits(individual_digits)
            // before a regex-splitting ByteLevel (SmolLM2's tokenizer.json).
            return .object([
                ("type", .string("Sequence")),
                (
                    "pretokenizers",
                    .array([
                        .object([("type", .string("Digits")), ("individual_digits", .bool(true))]),
                        byteLevelPreTokenizer(regex: nil),
                    ])
                ),
            ])
        }
        return preTokenizerRegex[pre].map { byteLevelPreTokenizer(regex: $0) }
    }

    /// Names whose split is single digits, then GPT-2's regex (llama.cpp's SMOLLM case).
    static let individualDigits: Set<String> = ["smollm"]

    /// `tokenizer.ggml.pre` → the split regex (nil: ByteLevel's own GPT-2 regex), from
    /// llama.cpp's llama-vocab.cpp.
    static let preTokenizerRegex: [String: String?] = [
        // phi-2 (Phi-2's CodeGen vocabulary) uses GPT-2's split, as llama.cpp maps it.
        "default": nil, "gpt2": nil, "gpt-2": nil, "phi-2": nil,
        "gpt-4o":
            "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        "llama-bpe":
            "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    ]
}
