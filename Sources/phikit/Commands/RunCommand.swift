/// `phikit run MODEL`: generate text. Parsing is final; generation is not wired up yet.
struct RunCommand: Command {
    static let name = "run"
    static let summary = "Generate text with a model"
    static let usage = """
        phikit run <model> [-p <prompt>] [--system <text>] [-m <n>] [--temp <t>] [--top-p <p>]
                   [--top-k <k>] [--seed <s>] [--no-chat-template] [--stats] [--json]
        """
    static let help = """
        Runs <model> on a prompt and streams the reply to stdout. Without -p, the prompt is
        read from stdin. Never touches the network.

        arguments:
          <model>                  registry alias, Hub id or model directory

        options:
          -p, --prompt <prompt>    the user message (default: stdin)
          --system <text>          system message
          -m, --max-tokens <n>     stop after n tokens (default: 256)
          --temp <t>               sampling temperature; 0 is greedy (default: 0.7)
          --top-p <p>              nucleus sampling threshold (default: 1.0, off)
          --top-k <k>              sample among the k most likely tokens (default: 0, off)
          --seed <s>               random seed, for repeatable output
          --no-chat-template       send the prompt as raw text
          --stats                  print tokens/s and timings to stderr
          --json                   print the reply and stats as one JSON object
        """

    var model: String
    var prompt: String?
    var system: String?
    var maxTokens: Int
    var temperature: Double
    var topP: Double
    var topK: Int
    var seed: Int?
    var useChatTemplate: Bool
    var stats: Bool
    var json: Bool

    init(_ args: inout ArgumentReader) throws {
        prompt = try args.option("-p", "--prompt")
        system = try args.option("--system")
        maxTokens = try args.option("-m", "--max-tokens", as: Int.self) ?? 256
        temperature = try args.option("--temp", as: Double.self) ?? 0.7
        topP = try args.option("--top-p", as: Double.self) ?? 1.0
        topK = try args.option("--top-k", as: Int.self) ?? 0
        seed = try args.option("--seed", as: Int.self)
        useChatTemplate = !args.flag("--no-chat-template")
        stats = args.flag("--stats")
        json = args.flag("--json")
        model = try args.positional("model")
        try args.finish()
        guard maxTokens > 0 else { throw UsageError("--max-tokens must be at least 1") }
        guard temperature >= 0 else { throw UsageError("--temp must not be negative") }
        guard topP > 0, topP <= 1 else { throw UsageError("--top-p must be in (0, 1]") }
        guard topK >= 0 else { throw UsageError("--top-k must not be negative") }
    }

    static var isImplemented: Bool { false }
    func run() throws { throw NotImplementedError(command: Self.name) }
}
