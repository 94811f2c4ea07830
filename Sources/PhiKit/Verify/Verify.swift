import Foundation
import PhiFormats
import PhiHub

/// `phikit verify`: finds MODEL, reads every file once (hashes and tensor statistics in
/// parallel), then runs the layers in order — bytes, structure, model, numbers, text and, when
/// asked, smoke — and returns everything they found. Problems with the model are findings in
/// the report (`passed` false: exit 1); a thrown error means verify could not check at all
/// (model not found: 66; the Hub unreachable for a listing: 69; Ctrl-C: 130).
public func verify(
    _ options: VerifyOptions, progress: (VerifyProgress) -> Void = { _ in }
) throws -> VerifyReport {
    let start = DispatchTime.now().uptimeNanoseconds
    let target = try VerifyTarget.locate(options.model, environment: options.environment)
    // Cheap things first: `verify /` walked and hashed the whole file system before it said
    // there was no config.json. A plain folder (no snapshot, no manifest) must at least have
    // one; a snapshot or converted model without it is a finding, reported with the rest.
    let configPath = target.directory + "/config.json"
    if target.snapshot == nil, target.kind == "directory",
        !FileManager.default.fileExists(atPath: configPath)
    {
        throw ConfigError.missingFile(path: configPath)
    }
    let files =
        try
        (target.snapshot.map { ModelFiles.snapshot($0, directory: target.directory) }
        ?? ModelFiles.directory(target.directory))
    let reference = try BytesReference.resolve(
        target, offline: options.offline, environment: options.environment,
        cancellation: options.cancellation, progress: progress)

    progress(.checking(.structure))
    let (weights, structure) = StructureCheck.run(files: files)
    let items = files.files.compactMap { file -> ScanItem? in
        guard let size = file.size else { return nil }
        return ScanItem(
            path: file.absolute, sha256: true, gitSHA1: reference.wantsGitSHA1(file),
            tensors: file.path.contains("/") ? nil : weights.opened[file.path], size: size)
    }
    let scan = try FileScan.run(
        items, threads: options.threads, cancellation: options.cancellation
    ) { done, total in
        progress(.reading(done: done, total: total))
    }

    progress(.checking(.bytes))
    var bytesCheck = BytesCheck(target: target, reference: reference, files: files, scan: scan)
    let bytes = bytesCheck.run()
    progress(.checking(.model))
    var modelCheck = ModelCheck(directory: target.directory, weights: weights)
    let (config, model) = modelCheck.run()
    progress(.checking(.numbers))
    let (numbers, tensors) = NumbersCheck.run(
        weights: weights, statistics: scan.statistics, directory: target.directory,
        ignored: modelCheck.ignoredTensors)
    progress(.checking(.text))
    var textCheck = TextCheck(directory: target.directory, config: config, entry: target.entry)
    let text = textCheck.run()
    var targetOutcome = LayerOutcome.skipped(.target, "not asked for (--target)")
    if !options.targets.isEmpty {
        progress(.checking(.target))
        var targetCheck = TargetCheck(
            directory: target.directory, targets: options.targets, fix: options.fix)
        targetOutcome = targetCheck.run()
    }

    var outcomes = [bytes, structure, model, numbers, text]
    var smoke: SmokeResult?
    if !options.smoke {
        outcomes.append(.skipped(.smoke, "not asked for (--smoke)"))
    } else if let blocker = outcomes.first(where: { $0.layer != .bytes && $0.hasErrors }) {
        outcomes.append(
            .skipped(.smoke, "not run: the \(blocker.layer.rawValue) layer found errors"))
    } else {
        progress(.checking(.smoke))
        var smokeCheck = SmokeCheck(target: target, options: options)
        let (outcome, result) = try smokeCheck.run()
        outcomes.append(outcome)
        smoke = result
    }

    outcomes.append(targetOutcome)
    let findings = outcomes.flatMap(\.findings).enumerated().sorted { a, b in
        a.element.severity != b.element.severity
            ? a.element.severity < b.element.severity : a.offset < b.offset
    }.map(\.element)
    return VerifyReport(
        model: options.model, directory: target.directory, kind: target.kind,
        repo: target.snapshot?.repoID, commit: target.snapshot?.commit,
        reference: reference.label, layers: outcomes.map(\.result), findings: findings,
        files: verifiedFiles(files, scan), tensors: tensors, smoke: smoke,
        bytesRead: scan.digests.values.reduce(0) { $0 + $1.size },
        seconds: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
}

/// The files as read, in path order (broken links with no size or digest).
private func verifiedFiles(_ files: ModelFiles, _ scan: ScanResult) -> [VerifiedFile] {
    files.files.map { file in
        let digest = scan.digests[file.absolute]
        return VerifiedFile(
            path: file.path, size: digest?.size ?? file.size, sha256: digest?.sha256,
            gitSHA1: digest?.gitSHA1, blob: file.blobName)
    }
}

/// Verify ran and found problems: the CLI exits 1 after printing the report.
public struct VerifyFailed: UserFacingError, Equatable {
    public var directory: String
    public var errors: Int
    public init(directory: String, errors: Int) {
        self.directory = directory
        self.errors = errors
    }
    public var message: String {
        "\(directory): verify found \(errors) \(errors == 1 ? "problem" : "problems")"
    }
    public var exitCode: ExitCode { .failure }
}
