import Foundation
import PhiEngine
import PhiFormats
import PhiKit

/// A pull's progress on stderr. On a terminal: one aggregate line (files, bytes, bar, rate,
/// ETA) and one line per transfer in flight, redrawn in place. Not on a terminal: the plan
/// line and the summary line only — logs and pipes never get escape codes or carriage returns.
final class PullProgressView {
    private let terminal = Diagnostics.stderrIsTerminal
    private var drawnLines = 0
    /// Recent (seconds, bytes) samples; the rate is taken over the last few seconds so a
    /// stall shows at once and resumed bytes do not count as speed.
    private var samples: [(time: Double, bytes: Int)] = []
    private var reportedWaits: Set<String> = []

    /// Loads MODEL as `run`, `chat` and `serve` do: a Hub model missing from the cache is pulled first,
    /// its progress shown here, and the progress lines are gone before anything else prints.
    /// Loads MODEL, pulling it first if it is missing, as a job of its own: Ctrl-C stops the
    /// pull, and one pressed while the model loaded ends the command once it has.
    static func loadModel(
        _ model: String, threads: Int?, activationWidth: ActivationWidth = .int16,
        adapterPath: String? = nil, adapters: [NamedAdapter] = [],
        placement: WeightPlacement? = nil
    ) throws -> ModelContainer {
        try InterruptibleJob.run { cancel in
            let view = PullProgressView()
            defer { view.clear() }
            let container = try ModelContainer.load(
                model, threads: threads, activationWidth: activationWidth,
                adapterPath: adapterPath, adapters: adapters, placement: placement,
                pull: { view.show($0) },
                cancellation: cancel)
            try cancel.check()
            return container
        }
    }

    func show(_ event: PullProgress) {
        switch event {
        case .resolving(let repoID, let revision):
            if terminal { redraw(["resolving \(repoID)@\(revision) …"]) }
        case .planned(let plan):
            clear()
            Diagnostics.writeStderr(Self.planLine(plan) + "\n")
        case .downloading(let progress):
            if terminal {
                redraw(lines(progress))
            } else {
                reportWaits(progress)
            }
        }
    }

    /// Removes the live lines and prints the summary.
    func finish(_ result: PullResult) {
        clear()
        guard !result.dryRun else { return }
        if result.bundled {
            Diagnostics.writeStderr("\(result.model) is bundled with phikit; nothing to download\n")
        } else if result.bytesDownloaded == 0 {
            Diagnostics.writeStderr(
                "up to date: \(result.files.count) files, \(Format.bytes(result.totalBytes)) "
                    + "in the cache\n")
        } else {
            let rate = Double(result.bytesDownloaded) / max(result.seconds, 0.001)
            Diagnostics.writeStderr(
                "downloaded \(Format.bytes(result.bytesDownloaded)) in "
                    + "\(Format.fixed(result.seconds, decimals: 1)) s "
                    + "(\(Format.bytes(Int(rate)))/s); \(result.files.count) files, "
                    + "\(Format.bytes(result.totalBytes)) in the snapshot\n")
        }
    }

    func clear() {
        guard terminal, drawnLines > 0 else { return }
        Diagnostics.writeStderr(
            String(repeating: "\u{1B}[1A\u{1B}[2K", count: drawnLines - 1) + "\r\u{1B}[2K")
        drawnLines = 0
    }

    /// `pulling org/name@main (1a2b3c4): 7 files, 2.18 GB; 1.02 GB cached, 1.16 GB to
    /// download, 61.2 GB free`.
    static func planLine(_ plan: PullPlan) -> String {
        var line =
            "pulling \(plan.repoID)@\(plan.revision) (\(plan.commit.prefix(7))): "
            + "\(plan.files.count) files, \(Format.bytes(plan.totalBytes)); "
            + "\(Format.bytes(plan.cachedBytes)) cached, "
            + "\(Format.bytes(plan.bytesToDownload)) to download"
        if let free = plan.freeBytes { line += ", \(Format.bytes(free)) free" }
        return line
    }

    private func lines(_ p: PullTransferProgress) -> [String] {
        samples.append((p.elapsed, p.bytesDone))
        samples.removeAll { p.elapsed - $0.time > 3 }
        let window = samples.first.map { (p.elapsed - $0.time, p.bytesDone - $0.bytes) }
        let rate = window.map { $0.0 > 0.2 ? Double($0.1) / $0.0 : 0 } ?? 0
        let fraction = p.bytesTotal > 0 ? Double(p.bytesDone) / Double(p.bytesTotal) : 1
        var head =
            "\(p.filesDone)/\(p.filesTotal) files  \(Format.bytes(p.bytesDone)) / "
            + "\(Format.bytes(p.bytesTotal))  \(Self.bar(fraction, width: 24)) "
            + "\(Int(fraction * 100))%  \(Format.bytes(Int(rate)))/s"
        if rate > 0 { head += "  ETA \(Self.duration(Double(p.bytesTotal - p.bytesDone) / rate))" }
        return [head]
            + p.active.map { file in
                let name = file.path.count > 44 ? "…" + file.path.suffix(43) : file.path
                if let holder = file.waitingFor {
                    return "  \(name.padding(to: 44))  waiting for \(holder)"
                }
                let percent = file.bytesTotal > 0 ? file.bytesDone * 100 / file.bytesTotal : 100
                return
                    "  \(name.padding(to: 44))  \(Format.bytes(file.bytesDone).leftPadding(to: 8))"
                    + " / \(Format.bytes(file.bytesTotal))  \(percent)%"
            }
    }

    private func reportWaits(_ p: PullTransferProgress) {
        for file in p.active {
            guard let holder = file.waitingFor, !reportedWaits.contains(file.path) else { continue }
            reportedWaits.insert(file.path)
            Diagnostics.writeStderr("waiting for \(holder), which is downloading \(file.path)\n")
        }
    }

    private func redraw(_ lines: [String]) {
        let up = drawnLines > 1 ? "\u{1B}[\(drawnLines - 1)A" : ""
        let body = lines.map { "\r\u{1B}[2K" + $0 }.joined(separator: "\n")
        // Lines left over from a taller frame are cleared below the new one.
        let extra = max(0, drawnLines - lines.count)
        let tail =
            String(repeating: "\n\u{1B}[2K", count: extra) + (extra > 0 ? "\u{1B}[\(extra)A" : "")
        Diagnostics.writeStderr(up + body + tail)
        drawnLines = lines.count
    }

    static func bar(_ fraction: Double, width: Int) -> String {
        let filled = Int((min(max(fraction, 0), 1) * Double(width)).rounded(.down))
        return "[" + String(repeating: "█", count: filled)
            + String(repeating: "·", count: width - filled) + "]"
    }

    /// `42 s`, `3 min 05 s`, `1 h 02 min`.
    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s < 60 { return "\(s) s" }
        if s < 3600 { return "\(s / 60) min \(String(format: "%02d", s % 60)) s" }
        return "\(s / 3600) h \(String(format: "%02d", s / 60 % 60)) min"
    }
}
