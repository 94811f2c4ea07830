// libFuzzer harness for phikit's parsers (public API only).
//
// One source, eight targets, chosen at compile time by run.sh:
//   -D FUZZ_SAFETENSORS  SafeTensorsFile(path:) on a tmpfs copy of the input
//   -D FUZZ_JSON         JSONValue(parsing:) + the serialize/parse round trip
//   -D FUZZ_CONFIG       ModelConfig(data:source:) (config.json decoding + validation)
//   -D FUZZ_GGUF         GGUFFile(bytes:path:) (header, metadata, tensor infos)
//   -D FUZZ_HTTP         HTTPRequestParser.parse over pipelined requests (PhiServer's parser
//                        files only, built as their own module)
//   -D FUZZ_JINJA        ChatTemplate(source:) + render: the Jinja lexer, parser and renderer
//   -D FUZZ_REGEX        a tokenizer whose Split pre-tokenizer uses the input's regex
//                        (before the first NUL byte) to encode the rest of the input
//   -D FUZZ_TOKENIZER    Tokenizer(tokenizerJSON:) on the input, then encode + decode
//
// Properties checked (a violation calls fatalError, which libFuzzer reports as a crash):
//   - no crash / trap / ASan report, no hang, no unbounded allocation (libFuzzer flags);
//   - every input either parses or throws its typed error;
//   - safetensors: an accepted file's tensors tile the data section exactly and every
//     `data(_:)` slice lies inside the file (all bytes are read, so ASan/SEGV would catch a
//     bad slice);
//   - JSON: `serialized()` of a parsed value parses again to an equal value, and serializing
//     that again gives byte-identical text (Swift `String ==` is canonical-equivalence, so the
//     byte check is the stricter one).
//   - CPU time per input: PHIKIT_FUZZ_CPU_MS (set by run.sh) bounds the CPU seconds one input
//     may take. libFuzzer's -timeout is wall-clock, which a niced fuzzer on a loaded machine
//     exceeds without any bug; CPU time is what the budgets (Jinja, regex) promise to bound.

#if canImport(Glibc)
    import Glibc
#endif
#if FUZZ_HTTP
    import PhiServer
#else
    import PhiFormats
#endif
#if FUZZ_JINJA || FUZZ_REGEX || FUZZ_TOKENIZER
    import PhiText
#endif

@inline(never)
func violation(_ what: String, _ input: UnsafeRawBufferPointer) -> Never {
    let preview = String(decoding: input.prefix(200), as: UTF8.self)
    fatalError("fuzz property violated: \(what)\ninput prefix: \(preview.debugDescription)")
}

/// Keeps the optimizer from dropping reads whose result we don't otherwise use.
@inline(never)
func blackHole<T>(_ x: T) { withExtendedLifetime(x) {} }

#if FUZZ_SAFETENSORS
    nonisolated(unsafe) var tmpPath: String = {
        let path = "/dev/shm/phikit-fuzz-\(getpid()).safetensors"
        atexit { unlink("/dev/shm/phikit-fuzz-\(getpid()).safetensors") }
        return path
    }()

    func writeFile(_ path: String, _ input: UnsafeRawBufferPointer) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { fatalError("harness: cannot create \(path): errno \(errno)") }
        var done = 0
        while done < input.count {
            let n = write(fd, input.baseAddress! + done, input.count - done)
            guard n > 0 else { fatalError("harness: write failed: errno \(errno)") }
            done += n
        }
        close(fd)
    }

    func fuzzOne(_ input: UnsafeRawBufferPointer) {
        writeFile(tmpPath, input)
        let file: SafeTensorsFile
        do {
            file = try SafeTensorsFile(path: tmpPath)
        } catch {
            blackHole(error.message)  // the user-facing text must render too
            blackHole(error.hint)
            return
        }
        guard file.fileSize == input.count else {
            violation("fileSize \(file.fileSize) != \(input.count)", input)
        }
        let dataSize = file.fileSize - file.dataSectionOffset
        guard file.dataSectionOffset >= 8, dataSize >= 0 else {
            violation("bad dataSectionOffset", input)
        }
        var position = 0
        var checksum: UInt8 = 0
        for t in file.tensors {
            guard t.dataOffsets.lowerBound == position else {
                violation("tensors do not tile: \(t.name)", input)
            }
            position = t.dataOffsets.upperBound
            guard t.byteCount == t.elementCount * t.dtype.size else {
                violation("byteCount != elementCount * size for \(t.name)", input)
            }
            guard t.shape.allSatisfy({ $0 >= 0 }) else {
                violation("negative dim in \(t.name)", input)
            }
            guard let looked = file.info(t.name), looked.name == t.name else {
                violation("info(\(t.name)) lookup failed", input)
            }
            let bytes = file.data(t)
            guard bytes.count == t.byteCount else {
                violation("data(\(t.name)) has wrong size", input)
            }
            // The slice must be the same bytes as the input at the same place.
            let start = file.dataSectionOffset + t.dataOffsets.lowerBound
            for (i, b) in bytes.enumerated() {
                guard b == input[start + i] else {
                    violation("data(\(t.name)) differs from file bytes", input)
                }
                checksum &+= b
            }
            file.willNeed(t)
            file.release(t)
        }
        guard position == dataSize else {
            violation("tensors end at \(position), data section is \(dataSize)", input)
        }
        blackHole(checksum)
        blackHole(file.metadata)
    }
