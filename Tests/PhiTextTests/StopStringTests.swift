import Testing

@testable import PhiText

/// `--stop`: matched across piece boundaries, held back while undecided, never shown.
@Suite("stop strings")
struct StopStringTests {
    /// Feeds `pieces` and returns what was shown, piece by piece, and whether it stopped.
    private func run(_ stops: [String], _ pieces: [String]) -> (shown: [String], stopped: Bool) {
        var matcher = StopStringMatcher(stops)
        var shown: [String] = []
        for piece in pieces {
            shown.append(matcher.append(piece))
            if matcher.isStopped { return (shown, true) }
        }
        shown.append(matcher.flush())
        return (shown, false)
    }

    @Test func stopSplitAcrossPiecesIsNeverShown() {
        let r = run(["<END>"], ["Hello <", "EN", "D> world"])
        #expect(r.stopped)
        #expect(r.shown == ["Hello ", "", ""])
    }

    @Test func heldTextIsReleasedWhenItCannotBeAStop() {
        let r = run(["<END>"], ["a <E", "xit", " b"])
        #expect(!r.stopped)
        #expect(r.shown == ["a ", "<Exit", " b", ""])
        #expect(r.shown.joined() == "a <Exit b")
    }

    @Test func textHeldAtTheEndIsFlushed() {
        let r = run(["###"], ["one #", "#"])
        #expect(!r.stopped)
        #expect(r.shown == ["one ", "", "##"])
    }

    @Test func earliestOfSeveralStopsWins() {
        let r = run(["world", "lo w"], ["Hello world"])
        #expect(r.stopped)
        #expect(r.shown == ["Hel"])
    }

    @Test func multiByteCharactersStayWhole() {
        let r = run(["🤖!"], ["é🤖", "?🤖", "!x"])
        #expect(r.stopped)
        #expect(r.shown == ["é", "🤖?", ""])
    }

    @Test func noStopsPassesTextThrough() {
        var matcher = StopStringMatcher(["", ""])
        #expect(matcher.isEmpty)
        #expect(matcher.append("abc") == "abc")
        #expect(matcher.flush() == "")
    }
}
