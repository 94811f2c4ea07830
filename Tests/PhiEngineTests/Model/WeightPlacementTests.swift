import CKernels
import Foundation
import PhiFormats
import Testing

@testable import PhiEngine

/// How the weight files are held (`WeightPlacement`) moves the weights, never a result: a
/// 4-bit model gives the same logits, bit for bit, mapped, mapped in 2 MiB pages and as a
/// resident copy on 64-byte lines, on the exact and the 8-bit-activation paths, in a prompt
/// block and in decode steps.
@Suite("weight placement")
struct WeightPlacementTests {
    @Test func logitsIdenticalInEveryPlacement() throws {
        let dir = try Act8SessionTests.directory(group: 64)
        let tokens = Act8SessionTests.tokens
        var results: [[[Float]]] = []
        for placement in WeightPlacement.allCases {
            let model = try ModelArchitectures.load(directory: dir.path, placement: placement)
            var logits: [[Float]] = []
            for width in [ActivationWidth.int16, .int8] {
                let session = try InferenceSession(
                    model: model, maxContext: 64, threads: 2, isa: pk_matvec_best_isa(),
                    block: 512, activationWidth: width)
                logits.append(Array(try session.prefill(tokens)))
                logits.append(Array(try session.step(4)))
                logits.append(Array(try session.step(9)))
            }
            results.append(logits)
        }
        for (placement, logits) in zip(WeightPlacement.allCases, results).dropFirst() {
            #expect(logits == results[0], "\(placement) vs mapped")
        }
    }

    /// A dense model takes the placement asked for; a mixture of experts stays mapped (its
    /// experts are read on demand: a copy would read them all).
    @Test func mixtureOfExpertsStaysMapped() throws {
        let dense = try Act8SessionTests.directory(group: 64)
        let phi3 = try #require(
            try ModelArchitectures.load(directory: dense.path, placement: .resident) as? Phi3Model)
        #expect(phi3.weights.storage.files.files.allSatisfy { $0.isResident })
        let moe = try PhiMoETests.write("phimoe4x2", split: false)
        let experts = try #require(
            try ModelArchitectures.load(directory: moe.path, placement: .resident) as? PhiMoEModel)
        #expect(!experts.weights.storage.files.files.contains { $0.isResident })
    }
}
