import Foundation
import PhiFormats
import PhiHub

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `phikit convert`: a Hugging Face checkpoint (or an MLX model) → an MLX-format model that
/// `mlx_lm.load`, MLX Swift and phikit's engine load unchanged, tensor for tensor what
/// `mlx_lm.convert` writes.
///
/// Order of work, so that a refusal or a crash never leaves a half-written model:
/// 1. check the options and that the output does not exist (unless `force`);
/// 2. plan: read config.json and every safetensors header, check each tensor against the
///    architecture (missing shards, missing/unexpected tensors, shapes, dtypes);
/// 3. write everything into `<output>.incomplete-XXXXXX` beside the output;
/// 4. rename it into place (with `force`, the old output is removed only after that).
///
/// A Hub source missing from the cache is pulled first when `pull` is given (its progress goes
/// there), as `mlx_lm.convert --hf-path` downloads; the pull does not count in the timings.
public func convert(
    _ options: ConvertOptions, pull: ((PullProgress) -> Void)? = nil,
    progress: (ConvertProgress) -> Void = { _ in }
) throws -> ConvertSummary {
    try checkOptions(options)
    let source =
        if let pull {
            try ModelLocator.locate(
                options.source, environment: options.environment, pullingWith: pull,
                cancellation: options.cancellation)
        } else {
            try ModelLocator.locate(options.source, environment: options.environment)
        }
    let clock = ContinuousClock.now
    func elapsed() -> Double {
        let d = ContinuousClock.now - clock
        return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }
    let plan = try ConvertPlan.make(sourceDirectory: source.directory, options: options)
    let output = try outputDirectory(options, source, plan)

    try writePlannedModel(
        plan, source: source, output: output, options: options, progress: progress,
        elapsed: elapsed)
    let (files, written) = outputListing(output)
    return ConvertSummary(
        source: options.source, sourceDirectory: source.directory, outputDirectory: output,
        files: files, tensorCount: plan.outputTensors.count,
        quantizedTensorCount: plan.quantizedTensorCount, bits: plan.quantization?.bits,
        groupSize: plan.quantization?.groupSize, bitsPerWeight: plan.bitsPerWeight,
        bitsPerWeightText: String(format: "%.3f", plan.bitsPerWeight),
        totalParameters: plan.totalParameters, tensorBytes: plan.totalSize, bytesWritten: written,
        seconds: elapsed())
}

/// Steps 3 and 4 of `convert` (and `fuse`): runs the plan into a temporary directory beside
/// `output`, adds config.json, the index, tokenizer files and the manifest, and renames it
/// into place; an error or Ctrl-C removes the temporary directory.
func writePlannedModel(
    _ plan: ConvertPlan, source: LocalModel, output: String, options: ConvertOptions,
    progress: (ConvertProgress) -> Void, elapsed: () -> Double
) throws {
    var temp: String?
    var record: String?
    defer { if let record { try? FileManager.default.removeItem(atPath: record) } }
    do {
        // From the moment temp exists, Ctrl-C (options.cancellation) stops the converter
        // between tensors and the catch removes temp: an interrupted convert leaves nothing.
        do {
            let dir = try makeTemporaryDirectory(beside: output)
            temp = dir
            // Held until convert returns (or dies): `phikit rm --partials` removes only
            // temporary folders nobody holds, wherever -o put them (the record says where).
            let liveness = DirectoryLock(path: dir)
            defer { liveness?.release() }
            record = ConvertPartialRecords.record(
                URL(fileURLWithPath: dir).standardizedFileURL.path,
                environment: options.environment)
            try options.cancellation.check()
            let converter = Converter(
                plan: plan, directory: dir, threads: options.threads,
                chunkElements: options.chunkElements,
                blockElements: options.blockElements, cancellation: options.cancellation)
            let total = plan.outputTensors.count
            progress(
                ConvertProgress(
                    tensorsDone: 0, tensorCount: total, bytesRead: 0,
                    bytesToRead: plan.bytesToRead, bytesWritten: 0,
                    elapsed: elapsed(), tensor: nil))
            try converter.run { done, read, written, name in
                progress(
                    ConvertProgress(
                        tensorsDone: done, tensorCount: total, bytesRead: read,
                        bytesToRead: plan.bytesToRead, bytesWritten: written,
                        elapsed: elapsed(), tensor: name))
            }
            try writeMetadata(plan, source: source, into: dir)
            // Last, so it lists every file: what `phikit verify` checks the output against.
            try ConvertManifest.write(
                into: dir, source: source, options: options, threads: options.threads)
            try install(dir, at: output)
        }
    } catch {
        if let temp { try? FileManager.default.removeItem(atPath: temp) }
        throw error
    }
}

