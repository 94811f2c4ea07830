/// A tensor a checkpoint holds that no parameter of the model takes, but that every command
/// (run, verify, convert, inspect) drops instead of refusing. This is the whole leftover
/// policy, stated once; every other tensor the schema does not name is foreign and refused by
/// every command with the same `TensorSetError`.
///
/// It follows transformers and mlx-lm:
/// - transformers' `_adjust_missing_and_unexpected_keys` ignores `rotary_emb\.inv_freq` keys of
///   old checkpoints, and `Phi3ForCausalLM` ties `lm_head.weight` to the embedding when
///   `tie_word_embeddings` is true, so a stored head is overwritten;
/// - mlx-lm's `sanitize` (llama.py and most model files) drops `self_attn.rotary_emb.inv_freq`
///   and, for a tied model, `lm_head.weight`. (mlx-lm 0.32.2's phi3.py has no `sanitize`, so
///   `mlx_lm.load` itself refuses both on a phi3 model; phikit takes the family's rule.)
public enum IgnoredTensor: Sendable, Equatable {
    /// `…rotary_emb.inv_freq`: the rotary frequencies, derived from config.json.
    case rotaryBuffer
    /// The output head's weight (`lm_head.weight`) in a model whose embeddings are tied: the
    /// embedding is the head, this copy is never read. `convert` leaves it out of its output.
    case tiedOutputHead

    /// Why loaders skip it, for verify and inspect.
    public var reason: String {
        switch self {
        case .rotaryBuffer:
            "is a rotary-embedding buffer of an old checkpoint (derived from config.json); "
                + "phikit ignores it, as transformers and mlx-lm do"
        case .tiedOutputHead:
            "is not used: config.json ties the embeddings (tie_word_embeddings: true); "
                + "phikit ignores it and convert leaves it out, as transformers and mlx-lm do"
        }
    }

    /// The policy: is `name`, which no module of `layout` claims, one loaders drop?
    static func classify(_ name: String, in layout: ModelLayout) -> IgnoredTensor? {
        if name == "rotary_emb.inv_freq" || name.hasSuffix(".rotary_emb.inv_freq") {
            return .rotaryBuffer
        }
        if layout.config.tieWordEmbeddings, name == layout.schema.outputHead + ".weight" {
            return .tiedOutputHead
        }
        return nil
    }
}
