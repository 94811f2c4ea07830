extension JinjaRenderer {
    func evaluate(_ expr: JinjaExpr, in scope: JinjaScope) throws -> JinjaValue {
        try atLine(expr.line) {
            let value = try evaluateKind(expr.kind, in: scope)
            try JinjaBudget.check(value)
            return value
        }
    }

    private func evaluateKind(_ kind: JinjaExpr.Kind, in scope: JinjaScope) throws -> JinjaValue {
        switch kind {
        case .constant(let constant): return JinjaValue(constant)
        case .name(let name): return scope.lookup(name) ?? .undefined("'\(name)' is undefined")
        case .list(let items): return .list(try items.map { try evaluate($0, in: scope) })
        case .tuple(let items): return .tuple(try items.map { try evaluate($0, in: scope) })
        case .dict(let pairs):
            var dict = JinjaDict()
            for pair in pairs {
                try dict.set(try evaluate(pair.key, in: scope), try evaluate(pair.value, in: scope))
            }
            return .dict(dict)
        case .getattr(let base, let name):
            return JinjaMembers.attribute(of: try evaluateDefined(base, in: scope), name)
        case .getitem(let base, let index):
            return try evaluateSubscript(try evaluateDefined(base, in: scope), index, in: scope)
        case .slice:
            throw JinjaError.render("a slice is only valid inside [ ]")
        case .unary(let op, let operand):
            let value = try evaluate(operand, in: scope)
            switch op {
            case .not: return .bool(!value.isTruthy)
            case .negate: return try value.negated()
            case .plus: return try value.unaryPlus()
            }
        case .binary(let op, let left, let right):
            return try evaluate(left, in: scope).apply(op, try evaluate(right, in: scope))
        case .and(let left, let right):
            let value = try evaluate(left, in: scope)
            return value.isTruthy ? try evaluate(right, in: scope) : value
        case .or(let left, let right):
            let value = try evaluate(left, in: scope)
            return value.isTruthy ? value : try evaluate(right, in: scope)
        case .concat(let parts):
            return .string(
                try JinjaBudget.joined(
                    try parts.map { try evaluate($0, in: scope).pythonString }, separator: ""))
        case .compare(let first, let comparisons):
            return .bool(try evaluateComparisons(first, comparisons, in: scope))
        case .conditional(let test, let then, let otherwise):
            if try evaluate(test, in: scope).isTruthy { return try evaluate(then, in: scope) }
            return try otherwise.map { try evaluate($0, in: scope) }
                ?? .undefined("the inline if-expression evaluated to false and has no else")
        case .call:
            return try evaluateCall(JinjaExpr(kind: kind, line: 0), in: scope, caller: nil)
        case .filter(let base, let name, let args):
            guard let base else { throw JinjaError.render("filter '\(name)' has no input") }
            let input = try evaluate(base, in: scope)
            let arguments = try evaluateArguments(args, in: scope)
            return try JinjaFilters.functions.apply(name, to: input, arguments, self)
        case .test(let base, let name, let args):
            let value = try evaluate(base, in: scope)
            let arguments = try evaluateArguments(args, in: scope)
            return .bool(try JinjaPredicates.functions.apply(name, to: value, arguments, self))
        }
    }

    /// The value of the base of `x.attr` / `x[key]`, which must not be undefined: reading
    /// through an undefined value is Jinja's UndefinedError.
    private func evaluateDefined(_ expr: JinjaExpr, in scope: JinjaScope) throws -> JinjaValue {
        let value = try evaluate(expr, in: scope)
        if value.isUndefined { throw value.undefinedError() }
        return value
    }

    private func evaluateSubscript(
        _ value: JinjaValue, _ index: JinjaExpr, in scope: JinjaScope
    ) throws -> JinjaValue {
        guard case .slice(let start, let stop, let step) = index.kind else {
            return JinjaMembers.item(of: value, try evaluate(index, in: scope))
        }
        return try value.sliced(
            start: try start.map { try evaluate($0, in: scope) },
            stop: try stop.map { try evaluate($0, in: scope) },
            step: try step.map { try evaluate($0, in: scope) })
    }

    /// `a < b <= c`: each operand evaluated once, stopping at the first false comparison.
    private func evaluateComparisons(
        _ first: JinjaExpr, _ comparisons: [JinjaComparison], in scope: JinjaScope
    ) throws -> Bool {
        var left = try evaluate(first, in: scope)
        for comparison in comparisons {
            let right = try evaluate(comparison.operand, in: scope)
            guard try left.compare(comparison.op, right) else { return false }
            left = right
        }
        return true
    }

    /// A call expression; `caller` is the body of an enclosing `{% call %}` block.
    func evaluateCall(
        _ expr: JinjaExpr, in scope: JinjaScope, caller: JinjaFunction?
    ) throws -> JinjaValue {
        guard case .call(let calleeExpr, let argumentList) = expr.kind else {
            throw JinjaError.render("expected a call")
        }
        let callee = try evaluate(calleeExpr, in: scope)
        var args = try evaluateArguments(argumentList, in: scope)
        if let caller { args.keywords.append((name: "caller", value: .function(caller))) }
        return try call(callee, args)
    }

    func call(_ callee: JinjaValue, _ args: JinjaArguments) throws -> JinjaValue {
        switch callee {
        case .function(let function):
            return try function.call(args)
        case .loop(let loop):
            guard let recurse = loop.recurse, args.positional.count == 1 else {
                throw JinjaError.render("loop() can only be called in a recursive for loop")
            }
            return .string(try recurse(args.positional[0]))
        case .undefined:
            throw callee.undefinedError()
        default:
            throw JinjaError.render("'\(callee.typeName)' object is not callable")
        }
    }

    func evaluateArguments(_ list: JinjaArgumentList, in scope: JinjaScope) throws -> JinjaArguments
    {
        var args = JinjaArguments(try list.positional.map { try evaluate($0, in: scope) })
        if let star = list.star { args.positional += try evaluate(star, in: scope).iterate() }
        for keyword in list.keywords {
            args.keywords.append(
                (name: keyword.name, value: try evaluate(keyword.value, in: scope)))
        }
        if let doubleStar = list.doubleStar {
            guard case .dict(let dict) = try evaluate(doubleStar, in: scope) else {
                throw JinjaError.render("argument after ** must be a mapping")
            }
            for (key, value) in dict.items {
                guard case .string(let name) = key else {
                    throw JinjaError.render("keywords must be strings")
                }
                args.keywords.append((name: name, value: value))
            }
        }
        return args
    }

    /// Applies a filter chain whose innermost input is a block's output (`{% filter %}`,
    /// `{% set x | f %}`).
    func applyFilterChain(
        _ expr: JinjaExpr, to input: JinjaValue, in scope: JinjaScope
    ) throws -> JinjaValue {
        guard case .filter(let base, let name, let args) = expr.kind else {
            return try evaluate(expr, in: scope)
        }
        let value = try base.map { try applyFilterChain($0, to: input, in: scope) } ?? input
        return try atLine(expr.line) {
            try JinjaFilters.functions.apply(
                name, to: value, try evaluateArguments(args, in: scope), self)
        }
    }
}