private func checkOptions(_ o: ConvertOptions) throws {
    if o.quantize && o.dequantize { throw ConvertError.quantizeAndDequantize }
    if o.quantize {
        _ = try o.quantizationScheme()
        if o.quantPredicate != nil && o.mode != "affine" {
            throw ConvertError.badOption(
                "--quant-predicate recipes are affine; they cannot be combined with --q-mode "
                    + o.mode, hint: "drop --q-mode, or drop --quant-predicate")
        }
    } else if o.quantPredicate != nil || o.mode != "affine" {
        throw ConvertError.badOption(
            "--q-mode and --quant-predicate need -q/--quantize", hint: nil)
    }
    if let dtype = o.dtype, ![.f16, .bf16, .f32].contains(dtype) {
        throw ConvertError.badOption(
            "cannot convert to \(dtype.pythonName)",
            hint: "use --dtype float16, bfloat16 or float32")
    }
    if o.maxShardSize <= 0 {
        throw ConvertError.badOption("the maximum shard size must be positive", hint: nil)
    }
}

/// `-o`, else `<store>/models/<name>-<bits>bit` (or `-bf16`… for a float output).
private func outputDirectory(
    _ o: ConvertOptions, _ source: LocalModel, _ plan: ConvertPlan
) throws -> String {
    let path: String
    if let output = o.output {
        path = URL(fileURLWithPath: output).standardizedFileURL.path
    } else {
        // A float output is named after its float type (that of its first float tensor).
        let float = plan.outputTensors.first { $0.dtype.isFloat }.map { storeSuffix($0.dtype) }
        let format =
            plan.recipe?.rawValue
            ?? plan.quantization.flatMap { $0.hasBiases ? nil : $0.mode }
        let name = ModelStore.modelName(
            source: source.name, bits: plan.quantization?.bits,
            floatType: float, format: format)
        path = ModelStore.modelsDirectory(environment: o.environment) + "/" + name
    }
    try OutputGuard.check(output: path, source: source, force: o.force)
    return path
}

private func storeSuffix(_ d: DType) -> String {
    switch d {
    case .bf16: "bf16"
    case .f16: "fp16"
    default: "fp32"
    }
}

/// config.json, the index, tokenizer and other files (the weights are already there).
private func writeMetadata(_ plan: ConvertPlan, source: LocalModel, into dir: String) throws {
    var weightMap: [String: String] = [:]
    for shard in plan.shards {
        for t in shard.tensors { weightMap[t.name] = shard.file }
    }
    let index = ShardIndex(
        weightMap: weightMap, totalSize: plan.totalSize,
        totalParameters: plan.totalParameters)
    do {
        try AtomicFile.write(index.jsonData(), to: dir + "/" + ShardIndex.fileName)
        try AtomicFile.write(plan.configBytes, to: dir + "/config.json")
    } catch {
        throw ConvertError.io(path: dir, detail: error.message)
    }
    try ConvertFiles.write(from: source.directory, to: dir, hubRepo: source.hubRepo)
}

/// The finished output's file names (sorted) and their total size.
func outputListing(_ output: String) -> (files: [String], bytes: Int) {
    let files = ((try? FileManager.default.contentsOfDirectory(atPath: output)) ?? []).sorted()
    let bytes = files.reduce(0) { sum, name in
        let size = (try? FileManager.default.attributesOfItem(atPath: output + "/" + name))?[.size]
        return sum + ((size as? NSNumber)?.intValue ?? 0)
    }
    return (files, bytes)
}

/// `mkdtemp("<output>.incomplete-XXXXXX")`, creating the parent directories first.
func makeTemporaryDirectory(beside output: String) throws -> String {
    let parent = (output as NSString).deletingLastPathComponent
    do {
        try FileManager.default.createDirectory(
            atPath: parent.isEmpty ? "." : parent,
            withIntermediateDirectories: true)
    } catch {
        throw ConvertError.io(
            path: parent, detail: "cannot create directory: \(error.localizedDescription)")
    }
    return try makeUniqueDirectory(output + ".incomplete", for: output, "a temporary directory")
}

/// `mkdtemp("<prefix>-XXXXXX")`: a new empty directory; a failure names `path`.
private func makeUniqueDirectory(
    _ prefix: String, for path: String, _ what: String
) throws -> String {
    var template = Array((prefix + "-XXXXXX").utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw ConvertError.io(
            path: path, detail: "cannot create \(what): \(String(cString: strerror(errno)))")
    }
    return String(cString: made)
}

/// Moves the finished directory into place. An existing output (only with `force`) is moved
/// aside first and deleted after the rename, so some complete model is always there.
func install(_ temp: String, at output: String) throws {
    // mkdtemp made the directory 0700; the model should be as readable as any directory the
    // user creates (mlx_lm's output is 0777 & ~umask).
    let mask = umask(0)
    umask(mask)
    chmod(temp, 0o777 & ~mask)
    var old: String?
    if FileManager.default.fileExists(atPath: output) {
        let aside = try makeUniqueDirectory(output + ".old", for: output, "a temporary name")
        // rename(2) replaces the empty placeholder directory atomically.
        guard rename(output, aside) == 0 else {
            let reason = String(cString: strerror(errno))
            rmdir(aside)
            throw ConvertError.io(
                path: output, detail: "cannot move the old output aside: \(reason)")
        }
        old = aside
    }
    guard rename(temp, output) == 0 else {
        let reason = String(cString: strerror(errno))
        if let old { rename(old, output) }
        throw ConvertError.io(path: output, detail: "cannot rename \(temp) into place: \(reason)")
    }
    if let old { try? FileManager.default.removeItem(atPath: old) }
}
