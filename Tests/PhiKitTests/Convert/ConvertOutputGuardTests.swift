import Foundation
import PhiFormats
import PhiKit
import Testing

/// `--force` replaces an earlier model output and nothing else; no flag lets the output be,
/// contain or sit inside the source (issue 17: it deleted the source and a project folder).
@Suite("convert never deletes what is not its own output")
struct ConvertOutputGuardTests {
    typealias Scratch = ConvertRefusalTests.Scratch

    private func forced(_ s: Scratch, output: URL) -> ConvertOptions {
        var o = s.options()
        o.output = output.path
        o.force = true
        return o
    }

    private func refusal(_ body: () throws -> Void) -> ConvertError? {
        do {
            try body()
            return nil
        } catch {
            return error as? ConvertError
        }
    }

    @Test func forceRefusesAFolderThatIsNotAModel() throws {
        let s = try Scratch()
        defer { s.remove() }
        let project = s.work.appendingPathComponent("project")
        try FileManager.default.createDirectory(
            at: project.appendingPathComponent("src"), withIntermediateDirectories: true)
        try Data("thesis".utf8).write(to: project.appendingPathComponent("thesis.tex"))
        let error = refusal { _ = try convert(forced(s, output: project)) }
        #expect(error?.exitCode == .usage)
        #expect(
            error?.message.contains("not a model folder") == true, "\\(String(describing: error))")
        #expect(FileManager.default.fileExists(atPath: project.path + "/thesis.tex"))

        // config.json + weights, but a foreign file beside them: still refused, named.
        let lookalike = s.work.appendingPathComponent("lookalike")
        try FileManager.default.createDirectory(at: lookalike, withIntermediateDirectories: true)
        for name in ["config.json", "model.safetensors", "budget.xlsx"] {
            try Data("x".utf8).write(to: lookalike.appendingPathComponent(name))
        }
        let named = refusal { _ = try convert(forced(s, output: lookalike)) }
        #expect(named?.message.contains("budget.xlsx") == true)
        #expect(FileManager.default.fileExists(atPath: lookalike.path + "/budget.xlsx"))

        // A file where the output folder should be.
        let file = s.work.appendingPathComponent("file")
        try Data("keep".utf8).write(to: file)
        #expect(refusal { _ = try convert(forced(s, output: file)) }?.exitCode == .usage)
        #expect(FileManager.default.fileExists(atPath: file.path))
    }

    @Test func forceReplacesAModelFolderWithoutManifest() throws {
        let s = try Scratch()
        defer { s.remove() }
        let old = s.work.appendingPathComponent("mlx-output")
        try FileManager.default.createDirectory(at: old, withIntermediateDirectories: true)
        for name in ["config.json", "model.safetensors", "tokenizer.json", "README.md"] {
            try Data("{}".utf8).write(to: old.appendingPathComponent(name))
        }
        let summary = try convert(forced(s, output: old))
        #expect(summary.outputDirectory == old.path)
        #expect(FileManager.default.fileExists(atPath: old.path + "/.phikit-manifest.json"))
    }

    @Test func theSourceIsNeverTheOutputNorInsideIt() throws {
        let s = try Scratch()
        defer { s.remove() }
        let before = try FileManager.default.contentsOfDirectory(atPath: s.source.path).sorted()
        // The source itself, the folder holding it, and a folder inside it; with --force.
        for output in [s.source, s.work, s.source.appendingPathComponent("sub")] {
            let error = refusal { _ = try convert(forced(s, output: output)) }
            #expect(error?.exitCode == .usage, "\\(output.path)")
            #expect(error?.message.contains(s.source.path) == true)
        }
        // Through a symbolic link to the source's parent.
        let link = s.work.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: s.work)
        #expect(refusal { _ = try convert(forced(s, output: link)) }?.exitCode == .usage)
        try FileManager.default.removeItem(at: link)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: s.source.path).sorted() == before)
        try s.expectNothingWritten()
    }
}
