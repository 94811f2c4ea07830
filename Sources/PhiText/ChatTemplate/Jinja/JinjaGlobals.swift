import Foundation

/// The globals transformers' environment gives templates: Jinja's `range`, `dict`,
/// `namespace`, `joiner`, plus transformers' `raise_exception(message)` and
/// `strftime_now(format)`. (Jinja's `cycler` and `lipsum` are not provided: calling them is
/// an error naming the line.)
enum JinjaGlobals {
    /// Jinja's sandbox refuses ranges longer than this.
    static let maxRange = 100_000

    static func install(
        into scope: JinjaScope, now: @escaping () -> Date, cycles: JinjaCycleBreaker
    ) {
        func define(_ name: String, _ body: @escaping (JinjaArguments) throws -> JinjaValue) {
            scope.set(name, .function(JinjaFunction(name: name, call: body)))
        }
        define("range", range)
        define("dict") { args in .dict(try makeDict(args, checkNames: false)) }
        define("namespace") { [unowned cycles] args in
            let namespace = try JinjaNamespace(try makeDict(args, checkNames: true))
            cycles.register(namespace)
            return .namespace(namespace)
        }
        define("joiner", joiner)
        define("raise_exception") { args in
            let message = try args.bind("raise_exception", ["message"])[0]
            throw JinjaError(kind: .raised, message: try message.pythonString)
        }
        define("strftime_now") { args in
            let format = try args.bind("strftime_now", ["format"])[0]
            guard case .string(let f) = format else {
                throw JinjaError.render(
                    "strftime_now() argument must be str, not \(format.typeName)")
            }
            return .string(try Strftime.format(f, now()))
        }
    }

    /// `joiner(sep=", ")`: a function that returns "" the first time and `sep` after that.
    private static func joiner(_ args: JinjaArguments) throws -> JinjaValue {
        let separator = try args.bind("joiner", ["sep"], defaults: ["sep": .string(", ")])[0]
        final class Used { var value = false }
        let used = Used()
        return .function(
            JinjaFunction(name: "joiner") { _ in
                defer { used.value = true }
                return used.value ? separator : .string("")
            })
    }

    private static func range(_ args: JinjaArguments) throws -> JinjaValue {
        guard args.keywords.isEmpty else {
            throw JinjaError.render("range() takes no keyword arguments")
        }
        let ints = try args.positional.map { value -> Int in
            guard let i = value.intValue else {
                throw JinjaError.render(
                    "'\(value.typeName)' object cannot be interpreted as an integer")
            }
            return i
        }
        let (start, stop, step): (Int, Int, Int)
        switch ints.count {
        case 1: (start, stop, step) = (0, ints[0], 1)
        case 2: (start, stop, step) = (ints[0], ints[1], 1)
        case 3: (start, stop, step) = (ints[0], ints[1], ints[2])
        default: throw JinjaError.render("range expected 1 to 3 arguments, got \(ints.count)")
        }
        guard step != 0 else { throw JinjaError.render("range() arg 3 must not be zero") }
        let values = Array(stride(from: start, to: stop, by: step).prefix(maxRange + 1))
        guard values.count <= maxRange else {
            throw JinjaError.render(
                "Range too big. The sandbox blocks ranges larger than MAX_RANGE (\(maxRange)).")
        }
        return .list(values.map(JinjaValue.int))
    }

    /// `dict(mapping_or_pairs, **kwargs)`; namespaces refuse `_`-prefixed names as
    /// transformers' TemplateNamespace does.
    private static func makeDict(_ args: JinjaArguments, checkNames: Bool) throws -> JinjaDict {
        guard args.positional.count <= 1 else {
            throw JinjaError.render(
                "dict expected at most 1 argument, got \(args.positional.count)")
        }
        var dict = JinjaDict()
        if let source = args.positional.first {
            if case .dict(let d) = source {
                dict = d
            } else {
                for pair in try source.iterate() {
                    let kv = try pair.iterate()
                    guard kv.count == 2 else {
                        throw JinjaError.render(
                            "dictionary update sequence element has length \(kv.count); "
                                + "2 is required"
                        )
                    }
                    try dict.set(kv[0], kv[1])
                }
            }
        }
        for (name, value) in args.keywords { dict.set(name, value) }
        if checkNames, let bad = dict.keys.first(where: { (try? $0.pythonString)?.hasPrefix("_") == true }) {
            throw JinjaError.render(
                "Chat templates cannot store underscore-prefixed attributes on a namespace, "
                    + "but got \((try? bad.pythonRepr) ?? "?")"
            )
        }
        return dict
    }
}
