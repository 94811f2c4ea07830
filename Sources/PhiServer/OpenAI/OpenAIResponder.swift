import Foundation
import PhiFormats
import PhiKit

/// Everything from a parsed request to the bytes of the answer: the routes of an
/// OpenAI-compatible server, over one loaded model and its scheduler.
///
///     POST /v1/chat/completions   POST /v1/completions   POST /v1/responses
///     POST /v1/messages   POST /v1/messages/count_tokens   GET /v1/models[/{id}]   GET /health
///     GET /ready   GET /metrics   GET /
public struct OpenAIResponder: HTTPResponder {
    let completions: CompletionHandler
    let responses: ResponsesHandler
    let messages: MessagesHandler
    let created = Int(Date().timeIntervalSince1970)

    /// `names`: what requests may call the model besides its id (the alias or path `serve`
    /// was given). `keepAlive`: the longest silence in a streamed answer before a comment.
    public init(
        container: ModelContainer, scheduler: Scheduler, names: [String] = [],
        keepAlive: Duration = .seconds(10)
    ) {
        let id = container.location.name
        completions = CompletionHandler(
            container: container, scheduler: scheduler, modelID: id,
            modelNames: Set([id, container.location.directory] + names), keepAlive: keepAlive)
        responses = ResponsesHandler(completions: completions)
        messages = MessagesHandler(completions: completions)
    }

    public func respond(to request: HTTPRequest, writer: HTTPResponseWriter) {
        respond(to: request, channel: writer)
    }

    func respond(to request: HTTPRequest, channel: ResponseChannel) {
        let path = request.path.count > 1 && request.path.hasSuffix("/")
            ? String(request.path.dropLast()) : request.path
        let route: (method: String, run: () throws -> Void)
        switch path {
        case "/v1/chat/completions":
            route = ("POST", { completions.handle(.chat, body: request.body, channel: channel) })
        case "/v1/completions":
            route = ("POST", { completions.handle(.completions, body: request.body, channel: channel) })
        case "/v1/responses":
            route = ("POST", { responses.handle(body: request.body, channel: channel) })
        case "/v1/messages":
            route = ("POST", { messages.handle(body: request.body, channel: channel) })
        case "/v1/messages/count_tokens":
            route = ("POST", { messages.countTokens(body: request.body, channel: channel) })
        case "/v1/models": route = ("GET", { try channel.sendJSON(JSONBody(value: models)) })
        case _ where path.hasPrefix("/v1/models/"):
            // The official client's models.retrieve(id); ids such as org/name keep their slash.
            let id = String(path.dropFirst("/v1/models/".count))
            route = ("GET", { try retrieve(id, channel) })
        case "/health": route = ("GET", { try health(channel) })
        case "/ready": route = ("GET", { try ready(channel) })
        case "/metrics":
            route = (
                "GET",
                {
                    try channel.send(
                        status: 200,
                        headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                        body: Array(metricsPage.text.utf8))
                }
            )
        case "/":
            route = (
                "GET",
                {
                    try channel.send(
                        status: 200, headers: [("Content-Type", "text/html; charset=utf-8")],
                        body: Array(ChatPage.html.utf8))
                }
            )
        default:
            try? channel.send(APIError.notFound(request.method, request.path))
            return
        }
        let allowed = route.method == "GET" ? ["GET", "HEAD"] : [route.method]
        guard allowed.contains(request.method) else {
            try? channel.send(
                APIError.methodNotAllowed(
                    request.method, path, allowed: allowed.joined(separator: ", ")))
            return
        }
        try? route.run()
    }

    private var models: JSONValue {
        let adapters = completions.container.adapters.map { model(adapter: $0.name) }
        return .object([("object", .string("list")), ("data", .array([model()] + adapters))])
    }

    /// The served model as `/v1/models` lists it and `/v1/models/{id}` returns it; a run-time
    /// adapter is listed as a model of its own with the base as its `parent`, as vLLM lists
    /// its LoRA modules (a request may name it as its `model`).
    private func model(adapter: String? = nil) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("id", .string(adapter ?? completions.modelID)), ("object", .string("model")),
            ("created", .int(created)), ("owned_by", .string("phikit")),
            ("context_length", .int(completions.scheduler.configuration.contextSize)),
        ]
        if adapter != nil { fields.append(("parent", .string(completions.modelID))) }
        return .object(fields)
    }

    /// `GET /v1/models/{id}`: the model under any name requests may use, or one of its
    /// adapters, else 404 in OpenAI's shape (code model_not_found).
    private func retrieve(_ id: String, _ channel: ResponseChannel) throws {
        let name = id.removingPercentEncoding ?? id
        if completions.container.adapterIndex(named: name) != nil {
            return try channel.sendJSON(JSONBody(value: model(adapter: name)))
        }
        guard completions.modelNames.contains(name) else {
            return try channel.send(APIError.unknownModel(name, served: completions.modelID))
        }
        try channel.sendJSON(JSONBody(value: model()))
    }

    private var metricsPage: MetricsPage {
        let scheduler = completions.scheduler
        // one folder holds every adapter's cache (totalBytes counts all of it once)
        let caches = scheduler.configuration.allDiskCaches
        let disk = caches.first.map {
            (
                hits: caches.reduce(0) { $0 + $1.hits.prompts },
                tokens: caches.reduce(0) { $0 + $1.hits.tokens }, bytes: $0.totalBytes
            )
        }
        return MetricsPage(
            metrics: completions.metrics.snapshot, load: scheduler.load,
            cacheUse: scheduler.cacheUse, slots: scheduler.configuration.parallel,
            contextSize: scheduler.configuration.contextSize, diskCache: disk)
    }

    /// Ready for a request to start generating at once: the model is loaded (the server
    /// listens only then) and a slot is free. 503 with Retry-After otherwise, so a load
    /// balancer sends the request elsewhere; /health still says the process is alive.
    private func ready(_ channel: ResponseChannel) throws {
        let load = completions.scheduler.load
        let slots = completions.scheduler.configuration.parallel
        let free = load.active + load.waiting < slots
        try channel.sendJSON(
            status: free ? 200 : 503,
            JSONBody(
                value: .object([
                    ("status", .string(free ? "ready" : "busy")),
                    ("slots_generating", .int(load.active)), ("requests_waiting", .int(load.waiting)),
                    ("slots", .int(slots)),
                ])), headers: free ? [] : [("Retry-After", "1")])
    }

    /// 200 with the slots' load: the server answers only once the model is loaded, so this
    /// says the process is alive (whether it has room is /ready).
    private func health(_ channel: ResponseChannel) throws {
        let load = completions.scheduler.load
        try channel.sendJSON(
            JSONBody(
                value: .object([
                    ("status", .string("ok")), ("model", .string(completions.modelID)),
                    ("slots_generating", .int(load.active)), ("requests_waiting", .int(load.waiting)),
                    ("slots", .int(completions.scheduler.configuration.parallel)),
                ])))
    }
}
