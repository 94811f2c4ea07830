/// `phikit rm MODEL`: delete a model from the cache. Not written yet.
struct RmCommand: Command {
    static let name = "rm"
    static let summary = "Remove a model from the local cache"
    static let usage = "phikit rm <model> [-y]"
    static let help = """
        Deletes <model>'s snapshots and the blobs no other snapshot uses. Asks first unless -y.

        arguments:
          <model>     registry alias or Hub id

        options:
          -y, --yes   do not ask for confirmation
        """

    var model: String
    var yes: Bool

    init(_ args: inout ArgumentReader) throws {
        yes = args.flag("-y", "--yes")
        model = try args.positional("model")
        try args.finish()
    }

    static var isImplemented: Bool { false }
    func run() throws { throw NotImplementedError(command: Self.name) }
}