#endif

#if FUZZ_JSON
    func fuzzOne(_ input: UnsafeRawBufferPointer) {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: input.bindMemory(to: UInt8.self))
        } catch {
            guard error.offset >= 0, error.offset <= input.count else {
                violation(
                    "error offset \(error.offset) outside input of \(input.count) bytes", input)
            }
            blackHole(error.message)
            return
        }
        let text = value.serialized()
        let again: JSONValue
        do {
            again = try JSONValue(parsing: Array(text.utf8))
        } catch {
            violation(
                "serialized() does not parse again: \(error.message)\nserialized: \(text.debugDescription)",
                input)
        }
        guard again == value else {
            violation("round trip changed the value\nserialized: \(text.debugDescription)", input)
        }
        let text2 = again.serialized()
        guard text2.utf8.elementsEqual(text.utf8) else {
            violation(
                "serialized() is not a fixed point\nfirst:  \(text.debugDescription)\nsecond: \(text2.debugDescription)",
                input)
        }
        // The other public read paths must not trap on anything the parser accepts.
        blackHole(value.pythonJSONDump())
        blackHole(value.sortedKeys())
        func walk(_ v: JSONValue) {
            blackHole(v.intValue)
            blackHole(v.doubleValue)
            blackHole(v["dtype"])
            if let a = v.arrayValue { a.forEach(walk) }
            if let o = v.objectValue { o.forEach { walk($0.value) } }
        }
        walk(value)
    }
#endif

#if FUZZ_CONFIG
    func fuzzOne(_ input: UnsafeRawBufferPointer) {
        let bytes = input.bindMemory(to: UInt8.self)
        // Unvalidated decode (what `inspect` does) must not trap either.
        if let lenient = try? ModelConfig(
            data: bytes, source: "fuzz/config.json", validating: false)
        {
            blackHole(lenient.modelType)
        }
        let config: ModelConfig
        do {
            config = try ModelConfig(data: bytes, source: "fuzz/config.json")
        } catch {
            blackHole(error.message)
            return
        }
        // A validated config is what `convert` plans with. Bounded so that a config that merely
        // declares a huge layer count does not just time out (reported separately in README).
        if config.layerCount <= 64 {
            blackHole(try? ModelLayout(config: config).modules)
        }
        blackHole(config.headDim)
        blackHole(config.ropeDim)
    }
#endif

