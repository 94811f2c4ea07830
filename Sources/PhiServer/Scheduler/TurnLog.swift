import Foundation
import PhiEngine

/// A line per scheduler turn in a file (`phikit serve` writes one when
/// PHIKIT_SCHEDULER_TRACE names it): where a concurrent server's time goes — how many rows
/// each forward pass decoded, how many prompt tokens it took with them, the pass's wall and
/// CPU time, and the time around it (drafting, sampling and posting the text, admitting,
/// waiting for work). A tool for benchmarks (scripts/bench/serve_turns.py sums it); the
/// answers do not depend on it.
public final class TurnLog: @unchecked Sendable {
    /// What one turn did and how long each part took (seconds).
    struct Turn {
        /// Since the previous turn ended: waiting for requests and admitting them.
        var gap = 0.0
        var admit = 0.0
        var decodingSlots = 0
        /// Tokens the decoding slots fed (pending tokens and drafts) and the drafts among them.
        var decodeRows = 0
        var draftTokens = 0
        var promptTokens = 0
        /// Planning the drafts; the forward pass(es) (wall and the process's CPU time); taking
        /// the tokens from the logits (sampling, text, posting events).
        var plan = 0.0
        var pass = 0.0
        var passCPU = 0.0
        var accept = 0.0
        /// The process's CPU time over the whole turn, gap included (other threads: the
        /// connections writing the streams).
        var cpu = 0.0
    }

    private let handle: FileHandle

    /// Creates (or empties) `path`; throws when it cannot be written.
    public init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        // t: when the turn ended, seconds on CLOCK_MONOTONIC (Python's time.monotonic() on
        // Linux), so a benchmark can pick the turns of each of its measurements.
        write(
            "t\tgap_ms\tadmit_ms\tslots\tdecode_rows\tdraft_tokens\tprompt_tokens\tplan_ms"
                + "\tpass_ms\tpass_cpu_ms\taccept_ms\tcpu_ms\n")
    }

    deinit { try? handle.close() }

    func record(_ turn: Turn, endedAt end: Double) {
        let ms = { (seconds: Double) in String(format: "%.2f", seconds * 1000) }
        write(
            [
                String(format: "%.4f", end), ms(turn.gap), ms(turn.admit),
                "\(turn.decodingSlots)", "\(turn.decodeRows)", "\(turn.draftTokens)",
                "\(turn.promptTokens)", ms(turn.plan), ms(turn.pass), ms(turn.passCPU),
                ms(turn.accept), ms(turn.cpu),
            ].joined(separator: "\t") + "\n")
    }

    private func write(_ line: String) {
        handle.write(Data(line.utf8))
    }

    /// The process's CPU time so far (every thread), seconds.
    static func processCPUSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }
}
