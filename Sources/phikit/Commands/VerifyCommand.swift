/// `phikit verify MODEL|DIR`: check a model's files, tensors and config.
/// Parsing is final; the checks are not written yet.
struct VerifyCommand: Command {
    static let name = "verify"
    static let summary = "Check a model's hashes, safetensors, tensor shapes and config"
    static let usage = "phikit verify <model|dir> [--json]"
    static let help = """
        Checks a cached or converted model: file hashes against the Hub's (sha256 for LFS
        files), safetensors structure, tensor names and shapes against config.json,
        quantization, and the tokenizer. Exits 1 when a check fails.

        arguments:
          <model|dir>   registry alias, Hub id or model directory

        options:
          --json        print the report as JSON
        """

    var model: String
    var json: Bool

    init(_ args: inout ArgumentReader) throws {
        json = args.flag("--json")
        model = try args.positional("model|dir")
        try args.finish()
    }

    static var isImplemented: Bool { false }
    func run() throws { throw NotImplementedError(command: Self.name) }
}
