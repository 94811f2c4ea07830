import Foundation
import PhiKit

/// `phikit list [PATTERN]`: the models on this machine, or with `--available` the registry.
struct ListCommand: Command {
    static let name = "list"
    static let aliases = ["ls"]
    static let summary = "List the models in the local cache and converted-model store"
    static let usage =
        "phikit list [<pattern>] [--sort name|size|modified] [--available] [--names | --json]"
    static let help = """
        Lists local models: every revision in the Hugging Face cache (pulled by phikit, hf or
        mlx-lm) and every model phikit converted, with revision, format (mlx q4 g64, bf16, …),
        parameters, size on disk (blobs shared by revisions counted once), last change, and
        whether it is complete (all files of the Hub's list there, no partial download, the
        weights open). A footer gives the totals.

        arguments:
          <pattern>           show only models whose name contains <pattern> (any case)

        options:
          --sort <key>        name (default), size (largest first) or modified (newest first)
          --available         list the registry instead: every alias, its repo, size and
                              whether it is downloaded
          --names             print only the names, one per line, as commands take them:
                              registry names of the models here, then the store's and
                              the cache's (with --available: every registry name and
                              alias); shell completion uses it
          --json              print the list as JSON
        """

    var pattern: String?
    var sort: ListSort
    var available: Bool
    var names: Bool
    var json: Bool

    init(_ args: inout ArgumentReader) throws {
        let sortName = try args.option("--sort")
        available = args.flag("--available")
        names = args.flag("--names")
        json = args.flag("--json")
        pattern = args.optionalPositional()
        try args.finish()
        if names && json { throw UsageError("--names and --json are two outputs: pick one") }
        guard let sort = ListSort(rawValue: sortName ?? "name") else {
            throw UsageError(
                "invalid value '\(sortName!)' for '--sort'", hint: "use name, size or modified")
        }
        self.sort = sort
    }

    func run() throws {
        if names { return try printNames() }
        if available {
            let models = try PhiKit.availableModels().filter {
                pattern == nil
                    || ($0.name + " " + ($0.repo ?? "")).lowercased().contains(
                        pattern!.lowercased())
            }
            try StandardOutput.print(json ? try Format.json(models) : Self.availableTable(models))
            return
        }
        var options = ListOptions()
        options.pattern = pattern
        options.sort = sort
        let list = PhiKit.listModels(options)
        try StandardOutput.print(json ? try Format.json(list) : Self.table(list))
    }

    /// `--names`: what a shell completes MODEL with. Quiet when there is nothing (a missing
    /// registry included): completion must not print errors into the command line.
    private func printNames() throws {
        // Registry names of models that are here (bundled or downloaded) come first.
        let registry = ((try? PhiKit.availableModels()) ?? []).filter {
            available || $0.status == "bundled" || $0.status == "downloaded"
        }
        let all =
            registry.flatMap { [$0.name] + $0.aliases }
            + (available ? [] : ModelLocator.localNames())
        let shown = all.filter { pattern == nil || $0.lowercased().contains(pattern!.lowercased()) }
        if !shown.isEmpty { try StandardOutput.print(shown.joined(separator: "\n")) }
    }

    static func table(_ list: ModelList) -> String {
        guard !list.models.isEmpty else {
            return "No models found in \(list.cacheDirectory) or \(list.storeDirectory).\n"
                + "`phikit pull phi-4-mini` downloads one; `phikit list --available` shows more."
        }
        let now = Date()
        let rows = list.models.map { m in
            [
                m.name, m.revisionLabel, m.format ?? "?", m.parameters.map(parameters) ?? "?",
                Format.bytes(m.sizeOnDisk), age(m.lastModified, now: now),
                m.complete ? "complete" : "incomplete",
            ]
        }
        var text = Format.table(
            header: ["NAME", "REVISION", "FORMAT", "PARAMS", "SIZE", "MODIFIED", "STATUS"],
            rows: rows, rightAligned: [3, 4])
        for m in list.models where !m.complete {
            text += "\n  \(m.name) \(m.revisionLabel): " + m.problems.joined(separator: "; ")
        }
        let repos = Set(list.models.map(\.name)).count
        text +=
            "\nFound \(repos) model(s), \(list.models.count) revision(s), "
            + "\(Format.bytes(list.totalSize)) on disk."
        if list.partialBytes > 0 {
            text +=
                " Partial downloads: \(Format.bytes(list.partialBytes))"
                + " (resumed by the next pull; `phikit rm --partials` removes them)."
        }
        return text
    }

    static func availableTable(_ models: [AvailableModel]) -> String {
        let rows = models.map { m in
            [
                m.name, m.repo ?? "(bundled)", m.pinned ? String(m.revision.prefix(7)) : m.revision,
                m.parameters.map(parameters) ?? "?",
                m.downloadSize.map { (m.pinned ? "" : "~") + Format.bytes($0) } ?? "-", m.status,
            ]
        }
        return Format.table(
            header: ["NAME", "REPO", "REVISION", "PARAMS", "DOWNLOAD", "STATUS"], rows: rows,
            rightAligned: [3, 4])
            + "\n~ estimated size (revision not pinned). Aliases and your own entries: "
            + "registry.json, ~/.config/phikit/registry.json."
    }

    /// `3.82B`, `260K`, `1.2M`.
    static func parameters(_ n: Int) -> String {
        let value = Double(n)
        if n >= 1_000_000_000 { return Format.fixed(value / 1e9, decimals: 2) + "B" }
        if n >= 1_000_000 { return Format.fixed(value / 1e6, decimals: 1) + "M" }
        if n >= 1_000 { return Format.fixed(value / 1e3, decimals: 0) + "K" }
        return String(n)
    }

    /// `just now`, `5 minutes ago`, `3 hours ago`, `2 days ago`, `4 months ago`.
    static func age(_ date: Date, now: Date) -> String {
        let seconds = Int(now.timeIntervalSince(date))
        func unit(_ n: Int, _ name: String) -> String { "\(n) \(name)\(n == 1 ? "" : "s") ago" }
        switch seconds {
        case ..<60: return "just now"
        case ..<3600: return unit(seconds / 60, "minute")
        case ..<86400: return unit(seconds / 3600, "hour")
        case ..<(86400 * 60): return unit(seconds / 86400, "day")
        case ..<(86400 * 730): return unit(seconds / (86400 * 30), "month")
        default: return unit(seconds / (86400 * 365), "year")
        }
    }
}
