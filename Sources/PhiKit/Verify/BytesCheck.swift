import Foundation
import PhiFormats
import PhiHub

/// Layer 1: every file's bytes against the reference (the Hub's listing, the blob names, the
/// convert manifest), the registry's pins, and the state of the folder itself: missing and
/// extra files, sizes, links that lead nowhere, partial files interrupted jobs left.
struct BytesCheck {
    let target: VerifyTarget
    let reference: BytesReference
    let files: ModelFiles
    let scan: ScanResult
    private(set) var outcome = LayerOutcome(.bytes)

    init(target: VerifyTarget, reference: BytesReference, files: ModelFiles, scan: ScanResult) {
        self.target = target
        self.reference = reference
        self.files = files
        self.scan = scan
    }

    static let pullHint = "run `phikit pull` again: it fetches what is missing or wrong"

    mutating func run() -> LayerOutcome {
        for file in files.brokenLinks {
            let target =
                (try? FileManager.default.destinationOfSymbolicLink(atPath: file.absolute)) ?? "?"
            outcome.error(
                "broken_link", file: file.path, "links to \(target), which does not exist",
                hint: Self.pullHint)
        }
        for (path, reason) in scan.failures.sorted(by: { $0.key < $1.key }) {
            outcome.error("unreadable", file: relative(path), reason)
        }
        switch reference {
        case .listing(let entries, let fromHub):
            checkListing(entries)
            checkBlobNames(skipping: Set(entries.map(\.path)))
            checkRegistryPin(listing: entries)
            outcome.summary =
                "\(present) files against the Hub's listing of \(shortCommit)"
                + (fromHub ? " (fetched now)" : "") + notDownloadedNote(entries)
        case .blobNames:
            checkBlobNames(skipping: [])
            checkRegistryPin(listing: nil)
            outcome.warning(
                "no_listing",
                "no saved file list for commit \(shortCommit): each blob was checked against "
                    + "its name, but missing or extra files cannot be known offline",
                hint: "run `phikit verify` online, or `phikit pull`, to save the Hub's list")
            outcome.summary = "\(present) blobs against their names (no saved listing)"
        case .manifest(let manifest):
            checkManifest(manifest)
            outcome.summary = "\(present) files against convert's manifest"
        case .none:
            if let problem = target.manifestProblem {
                outcome.error("invalid_manifest", file: ConvertManifest.fileName, problem.problem)
            }
            outcome.summary =
                "\(present) files hashed; no reference to compare with (a plain directory)"
        }
        checkLeftovers()
        return outcome
    }

    private var present: Int { files.files.count }
    private var shortCommit: String { String(target.snapshot?.commit.prefix(8) ?? "") }

    private func digest(_ file: ModelFile) -> FileDigests? { scan.digests[file.absolute] }

    private func relative(_ path: String) -> String {
        path.hasPrefix(target.directory + "/")
            ? String(path.dropFirst(target.directory.count + 1)) : path
    }

    // MARK: Hub listing

