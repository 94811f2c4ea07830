import Foundation
import PhiFormats
import PhiKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `phikit rm MODEL`: delete a model (or one revision) from the cache or the store;
/// `phikit rm --partials`: delete abandoned partial downloads and conversions.
struct RmCommand: Command {
    static let name = "rm"
    static let summary = "Remove a model (or partial downloads) from the local cache"
    static let usage = """
        phikit rm <model> [--revision <rev>] [-y] [--dry-run] [--json]
        phikit rm --partials [-y] [--dry-run] [--json]
        """
    static let help = """
        Deletes <model>: a converted model's folder, or a Hugging Face cache repo — its refs,
        snapshots and the blobs no remaining revision uses, like huggingface_hub's
        delete_revisions (other revisions keep working). Stale partial downloads of the repo
        go too; a download that is still running stops the removal. Asks first on a terminal;
        without a terminal it needs -y.

        --partials instead removes every abandoned partial download (blobs/*.incomplete in the
        cache) and every <out>.incomplete-* folder a killed convert left in the model store,
        never one a live pull or convert is still writing.

        arguments:
          <model>             converted model name, registry alias or Hub id (org/name[@rev])

        options:
          --revision <rev>    remove only this revision: branch, tag, commit or commit prefix
          -y, --yes           do not ask for confirmation
          --dry-run           show what would be removed, remove nothing
          --partials          remove abandoned partial downloads and conversions
          --json              print what was (or would be) removed as JSON
        """

    var model: String?
    var revision: String?
    var yes: Bool
    var dryRun: Bool
    var partials: Bool
    var json: Bool

    init(_ args: inout ArgumentReader) throws {
        revision = try args.option("--revision")
        yes = args.flag("-y", "--yes")
        dryRun = args.flag("--dry-run")
        partials = args.flag("--partials")
        json = args.flag("--json")
        model = partials ? args.optionalPositional() : try args.positional("model")
        try args.finish()
        if partials && (model != nil || revision != nil) {
            throw UsageError("--partials takes no model or --revision")
        }
    }

    func run() throws {
        if partials { return try runPrune() }
        var options = RemoveOptions(model: model!)
        options.revision = revision
        let plan = try PhiKit.planRemoval(options)
        let description = Self.describe(plan)
        if dryRun {
            // Every path that would go, one per line: exactly what the real run deletes.
            let paths = plan.paths.map { "\n  " + $0 }.joined()
            try StandardOutput.print(
                json ? try Format.json(plan) : "[dry-run] would remove " + description + paths)
            return
        }
        guard try confirm("About to remove " + description) else { return }
        try PhiKit.remove(plan)
        try StandardOutput.print(json ? try Format.json(plan) : "removed " + description)
    }

    private func runPrune() throws {
        let preview = PhiKit.prunePartials(dryRun: true)
        if dryRun || preview.removed.isEmpty {
            try StandardOutput.print(
                json ? try Format.json(preview) : Self.describe(preview, dry: dryRun))
            return
        }
        guard try confirm(Self.describe(preview, dry: true)) else { return }
        let result = PhiKit.prunePartials(dryRun: false)
        try StandardOutput.print(
            json ? try Format.json(result) : Self.describe(result, dry: false))
    }

    /// Asks on a terminal; refuses without one unless -y (a script must say so explicitly).
    /// False when the user says no: a choice, not a failure, so it says so and exits 0.
    private func confirm(_ what: String) throws -> Bool {
        guard !yes else { return true }
        guard isatty(STDIN_FILENO) == 1 else {
            throw UsageError(
                "refusing to delete without confirmation (stdin is not a terminal)",
                hint: "pass -y to delete, or --dry-run to see what would be deleted")
        }
        Diagnostics.text(what)
        Diagnostics.writeStderr("Proceed? [y/N] ")
        let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        guard answer == "y" || answer == "yes" else {
            Diagnostics.text("nothing removed")
            return false
        }
        return true
    }

    /// `mlx-community/X (2 revisions, whole repo; 2.18 GB; 1 blob(s) kept for other revisions)`.
    static func describe(_ plan: RemovalPlan) -> String {
        var text = plan.repoID ?? plan.model
        var details: [String] = []
        if plan.source == "converted" {
            details.append("converted model")
        } else if plan.removesModel {
            details.append(
                "\(plan.commits.count) revision\(plan.commits.count == 1 ? "" : "s"), whole repo")
        } else {
            details.append(
                "revision " + plan.commits.map { String($0.prefix(7)) }.joined(separator: ", "))
        }
        details.append(Format.bytes(plan.freedBytes))
        if plan.sharedBlobsKept > 0 {
            details.append("\(plan.sharedBlobsKept) blob(s) kept for other revisions")
        }
        text += " (" + details.joined(separator: "; ") + ")"
        return text
    }

    static func describe(_ result: PruneResult, dry: Bool) -> String {
        var lines = result.removed.map { "  \($0.path)  \(Format.bytes($0.bytes))" }
        if result.removed.isEmpty { lines.append("no stale partial downloads or conversions") }
        lines += result.live.map { "  \($0.path)  (in use by a running \($0.kind); kept)" }
        let verb = dry ? "would remove" : "removed"
        return "\(verb) \(result.removed.count) partial(s), \(Format.bytes(result.freedBytes)):\n"
            + lines.joined(separator: "\n")
    }
}
