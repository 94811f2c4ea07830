// Filters over sequences and mappings: length, first/last, join, sort, unique, min/max,
// sum, map, select/reject(attr), items, dictsort, batch, reverse, list.

extension JinjaFilters {
    static let sequenceFilters: [String: Filter] = [
        "length": { v, a, _ in
            _ = try a.bind("length", [])
            return .int(try v.length())
        },
        "count": { v, a, _ in
            _ = try a.bind("count", [])
            return .int(try v.length())
        },
        "list": { v, a, _ in
            _ = try a.bind("list", [])
            return .list(try v.iterate())
        },
        "first": { v, a, _ in
            _ = try a.bind("first", [])
            return try v.iterate().first ?? .undefined("No first item, sequence was empty.")
        },
        "last": { v, a, _ in
            _ = try a.bind("last", [])
            return try v.iterate().last ?? .undefined("No last item, sequence was empty.")
        },
        "reverse": { v, a, _ in
            _ = try a.bind("reverse", [])
            if case .string(let s) = v {
                return .string(String(pythonScalars: s.unicodeScalars.reversed()))
            }
            return .list(try v.iterate().reversed())
        },
        "join": { v, a, r in
            let p = try a.bind(
                "join", ["d", "attribute"], defaults: ["d": .string(""), "attribute": .none])
            var items = try v.iterate()
            if !p[1].isNone { items = items.map(attributeGetter(p[1], default: nil)) }
            return .string(
                try JinjaBudget.joined(
                    try items.map { try $0.pythonString }, separator: try p[0].pythonString))
        },
        "sum": { v, a, _ in
            let p = try a.bind(
                "sum", ["attribute", "start"], defaults: ["attribute": .none, "start": .int(0)])
            var items = try v.iterate()
            if !p[0].isNone { items = items.map(attributeGetter(p[0], default: nil)) }
            return try items.reduce(p[1]) { try $0.apply(.add, $1) }
        },
        "sort": { v, a, _ in
            let p = try a.bind(
                "sort", ["reverse", "case_sensitive", "attribute"],
                defaults: [
                    "reverse": .bool(false), "case_sensitive": .bool(false), "attribute": .none,
                ])
            let key = sortKey(p[2], caseSensitive: p[1].isTruthy)
            return .list(try stableSort(try v.iterate(), key: key, reverse: p[0].isTruthy))
        },
        "unique": { v, a, _ in
            let p = try a.bind(
                "unique", ["case_sensitive", "attribute"],
                defaults: ["case_sensitive": .bool(false), "attribute": .none])
            let key = sortKey(p[1], caseSensitive: p[0].isTruthy)
            var seen: [JinjaValue] = []
            var result: [JinjaValue] = []
            for item in try v.iterate() {
                let k = key(item)
                if !seen.contains(where: { $0.pythonEquals(k) }) {
                    seen.append(k)
                    result.append(item)
                }
            }
            return .list(result)
        },
        "min": { v, a, _ in try extreme(v, a, "min", wantsMax: false) },
        "max": { v, a, _ in try extreme(v, a, "max", wantsMax: true) },
        "map": { v, a, r in
            let items = try v.iterate()
            if a.positional.isEmpty,
                let attribute = a.keywords.first(where: { $0.name == "attribute" })
            {
                let fallback = a.keywords.first { $0.name == "default" }?.value
                if let extra = a.keywords.first(where: {
                    $0.name != "attribute" && $0.name != "default"
                }) {
                    throw JinjaError.render("Unexpected keyword argument '\(extra.name)'")
                }
                return .list(items.map(attributeGetter(attribute.value, default: fallback)))
            }
            guard case .string(let name)? = a.positional.first else {
                throw JinjaError.render("map requires a filter argument")
            }
            let rest = JinjaArguments(Array(a.positional.dropFirst()), keywords: a.keywords)
            return .list(try items.map { try functions.apply(name, to: $0, rest, r) })
        },
        "select": { v, a, r in .list(try selectOrReject(v, a, r, keep: true, byAttribute: false)) },
        "reject": { v, a, r in .list(try selectOrReject(v, a, r, keep: false, byAttribute: false))
        },
        "selectattr": { v, a, r in .list(try selectOrReject(v, a, r, keep: true, byAttribute: true))
        },
        "rejectattr": { v, a, r in
            .list(try selectOrReject(v, a, r, keep: false, byAttribute: true))
        },
        "items": { v, a, _ in
            _ = try a.bind("items", [])
            switch v {
            case .undefined: return .list([])
            case .dict(let d): return .list(d.items.map { .tuple([$0.key, $0.value]) })
            default: throw JinjaError.render("Can only get item pairs from a mapping.")
            }
        },
        "dictsort": { v, a, _ in
            let p = try a.bind(
                "dictsort", ["case_sensitive", "by", "reverse"],
                defaults: [
                    "case_sensitive": .bool(false), "by": .string("key"), "reverse": .bool(false),
                ])
            guard case .dict(let d) = v else {
                throw JinjaError.render("dictsort expects a mapping")
            }
            let position: Int
            switch try p[1].pythonString {
            case "key": position = 0
            case "value": position = 1
            default: throw JinjaError.render("You can only sort by either \"key\" or \"value\"")
            }
            let pairs = d.items.map { JinjaValue.tuple([$0.key, $0.value]) }
            let key: (JinjaValue) -> JinjaValue = { pair in
                guard case .tuple(let kv) = pair else { return pair }
                return p[0].isTruthy ? kv[position] : ignoreCase(kv[position])
            }
            return .list(try stableSort(pairs, key: key, reverse: p[2].isTruthy))
        },
        "batch": { v, a, _ in
            let p = try a.bind("batch", ["linecount", "fill_with"], defaults: ["fill_with": .none])
            guard let size = p[0].intValue, size > 0 else {
                throw JinjaError.render("batch size must be positive")
            }
            var batches: [JinjaValue] = []
            var current: [JinjaValue] = []
            for item in try v.iterate() {
                if current.count == size {
                    batches.append(.list(current))
                    current = []
                }
                current.append(item)
            }
            if !current.isEmpty {
                if !p[1].isNone {
                    try JinjaBudget.checkItems(size, "a batch")
                    current += Array(repeating: p[1], count: size - current.count)
                }
                batches.append(.list(current))
            }
            return .list(batches)
        },
    ]