    private mutating func checkListing(_ entries: [HubFileEntry]) {
        let listed = Dictionary(entries.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        for file in files.files where file.size != nil {
            guard let entry = listed[file.path] else {
                extraFile(file, against: "the Hub's listing of \(shortCommit)")
                continue
            }
            guard let digest = digest(file) else { continue }
            if digest.size != entry.size {
                outcome.error(
                    "size_mismatch", file: file.path,
                    "is \(digest.size) bytes; the Hub lists \(entry.size)", hint: Self.pullHint)
                continue
            }
            let (algorithm, expected, actual) =
                entry.lfs.map { ("sha256", $0.sha256, digest.sha256) }
                ?? ("git-sha1", entry.blobID, digest.gitSHA1)
            if actual != expected {
                outcome.error(
                    "hash_mismatch", file: file.path,
                    "\(algorithm) is \(actual ?? "?"), the Hub lists \(expected)"
                        + (file.blobName.map { " (blob \($0))" } ?? ""),
                    hint: Self.pullHint)
            } else if let blob = file.blobName, blob != entry.blobName {
                outcome.warning(
                    "link_mismatch", file: file.path,
                    "links to blob \(blob), the Hub's listing names it \(entry.blobName)")
            }
        }
        let partials = target.snapshot.map { $0.cache.partials(repoID: $0.repoID) } ?? []
        for entry in entries where files.file(entry.path) == nil {
            guard FilePatterns.mlxDefaults.matches(entry.path) else { continue }
            let partial = partials.first { $0.blobName == entry.blobName }
            outcome.error(
                "missing_file", file: entry.path,
                "is in the Hub's listing (\(entry.size) bytes) but not in the snapshot"
                    + (partial.map { "; only \($0.bytes) bytes were downloaded" } ?? ""),
                hint: Self.pullHint)
        }
    }

    /// Listed files this snapshot does not hold and that a default pull skips (README.md,
    /// images, other weight formats).
    private func notDownloadedNote(_ entries: [HubFileEntry]) -> String {
        let skipped = entries.filter {
            files.file($0.path) == nil && !FilePatterns.mlxDefaults.matches($0.path)
        }.count
        return skipped == 0 ? "" : "; \(skipped) other repo files not downloaded"
    }

    /// Each snapshot link's blob against its own name (a sha256 or a git sha1). Files whose
    /// listing check already compared the same hash are skipped.
    private mutating func checkBlobNames(skipping listed: Set<String>) {
        for file in files.files where file.size != nil && !listed.contains(file.path) {
            guard let blob = file.blobName, let digest = digest(file) else { continue }
            let actual: String?
            switch blob.utf8.count {
            case 64: actual = digest.sha256
            case 40: actual = digest.gitSHA1
            default:
                outcome.warning(
                    "odd_blob_name", file: file.path,
                    "links to blob \(blob), whose name is not a sha256 or git sha1")
                continue
            }
            if actual != blob {
                outcome.error(
                    "corrupt_blob", file: file.path,
                    "blob \(blob) holds bytes that hash to \(actual ?? "?")", hint: Self.pullHint)
            }
        }
    }

    /// The registry pins a commit and the exact size of a default pull of it.
    private mutating func checkRegistryPin(listing: [HubFileEntry]?) {
        guard let snapshot = target.snapshot, let entry = target.entry,
            entry.repo == snapshot.repoID, entry.isPinned
        else { return }
        guard entry.revision == snapshot.commit else {
            outcome.warning(
                "registry_revision", file: entry.source.isEmpty ? nil : entry.source,
                "the registry pins \(entry.name) to \(entry.revision.prefix(8)); this snapshot "
                    + "is \(shortCommit)")
            return
        }
        guard let pinned = entry.downloadSize else { return }
        let sizes: [Int] =
            listing.map { $0.filter { FilePatterns.mlxDefaults.matches($0.path) }.map(\.size) }
            ?? files.files.filter { FilePatterns.mlxDefaults.matches($0.path) }.compactMap(\.size)
        let total = sizes.reduce(0, +)
        if total != pinned {
            outcome.error(
                "registry_size", file: entry.source.isEmpty ? nil : entry.source,
                "the registry pins a default pull of \(entry.name) at \(pinned) bytes; "
                    + (listing == nil ? "the snapshot holds" : "the Hub's listing adds up to")
                    + " \(total)")
        }
    }

    // MARK: Convert manifest

    private mutating func checkManifest(_ manifest: ConvertManifest) {
        for (name, expected) in manifest.files.sorted(by: { $0.key < $1.key }) {
            guard let file = files.file(name), file.size != nil else {
                if files.file(name) == nil {
                    outcome.error(
                        "missing_file", file: name, "was written by convert but is missing",
                        hint: "convert the model again")
                }
                continue
            }
            guard let digest = digest(file) else { continue }
            if digest.size != expected.size {
                outcome.error(
                    "size_mismatch", file: name,
                    "is \(digest.size) bytes; convert wrote \(expected.size)",
                    hint: "convert the model again")
            } else if digest.sha256 != expected.sha256 {
                outcome.error(
                    "hash_mismatch", file: name,
                    "sha256 is \(digest.sha256 ?? "?"), convert wrote \(expected.sha256)",
                    hint: "convert the model again")
            }
        }
        for file in files.files where manifest.files[file.path] == nil {
            extraFile(file, against: "convert's manifest")
        }
    }

    /// A file nobody listed: harmless unless loaders would pick it up as weights.
    private mutating func extraFile(_ file: ModelFile, against reference: String) {
        let message = "is not in \(reference)"
        if file.path.hasSuffix(".safetensors") {
            outcome.error(
                "extra_file", file: file.path, message + "; loaders may read it as weights")
        } else {
            outcome.warning("extra_file", file: file.path, message)
        }
    }

    // MARK: Leftovers

    /// Partial files of interrupted jobs: inside the folder, among the repo's blobs, and
    /// convert's temporary folders beside the model.
    private mutating func checkLeftovers() {
        let hint = "`phikit rm --partials` removes what no running job is writing"
        for path in files.leftovers {
            outcome.warning(
                "leftover", file: path, "is a partial file an interrupted job left", hint: hint)
        }
        if let snapshot = target.snapshot {
            let missing = Set(missingBlobs())
            for partial in snapshot.cache.partials(repoID: snapshot.repoID)
            where !missing.contains(partial.blobName) {
                let live = snapshot.cache.isLive(partial, repoID: snapshot.repoID)
                outcome.warning(
                    "leftover", file: partial.path,
                    live
                        ? "is being downloaded right now (\(partial.bytes) bytes so far)"
                        : "is a partial download (\(partial.bytes) bytes) an interrupted pull left",
                    hint: live ? nil : hint)
            }
            return
        }
        let parent = (target.directory as NSString).deletingLastPathComponent
        let base = (target.directory as NSString).lastPathComponent
        let siblings = (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []
        for name in siblings.sorted()
        where name.hasPrefix(base + ".incomplete-") || name.hasPrefix(base + ".old-") {
            let path = parent + "/" + name
            guard let lock = DirectoryLock(path: path) else {
                outcome.warning("leftover", file: path, "is being written by a running convert")
                continue
            }
            lock.release()
            outcome.warning(
                "leftover", file: path, "is a temporary folder an interrupted convert left",
                hint: hint)
        }
    }

    /// Blobs of listed files the snapshot lacks (their partials are reported with them).
    private func missingBlobs() -> [String] {
        guard case .listing(let entries, _) = reference else { return [] }
        return entries.filter {
            files.file($0.path) == nil && FilePatterns.mlxDefaults.matches($0.path)
        }.map(\.blobName)
    }
}
