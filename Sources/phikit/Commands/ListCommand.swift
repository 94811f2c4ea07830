/// `phikit list [PATTERN]`: the models on this machine. Not written yet.
struct ListCommand: Command {
    static let name = "list"
    static let aliases = ["ls"]
    static let summary = "List the models in the local cache and converted-model store"
    static let usage = "phikit list [<pattern>] [--json]"
    static let help = """
        Lists local models: those in the Hugging Face cache (pulled by phikit, hf or mlx-lm)
        and those phikit converted, with size, revision and format.

        arguments:
          <pattern>   show only models whose id contains <pattern>

        options:
          --json      print the list as JSON
        """

    var pattern: String?
    var json: Bool

    init(_ args: inout ArgumentReader) throws {
        json = args.flag("--json")
        pattern = args.optionalPositional()
        try args.finish()
    }

    static var isImplemented: Bool { false }
    func run() throws { throw NotImplementedError(command: Self.name) }
}