#if FUZZ_HTTP
    // Small limits so that the fuzzer reaches them (431, 413, header count) with short inputs.
    let httpParser = HTTPRequestParser(maxHeaderBytes: 1024, maxBodyBytes: 512, maxHeaderCount: 16)
    let httpStatuses: Set<Int> = [400, 411, 413, 414, 417, 431, 501, 505]
    /// Re-parses canonical forms: header values that were not UTF-8 come back as U+FFFD (3 bytes
    /// for each bad byte), so the canonical head may be longer than the input's.
    let httpReparser = HTTPRequestParser(
        maxHeaderBytes: 16 * 1024, maxBodyBytes: 512, maxHeaderCount: 16)

    /// Properties of one accepted request: framing adds up, fields hold only what the grammar
    /// allows, every proper prefix is incomplete, and writing the request out canonically parses
    /// back to the same request.
    func checkRequest(
        _ request: HTTPRequest, _ head: HTTPRequestHead, consumed: Int, bytes: [UInt8], start: Int,
        _ input: UnsafeRawBufferPointer
    ) {
        guard consumed > 0, consumed <= bytes.count - start,
            head.headLength + head.contentLength == consumed,
            request.body.count == head.contentLength, head.contentLength <= httpParser.maxBodyBytes,
            request.body.elementsEqual(bytes[(start + head.headLength)..<(start + consumed)])
        else {
            violation(
                "framing: consumed \(consumed), head \(head.headLength), body \(head.contentLength)",
                input)
        }
        guard request.version == "HTTP/1.1" || request.version == "HTTP/1.0" else {
            violation("version \(request.version)", input)
        }
        guard request.path.hasPrefix("/") || (request.path == "*" && request.method == "OPTIONS")
        else {
            violation("path \(request.path.debugDescription)", input)
        }
        let forbidden: (UInt8) -> Bool = { $0 == 0x0D || $0 == 0x0A || $0 == 0 }
        guard !request.method.isEmpty,
            !request.method.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }),
            !request.path.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }),
            request.headers.fields.allSatisfy({
                !$0.name.isEmpty && !$0.name.utf8.contains(where: forbidden)
                    && !$0.value.utf8.contains(where: forbidden)
            })
        else { violation("a field holds a byte the grammar forbids", input) }
        if consumed > 1,
            case .request = httpParser.parse(Array(bytes[start..<(start + consumed - 1)]))
        {
            violation("a proper prefix of a request parsed as a whole request", input)
        }
        var text = "\(request.method) \(request.path)"
        if let query = request.query { text += "?\(query)" }
        text += " \(request.version)\r\n"
        for field in request.headers.fields { text += "\(field.name): \(field.value)\r\n" }
        let canonical = Array((text + "\r\n").utf8) + request.body
        guard case .request(let again, _, let againConsumed) = httpReparser.parse(canonical),
            againConsumed == canonical.count, again.method == request.method,
            again.path == request.path,
            again.query == request.query, again.version == request.version,
            again.body == request.body,
            again.headers.fields.count == request.headers.fields.count,
            zip(again.headers.fields, request.headers.fields).allSatisfy({
                $0.name == $1.name && $0.value == $1.value
            })
        else {
            violation(
                "canonical form does not parse back to the same request\n\(text.debugDescription)",
                input)
        }
    }

    func fuzzOne(_ input: UnsafeRawBufferPointer) {
        let bytes = Array(input)
        var start = 0
        while start < bytes.count {
            switch httpParser.parse(bytes, from: start) {
            case .incomplete:
                return
            case .failure(let error):
                guard httpStatuses.contains(error.status), !error.reason.isEmpty else {
                    violation("status \(error.status) (\(error.reason))", input)
                }
                return
            case .request(let request, let head, let consumed):
                checkRequest(request, head, consumed: consumed, bytes: bytes, start: start, input)
                blackHole(request.headers["content-type"])
                start += consumed
            }
        }
    }
#endif

#if FUZZ_GGUF
    func fuzzOne(_ input: UnsafeRawBufferPointer) {
        let file: GGUFFile
        do {
            file = try GGUFFile(bytes: input, path: "fuzz.gguf")
        } catch {
            blackHole(error.message)
            blackHole(error.hint)
            return
        }
        // An accepted file: every tensor lies inside the data section, aligned, sized by its
        // type, and no two overlap; every byte of each slice is readable (ASan checks).
        var ranges: [Range<Int>] = []
        var checksum: UInt8 = 0
        for t in file.tensors {
            guard t.offset % file.alignment == 0 else { violation("misaligned \(t.name)", input) }
            guard let row = t.type.rowBytes(t.dimensions[0]),
                row * t.dimensions.dropFirst().reduce(1, *) == t.byteCount
            else { violation("byteCount of \(t.name)", input) }
            let bytes = file.data(t)
            let start = file.dataOffset + t.offset
            guard bytes.count == t.byteCount, start + t.byteCount <= input.count else {
                violation("data(\(t.name)) out of bounds", input)
            }
            for b in bytes { checksum &+= b }
            guard file.tensor(t.name)?.offset == t.offset else {
                violation("lookup \(t.name)", input)
            }
            if t.byteCount > 0 { ranges.append(start..<(start + t.byteCount)) }
        }
        ranges.sort { $0.lowerBound < $1.lowerBound }
        for (a, b) in zip(ranges, ranges.dropFirst()) where a.upperBound > b.lowerBound {
            violation("overlapping tensors accepted", input)
        }
        for (key, value) in file.metadata {
            guard file.value(key) == value else { violation("lookup of \(key)", input) }
            blackHole(value.typeName)
            blackHole(value.arrayValue?.strings)
        }
        blackHole(checksum)
    }
#endif

