import Foundation
import PhiFormats
import PhiKit
import Testing

/// Cancellation reaches convert only through its token (ConvertOptions.cancellation): no
/// process-wide flag. A cancelled convert throws `Interrupted` and leaves nothing beside the
/// output; one whose token was never cancelled runs to the end.
@Suite("convert cancellation")
struct ConvertCancellationTests {
    @Test("a cancelled token stops convert before any tensor; nothing is left behind")
    func cancelled() throws {
        let work = try ConvertFixtures.temporaryDirectory("cancel")
        defer { try? FileManager.default.removeItem(at: work) }
        let src = work.appendingPathComponent("src")
        try ConvertFixtures.buildSource("phi4-fp32", into: src)
        var options = ConvertOptions(
            source: src.path, output: work.appendingPathComponent("out").path,
            environment: ["PHIKIT_HOME": work.appendingPathComponent("home").path])
        options.quantize = true
        options.threads = 1
        let token = CancellationToken()
        token.cancel()
        options.cancellation = token
        #expect(throws: Interrupted.self) { try convert(options) }
        let left = try FileManager.default.contentsOfDirectory(atPath: work.path).sorted()
        #expect(left == ["home", "src"] || left == ["src"], "\(left)")

        // Another job's cancelled token does not stop this one.
        options.cancellation = CancellationToken()
        let summary = try convert(options)
        #expect(summary.tensorCount > 0)
    }
}
