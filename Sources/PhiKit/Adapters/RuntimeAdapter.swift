import PhiEngine
import PhiFormats

/// `--adapter-path` of run, chat and serve: an mlx-lm adapter folder (adapters.safetensors +
/// adapter_config.json) read and checked exactly as `phikit fuse` reads it (`LoRAAdapter`:
/// the same modules wrapped, the same errors naming the tensor), then handed to the engine as
/// low-rank corrections applied at run time (`LowRankDelta`): the base weights stay as they
/// are on disk, packed or float, and nothing is written.
///
/// The factors are those fuse multiplies: lora_a as stored and `scale · lora_b` rounded to
/// lora_b's dtype (mlx's scalar product), widened to float32.
enum RuntimeAdapter {
    static func load(directory: String, config: ModelConfig) throws -> LowRankAdapters {
        let adapter = try LoRAAdapter.load(directory: directory, layout: ModelLayout(config: config))
        return LowRankAdapters(
            Dictionary(
                uniqueKeysWithValues: adapter.modules.map { m in
                    (
                        m.path,
                        LowRankDelta(
                            inputs: m.inputs, outputs: m.outputs, rank: m.rank, a: m.a,
                            b: m.scaledB, magnitude: m.magnitude)
                    )
                }))
    }
}
