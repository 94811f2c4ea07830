/// Variables visible at one point of a template. Jinja's scoping, which templates rely on:
/// - a `for` body gets a fresh scope each iteration (a `set` inside a loop is gone at the
///   next iteration and after the loop — hence `namespace()`);
/// - `if` opens no scope (a `set` inside it is visible after `endif`);
/// - a macro call gets a scope whose parent is where the macro was defined.
/// Reads fall back to enclosing scopes at the time of the read.
final class JinjaScope {
    private var variables: [String: JinjaValue] = [:]
    /// Variable only for `tearDown` (JinjaCycleBreaker).
    private var parent: JinjaScope?

    init(parent: JinjaScope?) {
        self.parent = parent
    }

    func lookup(_ name: String) -> JinjaValue? {
        var scope: JinjaScope? = self
        while let s = scope {
            if let value = s.variables[name] { return value }
            scope = s.parent
        }
        return nil
    }

    func set(_ name: String, _ value: JinjaValue) {
        variables[name] = value
    }

    /// Drops every variable and the parent link, after the render (JinjaCycleBreaker).
    func tearDown() {
        variables = [:]
        parent = nil
    }

    /// Binds a `for`/`set`/`with` target: a name, `ns.attr`, or a tuple unpacked from an
    /// iterable of exactly as many items.
    func assign(_ target: JinjaTarget, _ value: JinjaValue) throws {
        switch target {
        case .name(let name):
            _ = try JinjaBudget.checkNesting(value)
            set(name, value)
        case .namespaceAttribute(let name, let attribute):
            guard case .namespace(let ns) = lookup(name) else {
                throw JinjaError.render("cannot assign attribute on non-namespace object '\(name)'")
            }
            guard !attribute.hasPrefix("_") else {
                throw JinjaError.render(
                    "Chat templates cannot store underscore-prefixed attributes on a namespace, "
                        + "but got '\(attribute)'")
            }
            try ns.set(attribute, value)
        case .tuple(let targets):
            let items = try value.iterate()
            guard items.count == targets.count else {
                throw JinjaError.render(
                    items.count > targets.count
                        ? "too many values to unpack (expected \(targets.count))"
                        : "not enough values to unpack "
                            + "(expected \(targets.count), got \(items.count))"
                )
            }
            for (t, item) in zip(targets, items) { try assign(t, item) }
        }
    }
}
