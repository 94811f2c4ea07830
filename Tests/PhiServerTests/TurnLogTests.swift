import Foundation
import PhiEngine
import PhiKit
import TestSupport
import Testing

@testable import PhiServer

/// The scheduler's per-turn log (PHIKIT_SCHEDULER_TRACE) on the bundled stories-260k.
@Suite("scheduler turn log")
struct TurnLogTests {
    @Test("one line per turn: every prompt token and every decoded row accounted for")
    func linesAccountForTheWork() throws {
        let container = try #require(SchedulerTests.container)
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("phikit-turns-\(UUID().uuidString).tsv").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let scheduler = Scheduler(
            container: container,
            configuration: .init(
                parallel: 2, queueCapacity: 4, contextSize: 256, cacheBytes: 0,
                speculation: .off, prefillChunk: 4, turnLog: try TurnLog(path: path)))
        scheduler.start()
        let prompts = [[1, 403, 407, 261, 500, 9, 12], [1, 9, 9, 9, 77]]
        let jobs = try prompts.map { GenerationJob(try SchedulerTests.request($0, maxTokens: 10)) }
        for job in jobs { try scheduler.submit(job) }
        let summaries = jobs.map(SchedulerTests.summary)
        scheduler.shutdown()
        #expect(summaries.allSatisfy { $0?.completionTokens == 10 })

        let lines = try String(contentsOfFile: path, encoding: .utf8)
            .split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        let header = try #require(lines.first)
        let column = { (name: String) throws -> Int in try #require(header.firstIndex(of: name)) }
        let (prompt, rows, slots, pass) = (
            try column("prompt_tokens"), try column("decode_rows"), try column("slots"),
            try column("pass_ms")
        )
        let turns = lines.dropFirst()
        // Prompts go in chunks of 4: 7 + 5 tokens in 2 + 2 turns; each answer's first token
        // comes from its prompt's last chunk, the other 9 from decoded rows.
        #expect(turns.reduce(0) { $0 + Int($1[prompt])! } == 12)
        #expect(turns.filter { Int($0[prompt])! > 0 }.count == 4)
        #expect(turns.reduce(0) { $0 + Int($1[rows])! } == 2 * 9)
        #expect(turns.contains { Int($0[slots])! == 2 })
        #expect(turns.allSatisfy { Double($0[pass])! > 0 })
    }
}
