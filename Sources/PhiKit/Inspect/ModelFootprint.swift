import Foundation
import PhiEngine
import PhiFormats

/// What a model costs to keep: its weight files on disk, and the memory to run it at a
/// context — the mapped weights (all of them resident once a forward pass has read them)
/// plus the KV cache of that many positions at `run`'s default width. Activation buffers
/// (a few MB at the prompt block size) are not counted.
enum ModelFootprint {
    /// Bytes of the directory's `*.safetensors` files (symlinks of a cache snapshot followed).
    static func weightFileBytes(_ directory: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".safetensors") }.reduce(0) { sum, name in
            let path = URL(fileURLWithPath: directory + "/" + name).resolvingSymlinksInPath().path
            let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size]
            return sum + ((size as? NSNumber)?.intValue ?? 0)
        }
    }

    /// Tensor bytes of the weights plus the KV cache of `context` positions.
    static func memoryBytes(
        _ directory: String, config: ModelConfig, context: Int,
        cacheWidth: KVCacheWidth = .defaultForRun
    ) -> Int {
        let weights = (try? ModelWeights(directory: directory))?.totalBytes ?? weightFileBytes(directory)
        return weights
            + cacheWidth.cacheBytes(
                layers: config.layerCount, kvHeads: config.kvHeads, headDim: config.headDim,
                positions: context)
    }
}
