/// The functions a template calls by name, filters (`x | upper`) and tests (`x is defined`)
/// alike: each takes the value, the call's arguments and the renderer.
struct JinjaNamedFunctions<Result>: Sendable {
    typealias Function = @Sendable (JinjaValue, JinjaArguments, JinjaRenderer) throws -> Result

    /// "filter" or "test", for the error that names an unknown one.
    let kind: String
    let table: [String: Function]
    /// The parser checks names against these before anything renders.
    let names: Set<String>

    init(kind: String, _ table: [String: Function]) {
        self.kind = kind
        self.table = table
        names = Set(table.keys)
    }

    func apply(
        _ name: String, to value: JinjaValue, _ args: JinjaArguments, _ renderer: JinjaRenderer
    ) throws -> Result {
        guard let function = table[name] else {
            throw JinjaError.render("no \(kind) named '\(name)'")
        }
        return try function(value, args, renderer)
    }
}
