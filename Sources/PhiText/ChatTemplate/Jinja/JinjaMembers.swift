/// `value.name` and `value[key]` with Jinja's sandboxed lookup rules:
/// - `x.name` tries the attribute (a method of str/dict/list, a namespace or loop field)
///   and then the item `x['name']`; `x[key]` tries the item first, then the attribute;
/// - a miss gives an undefined value (never an error: only *using* it fails);
/// - names starting with `_` and methods that mutate (`list.append`, `dict.update`, …) are
///   unsafe in transformers' ImmutableSandboxedEnvironment: calling them fails.
enum JinjaMembers {
    /// `value.name`; `fallBackToItem: false` is the `attr` filter, which never reads items.
    static func attribute(
        of value: JinjaValue, _ name: String, fallBackToItem: Bool = true
    ) -> JinjaValue {
        if name.hasPrefix("_") {
            return .undefined(
                "access to attribute '\(name)' of '\(value.typeName)' object is unsafe")
        }
        if let member = member(of: value, name) { return member }
        if fallBackToItem, case .dict(let dict) = value, let item = dict[name] { return item }
        return missing(value, attribute: name)
    }

    static func item(of value: JinjaValue, _ key: JinjaValue) -> JinjaValue {
        switch (value, key) {
        case (.dict(let dict), _):
            if let item = try? dict.value(for: key) { return item }
        case (.list(let items), _), (.tuple(let items), _):
            if let i = key.intValue { return element(items, i) ?? outOfRange(value) }
        case (.string(let s), _):
            if let i = key.intValue {
                let scalars = Array(s.unicodeScalars)
                return element(scalars, i).map { .string(String($0)) } ?? outOfRange(value)
            }
        default:
            break
        }
        if case .string(let name) = key, !name.hasPrefix("_"), let member = member(of: value, name)
        {
            return member
        }
        if case .string(let name) = key { return missing(value, attribute: name) }
        return .undefined("'\(value.typeName) object' has no item \((try? key.pythonRepr) ?? key.typeName)")
    }

    private static func element<T>(_ items: [T], _ index: Int) -> T? {
        let i = index < 0 ? index + items.count : index
        return items.indices.contains(i) ? items[i] : nil
    }

    private static func outOfRange(_ value: JinjaValue) -> JinjaValue {
        .undefined("\(value.typeName) index out of range")
    }

    private static func missing(_ value: JinjaValue, attribute: String) -> JinjaValue {
        .undefined("'\(value.typeName) object' has no attribute '\(attribute)'")
    }

    /// Methods and fields (not dict items).
    private static func member(of value: JinjaValue, _ name: String) -> JinjaValue? {
        switch value {
        case .string(let s): return JinjaStringMethods.method(s, name).map(JinjaValue.function)
        case .dict(let dict): return dictMethod(dict, name)
        case .list(let items), .tuple(let items): return listMethod(items, value, name)
        case .namespace(let ns): return ns.attributes[name]
        case .loop(let loop): return loopField(loop, name)
        default: return nil
        }
    }

    private static let unsafeDictMethods: Set<String> = [
        "clear", "pop", "popitem", "setdefault", "update",
    ]
    private static let unsafeListMethods: Set<String> = [
        "append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort",
    ]

    private static func dictMethod(_ dict: JinjaDict, _ name: String) -> JinjaValue? {
        if unsafeDictMethods.contains(name) {
            return .undefined("access to attribute '\(name)' of 'dict' object is unsafe")
        }
        let method: (JinjaArguments) throws -> JinjaValue
        switch name {
        case "items":
            method = { args in
                _ = try args.bind("items", [])
                return .list(dict.items.map { .tuple([$0.key, $0.value]) })
            }
        case "keys":
            method = { args in
                _ = try args.bind("keys", [])
                return .list(dict.keys)
            }
        case "values":
            method = { args in
                _ = try args.bind("values", [])
                return .list(dict.values)
            }
        case "copy":
            method = { args in
                _ = try args.bind("copy", [])
                return .dict(dict)
            }
        case "get":
            method = { args in
                let a = try args.bind("get", ["key", "default"], defaults: ["default": .none])
                return try dict.value(for: a[0]) ?? a[1]
            }
        default: return nil
        }
        return .function(JinjaFunction(name: "dict.\(name)", call: method))
    }

    private static func listMethod(
        _ items: [JinjaValue], _ value: JinjaValue, _ name: String
    ) -> JinjaValue? {
        if case .list = value, unsafeListMethods.contains(name) {
            return .undefined("access to attribute '\(name)' of 'list' object is unsafe")
        }
        switch name {
        case "count":
            return .function(
                JinjaFunction(name: "count") { args in
                    let x = try args.bind("count", ["value"])[0]
                    return .int(items.filter { $0.pythonEquals(x) }.count)
                })
        case "index":
            return .function(
                JinjaFunction(name: "index") { args in
                    let x = try args.bind("index", ["value"])[0]
                    guard let i = items.firstIndex(where: { $0.pythonEquals(x) }) else {
                        throw JinjaError.render("\((try? x.pythonRepr) ?? x.typeName) is not in list")
                    }
                    return .int(i)
                })
        default: return nil
        }
    }

    private static func loopField(_ loop: JinjaLoop, _ name: String) -> JinjaValue? {
        let i = loop.index0
        let n = loop.items.count
        switch name {
        case "index": return .int(i + 1)
        case "index0": return .int(i)
        case "revindex": return .int(n - i)
        case "revindex0": return .int(n - i - 1)
        case "first": return .bool(i == 0)
        case "last": return .bool(i == n - 1)
        case "length": return .int(n)
        case "depth": return .int(loop.depth0 + 1)
        case "depth0": return .int(loop.depth0)
        case "previtem": return i > 0 ? loop.items[i - 1] : .undefined("there is no previous item")
        case "nextitem": return i + 1 < n ? loop.items[i + 1] : .undefined("there is no next item")
        case "cycle":
            return .function(
                JinjaFunction(name: "loop.cycle") { args in
                    guard !args.positional.isEmpty else {
                        throw JinjaError.render("no items for cycling given")
                    }
                    return args.positional[i % args.positional.count]
                })
        case "changed":
            return .function(
                JinjaFunction(name: "loop.changed") { args in
                    let current = JinjaValue.tuple(args.positional)
                    defer { loop.lastChanged = current }
                    return .bool(loop.lastChanged.map { !$0.pythonEquals(current) } ?? true)
                })
        default: return nil
        }
    }
}
