/// What mlx-lm loads (`LoaderTarget.mlxLM.sourceVersion`): a `model_type` with a module in
/// `mlx_lm/models` (after `MODEL_REMAPPING`); stop tokens as MLX Swift's (config.json's
/// `eos_token_id`, generation_config.json's when present, plus the tokenizer's eos token:
/// `load_config`, `TokenizerWrapper`).
enum MLXLMFacts {
    static let remapping: [String: String] = [
        "mistral": "llama", "llava": "mistral3", "phi-msft": "phixtral", "falcon_mamba": "mamba",
        "joyai_llm_flash": "deepseek_v3", "kimi_k2": "deepseek_v3", "qwen2_5_vl": "qwen2_vl",
        "minimax_m2": "minimax", "iquestcoder": "llama", "xverse": "llama",
        "gemma4_unified": "gemma4",
    ]

    static let modelTypes: Set<String> = Set(
        """
        Klear afm7 afmoe apertus baichuan_m1 bailing_hybrid bailing_moe bailing_moe_linear
        bailing_moe_v3 bitnet cohere cohere2 dbrx deepseek deepseek_v2 deepseek_v3 deepseek_v32
        deepseek_v41 dots1 ernie4_5 ernie4_5_moe exaone exaone4 exaone_moe falcon_h1 gear gemma
        gemma2 gemma3 gemma3_text gemma3n gemma4 gemma4_text glm glm4 glm4_moe glm4_moe_lite
        glm_moe_dsa gpt2 gpt_bigcode gpt_neox gpt_oss gptj granite granitemoe granitemoehybrid
        helium hunyuan hunyuan_v1_dense internlm2 internlm3 iquestloopcoder jamba kimi_k25
        kimi_k3 kimi_linear kimi_vl laguna lfm2-vl lfm2 lfm2_moe lille-130m llama llama4
        llama4_text longcat_flash longcat_flash_ngram mamba mamba2 mellum mimo mimo_v2_flash
        minicpm minicpm3 minimax minimax_m3_vl ministral3 mistral3 mistral4 mixtral muse_glimmer
        muse_spark nanbeige nanochat nemotron-nas nemotron nemotron_h olmo olmo2 olmo3
        olmo_hybrid olmoe openelm phi phi3 phi3small phimoe phixtral pixtral plamo plamo2 plamo3
        prism_hadamard_qwen35 qwen qwen2 qwen2_moe qwen2_vl qwen3 qwen3_5 qwen3_5_moe qwen3_moe
        qwen3_next qwen3_vl qwen3_vl_moe rwkv7 seed_oss smollm3 solar_open spark2_5 stablelm
        starcoder2 step3p5 talkie telechat3 youtu_llm
        """.split(whereSeparator: \.isWhitespace).map(String.init))
}
