import Foundation
import PhiFormats
import Testing

@testable import PhiKit

/// `--smoke`: a short greedy generation, compared with the registry's fingerprint.
@Suite("verify --smoke")
struct VerifySmokeTests {
    static let stories = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("models/stories-260k")

    @Test("stories-260k generates the registry's fingerprint")
    func storiesFingerprint() throws {
        let work = try VerifyFixture.temporaryDirectory("smoke")
        let report = try VerifyFixture.verify("stories-260k", work: work, smoke: true)
        let smoke = try #require(report.smoke)
        let expected = try #require(smoke.expectedTokens)
        #expect(expected.count == 16)
        #expect(smoke.tokens == expected)
        #expect(report.status(.smoke) == .passed && report.passed)
    }

    @Test("a fingerprint the model does not generate is a smoke_mismatch")
    func wrongFingerprint() throws {
        let work = try VerifyFixture.temporaryDirectory("smoke-wrong")
        let registry = work.appendingPathComponent("registry.json")
        try Data(
            """
            {"models": [{"name": "tiny", "path": "\(Self.stories.path)",
              "defaultPrompt": "Once upon a time", "smokeTokens": [432, 383, 286, 7]}]}
            """.utf8
        ).write(to: registry)
        var environment = VerifyFixture.environment(work)
        environment["PHIKIT_REGISTRY"] = registry.path
        var options = VerifyOptions(model: "tiny", environment: environment)
        options.smoke = true
        options.threads = 2
        let report = try PhiKit.verify(options)
        let found = report.findings("smoke_mismatch")
        #expect(found.count == 1 && found.first?.message.contains("at token 3") == true)
        #expect(report.smoke?.tokens.prefix(3) == [432, 383, 286])
        #expect(!report.passed)
    }

    @Test("smoke is not run on a model whose structure is broken")
    func skippedWhenBroken() throws {
        let model = try VerifyFixture.convertedCopy("smoke-broken")
        try FileManager.default.removeItem(at: model.appendingPathComponent("config.json"))
        var options = VerifyOptions(
            model: model.path,
            environment: VerifyFixture.environment(model.deletingLastPathComponent()))
        options.smoke = true
        options.threads = 2
        let report = try PhiKit.verify(options)
        #expect(report.status(.smoke) == .skipped && report.smoke == nil)
        #expect(report.findings("missing_config").count == 1)
    }
}
