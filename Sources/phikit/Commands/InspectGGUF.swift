import PhiFormats
import PhiKit

/// `phikit inspect FILE.gguf`: model summary, metadata keys, tensor table.
extension InspectCommand {
    func runGGUF() throws {
        let report = try PhiKit.inspectGGUF(path: path)
        try StandardOutput.print(json ? try Format.json(report) : Self.render(report))
    }

    static func render(_ r: GGUFInspectReport) -> String {
        let rows = r.tensors.map { t in
            [
                t.name, t.type, "[" + t.shape.map(String.init).joined(separator: ", ") + "]",
                Format.bytes(t.bytes),
            ]
        }
        var lines = [
            Format.table(header: ["NAME", "TYPE", "SHAPE", "SIZE"], rows: rows, rightAligned: [3]),
            "",
            Format.table(
                header: ["KEY", "TYPE", "VALUE"],
                rows: r.metadata.map { [$0.key, $0.type, $0.value] }),
            "",
        ]
        let m = r.model
        func n(_ v: Int?) -> String { v.map(String.init) ?? "?" }
        lines.append(
            "model:        \(m.architecture ?? "unknown architecture")"
                + (m.name.map { " (\($0))" } ?? "") + ", \(n(m.blockCount)) layers, hidden "
                + "\(n(m.embeddingLength)), feed-forward \(n(m.feedForwardLength)), "
                + "\(n(m.headCount)) heads, \(n(m.headCountKV)) kv heads")
        lines.append(
            "context:      \(n(m.contextLength))"
                + (m.ropeOriginalContextLength.map { " (original \($0))" } ?? "")
                + ", rope base \(m.ropeFreqBase.map { "\($0)" } ?? "?"), rope dims "
                + n(m.ropeDimensionCount)
                + (m.ropeScalingType.map { ", scaling \($0)" } ?? "")
                + (r.tensors.contains { $0.name == "rope_factors_long.weight" }
                    ? ", LongRoPE factors" : ""))
        lines.append(
            "tokenizer:    \(m.tokenizerModel ?? "none")"
                + (m.tokenizerPre.map { " (pre \($0))" } ?? "")
                + ", \(n(m.vocabularySize)) tokens, chat template "
                + (m.hasChatTemplate ? "present" : "absent"))
        let types = r.typeCounts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
            .map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        lines.append(
            "\(Format.grouped(r.tensors.count)) tensors (\(types)), "
                + "\(Format.grouped(r.parameterCount)) parameters, \(Format.bytes(r.tensorBytes)); "
                + "GGUF v\(r.version)")
        return lines.joined(separator: "\n")
    }
}