    /// `attribute='a.b'` (or an int index) read with item-then-attribute lookup per part;
    /// an undefined result becomes `default` when one is given.
    static func attributeGetter(
        _ attribute: JinjaValue, default fallback: JinjaValue?
    ) -> (JinjaValue) -> JinjaValue {
        let parts: [JinjaValue]
        if case .string(let path) = attribute {
            parts = path.split(separator: ".", omittingEmptySubsequences: false).map { part in
                Int(part).map(JinjaValue.int) ?? .string(String(part))
            }
        } else {
            parts = [attribute]
        }
        return { item in
            var value = item
            for part in parts {
                value = value.isUndefined ? value : JinjaMembers.item(of: value, part)
                if let fallback, value.isUndefined { value = fallback }
            }
            return value
        }
    }

    private static func ignoreCase(_ value: JinjaValue) -> JinjaValue {
        if case .string(let s) = value { return .string(s.lowercased()) }
        return value
    }

    private static func sortKey(
        _ attribute: JinjaValue, caseSensitive: Bool
    ) -> (JinjaValue) -> JinjaValue {
        let getter = attribute.isNone ? { $0 } : attributeGetter(attribute, default: nil)
        return { item in caseSensitive ? getter(item) : ignoreCase(getter(item)) }
    }

    /// Python's `sorted(items, key=key, reverse=reverse)`: stable, and reverse keeps equal
    /// items in their original order.
    private static func stableSort(
        _ items: [JinjaValue], key: (JinjaValue) -> JinjaValue, reverse: Bool
    ) throws -> [JinjaValue] {
        let keyed = items.enumerated().map {
            (offset: $0.offset, key: key($0.element), item: $0.element)
        }
        var failure: Error?
        let sorted = keyed.sorted { a, b in
            do {
                if try (reverse ? b.key.pythonLess(a.key) : a.key.pythonLess(b.key)) { return true }
                if try (reverse ? a.key.pythonLess(b.key) : b.key.pythonLess(a.key)) {
                    return false
                }
            } catch {
                failure = failure ?? error
            }
            return a.offset < b.offset
        }
        if let failure { throw failure }
        return sorted.map(\.item)
    }

    private static func extreme(
        _ v: JinjaValue, _ a: JinjaArguments, _ name: String, wantsMax: Bool
    ) throws -> JinjaValue {
        let p = try a.bind(
            name, ["case_sensitive", "attribute"],
            defaults: ["case_sensitive": .bool(false), "attribute": .none])
        let key = sortKey(p[1], caseSensitive: p[0].isTruthy)
        var best: JinjaValue?
        for item in try v.iterate() {
            guard let current = best else {
                best = item
                continue
            }
            // Python keeps the first of equal items for both min and max.
            if try wantsMax
                ? key(current).pythonLess(key(item)) : key(item).pythonLess(key(current))
            {
                best = item
            }
        }
        return best ?? .undefined("No aggregated item, sequence was empty.")
    }

    /// `select(test, args…)`, `selectattr(attr, test, args…)` and their `reject` twins; with no
    /// test name, items are kept by truthiness.
    private static func selectOrReject(
        _ v: JinjaValue, _ a: JinjaArguments, _ r: JinjaRenderer, keep: Bool, byAttribute: Bool
    ) throws -> [JinjaValue] {
        var positional = a.positional
        var transform: (JinjaValue) -> JinjaValue = { $0 }
        if byAttribute {
            guard !positional.isEmpty else {
                throw JinjaError.render("Missing parameter for attribute name")
            }
            transform = attributeGetter(positional.removeFirst(), default: nil)
        }
        let testName: String? = positional.isEmpty ? nil : try positional.removeFirst().pythonString
        let testArgs = JinjaArguments(positional, keywords: a.keywords)
        if let testName, !JinjaPredicates.functions.names.contains(testName) {
            throw JinjaError.render("no test named '\(testName)'")
        }
        guard v.isTruthy else { return [] }
        return try v.iterate().filter { item in
            let value = transform(item)
            let passed =
                try testName.map { try JinjaPredicates.functions.apply($0, to: value, testArgs, r) }
                ?? value.isTruthy
            return passed == keep
        }
    }
}
