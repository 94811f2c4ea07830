import PhiFormats

/// JSON Schema (the subset in docs/structured-output.md) compiled to a grammar of the JSON
/// texts it accepts. Every keyword is either enforced or refused by name; annotations
/// (title, description, …) are read past. Objects are generated with their properties in the
/// schema's order and, unless `additionalProperties` says otherwise, no others; whitespace is
/// compact unless a bound is given (never unbounded, so a model cannot loop in it).
struct JSONSchemaCompiler {
    private var builder = GrammarBuilder(what: "JSON schema")
    private let document: JSONValue
    private let whitespace: Pattern
    private var refRules: [String: Int] = [:]
    private var shared: [String: Int] = [:]
    private var depth = 0

    /// Schemas nested deeper than this (through inline subschemas) are refused.
    static let maxNesting = 1_000

    static let annotations: Set<String> = [
        "$schema", "$id", "$comment", "title", "description", "default", "examples",
        "deprecated", "readOnly", "writeOnly", "$defs", "definitions", "strict", "name",
    ]

    /// `maxWhitespace` bounds the run of spaces/newlines allowed at each separator (0:
    /// compact JSON). `closing` texts (the rest of a tool call, its closing tag) must follow
    /// the value, each after whitespace as bounded; with them whitespace may lead too.
    static func grammar(_ schema: JSONValue, maxWhitespace: Int = 0, closing: [String] = [])
        throws(ConstraintError) -> Grammar
    {
        var compiler = JSONSchemaCompiler(document: schema, maxWhitespace: maxWhitespace)
        let root = compiler.builder.addRule("root")
        let body = try compiler.compile(schema, path: "#")
        let space = compiler.whitespace
        compiler.builder.define(
            root,
            closing.isEmpty
                ? body
                : .sequence([space, body] + closing.flatMap { [space, Pattern.literal($0)] }))
        return try compiler.builder.build(root: root)
    }

    private init(document: JSONValue, maxWhitespace: Int) {
        self.document = document
        var space = ByteSet(0x20)
        space.insert(0x0A)
        space.insert(0x09)
        whitespace =
            maxWhitespace > 0 ? .repetition(.bytes(space), min: 0, max: maxWhitespace) : .empty
    }

    // MARK: Shared rules

    private mutating func sharedRule(_ name: String, _ make: (inout Self) -> Pattern) -> Pattern {
        if let id = shared[name] { return .rule(id) }
        let id = builder.addRule(name)
        shared[name] = id
        builder.define(id, make(&self))
        return .rule(id)
    }

    private mutating func stringCharacter() -> Pattern {
        sharedRule("char") { _ in JSONTerminals.stringCharacter }
    }

    private mutating func anyString() -> Pattern {
        let char = stringCharacter()
        return sharedRule("string") { _ in .sequence([.literal("\""), .star(char), .literal("\"")]) }
    }

    private mutating func anyValue() -> Pattern {
        if let id = shared["value"] { return .rule(id) }
        let id = builder.addRule("value")
        shared["value"] = id
        let object = anyObject(), array = anyArray(), string = anyString()
        let number = sharedRule("number") { _ in JSONTerminals.number }
        builder.define(
            id,
            .choice([
                object, array, string, number, .literal("true"), .literal("false"),
                .literal("null"),
            ]))
        return .rule(id)
    }

    private mutating func anyObject() -> Pattern {
        if let id = shared["object"] { return .rule(id) }
        let id = builder.addRule("object")
        shared["object"] = id
        let member = Pattern.sequence([anyString(), colon, anyValue()])
        builder.define(id, braces("{", .optional(.sequence([member, .star(.sequence([comma, member]))])), "}"))
        return .rule(id)
    }

    private mutating func anyArray() -> Pattern {
        if let id = shared["array"] { return .rule(id) }
        let id = builder.addRule("array")
        shared["array"] = id
        let value = anyValue()
        builder.define(id, braces("[", .optional(.sequence([value, .star(.sequence([comma, value]))])), "]"))
        return .rule(id)
    }

    /// `pattern` as a rule of its own (a reference), so that using it twice does not copy it:
    /// nested objects and arrays would otherwise double at each level.
    private mutating func named(_ name: String, _ pattern: Pattern) -> Pattern {
        switch pattern {
        case .rule, .bytes: return pattern
        default:
            let id = builder.addRule(name)
            builder.define(id, pattern)
            return .rule(id)
        }
    }

