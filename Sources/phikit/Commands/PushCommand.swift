import Foundation
import PhiFormats
import PhiHub
import PhiKit

/// `phikit push DIR ORG/NAME`: publish a model folder to the Hugging Face Hub in one commit.
struct PushCommand: Command {
    static let name = "push"
    static let summary = "Upload a model folder to the Hugging Face Hub"
    static let usage = """
        phikit push <dir> <org/name> [--revision <branch>] [--private] [--message <text>]
                    [--token <token>] [--json]
        """
    static let help = """
        Uploads every file of <dir> (hidden files left out) to the Hub repo <org/name> in one
        commit, as `huggingface_hub`'s upload_folder and `mlx_lm.convert --upload-repo` do:
        the repo is created if it does not exist (public unless --private), large and binary
        files go to the Hub's LFS storage (in parts when the Hub asks for multipart), small
        text files into the commit. Each file is hashed once; files the repo already holds
        unchanged are left out, and objects the Hub's storage already has are not sent again,
        so pushing again after an interruption sends only what is missing. A folder without a
        README.md (or with only the front matter `convert` writes) gets the model card
        mlx-lm publishes: library_name mlx, base_model, the quantization and the command
        that made it. The token goes to the Hub only, never to the storage hosts uploads are
        sent to, and is never printed. On success prints the commit URL.

        arguments:
          <dir>                the model folder (for example what `phikit convert -o` wrote)
          <org/name>           the Hub repo to push to

        options:
          --revision <branch>  the branch to commit to (default main; created from main when
                               missing)
          --private            create the repo private (an existing repo keeps its visibility)
          -m, --message <text> the commit message (default "Upload folder with phikit")
          --token <token>      Hub token with write access (default: HF_TOKEN, then
                               HF_TOKEN_PATH or the token file in HF_HOME)
          --json               print the result (commit, what happened to each file) as JSON

        environment: HF_ENDPOINT (another Hub), HF_TOKEN
        exit codes: 64 bad options or no token, 66 <dir> not found or empty, 69 network or HTTP
          error (refused token, rate limit, server error, another writer), 74 local I/O,
          130 interrupted
        """

    var options: PushOptions
    var json: Bool

    init(_ args: inout ArgumentReader) throws {
        let revision = try args.option("--revision")
        let isPrivate = args.flag("--private")
        let message = try args.option("-m", "--message")
        let token = try args.option("--token")
        json = args.flag("--json")
        let directory = try args.positional("dir")
        let repoID = try args.positional("org/name")
        try args.finish()
        if revision?.isEmpty == true { throw UsageError("--revision is empty") }
        options = PushOptions(directory: directory, repoID: repoID)
        if let revision { options.revision = revision }
        options.isPrivate = isPrivate
        options.message = message
        options.token = token
    }

    func run() throws { try Self.push(options, json: json) }

    /// `convert --upload-repo` pushes its output the same way.
    static func push(_ directory: String, to repoID: String, json: Bool) throws {
        try push(PushOptions(directory: directory, repoID: repoID), json: json)
    }

    static func push(_ options: PushOptions, json: Bool) throws {
        let view = PushProgressView()
        let result: PushResult
        do {
            result = try PhiKit.push(options) { view.show($0) }
        } catch {
            view.clear()
            throw error
        }
        view.clear()
        Diagnostics.writeStderr(summary(result) + "\n")
        if json {
            try StandardOutput.print(try Format.json(result))
        } else {
            try StandardOutput.print(result.commitURL ?? "\(result.repoID)@\(result.revision)")
        }
    }

    /// `pushed 3 files (2.1 GB uploaded, 1 already on the Hub), 2 unchanged: commit 1a2b3c4`.
    static func summary(_ result: PushResult) -> String {
        func count(_ action: PushedFile.Action) -> Int {
            result.files.filter { $0.action == action }.count
        }
        let uploadedBytes = result.files.filter { $0.action == .uploaded }.reduce(0) {
            $0 + $1.size
        }
        guard let commit = result.commit else {
            return "up to date: \(result.repoID)@\(result.revision) already holds all "
                + "\(result.files.count) files"
        }
        let sent = count(.uploaded) + count(.committed) + count(.present)
        var parts = ["\(Format.bytes(uploadedBytes)) uploaded"]
        if count(.present) > 0 { parts.append("\(count(.present)) already on the Hub") }
        var line = "pushed \(sent) files (\(parts.joined(separator: ", ")))"
        if count(.unchanged) > 0 { line += ", \(count(.unchanged)) unchanged" }
        if count(.ignored) > 0 { line += ", \(count(.ignored)) ignored by the repo" }
        if result.createdRepo { line += "; created \(result.repoID)" }
        if result.createdBranch { line += "; created branch \(result.revision)" }
        return line + ": commit \(commit.prefix(7))"
    }
}

/// A push's progress on stderr: one line redrawn in place on a terminal, nothing elsewhere.
final class PushProgressView {
    private let terminal = Diagnostics.stderrIsTerminal
    private var drawn = false

    func show(_ event: PushProgress) {
        guard terminal else { return }
        let line: String
        switch event {
        case .hashing(let path, let index, let count):
            line = "hashing \(index + 1)/\(count) \(path)"
        case .uploading(let path, let sent, let total):
            line = "uploading \(path) \(Format.bytes(sent)) / \(Format.bytes(total))"
        case .committing(let files):
            line = "committing \(files) files …"
        }
        Diagnostics.writeStderr("\r\u{1B}[2K" + line)
        drawn = true
    }

    func clear() {
        guard drawn else { return }
        Diagnostics.writeStderr("\r\u{1B}[2K")
        drawn = false
    }
}
