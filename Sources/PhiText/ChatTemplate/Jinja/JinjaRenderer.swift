import Foundation

/// Runs a parsed template: executes statements into an output string and evaluates
/// expressions (JinjaRenderer+Expressions.swift). One renderer per render call.
final class JinjaRenderer {
    /// Globals (`range`, `namespace`, `raise_exception`, …) and the render context.
    let root: JinjaScope
    /// Macro calls nested this deep are a runaway recursion, not a template.
    private static let maxCallDepth = 200
    private var callDepth = 0
    /// Loop iterations so far (JinjaBudget.maxIterations over the whole render).
    private var iterations = 0
    /// Scopes captured by macros, namespaces and loops: torn down when the render ends.
    let cycles = JinjaCycleBreaker()

    init(context: [String: JinjaValue], now: @escaping () -> Date) {
        let globals = JinjaScope(parent: nil)
        JinjaGlobals.install(into: globals, now: now, cycles: cycles)
        root = JinjaScope(parent: globals)
        for (name, value) in context { root.set(name, value) }
    }

    /// Renders `nodes` once; the renderer is spent afterwards (its objects are torn down).
    func render(_ nodes: [JinjaNode]) throws -> String {
        defer { cycles.tearDown() }
        var out = ""
        _ = try execute(nodes, in: root, into: &out)
        return out
    }

    /// How a statement list ended: normally, or by `break` / `continue` inside a loop body.
    enum Flow { case normal, breakLoop, continueLoop }

    func execute(_ nodes: [JinjaNode], in scope: JinjaScope, into out: inout String) throws -> Flow
    {
        for node in nodes {
            let flow = try atLine(node.line) {
                let flow = try execute(node, in: scope, into: &out)
                if out.utf8.count > JinjaBudget.maxLength {
                    throw JinjaBudget.exceeded("more than \(JinjaBudget.maxLength) bytes of output")
                }
                return flow
            }
            if flow != .normal { return flow }
        }
        return .normal
    }

    private func execute(
        _ node: JinjaNode, in scope: JinjaScope, into out: inout String
    ) throws -> Flow {
        switch node.kind {
        case .text(let text):
            out += text
        case .output(let expr):
            out += try evaluate(expr, in: scope).pythonString
        case .ifChain(let branches, let otherwise):
            for branch in branches where try evaluate(branch.test, in: scope).isTruthy {
                return try execute(branch.body, in: scope, into: &out)
            }
            return try execute(otherwise, in: scope, into: &out)
        case .forLoop(let loop):
            try executeLoop(
                loop, items: try evaluate(loop.iterable, in: scope), depth0: 0, in: scope,
                into: &out)
        case .set(let target, let expr):
            try scope.assign(target, try evaluate(expr, in: scope))
        case .setBlock(let target, let filter, let body):
            var text = ""
            _ = try execute(body, in: scope, into: &text)
            let value =
                try filter.map { try applyFilterChain($0, to: .string(text), in: scope) }
                ?? .string(text)
            try scope.assign(target, value)
        case .macro(let macro):
            scope.set(macro.name, .function(makeMacro(macro, definedIn: scope)))
        case .callBlock(let call, let parameters, let body):
            let caller = JinjaMacro(
                name: "caller", parameters: parameters, body: body, usesVarargs: false,
                usesKwargs: false)
            out += try evaluateCall(call, in: scope, caller: makeMacro(caller, definedIn: scope))
                .pythonString
        case .filterBlock(let filter, let body):
            var text = ""
            _ = try execute(body, in: JinjaScope(parent: scope), into: &text)
            out += try applyFilterChain(filter, to: .string(text), in: scope).pythonString
        case .with(let assignments, let body):
            let inner = JinjaScope(parent: scope)
            for (target, expr) in assignments {
                try inner.assign(target, try evaluate(expr, in: scope))
            }
            _ = try execute(body, in: inner, into: &out)
        case .generation(let body):
            _ = try execute(body, in: JinjaScope(parent: scope), into: &out)
        case .breakLoop:
            return .breakLoop
        case .continueLoop:
            return .continueLoop
        }
        return .normal
    }

    // MARK: - Loops

