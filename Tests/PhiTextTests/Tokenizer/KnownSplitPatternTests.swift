import Foundation
import TestSupport
import Testing

@testable import PhiText

/// The hand-written o200k/cl100k/GPT-2 matchers return exactly what the general backtracking
/// matcher returns for the same pattern, at every start position of every corpus text.
@Suite("Known split patterns equal the backtracking matcher")
struct KnownSplitPatternTests {
    static let cases: [(KnownSplitPattern, String)] = [
        (.o200k, KnownSplitPattern.o200kSource),
        (.cl100k, KnownSplitPattern.cl100kSource),
        (.gpt2, KnownSplitPattern.gpt2Source),
    ]

    @Test(.tags(.slow), .skippedWhenFast, arguments: [0, 1, 2])
    func sameMatchesOnCorpus(_ index: Int) throws {
        let (known, source) = Self.cases[index]
        let general = BacktrackingMatcher(root: try RegexParser.parse(source))
        var text = ScalarText()
        var failures: [String] = []
        // Every 3rd text keeps the debug-build run short; starts are every scalar.
        for (n, sample) in TokenizerFixtures.corpus.enumerated() where n % 3 == 0 {
            let bytes = Array(sample.utf8)
            bytes.withUnsafeBufferPointer { text.load($0) }
            for start in 0...text.count {
                let fast = known.match(text, at: start)
                let slow = general.match(text, at: start)
                if fast != slow {
                    failures.append(
                        "\(known) text \(n) at \(start) (\"\(preview(String(decoding: bytes[text.offsets[start]...], as: UTF8.self), limit: 20))\"): "
                            + "fast \(fast.map(String.init) ?? "nil"), backtracking \(slow.map(String.init) ?? "nil")"
                    )
                    break
                }
            }
            if failures.count >= 10 { break }
        }
        if !failures.isEmpty { Issue.record("\(failures.joined(separator: "\n"))") }
    }

    /// Patterns outside the supported syntax are refused, not approximated.
    @Test(arguments: [
        #"(?<=a)b"#, #"(a)\1"#, #"\bword\b"#, #"(?<name>x)"#, #"[[:alpha:]]"#, #"\p{Greek}"#,
    ])
    func unsupportedSyntaxThrows(_ pattern: String) {
        #expect(throws: RegexParser.Unsupported.self) { try RegexParser.parse(pattern) }
    }
}
