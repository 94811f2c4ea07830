import Foundation
import PhiFormats
import Testing

@testable import PhiEngine

/// The bundled TinyStories model (a real trained model: Karpathy's stories260K as phi3,
/// float32, tied embeddings, plain RoPE, GQA 8:4) against transformers and mlx_lm.
@Suite("stories-260k against transformers and mlx_lm")
struct StoriesModelTests {
    let goldens: EngineGoldens.Stories
    let model: Phi3Model

    init() throws {
        goldens = try EngineGoldens.stories()
        model = try Phi3Model.load(directory: EngineGoldens.storiesModel)
    }

    @Test("greedy from <s> writes the README's story, token for token (256 tokens)")
    func story() throws {
        let session = try InferenceSession(model: model)
        let tokens = try greedy(session, prompt: goldens.story.prompt, count: 256)
        #expect(tokens == goldens.story.greedy)
    }

    @Test("prompts: last logits within 1e-4 of transformers, 64 greedy tokens identical")
    func prompts() throws {
        let session = try InferenceSession(model: model)
        for golden in goldens.prompts {
            session.reset()
            let logits = try session.prefill(golden.prompt)
            #expect(relativeDifference(logits, golden.lastLogits) < 1e-4)
            session.reset()
            #expect(try greedy(session, prompt: golden.prompt, count: 64) == golden.greedy)
        }
    }

    @Test("MLX 4-bit and 8-bit copies equal mlx_lm.convert's and decode as mlx_lm does")
    func quantized() throws {
        for golden in goldens.mlx {
            let dir = try TinyModels.writeQuantized(
                from: EngineGoldens.storiesModel, quantization: golden.quantization)
            #expect(try TinyModels.tensorHashes(dir.path) == golden.tensorHashes)
            let quantized = try Phi3Model.load(directory: dir.path)
            let session = try InferenceSession(model: quantized)
            for c in golden.cases {
                // 16-bit activations in the packed kernels (see TinyModelTests): ~4e-5 here.
                #expect(relativeDifference(try session.prefill(c.prompt), c.lastLogits) < 5e-4)
                session.reset()
                #expect(try greedy(session, prompt: c.prompt, count: c.greedy.count) == c.greedy)
            }
        }
    }
}
