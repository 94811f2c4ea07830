import Foundation
import PhiFormats
import PhiKit

/// `phikit eval MODEL… --reference REF --text FILE`: perplexity of each model and how far
/// its next-token distributions are from the reference's, side by side.
struct EvalCommand: Command {
    static let name = "eval"
    static let summary = "Measure what a quantization costs: perplexity, KL and top-1 vs a reference"
    static let usage = """
        phikit eval <model>… --text <file> [--reference <model>] [--ctx 512] [--json]
        """
    static let help = """
        Scores a text with every model and compares each with the reference position by
        position: perplexity, the mean and 99th-percentile KL divergence of its next-token
        distribution from the reference's, how often its top token is the reference's
        (top-1 agreement), and the mean |Δ logit|; plus each model's size on disk and the
        memory it needs at --ctx (weights + a float16 KV cache of that many positions).
        The text is tokenized once and cut into windows of --ctx tokens, each scored from an
        empty cache (as llama-perplexity's chunks). The models run side by side, a block of
        positions at a time, so no logits file is written.

        arguments:
          <model>…                 the models to evaluate (directories, store names, aliases)

        options:
          --text <file>            the text to score (UTF-8; - reads stdin)
          --reference <model>      the model to compare with, usually the float source
                                   (listed first; its own perplexity is in the table too)
          --reference exact        compare each model with float64 of its own stored
                                   weights, dequantized exactly (phi3 models; slow: a
                                   float64 forward pass of every window, for small models)
          --ctx <n>                tokens per window (default 512)
          --json                   print the report as JSON

        exit codes: 64 bad options, 65 models that do not share a tokenizer, 66 not found
        """

    var options: EvalOptions
    var json: Bool

    init(_ args: inout ArgumentReader) throws {
        let textPath = try args.option("--text")
        let reference = try args.option("--reference")
        let context = try args.option("--ctx", as: Int.self)
        json = args.flag("--json")
        var models: [String] = []
        while let m = args.optionalPositional() { models.append(m) }
        try args.finish()
        guard !models.isEmpty else { throw UsageError("missing argument <model>") }
        guard let textPath else { throw UsageError("missing --text <file>") }
        let text: String
        if textPath == "-" {
            text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        } else {
            guard let data = FileManager.default.contents(atPath: textPath) else {
                throw UsageError("cannot read --text \(textPath)")
            }
            text = String(decoding: data, as: UTF8.self)
        }
        options = EvalOptions(
            models: models,
            reference: reference.map { $0 == "exact" ? .exact : .model($0) }, text: text)
        if let context { options.context = context }
    }

    func run() throws {
        let report = try InterruptibleJob.run(
            options, progressLine: Self.progressLine, PhiKit.evaluate)
        if json {
            try StandardOutput.print(try Format.json(report))
            return
        }
        try StandardOutput.print(Self.table(report))
    }

    /// `scoring [#########-----------]  1,024/4,096 positions  830/s  ETA 3 s`.
    static func progressLine(_ p: EvalProgress) -> String {
        let width = 20
        let filled = p.positionCount == 0 ? 0 : width * p.positionsDone / p.positionCount
        var line =
            "scoring [" + String(repeating: "#", count: filled)
            + String(repeating: "-", count: width - filled) + "]  "
            + "\(Format.grouped(p.positionsDone))/\(Format.grouped(p.positionCount)) positions"
        if p.elapsed > 0.5, p.positionsDone > 0 {
            let rate = Double(p.positionsDone) / p.elapsed
            line += "  \(Int(rate))/s  ETA \(Int((Double(p.positionCount - p.positionsDone) / rate).rounded())) s"
        }
        return line
    }

    static func table(_ r: EvalReport) -> String {
        func opt(_ v: Double?, _ decimals: Int) -> String {
            v.map { Format.fixed($0, decimals: decimals) } ?? "-"
        }
        let rows = r.results.map { m in
            [
                m.model + (m.isReference ? " (reference)" : ""),
                Format.fixed(m.perplexity, decimals: 4),
                opt(m.meanKL, 6), opt(m.p99KL, 6),
                m.topOneAgreement.map { Format.fixed($0 * 100, decimals: 2) + "%" } ?? "-",
                opt(m.meanAbsoluteLogitDifference, 4),
                Format.bytes(m.sizeOnDisk), Format.bytes(m.memoryAtContext),
            ]
        }
        return Format.table(
            header: [
                "MODEL", "PPL", "KL MEAN", "KL P99", "TOP-1", "|ΔLOGIT|", "DISK",
                "MEM@\(r.context)",
            ], rows: rows, rightAligned: Set(1...7))
            + "\n\(Format.grouped(r.positions)) positions (\(Format.grouped(r.tokens)) tokens, "
            + "\(r.windows) windows of \(r.context)) in \(Format.fixed(r.seconds, decimals: 1)) s"
    }
}
