import Foundation
import PhiEngine
import PhiFormats
import PhiKit
import PhiServer

/// `phikit serve MODEL`: an OpenAI-compatible HTTP server on one model.
struct ServeCommand: Command {
    static let name = "serve"
    static let summary = "Serve a model over an OpenAI-compatible HTTP API"
    static let usage = """
        phikit serve <model> [--host <addr>] [--port <n>] [--parallel <n>] [--max-queue <n>]
                     [--max-kv-size <n>] [--prompt-cache-mb <n>] [--api-key <key>]
                     [--cors-origin <origin>] [--max-connections <n>] [--max-body <size>]
                     [--kv-bits 8|16|32] [--act-bits 8|16] [--threads <n>]
                     [--log-format text|json] [--quiet]
                     [--draft-max <n> | --no-speculative] [--cache-dir <dir>] [--cache-size <mb>]
                     [--cache-min-tokens <n>] [--no-disk-cache]
                     [--adapter-path <dir> | --adapter <name>=<dir>...]
        """
    static let help = """
        Loads <model> and answers on http://<host>:<port>: OpenAI's POST /v1/chat/completions,
        /v1/completions and /v1/responses, Anthropic's POST /v1/messages and
        /v1/messages/count_tokens (all streamed as server-sent events with "stream": true),
        GET /v1/models and /v1/models/<id>, GET /health (alive), GET /ready (a slot is free;
        else 503), GET /metrics (Prometheus), and a chat page at GET / (it asks for the key
        when the server has one). Up to --parallel requests
        generate at once, each with its own KV cache; a new request joins between tokens,
        more wait in a queue of --max-queue (then 503 with Retry-After). A request whose
        prompt extends an earlier conversation, through any of the APIs, reuses its cached
        prefix (cached_tokens in the usage). A client that disconnects stops its generation
        within one token. X-Request-ID is echoed (a new one when none came) and logged.

        arguments:
          <model>                  registry alias, Hub id or model directory

        options:
          --host <addr>            address to listen on (default: 127.0.0.1; anything else
                                   without --api-key prints a warning)
          --port <n>               port (default: 8080; 0 picks a free one)
          --parallel <n>           requests generating at once (default: 4)
          --max-queue <n>          requests waiting for a slot (default: 32; --queue is
                                   the same)
          --max-kv-size <n>        tokens each request's KV cache holds, prompt and answer
                                   (default: the model's context, at most 4096); a longer
                                   prompt is refused with 400, never truncated
          --prompt-cache-mb <n>    memory for the KV caches of finished requests kept for
                                   reuse (default: 2048)
          --api-key <key>          require "Authorization: Bearer <key>" (or Anthropic's
                                   "x-api-key: <key>") on /v1 requests
          --cors-origin <origin>   allow browsers on <origin> (or *) to call the API
          --max-body <size>        largest request body: bytes, or with K, M or G
                                   (default: 1M); a larger one gets 413 before it is read
          --max-connections <n>    open connections at most (default: 64), one client
                                   address at most half of them; when full, the connection
                                   idle the longest (or slowest to send its request) is
                                   closed for a new one, and only when all are being
                                   answered does a new one get 503 (GET /health still works)
        \(KVBitsOption.help)
        \(ActBitsOption.help)
        \(SpeculationOption.help(default: .serveDefault))
        \(AdapterOption.help)
                                   for every request (--adapter: each request chooses)
        \(NamedAdapterOption.help)
          --threads <n>            threads to compute with (default: all cores)
          --log-format text|json   access log lines as text (default) or JSON objects
        \(DiskCacheOption.help)
          --quiet                  no access log

        Prints one access log line per request on stderr (method, path, status, tokens,
        time). Ctrl-C or SIGTERM stops accepting, ends answers in flight, exits 0.
        exit codes: 64 bad options, 65 bad model files, 66 model not found, 69 cannot listen
        """

    var model: String
    /// The listener's options, read straight into the server's configuration (whose
    /// defaults are the flags' defaults).
    var http = HTTPServerConfiguration()
    var parallel: Int
    var queue: Int
    var maxKVSize: Int?
    var promptCacheMB: Int
    var loading: ModelLoadFlags
    var cacheWidth: KVCacheWidth
    var speculation: Speculation
    var diskCache: DiskCacheOption

