import PhiFormats

/// A value while a template renders: Python's types as Jinja sees them. Lists, tuples and
/// dicts are values (transformers' sandbox forbids mutating them); a namespace is the one
/// mutable object, so it is a class.
indirect enum JinjaValue {
    /// A missing variable, attribute or item. Renders as "", is falsy, iterates as empty,
    /// and fails when used as a value (`undefined.x`, `undefined + 1`), as Jinja's
    /// `Undefined` does. `description` says what was missing, for that error.
    case undefined(String)
    case none
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case list([JinjaValue])
    case tuple([JinjaValue])
    case dict(JinjaDict)
    case namespace(JinjaNamespace)
    case loop(JinjaLoop)
    case function(JinjaFunction)

    var isUndefined: Bool {
        if case .undefined = self { return true }
        return false
    }

    var isNone: Bool {
        if case .none = self { return true }
        return false
    }

    /// Python's type name, for error messages ("'int' object is not iterable").
    var typeName: String {
        switch self {
        case .undefined: "Undefined"
        case .none: "NoneType"
        case .bool: "bool"
        case .int: "int"
        case .double: "float"
        case .string: "str"
        case .list: "list"
        case .tuple: "tuple"
        case .dict: "dict"
        case .namespace: "Namespace"
        case .loop: "LoopContext"
        case .function: "function"
        }
    }

    /// Python truthiness.
    var isTruthy: Bool {
        switch self {
        case .undefined, .none: false
        case .bool(let b): b
        case .int(let i): i != 0
        case .double(let d): d != 0
        case .string(let s): !s.isEmpty
        case .list(let items), .tuple(let items): !items.isEmpty
        case .dict(let d): !d.isEmpty
        case .namespace, .loop, .function: true
        }
    }

    /// The error Jinja raises when an undefined value is used as a value.
    func undefinedError() -> JinjaError {
        if case .undefined(let what) = self { return .render(what) }
        return .render("value is undefined")
    }
}

// MARK: - Conversion from literals and the caller's JSON data

extension JinjaValue {
    init(_ constant: JinjaConstant) {
        switch constant {
        case .none: self = .none
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(i)
        case .double(let d): self = .double(d)
        case .string(let s): self = .string(s)
        }
    }

    /// JSON from the caller (messages, tools, extra context), as Python's `json.loads` would
    /// give it to the template: integer literals become ints, other numbers floats.
    init(_ json: JSONValue) {
        switch json {
        case .null: self = .none
        case .bool(let b): self = .bool(b)
        case .string(let s): self = .string(s)
        case .number:
            if let i = json.intValue {
                self = .int(i)
            } else {
                self = .double(json.doubleValue ?? .nan)
            }
        case .array(let items): self = .list(items.map(JinjaValue.init))
        case .object(let members):
            var dict = JinjaDict()
            for (key, value) in members { dict.set(key, JinjaValue(value)) }
            self = .dict(dict)
        }
    }
}

// MARK: - Mutable and callable objects

/// `namespace(...)`: the object `{% set ns.attr = … %}` writes to, visible across loop
/// iterations (plain `set` inside a loop is local to the iteration).
final class JinjaNamespace {
    var attributes: JinjaDict
    /// 1 + the deepest nesting of a value it was ever given (JinjaBudget.nesting): a
    /// namespace that holds itself, or a chain of namespaces, counts one more per level
    /// without being walked.
    private(set) var nesting = 1

    init(_ attributes: JinjaDict) throws {
        self.attributes = attributes
        // As deep as a dict of the same attributes.
        nesting = try JinjaBudget.checkNesting(.dict(attributes))
    }

    /// `set ns.name = value`.
    func set(_ name: String, _ value: JinjaValue) throws {
        let depth = 1 + (try JinjaBudget.checkNesting(value))
        guard depth <= JinjaBudget.maxNesting else {
            throw JinjaBudget.tooDeep
        }
        nesting = max(nesting, depth)
        attributes.set(name, value)
    }
}

/// The `loop` variable inside a `for` body.
final class JinjaLoop {
    let items: [JinjaValue]
    var index0 = 0
    let depth0: Int
    /// For `loop.changed(value)`: the value it last saw.
    var lastChanged: JinjaValue?
    /// In a `for … recursive` loop, `loop(children)` renders the body for `children`.
    var recurse: ((JinjaValue) throws -> String)?

    init(items: [JinjaValue], depth0: Int) {
        self.items = items
        self.depth0 = depth0
    }
}

/// A callable: a macro, a global function (`range`, `namespace`, `raise_exception`…), or a
/// bound method (`'text'.strip`, `message.get`, `loop.cycle`).
struct JinjaFunction {
    let name: String
    let call: (JinjaArguments) throws -> JinjaValue
}

/// Evaluated call arguments.
struct JinjaArguments {
    var positional: [JinjaValue] = []
    var keywords: [(name: String, value: JinjaValue)] = []

    init(_ positional: [JinjaValue] = [], keywords: [(name: String, value: JinjaValue)] = []) {
        self.positional = positional
        self.keywords = keywords
    }

    /// Binds the arguments to `parameters` (Python-style: positional first, then by name),
    /// filling `defaults` for missing trailing ones; extra or unknown arguments are an error
    /// naming `function`.
    func bind(
        _ function: String, _ parameters: [String], defaults: [String: JinjaValue] = [:]
    ) throws -> [JinjaValue] {
        guard positional.count <= parameters.count else {
            throw JinjaError.render(
                "\(function)() takes at most \(parameters.count) arguments "
                    + "(\(positional.count) given)")
        }
        var bound: [JinjaValue?] =
            positional.map { $0 }
            + Array(repeating: nil, count: parameters.count - positional.count)
        for (name, value) in keywords {
            guard let index = parameters.firstIndex(of: name) else {
                throw JinjaError.render(
                    "\(function)() got an unexpected keyword argument '\(name)'")
            }
            guard bound[index] == nil else {
                throw JinjaError.render("\(function)() got multiple values for argument '\(name)'")
            }
            bound[index] = value
        }
        return try zip(parameters, bound).map { name, value in
            if let value { return value }
            if let fallback = defaults[name] { return fallback }
            throw JinjaError.render("\(function)() missing required argument '\(name)'")
        }
    }
}