#if FUZZ_JINJA
    // A conversation with every field chat templates look at, so that renders get past the first
    // `messages[0]['content']`. Built per input, not held in a global: LeakSanitizer does not see
    // through the spare-bit-tagged pointers of a global enum and would report its payload leaked.
    func conversation() -> [TemplateValue] {
        [
            .object([("role", .string("system")), ("content", .string("Be brief."))]),
            .object([("role", .string("user")), ("content", .string("Hi <|end|> {{ x }}"))]),
            .object([
                ("role", .string("assistant")), ("content", .string("Hello")),
                (
                    "tool_calls",
                    .array([.object([("name", .string("f")), ("arguments", .object([]))])])
                ),
            ]),
        ]
    }

    func fuzzOne(_ input: UnsafeRawBufferPointer) {
        let source = String(decoding: input, as: UTF8.self)
        do {
            let template = try ChatTemplate(source: source, specialTokens: ["bos_token": "<s>"])
            let text = try template.render(conversation: conversation(), addGenerationPrompt: true)
            // The budget bounds the output; a render that escaped it would show here.
            guard text.utf8.count <= 1 << 26 else { violation("output beyond the budget", input) }
        } catch {
            blackHole(error.message)
            blackHole(error.hint)
        }
    }
#endif

#if FUZZ_REGEX || FUZZ_TOKENIZER
    /// A tokenizer.json to start from (the bundled stories-260k model's): its bytes are read once,
    /// the JSON value is parsed per input (see `conversation()` on globals and LeakSanitizer).
    let baseTokenizerBytes: [UInt8] = {
        let repo = getenv("PHIKIT_FUZZ_REPO").map { String(cString: $0) } ?? "."
        let path = repo + "/models/stories-260k/tokenizer.json"
        guard let bytes = try? LocalFile.read(path), (try? JSONValue(parsing: bytes)) != nil else {
            fatalError("harness: cannot read \(path) (set PHIKIT_FUZZ_REPO)")
        }
        return bytes
    }()

    func exercise(_ tokenizer: Tokenizer, _ text: String, _ input: UnsafeRawBufferPointer) {
        do {
            let ids = try tokenizer.encode(text)
            guard ids.allSatisfy({ $0 >= 0 && $0 < max(tokenizer.vocabularySize, 1) }) else {
                violation("encode gave an id outside the vocabulary", input)
            }
            blackHole(tokenizer.decode(ids))
            blackHole(tokenizer.decode(ids, skipSpecialTokens: true))
        } catch {
            blackHole("\(error)")
        }
    }
#endif

#if FUZZ_REGEX
    func fuzzOne(_ input: UnsafeRawBufferPointer) {
        let bytes = Array(input)
        let cut = bytes.firstIndex(of: 0) ?? bytes.count
        let pattern = String(decoding: bytes[..<cut], as: UTF8.self)
        let text = String(decoding: bytes[min(cut + 1, bytes.count)...], as: UTF8.self)
        var json = try! JSONValue(parsing: baseTokenizerBytes)
        json.set(
            "pre_tokenizer",
            .object([
                ("type", .string("Split")), ("pattern", .object([("Regex", .string(pattern))])),
                ("behavior", .string("Isolated")), ("invert", .bool(false)),
            ]))
        let tokenizer: Tokenizer
        do {
            tokenizer = try Tokenizer(tokenizerJSON: Array(json.serialized().utf8), source: "fuzz")
        } catch {
            blackHole("\(error)")
            return
        }
        exercise(tokenizer, text, input)
    }
#endif

#if FUZZ_TOKENIZER
    func fuzzOne(_ input: UnsafeRawBufferPointer) {
        let tokenizer: Tokenizer
        do {
            tokenizer = try Tokenizer(tokenizerJSON: Array(input), source: "fuzz/tokenizer.json")
        } catch {
            blackHole("\(error)")
            return
        }
        exercise(tokenizer, "Hello world! 123 \u{1F916} <s> </s>  x\n\ty", input)
    }
#endif

/// PHIKIT_FUZZ_CPU_MS, or no limit.
let cpuLimitNanoseconds: Int = {
    guard let text = getenv("PHIKIT_FUZZ_CPU_MS"), let ms = Int(String(cString: text)), ms > 0
    else { return Int.max }
    return ms * 1_000_000
}()

func cpuNanoseconds() -> Int {
    var t = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
    return t.tv_sec * 1_000_000_000 + t.tv_nsec
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let start = cpuNanoseconds()
    fuzzOne(input)
    let spent = cpuNanoseconds() - start
    if spent > cpuLimitNanoseconds {
        let limit = cpuLimitNanoseconds / 1_000_000
        violation("one input took \(spent / 1_000_000) ms of CPU (limit \(limit) ms)", input)
    }
    return 0
}
