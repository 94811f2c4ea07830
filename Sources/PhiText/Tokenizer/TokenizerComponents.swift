import PhiFormats

/// Builds the pipeline's components from tokenizer.json, checking each one is something
/// phikit implements.
struct TokenizerComponents {
    var normalizer: Normalizer?
    var preTokenizer: PreTokenizer?
    var model: BPEModel
    var postProcessor: PostProcessor?
    var decoder: TokenDecoder?
    var addedTokens: [AddedToken]

    init(_ json: TokenizerJSON) throws(TokenizerBuildError) {
        func component(_ key: String) -> ComponentReader? {
            guard let value = json.members[key], !value.isNull else { return nil }
            return ComponentReader(value, path: key)
        }
        if let truncation = component("truncation") {
            throw .unsupported(truncation.path, "truncation (phikit never truncates prompts)")
        }
        normalizer = try component("normalizer").map(Normalizer.init)
        preTokenizer = try component("pre_tokenizer").map(PreTokenizer.init)
        postProcessor = try component("post_processor").map(PostProcessor.init)
        decoder = try component("decoder").map(TokenDecoder.init)
        addedTokens = []
        if let list = json.members["added_tokens"], !list.isNull {
            for item in try ComponentReader(.object([("added_tokens", list)]), path: "")
                .array("added_tokens")
            {
                addedTokens.append(try AddedToken(item))
            }
        }
        model = try Self.model(json, byteLevel: preTokenizer?.isByteLevel ?? false)
    }

    private static func model(
        _ json: TokenizerJSON, byteLevel: Bool
    ) throws(TokenizerBuildError) -> BPEModel {
        let r = ComponentReader(.object(json.model), path: "model")
        let type = try r.optionalString("type") ?? (json.hasMerges ? "BPE" : "?")
        guard type == "BPE" else {
            throw .unsupported("model.type", "model '\(type)' (phikit implements BPE)")
        }
        guard json.hasVocab else { throw .invalid("model.vocab", "missing (or not an object)") }
        guard json.hasMerges else { throw .invalid("model.merges", "missing (or not an array)") }
        var options = BPEOptions()
        options.unkToken = try r.optionalString("unk_token")
        options.continuingSubwordPrefix = try r.optionalString("continuing_subword_prefix")
        options.endOfWordSuffix = try r.optionalString("end_of_word_suffix")
        options.fuseUnk = try r.bool("fuse_unk", default: false)
        options.byteFallback = try r.bool("byte_fallback", default: false)
        options.ignoreMerges = try r.bool("ignore_merges", default: false)
        if let dropout = r.optional("dropout") {
            guard let p = dropout.doubleValue else {
                throw .invalid("model.dropout", "expected a number")
            }
            options.dropout = p
        }
        return try BPEModel(
            options: options, vocab: json.vocab, ids: json.vocabIDs, merges: json.merges,
            byteLevel: byteLevel)
    }
}