    private var comma: Pattern { .sequence([whitespace, .literal(","), whitespace]) }
    private var colon: Pattern { .sequence([whitespace, .literal(":"), whitespace]) }

    private func braces(_ open: String, _ body: Pattern, _ close: String) -> Pattern {
        .sequence([.literal(open), whitespace, body, whitespace, .literal(close)])
    }

    // MARK: Schemas

    private mutating func compile(_ schema: JSONValue, path: String) throws(ConstraintError)
        -> Pattern
    {
        depth += 1
        defer { depth -= 1 }
        if depth > Self.maxNesting {
            throw ConstraintError(
                "the JSON schema is nested more than \(Self.maxNesting) levels deep at \(path.prefix(80))…")
        }
        switch schema {
        case .bool(true): return anyValue()
        case .bool(false): return .bytes(ByteSet())  // nothing: pruned, or "accepts nothing"
        case .object(let members):
            return try compileObjectSchema(members, path: path)
        default:
            throw ConstraintError("the JSON schema at \(path) is not an object or a boolean")
        }
    }

    private mutating func compileObjectSchema(
        _ members: [(key: String, value: JSONValue)], path: String
    ) throws(ConstraintError) -> Pattern {
        let schema = JSONValue.object(members)
        let keys = Set(members.map(\.key)).subtracting(Self.annotations)
        func only(_ allowed: Set<String>) throws(ConstraintError) {
            if let extra = keys.subtracting(allowed).sorted().first {
                throw .unsupportedKeyword(extra, at: path)
            }
        }
        if let ref = schema["$ref"] {
            try only(["$ref"])
            guard let target = ref.stringValue else {
                throw ConstraintError("'$ref' at \(path) is not a string")
            }
            return .rule(try refRule(target, from: path))
        }
        for combinator in ["anyOf", "oneOf"] {
            guard let value = schema[combinator] else { continue }
            try only([combinator])
            guard let branches = value.arrayValue, !branches.isEmpty else {
                throw ConstraintError("'\(combinator)' at \(path) is not a non-empty array")
            }
            if combinator == "oneOf" { try checkDisjoint(branches, path: path) }
            var options: [Pattern] = []
            for (i, branch) in branches.enumerated() {
                options.append(try compile(branch, path: "\(path)/\(combinator)/\(i)"))
            }
            return .choice(options)
        }
        if schema["allOf"] != nil {
            return try compile(try mergeAllOf(members, path: path), path: path)
        }
        if schema["const"] != nil || schema["enum"] != nil {
            try only(["const", "enum", "type"])
            let values =
                schema["const"].map { [$0] } ?? (schema["enum"]?.arrayValue ?? [])
            if schema["enum"] != nil && schema["enum"]?.arrayValue == nil {
                throw ConstraintError("'enum' at \(path) is not an array")
            }
            let types = try typeNames(schema, path: path)
            let kept = values.filter { types == nil || types!.contains(Self.typeName(of: $0)) }
            return .choice(kept.map { .literal($0.serialized()) } + [.bytes(ByteSet())])
        }
        guard let types = try typeNames(schema, path: path) ?? inferredTypes(keys) else {
            try only([])
            return anyValue()
        }
        var options: [Pattern] = []
        var used: Set<String> = ["type"]
        for type in types.sorted() {
            let (pattern, keywords) = try compileTyped(type, schema, path: path)
            options.append(pattern)
            used.formUnion(keywords)
        }
        try only(used)
        return options.count == 1 ? options[0] : .choice(options)
    }

    /// The schema's `type`, nil when absent. (OpenAPI's `nullable` is refused as unknown: JSON
    /// Schema validators ignore it, so a null it allowed would fail them.)
    private func typeNames(_ schema: JSONValue, path: String) throws(ConstraintError)
        -> Set<String>?
    {
        var names: Set<String>
        switch schema["type"] {
        case nil: return nil
        case .string(let name)?: names = [name]
        case .array(let list)?:
            names = Set(list.compactMap(\.stringValue))
            guard names.count == list.count, !names.isEmpty else {
                throw ConstraintError("'type' at \(path) is not a list of type names")
            }
        default: throw ConstraintError("'type' at \(path) is not a string or a list")
        }
        let known: Set<String> = ["string", "number", "integer", "boolean", "null", "object", "array"]
        if let unknown = names.subtracting(known).sorted().first {
            throw ConstraintError("unknown type '\(unknown)' at \(path)")
        }
        return names
    }

