import Foundation
import PhiFormats
import PhiText

/// The non-weight files of a converted model.
///
/// mlx_lm.convert copies `*.py` and `generation_config.json`, and re-saves the tokenizer
/// through transformers (`save_pretrained`), which re-serialises `tokenizer.json` (merges as
/// pairs, `ignore_merges` added), trims `tokenizer_config.json` and moves its `chat_template`
/// into `chat_template.jinja`. Those re-serialised bytes depend on the transformers version and
/// cannot be reproduced without it, so phikit copies the source's tokenizer files unchanged
/// (every loader, mlx_lm's included, reads them the same way) and only adds
/// `chat_template.jinja` — exactly the template string, which is what transformers writes —
/// when the source keeps its template inside tokenizer_config.json.
enum ConvertFiles {
    /// Copied when present, byte for byte (symlinks of HF cache snapshots are followed).
    static let tokenizerFiles = [
        "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
        "tokenizer.model", "vocab.json", "merges.txt", "tiktoken.model", "chat_template.jinja",
        "chat_template.json", "generation_config.json",
    ]

    /// Writes everything but the weights, index and config into `directory`.
    static func write(from source: String, to directory: String, hubRepo: String?) throws {
        let fm = FileManager.default
        let entries = (try? fm.contentsOfDirectory(atPath: source)) ?? []
        for name in entries.sorted()
        where tokenizerFiles.contains(name) || name.hasSuffix(".py") || name.hasSuffix(".tiktoken")
        {
            let from = source + "/" + name
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: from, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            try copy(from, to: directory + "/" + name)
        }
        if !entries.contains("chat_template.jinja"), let template = try chatTemplate(in: source) {
            try put(template.utf8, directory + "/chat_template.jinja")
        }
        try put(ModelCard.text(baseModel: hubRepo).utf8, directory + "/README.md")
    }

    /// tokenizer_config.json's `chat_template` when it is a single string (a list of named
    /// templates is left where it is). A broken tokenizer_config.json is an error: the
    /// converted model could not load it either.
    static func chatTemplate(in directory: String) throws -> String? {
        guard
            case .single(let text) = try TokenizerConfig.load(directory: directory)?
                .chatTemplates()
        else { return nil }
        return text
    }

    private static func copy(_ from: String, to: String) throws {
        let data: [UInt8]
        do {
            data = try LocalFile.read(from)
        } catch {
            throw ConfigError.unreadable(error)
        }
        try put(data, to)
    }

    private static func put(_ bytes: some Collection<UInt8>, _ path: String) throws {
        do {
            try AtomicFile.write(bytes, to: path)
        } catch {
            throw ConvertError.io(path: path, detail: error.message)
        }
    }
}