    init(_ args: inout ArgumentReader) throws {
        http.host = try args.option("--host") ?? http.host
        http.port = try args.option("--port", as: Int.self) ?? http.port
        parallel = try args.option("--parallel", as: Int.self) ?? 4
        queue = try args.option("--max-queue", as: Int.self) ?? args.option("--queue", as: Int.self) ?? 32
        maxKVSize = try args.option("--max-kv-size", as: Int.self)
        promptCacheMB = try args.option("--prompt-cache-mb", as: Int.self) ?? 2048
        http.apiKey = try args.option("--api-key")
        http.corsOrigin = try args.option("--cors-origin")
        http.maxConnections =
            try args.option("--max-connections", as: Int.self) ?? http.maxConnections
        http.maxBodyBytes = try args.option("--max-body").map(Self.size) ?? http.maxBodyBytes
        cacheWidth = try KVBitsOption.read(&args)
        speculation = try SpeculationOption.read(&args, default: .serveDefault)
        loading = try ModelLoadFlags(&args)
        loading.adapters = try NamedAdapterOption.read(&args)
        // A server prefills for as long as it runs: its weights are worth a resident copy on
        // 64-byte lines (~3% faster exact prompts, ~1.5% with --act-bits 8; decode the same),
        // which costs 0.4-5 s once at start and memory the page cache no longer shares
        // (scripts/bench/README.md, "Weights on 64-byte lines"). run keeps the mapping; chat copies
        // where the page cache holds the weights in small folios.
        loading.placement = .resident
        http.quiet = args.flag("--quiet")
        let format = try args.option("--log-format") ?? "text"
        guard let logFormat = AccessLogFormat(rawValue: format) else {
            throw UsageError("--log-format must be text or json, not '\(format)'")
        }
        http.accessLogFormat = logFormat
        diskCache = try DiskCacheOption(&args)
        model = try args.positional("model")
        try args.finish()
        try UsageError.check("--port", http.port, in: 0...65535)
        try UsageError.check("--parallel", parallel, in: 1...64)
        guard queue >= 0 else { throw UsageError("--max-queue must not be negative") }
        if let maxKVSize, maxKVSize < 2 { throw UsageError("--max-kv-size must be at least 2") }
        guard promptCacheMB >= 0 else {
            throw UsageError("--prompt-cache-mb must not be negative")
        }
        try UsageError.check("--max-connections", http.maxConnections, in: 1...4096)
        if http.apiKey?.isEmpty == true { throw UsageError("--api-key must not be empty") }
        try loading.check()
        if loading.adapterPath != nil && !loading.adapters.isEmpty {
            throw UsageError(
                "--adapter-path applies one adapter to every request; --adapter loads adapters "
                    + "requests choose: give one or the other")
        }
    }

    func run() throws {
        let container = try loading.load(model)
        let limit = container.model.maxPositions
        let context = container.defaultContext(maxKVSize)
        guard context <= limit else {
            throw UsageError("--max-kv-size \(context) is beyond the model's \(limit) positions")
        }
        let scheduler = Scheduler(
            container: container,
            configuration: Scheduler.Configuration(
                parallel: parallel, queueCapacity: queue, contextSize: context,
                cacheBytes: promptCacheMB << 20, cacheWidth: cacheWidth,
                speculation: speculation,
                diskCache: diskCache.open(container, cacheWidth: cacheWidth),
                adapterDiskCaches: diskCache.openPerAdapter(container, cacheWidth: cacheWidth),
                turnLog: try Self.turnLog()))
        let server = try HTTPServer(
            configuration: http,
            responder: OpenAIResponder(container: container, scheduler: scheduler, names: [model]))
        scheduler.start()
        let signals = StopSignals { [server, scheduler] in
            server.stop()
            scheduler.shutdown()
        }
        Diagnostics.text(
            "phikit serve: \(container.location.name)"
                + (loading.adapters.isEmpty
                    ? "" : " with adapters " + loading.adapters.map(\.name).joined(separator: ", "))
                + " on http://\(Self.hostForURL(http.host)):"
                + "\(server.port) (\(parallel) slots, context \(context) tokens); Ctrl-C stops")
        try server.run()
        scheduler.shutdown()
        signals.cancel()
    }

    /// The scheduler's per-turn log when PHIKIT_SCHEDULER_TRACE names a file (benchmarks:
    /// scripts/bench/serve_turns.py).
    static func turnLog() throws -> TurnLog? {
        guard let path = ProcessInfo.processInfo.environment["PHIKIT_SCHEDULER_TRACE"],
            !path.isEmpty
        else { return nil }
        do {
            return try TurnLog(path: path)
        } catch {
            throw TraceFileError(path: path)
        }
    }

    /// PHIKIT_SCHEDULER_TRACE names a file that cannot be written (74).
    struct TraceFileError: UserFacingError {
        var path: String
        var message: String { "PHIKIT_SCHEDULER_TRACE: cannot write \(path)" }
        var exitCode: ExitCode { .ioError }
    }

    /// "4096", "64K", "2M", "1G" (powers of 1024) for --max-body.
    static func size(_ text: String) throws -> Int {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        let unit = text.last.flatMap { units[Character($0.uppercased())] }
        let digits = unit == nil ? text : String(text.dropLast())
        guard let number = Int(digits), number >= 1,
            case let (bytes, overflow) = number.multipliedReportingOverflow(by: unit ?? 1),
            !overflow, bytes <= 1 << 32
        else {
            throw UsageError(
                "--max-body must be a size from 1 byte to 4G, such as 65536, 512K or 8M; got '\(text)'")
        }
        return bytes
    }

    static func hostForURL(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }
}

/// SIGINT and SIGTERM, taken from the process-wide handler while the server runs: the first
/// one stops the server (on a dispatch queue, not in signal context); a second exits 130.
private final class StopSignals: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []
    private var count = 0

    init(_ stop: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "phikit-serve-signals")
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [self] in
                count += 1
                if count > 1 { exit(130) }
                DispatchQueue.global().async(execute: stop)
            }
            source.resume()
            sources.append(source)
        }
    }

    func cancel() { sources.forEach { $0.cancel() } }
}
