import Foundation
import HubTestSupport
import Testing

@testable import PhiHub

/// Issue 17: a Hub listing whose next-page link comes back round ran for minutes.
@Suite("a looping tree listing stops at once")
struct ListingLoopTests {
    @Test("a next-page link back to the first page is refused after one round")
    func nextPageLoops() throws {
        let h = try PullHarness(pageSize: 2)
        let first =
            "\(h.server.endpoint)/api/models/\(Fixture.repoID)/tree/\(Fixture.commit)"
            + "?recursive=true"
        try h.server.setFaults(
            #"[{"kind": "header", "path": "/tree/", "name": "Link", "#
                + #""value": "<\#(first)>; rel=\"next\""}]"#)
        let started = Date()
        let error = #expect(throws: HubError.self) { try h.pull() }
        guard case .badResponse(_, let detail)? = error else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(detail.contains("loop") || detail.contains("listed twice"), "\(detail)")
        #expect(h.server.requests.filter { $0.path.contains("/tree/") }.count <= 2)
        #expect(Date().timeIntervalSince(started) < 10)
    }
}