    private func executeLoop(
        _ loop: JinjaForLoop, items iterable: JinjaValue, depth0: Int, in scope: JinjaScope,
        into out: inout String
    ) throws {
        var items = try iterable.iterate()
        if let condition = loop.condition {
            items = try items.filter { item in
                let probe = JinjaScope(parent: scope)
                try probe.assign(loop.target, item)
                return try evaluate(condition, in: probe).isTruthy
            }
        }
        guard !items.isEmpty else {
            _ = try execute(loop.otherwise, in: JinjaScope(parent: scope), into: &out)
            return
        }
        let state = JinjaLoop(items: items, depth0: depth0)
        cycles.register(state)
        if loop.recursive {
            cycles.register(scope)
            state.recurse = { [unowned self] children in
                var text = ""
                // Bounded like macro calls: `loop(loop_items)` recursed without a limit.
                try self.callFrame {
                    try self.executeLoop(
                        loop, items: children, depth0: depth0 + 1, in: scope, into: &text)
                }
                return text
            }
        }
        for (i, item) in items.enumerated() {
            iterations += 1
            guard iterations <= JinjaBudget.maxIterations else {
                throw JinjaBudget.exceeded("more than \(JinjaBudget.maxIterations) loop iterations")
            }
            state.index0 = i
            let iteration = JinjaScope(parent: scope)
            try iteration.assign(loop.target, item)
            iteration.set("loop", .loop(state))
            if try execute(loop.body, in: iteration, into: &out) == .breakLoop { break }
        }
    }

    // MARK: - Macros

    /// A macro as a callable: binds arguments Python-style in a fresh scope whose parent is
    /// where it was defined, then renders its body.
    func makeMacro(_ macro: JinjaMacro, definedIn scope: JinjaScope) -> JinjaFunction {
        cycles.register(scope)
        return JinjaFunction(name: macro.name) { [unowned self] args in
            let frame = JinjaScope(parent: scope)
            var keywords = args.keywords
            if let index = keywords.firstIndex(where: { $0.name == "caller" }) {
                frame.set("caller", keywords.remove(at: index).value)
            }
            let names = macro.parameters.map(\.name)
            let extra = Array(args.positional.dropFirst(names.count))
            guard extra.isEmpty || macro.usesVarargs else {
                throw JinjaError.render(
                    "macro '\(macro.name)' takes not more than \(names.count) argument(s)")
            }
            var kwargs = JinjaDict()
            for (i, parameter) in macro.parameters.enumerated() {
                if i < args.positional.count {
                    frame.set(parameter.name, args.positional[i])
                } else if let k = keywords.firstIndex(where: { $0.name == parameter.name }) {
                    frame.set(parameter.name, keywords.remove(at: k).value)
                } else if let fallback = parameter.defaultValue {
                    frame.set(parameter.name, try self.evaluate(fallback, in: frame))
                } else {
                    frame.set(
                        parameter.name, .undefined("parameter '\(parameter.name)' was not provided")
                    )
                }
            }
            for (name, value) in keywords {
                guard macro.usesKwargs else {
                    throw JinjaError.render(
                        "macro '\(macro.name)' takes no keyword argument '\(name)'")
                }
                kwargs.set(name, value)
            }
            frame.set("varargs", .tuple(extra))
            frame.set("kwargs", .dict(kwargs))
            return .string(try self.callFrame { try self.render(macro.body, in: frame) })
        }
    }

    private func render(_ body: [JinjaNode], in frame: JinjaScope) throws -> String {
        var text = ""
        _ = try execute(body, in: frame, into: &text)
        return text
    }

    private func callFrame<T>(_ body: () throws -> T) throws -> T {
        guard callDepth < Self.maxCallDepth else {
            throw JinjaError.render("maximum macro recursion depth (\(Self.maxCallDepth)) exceeded")
        }
        callDepth += 1
        defer { callDepth -= 1 }
        return try body()
    }

    // MARK: - Error lines

    /// Runs `body`, attaching `line` to an error that has no line yet (the innermost node
    /// that fails names the line).
    func atLine<T>(_ line: Int, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch var error as JinjaError where error.line == nil {
            error.line = line
            throw error
        }
    }
}
