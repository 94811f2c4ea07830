import Foundation
import PhiFormats

/// The model card a pushed MLX model carries, as `mlx_lm.convert --upload-repo` writes it
/// (`upload_to_hub`): the front matter `convert` already wrote (`library_name: mlx`,
/// `base_model`, `pipeline_tag`, the `mlx` tag), then a title, where the model came from, the
/// quantization and the command that made it, and how to load it. A README.md with text of
/// its own is the author's and is never touched.
enum PushModelCard {
    static func ensure(in directory: String, repoID: String) throws(FileError) {
        let path = directory + "/README.md"
        var frontMatter = ModelCard.text(baseModel: nil)
        if FileManager.default.fileExists(atPath: path) {
            let existing = String(decoding: try LocalFile.read(path, limit: 1 << 20), as: UTF8.self)
            guard let front = frontMatterOnly(existing) else { return }
            frontMatter = front
        }
        let config = (try? LocalFile.read(directory + "/config.json", limit: 16 << 20))
            .flatMap { try? JSONValue(parsing: $0) }
        let text = card(
            frontMatter: frontMatter, repoID: repoID, baseModel: baseModel(in: frontMatter),
            quantization: config?["quantization"])
        try AtomicFile.write(Array(text.utf8), to: path)
    }

    /// The front matter of a card that has nothing after it (what `convert` writes), or nil
    /// for a card with text of its own.
    static func frontMatterOnly(_ text: String) -> String? {
        guard text.hasPrefix("---\n") else { return nil }
        let body = text.dropFirst(4)
        guard let end = body.range(of: "\n---\n") else { return nil }
        let rest = body[end.upperBound...]
        guard rest.allSatisfy(\.isWhitespace) else { return nil }
        return String(text[..<end.upperBound])  // a Substring's indices are its base's
    }

    static func baseModel(in frontMatter: String) -> String? {
        for line in frontMatter.split(separator: "\n") where line.hasPrefix("base_model:") {
            let value = line.dropFirst("base_model:".count).trimmingCharacters(in: .whitespaces)
            return value.isEmpty ? nil : value
        }
        return nil
    }

    static func card(
        frontMatter: String, repoID: String, baseModel: String?, quantization: JSONValue?
    ) -> String {
        var lines = [frontMatter.hasSuffix("\n") ? String(frontMatter.dropLast()) : frontMatter, ""]
        lines.append("# \(repoID)")
        lines.append("")
        let source = baseModel.map { " from [\($0)](https://huggingface.co/\($0))" } ?? ""
        lines.append(
            "This model [\(repoID)](https://huggingface.co/\(repoID)) was converted to MLX "
                + "format\(source) using phikit version **\(PhiKitVersion.string)**"
                + (describe(quantization).map { ", \($0)" } ?? "") + ".")
        if let command = command(baseModel: baseModel, quantization: quantization) {
            lines += ["", "```bash", command, "```"]
        }
        lines += [
            "", "## Use with mlx", "", "```bash", "pip install mlx-lm", "```", "", "```python",
            "from mlx_lm import load, generate", "",
            "model, tokenizer = load(\"\(repoID)\")", "", "prompt = \"hello\"", "",
            "if tokenizer.chat_template is not None:",
            "    messages = [{\"role\": \"user\", \"content\": prompt}]",
            "    prompt = tokenizer.apply_chat_template(",
            "        messages, add_generation_prompt=True, return_dict=False,", "    )", "",
            "response = generate(model, tokenizer, prompt=prompt, verbose=True)", "```", "",
            "## Use with phikit", "", "```bash", "phikit run \(repoID) -p hello", "```", "",
        ]
        return lines.joined(separator: "\n")
    }

    /// "quantized to 4-bit affine (group size 64)", "quantized to mxfp4", or nil (float).
    static func describe(_ quantization: JSONValue?) -> String? {
        guard let quantization else { return nil }
        let mode = quantization["mode"]?.stringValue ?? "affine"
        guard let bits = quantization["bits"]?.intValue else { return nil }
        if mode != "affine" { return "quantized to \(mode)" }
        let group = quantization["group_size"]?.intValue.map { " (group size \($0))" } ?? ""
        return "quantized to \(bits)-bit affine\(group)"
    }

    /// The `phikit convert` line that writes this format from the base model.
    static func command(baseModel: String?, quantization: JSONValue?) -> String? {
        guard let baseModel else { return nil }
        guard let quantization, let bits = quantization["bits"]?.intValue else {
            return "phikit convert \(baseModel)"
        }
        let mode = quantization["mode"]?.stringValue ?? "affine"
        if mode != "affine" { return "phikit convert \(baseModel) -q --q-mode \(mode)" }
        let group = quantization["group_size"]?.intValue ?? 64
        return "phikit convert \(baseModel) -q --bits \(bits) --group-size \(group)"
    }
}
