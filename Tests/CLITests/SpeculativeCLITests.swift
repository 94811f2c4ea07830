import Foundation
import Testing

/// `--draft-max` and `--no-speculative` on `phikit run` with the bundled TinyStories model:
/// the same tokens with and without drafts (on by default), the drafts reported, bad values
/// refused.
@Suite("phikit run: speculative decoding flags")
struct SpeculativeCLITests {
    static func json(_ stdout: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])
    }

    @Test("--draft-max drafts, reports them, and changes no token")
    func sameTokens() throws {
        // a story told twice: the model's continuation repeats it, prompt lookup drafts it
        let story = String(
            repeating: "Lily had a red ball. She played with the ball in the park every day. ",
            count: 3)
        let base = ["run", "stories-260k", "-p", story, "-m", "80", "--json"]
        let plain = try Phikit.run(base + ["--no-speculative"])
        #expect(plain.status == 0, "\(plain.stderr)")
        let drafted = try Phikit.run(base + ["--draft-max", "8"])
        #expect(drafted.status == 0, "\(drafted.stderr)")
        let (p, d) = (try Self.json(plain.stdout), try Self.json(drafted.stdout))
        #expect(p["tokens"] as? [Int] == d["tokens"] as? [Int])
        #expect(p["drafted_tokens"] as? Int == 0)
        // How many drafts are made depends on the cost model, which times this machine's
        // blocks and steps: on a loaded machine it may rightly draft nothing. That drafts
        // are made and kept is proved on a still clock (SpeculativeIdentityTests); here the
        // counts are reported and consistent.
        let draftCount = try #require(d["drafted_tokens"] as? Int, "\(d)")
        let keptCount = try #require(d["accepted_draft_tokens"] as? Int, "\(d)")
        #expect(0 <= keptCount && keptCount <= draftCount, "\(d)")
        // run drafts by default (issue 31: measured never slower), with the same tokens
        let defaulted = try Self.json(try Phikit.run(base).stdout)
        #expect(defaulted["tokens"] as? [Int] == p["tokens"] as? [Int])
        #expect(defaulted["drafted_tokens"] is Int, "\(defaulted)")
        let stats = try Phikit.run(["run", "stories-260k", "-p", story, "-m", "40", "--draft-max", "4", "--stats"])
        #expect(stats.stderr.contains("Speculative: "), "\(stats.stderr)")
    }

    @Test("bad speculative options are refused with exit 64")
    func refusals() throws {
        let big = try Phikit.run(["run", "stories-260k", "hi", "--draft-max", "99"])
        #expect(big.status == 64)
        #expect(big.stderr.hasPrefix("error: --draft-max must be between 0 and 32"))
        let both = try Phikit.run(["run", "stories-260k", "hi", "--no-speculative", "--draft-max", "3"])
        #expect(both.status == 64)
        #expect(both.stderr.contains("contradict"))
    }
}
