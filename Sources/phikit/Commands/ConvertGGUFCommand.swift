import PhiFormats
import PhiKit

/// `phikit convert FILE.gguf`: runs the GGUF conversion and prints what came over exactly
/// and what did not (each inexact tensor with its largest error).
extension ConvertCommand {
    func runGGUF() throws -> String {
        let summary = try InterruptibleJob.run(
            options, progressLine: Self.progressLine, PhiKit.convertGGUF)
        if json {
            try StandardOutput.print(try Format.json(summary))
            return summary.outputDirectory
        }
        let exact = summary.exactTypes.sorted { $0.key < $1.key }
            .map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        try StandardOutput.print("Exact: \(exact.isEmpty ? "nothing" : exact) GGUF tensors.")
        if !summary.inexact.isEmpty {
            try StandardOutput.print(
                "Not exact (\(summary.inexact.count) tensors, no exact MLX form):")
            let rows = summary.inexact.map {
                [$0.tensor, $0.type, $0.became, String(format: "%.3g", $0.maxAbsError)]
            }
            try StandardOutput.print(
                Format.table(
                    header: ["TENSOR", "TYPE", "BECAME", "MAX ABS ERROR"], rows: rows,
                    rightAligned: [3]))
            let worst = summary.inexact.map(\.maxAbsError).max() ?? 0
            try StandardOutput.print("Largest error: \(String(format: "%.3g", worst)).")
        }
        let fileCount = summary.files.filter { $0.hasSuffix(".safetensors") }.count
        try StandardOutput.print(
            "Wrote \(summary.outputDirectory): \(summary.architecture) GGUF → MLX \(summary.modelType), "
                + "\(Format.grouped(summary.tensorCount)) tensors, \(fileCount) weight "
                + "\(fileCount == 1 ? "file" : "files"), \(Format.bytes(summary.bytesWritten)) in "
                + "\(Format.fixed(summary.seconds, decimals: 1)) s")
        return summary.outputDirectory
    }
}