    /// The type a schema without `type` implies from its keywords (nil: any value).
    private func inferredTypes(_ keys: Set<String>) -> Set<String>? {
        if !keys.isDisjoint(with: ["properties", "required", "additionalProperties"]) {
            return ["object"]
        }
        if !keys.isDisjoint(with: ["items", "prefixItems", "minItems", "maxItems"]) {
            return ["array"]
        }
        if !keys.isDisjoint(with: ["minLength", "maxLength", "pattern", "format"]) {
            return ["string"]
        }
        if !keys.isDisjoint(with: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]) {
            return ["number"]
        }
        return nil
    }

    static func typeName(of value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "boolean"
        case .string: "string"
        case .number(let literal):
            !literal.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? "integer" : "number"
        case .array: "array"
        case .object: "object"
        }
    }

    /// One type's pattern and the keywords it enforced.
    private mutating func compileTyped(_ type: String, _ schema: JSONValue, path: String)
        throws(ConstraintError) -> (Pattern, Set<String>)
    {
        switch type {
        case "null": return (.literal("null"), [])
        case "boolean": return (.choice([.literal("true"), .literal("false")]), [])
        case "string": return (try stringPattern(schema, path: path), ["minLength", "maxLength", "pattern", "format"])
        case "integer":
            return (try integerPattern(schema, path: path), ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"])
        case "number":
            return (try numberPattern(schema, path: path), ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"])
        case "object":
            return (try objectPattern(schema, path: path), ["properties", "required", "additionalProperties", "unevaluatedProperties"])
        default:
            return (try arrayPattern(schema, path: path), ["items", "prefixItems", "minItems", "maxItems", "additionalItems"])
        }
    }

    private func count(_ schema: JSONValue, _ key: String, path: String) throws(ConstraintError) -> Int? {
        guard let value = schema[key] else { return nil }
        guard let n = value.intValue ?? value.doubleValue.flatMap({ $0 == $0.rounded() && abs($0) < 1e15 ? Int($0) : nil }), n >= 0 else {
            throw ConstraintError("'\(key)' at \(path) is not a non-negative integer")
        }
        return n
    }

    private mutating func stringPattern(_ schema: JSONValue, path: String) throws(ConstraintError) -> Pattern {
        let minLength = try count(schema, "minLength", path: path) ?? 0
        let maxLength = try count(schema, "maxLength", path: path)
        let quote = Pattern.literal("\"")
        if let format = schema["format"] {
            guard let name = format.stringValue, let regex = JSONTerminals.formats[name] else {
                throw ConstraintError(
                    "'format' \(schema["format"]!.serialized()) at \(path) is not supported",
                    hint: "phikit enforces the formats date, time, date-time, uuid and email",
                    unsupported: "format")
            }
            if schema["pattern"] != nil || schema["minLength"] != nil || schema["maxLength"] != nil {
                throw ConstraintError(
                    "'format' together with 'pattern' or a length at \(path) is not supported",
                    unsupported: "format")
            }
            return .sequence([quote, try RegexCompiler.pattern(regex, encoding: .jsonString), quote])
        }
        if let pattern = schema["pattern"] {
            guard let regex = pattern.stringValue else {
                throw ConstraintError("'pattern' at \(path) is not a string")
            }
            if schema["minLength"] != nil || schema["maxLength"] != nil {
                throw ConstraintError(
                    "'pattern' together with 'minLength'/'maxLength' at \(path) is not supported",
                    hint: "put the length into the pattern, e.g. ^[a-z]{2,8}$",
                    unsupported: "pattern")
            }
            return .sequence([quote, try RegexCompiler.pattern(regex, encoding: .jsonString), quote])
        }
        if minLength == 0 && maxLength == nil { return anyString() }
        if let maxLength, maxLength < minLength { return .bytes(ByteSet()) }
        let char = stringCharacter()
        return .sequence([quote, .repetition(char, min: minLength, max: maxLength), quote])
    }

    private func bound(_ schema: JSONValue, _ key: String, path: String) throws(ConstraintError) -> Double? {
        guard let value = schema[key] else { return nil }
        guard let d = value.doubleValue, d.isFinite else {
            if case .bool = value {
                throw ConstraintError("'\(key)' at \(path) is a draft-4 boolean", unsupported: key)
            }
            throw ConstraintError("'\(key)' at \(path) is not a number")
        }
        return d
    }

    private func integerPattern(_ schema: JSONValue, path: String) throws(ConstraintError) -> Pattern {
        var lower: Int? = nil, upper: Int? = nil
        func clamp(_ d: Double) -> Int { Int(max(min(d, 1e18), -1e18)) }
        if let m = try bound(schema, "minimum", path: path) { lower = clamp(m.rounded(.up)) }
        if let m = try bound(schema, "exclusiveMinimum", path: path) {
            lower = max(lower ?? Int.min, clamp(m.rounded(.down)) + 1)
        }
        if let m = try bound(schema, "maximum", path: path) { upper = clamp(m.rounded(.down)) }
        if let m = try bound(schema, "exclusiveMaximum", path: path) {
            upper = min(upper ?? Int.max, clamp(m.rounded(.up)) - 1)
        }
        if lower == nil && upper == nil { return JSONTerminals.integer }
        return JSONTerminals.integer(from: lower, to: upper)
    }

    /// Numbers: bounds are enforced when they are integers and the range is non-negative (an
    /// integer part in range, a fraction only below the maximum); other bounds are refused.
    private func numberPattern(_ schema: JSONValue, path: String) throws(ConstraintError) -> Pattern {
        let minimum = try bound(schema, "minimum", path: path)
        let maximum = try bound(schema, "maximum", path: path)
        for key in ["exclusiveMinimum", "exclusiveMaximum"] where schema[key] != nil {
            throw ConstraintError("'\(key)' on a number at \(path) is not supported",
                hint: "use 'minimum'/'maximum', or type integer", unsupported: key)
        }
        if minimum == nil && maximum == nil { return JSONTerminals.number }
        let lo = minimum ?? 0
        guard lo >= 0, lo == lo.rounded(), (maximum ?? 0) == (maximum ?? 0).rounded(), lo < 1e17,
            (maximum ?? 0) < 1e17
        else {
            throw ConstraintError(
                "'minimum'/'maximum' on a number at \(path) are enforced only as non-negative integers",
                hint: "use integer bounds ≥ 0, or type integer", unsupported: minimum == nil ? "maximum" : "minimum")
        }
        let fraction = JSONTerminals.fraction
        guard let hi = maximum else {
            return .sequence([JSONTerminals.integer(from: Int(lo), to: nil), .optional(fraction)])
        }
        guard hi >= lo else { return .bytes(ByteSet()) }
        // The maximum itself takes only zero fractions.
        var options: [Pattern] = [.sequence([.literal(String(Int(hi))), .optional(.sequence([.literal("."), .repetition(.literal("0"), min: 1, max: JSONTerminals.maxDigits)]))])]
        if hi > lo {
            options.append(.sequence([JSONTerminals.integer(from: Int(lo), to: Int(hi) - 1), .optional(fraction)]))
        }
        return .choice(options)
    }

    // MARK: Objects

    private mutating func objectPattern(_ schema: JSONValue, path: String) throws(ConstraintError) -> Pattern {
        let properties = schema["properties"]?.objectValue ?? []
        if schema["properties"] != nil && schema["properties"]?.objectValue == nil {
            throw ConstraintError("'properties' at \(path) is not an object")
        }
        var required = Set<String>()
        if let list = schema["required"] {
            guard let names = list.arrayValue?.compactMap(\.stringValue),
                names.count == list.arrayValue?.count
            else { throw ConstraintError("'required' at \(path) is not a list of names") }
            required = Set(names)
        }
        if let unevaluated = schema["unevaluatedProperties"], unevaluated != .bool(false) {
            throw .unsupportedKeyword("unevaluatedProperties", at: path)
        }
        // Extra members: only when the schema asks for them (a schema or true), or when it
        // declares no properties at all (a free-form object).
        var extra: JSONValue? = nil
        switch schema["additionalProperties"] {
        case nil: extra = properties.isEmpty && required.isEmpty ? .bool(true) : nil
        case .bool(false)?: extra = nil
        case let value?: extra = value
        }
        var members: [(key: String, value: Pattern, required: Bool)] = []
        var declared = Set<String>()
        for (key, value) in properties {
            guard declared.insert(key).inserted else { continue }
            let pattern = try compile(value, path: "\(path)/properties/\(Self.escape(key))")
            members.append((key, named(key, pattern), required.contains(key)))
        }
        for key in required.subtracting(declared).sorted() {
            guard extra != nil else {
                throw ConstraintError(
                    "required property '\(key)' at \(path) is not allowed by additionalProperties: false",
                    hint: "the schema accepts nothing")
            }
            let pattern = try compile(extra!, path: "\(path)/additionalProperties")
            members.append((key, pattern, true))
            declared.insert(key)
        }
        let extraMember: Pattern? = try extra.map { (value) throws(ConstraintError) -> Pattern in
            let valuePattern = try compile(value, path: "\(path)/additionalProperties")
            let key = declared.isEmpty ? anyString() : Self.keyNotIn(declared)
            return named("extra", .sequence([key, colon, valuePattern]))
        }
        if members.isEmpty, extra == .bool(true) { return anyObject() }
        // after[i]: the members from i on, something already written (each starts with ",");
        // first[i]: the same with nothing written yet. Each is a rule naming the next one,
        // so the grammar grows linearly with the number of properties.
        let extras: Pattern = extraMember.map { .star(.sequence([comma, $0])) } ?? .empty
        var after: Pattern = named("after", extras)
        var first: Pattern = named(
            "first", extraMember.map { .optional(.sequence([$0, .star(.sequence([comma, $0]))])) } ?? .empty)
        for member in members.reversed() {
            let written = Pattern.sequence([.literal(JSONValue.string(member.key).serialized()), colon, member.value])
            let withIt = Pattern.sequence([written, after])
            let newAfter: Pattern = .sequence([comma, written, after])
            first = named("first", member.required ? withIt : .choice([withIt, first]))
            after = named("after", member.required ? newAfter : .choice([newAfter, after]))
        }
        return braces("{", first, "}")
    }

    /// The bytes of a key off the declared ones: printable ASCII but `"` and `\`.
    static let keyBytes: ByteSet = {
        var plain = ByteSet()
        for b in UInt8(0x20)...0x7E where b != 0x22 && b != 0x5C { plain.insert(b) }
        return plain
    }()

    /// A JSON string (printable ASCII, no escapes) that is none of `keys`: the keys' trie,
    /// where a string may leave the trie at any point but end only off a key.
    static func keyNotIn(_ keys: Set<String>) -> Pattern {
        let plain = keyBytes
        let tail = Pattern.sequence([.star(.bytes(plain)), .literal("\"")])
        struct TrieNode {
            var children: [UInt8: Int] = [:]
            var isKey = false
        }
        var nodes = [TrieNode()]
        for key in keys {
            let bytes = Array(key.utf8)
            guard bytes.allSatisfy({ plain.contains($0) }) else { continue }
            var n = 0
            for b in bytes {
                if let c = nodes[n].children[b] {
                    n = c
                } else {
                    nodes.append(TrieNode())
                    nodes[n].children[b] = nodes.count - 1
                    n = nodes.count - 1
                }
            }
            nodes[n].isKey = true
        }
        func build(_ n: Int) -> Pattern {
            var options: [Pattern] = []
            var other = ByteSet()  // the bytes that leave the trie here
            for b in UInt8(0x20)...0x7E where plain.contains(b) && nodes[n].children[b] == nil {
                other.insert(b)
            }
            if !other.isEmpty { options.append(.sequence([.bytes(other), tail])) }
            for (b, child) in nodes[n].children.sorted(by: { $0.key < $1.key }) {
                options.append(.sequence([.literal([b]), build(child)]))
            }
            if !nodes[n].isKey { options.append(.literal("\"")) }
            return options.count == 1 ? options[0] : .choice(options)
        }
        return .sequence([.literal("\""), build(0)])
    }

    // MARK: Arrays

    private mutating func arrayPattern(_ schema: JSONValue, path: String) throws(ConstraintError) -> Pattern {
        var prefix: [Pattern] = []
        var items: Pattern? = nil
        if let list = schema["prefixItems"]?.arrayValue ?? schema["items"]?.arrayValue {
            for (i, item) in list.enumerated() {
                prefix.append(try compile(item, path: "\(path)/prefixItems/\(i)"))
            }
            let rest = schema["prefixItems"] != nil ? schema["items"] : schema["additionalItems"]
            if let rest, rest != .bool(false) {
                items = named("items", try compile(rest, path: "\(path)/items"))
            }
        } else if let item = schema["items"] {
            items = named("items", try compile(item, path: "\(path)/items"))
        } else {
            items = anyValue()
        }
        if schema["additionalItems"] != nil && schema["items"]?.arrayValue == nil {
            throw .unsupportedKeyword("additionalItems", at: path)
        }
        let minItems = try count(schema, "minItems", path: path) ?? 0
        var maxItems = try count(schema, "maxItems", path: path)
        if items == nil { maxItems = min(maxItems ?? prefix.count, prefix.count) }
        if let maxItems, maxItems < minItems { return .bytes(ByteSet()) }
        if minItems > prefix.count + 100_000 { throw .tooLarge("JSON schema", limit: GrammarBuilder.elementBudget) }

        // list(k): the items from index k on, k items already written.
        func item(_ k: Int) -> Pattern { k < prefix.count ? prefix[k] : items! }
        func separated(_ k: Int, _ p: Pattern) -> Pattern { k == 0 ? p : .sequence([comma, p]) }
        var tail: Pattern = .empty
        let start = prefix.count
        if let items, maxItems.map({ $0 > start }) ?? true {
            // Items beyond the prefix: the ones minItems still needs, then optional ones.
            let need = max(0, minItems - start)
            let optional = maxItems.map { $0 - max(minItems, start) }
            let sep = Pattern.sequence([comma, items])
            if start == 0 {
                if need > 0 {
                    tail = .sequence([items, .repetition(sep, min: need - 1, max: optional.map { $0 + need - 1 })])
                } else {
                    tail = .optional(.sequence([items, .repetition(sep, min: 0, max: optional.map { $0 - 1 })]))
                }
            } else {
                tail = .repetition(sep, min: need, max: optional.map { $0 + need })
            }
        }
        var body = tail
        for k in stride(from: prefix.count - 1, through: 0, by: -1) {
            if let maxItems, k >= maxItems { continue }
            let withItem = Pattern.sequence([separated(k, item(k)), body])
            body = k >= minItems ? .optional(withItem) : withItem
        }
        return braces("[", body, "]")
    }

    // MARK: References and combinators

    private mutating func refRule(_ target: String, from path: String) throws(ConstraintError) -> Int {
        if let id = refRules[target] { return id }
        guard target.hasPrefix("#") else {
            throw ConstraintError(
                "'$ref' \(target) at \(path) is not a local reference",
                hint: "phikit resolves references inside the schema ('#/$defs/…')",
                unsupported: "$ref")
        }
        let resolved = try Self.resolve(target, in: document, from: path)
        let id = builder.addRule(target)
        refRules[target] = id
        builder.define(id, try compile(resolved, path: target))
        return id
    }

    static func resolve(_ pointer: String, in document: JSONValue, from path: String) throws(ConstraintError)
        -> JSONValue
    {
        var value = document
        let body = pointer.dropFirst()
        guard !body.isEmpty else { return document }
        guard body.hasPrefix("/") else {
            throw ConstraintError("'$ref' \(pointer) at \(path) is not a JSON pointer", unsupported: "$ref")
        }
        for raw in body.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            let token = raw.replacingOccurrences("~1", "/").replacingOccurrences("~0", "~")
            if let next = value[token] {
                value = next
            } else if let list = value.arrayValue, let i = Int(token), i >= 0, i < list.count {
                value = list[i]
            } else {
                throw ConstraintError("'$ref' \(pointer) at \(path) points at nothing")
            }
        }
        return value
    }

    static func escape(_ key: String) -> String {
        key.replacingOccurrences("~", "~0").replacingOccurrences("/", "~1")
    }

    /// allOf whose members are objects (or references to them): one object schema with the
    /// properties and required names of all, plus the schema's own.
    private func mergeAllOf(_ members: [(key: String, value: JSONValue)], path: String) throws(ConstraintError)
        -> JSONValue
    {
        guard let parts = JSONValue.object(members)["allOf"]?.arrayValue, !parts.isEmpty else {
            throw ConstraintError("'allOf' at \(path) is not a non-empty array")
        }
        var merged: [(key: String, value: JSONValue)] = members.filter { $0.key != "allOf" }
        if parts.count == 1 && merged.allSatisfy({ Self.annotations.contains($0.key) }) {
            return parts[0]
        }
        var properties: [(key: String, value: JSONValue)] = JSONValue.object(merged)["properties"]?.objectValue ?? []
        var required: [JSONValue] = JSONValue.object(merged)["required"]?.arrayValue ?? []
        var additional: JSONValue? = JSONValue.object(merged)["additionalProperties"]
        for (i, part) in parts.enumerated() {
            var schema = part
            var seen = 0
            while let ref = schema["$ref"]?.stringValue {
                schema = try Self.resolve(ref, in: document, from: "\(path)/allOf/\(i)")
                seen += 1
                if seen > 100 { throw ConstraintError("'$ref' loop at \(path)/allOf/\(i)") }
            }
            guard let object = schema.objectValue else {
                throw ConstraintError("'allOf' member \(i) at \(path) is not a schema object", unsupported: "allOf")
            }
            for (key, value) in object where !Self.annotations.contains(key) {
                switch key {
                case "type" where value == .string("object"): continue
                case "properties":
                    for member in value.objectValue ?? [] {
                        if let existing = properties.first(where: { $0.key == member.key }) {
                            guard existing.value == member.value else {
                                throw ConstraintError(
                                    "'allOf' at \(path) gives property '\(member.key)' two different schemas",
                                    unsupported: "allOf")
                            }
                        } else {
                            properties.append(member)
                        }
                    }
                case "required": required += value.arrayValue ?? []
                case "additionalProperties":
                    if let additional, additional != value {
                        throw ConstraintError("'allOf' at \(path) has conflicting additionalProperties", unsupported: "allOf")
                    }
                    additional = value
                default:
                    throw ConstraintError(
                        "'allOf' at \(path) is enforced for object members only, not '\(key)'",
                        unsupported: "allOf")
                }
            }
        }
        merged.removeAll { ["properties", "required", "additionalProperties", "type"].contains($0.key) }
        merged.append((key: "type", value: .string("object")))
        merged.append((key: "properties", value: .object(properties)))
        if !required.isEmpty { merged.append((key: "required", value: .array(required))) }
        if let additional { merged.append((key: "additionalProperties", value: additional)) }
        return .object(merged)
    }

    /// oneOf means "exactly one": enforced as anyOf only when no value can match two
    /// branches — their types differ, or each is an object with a required property whose
    /// const/enum values differ from the others'.
    private func checkDisjoint(_ branches: [JSONValue], path: String) throws(ConstraintError) {
        func deref(_ schema: JSONValue) -> JSONValue {
            var s = schema
            for _ in 0..<100 {
                guard let ref = s["$ref"]?.stringValue, let next = try? Self.resolve(ref, in: document, from: path)
                else { break }
                s = next
            }
            return s
        }
        let resolved = branches.map(deref)
        func kinds(_ s: JSONValue) -> Set<String>? {
            if let c = s["const"] { return [Self.typeName(of: c)] }
            if let e = s["enum"]?.arrayValue { return Set(e.map(Self.typeName(of:))) }
            if let t = s["type"]?.stringValue { return [t] }
            if let t = s["type"]?.arrayValue { return Set(t.compactMap(\.stringValue)) }
            if s.objectValue?.contains(where: { $0.key == "properties" }) == true { return ["object"] }
            return nil
        }
        func widen(_ k: Set<String>) -> Set<String> { k.contains("number") ? k.union(["integer"]) : k }
        let allKinds = resolved.map { kinds($0).map(widen) }
        if allKinds.allSatisfy({ $0 != nil }) {
            var union = Set<String>()
            var disjoint = true
            for k in allKinds {
                if !union.isDisjoint(with: k!) { disjoint = false }
                union.formUnion(k!)
            }
            if disjoint { return }
        }
        // A discriminator: a property every branch requires, with pairwise different values.
        let first = resolved[0]
        for (name, _) in first["properties"]?.objectValue ?? [] {
            var values: [[JSONValue]] = []
            for branch in resolved {
                let isRequired = branch["required"]?.arrayValue?.contains(.string(name)) ?? false
                guard isRequired, let p = branch["properties"]?[name].map(deref),
                    let v = p["const"].map({ [$0] }) ?? p["enum"]?.arrayValue
                else { break }
                values.append(v)
            }
            guard values.count == resolved.count else { continue }
            let flat = values.flatMap { $0 }
            if Set(flat.map { $0.serialized() }).count == flat.count { return }
        }
        throw ConstraintError(
            "'oneOf' at \(path) has branches a value could match together",
            hint: "use anyOf, or give each branch a different type or a required const property",
            unsupported: "oneOf")
    }
}

extension StringProtocol {
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
