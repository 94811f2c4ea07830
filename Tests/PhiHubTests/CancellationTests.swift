import Foundation
import HubTestSupport
import PhiFormats
import Testing

@testable import PhiHub

/// A pull stops through its configuration's token (no process-wide flag): a cancelled token
/// fetches nothing and says `.interrupted`; the plan made before still stands.
@Suite("Hub cancellation")
struct HubCancellationTests {
    @Test("a cancelled token: the download stops before any blob, as .interrupted")
    func cancelledDownload() throws {
        var h = try PullHarness()
        let plan = try h.downloader.plan(
            repoID: Fixture.repoID, revision: "main", patterns: FilePatterns())
        let token = CancellationToken()
        token.cancel()
        h.configuration.cancellation = token
        #expect(throws: HubError.interrupted) { try h.downloader.download(plan, jobs: 2) }
        #expect(!h.names("blobs").contains { !$0.hasSuffix(".incomplete") })

        // A fresh token: the same plan completes.
        h.configuration.cancellation = CancellationToken()
        let result = try h.downloader.download(plan, jobs: 2)
        #expect(result.commit == Fixture.commit)
    }

    @Test("the retry wait ends as soon as the token is cancelled")
    func retryWaitStops() {
        let token = CancellationToken()
        token.cancel()
        let start = Date()
        #expect(throws: Interrupted.self) { try Backoff.sleep(30, cancellation: token) }
        #expect(Date().timeIntervalSince(start) < 5)
    }
}
