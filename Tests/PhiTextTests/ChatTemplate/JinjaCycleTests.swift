import Foundation
import Testing

@testable import PhiText

/// A render must free everything it made: a macro is a closure over the scope that holds it,
/// and namespaces and loop objects close other cycles. `serve` renders per request, so a
/// leaked cycle per render grows the server without bound (JinjaCycleBreaker).
@Suite("Jinja render frees its objects")
struct JinjaCycleTests {
    private final class WeakBox {
        weak var object: AnyObject?
        init(_ object: AnyObject?) { self.object = object }
    }

    private static func now() -> Date { Date(timeIntervalSince1970: 0) }

    /// Runs `source` without the final tear-down, returns the output and weak references to
    /// the root scope and to the namespace `ns` if the template made one, then tears down
    /// when `tearDown` says so.
    private func renderObserved(
        _ source: String, tearDown: Bool = true
    ) throws -> (
        String, [WeakBox]
    ) {
        let nodes = try JinjaParser.parse(source)
        var boxes: [WeakBox] = []
        var out = ""
        do {
            let renderer = JinjaRenderer(context: [:], now: Self.now)
            _ = try renderer.execute(nodes, in: renderer.root, into: &out)
            boxes.append(WeakBox(renderer.root))
            if case .namespace(let ns) = renderer.root.lookup("ns") { boxes.append(WeakBox(ns)) }
            if tearDown { renderer.cycles.tearDown() }
        }
        return (out, boxes)
    }

    static let cycles: [(name: String, source: String, output: String)] = [
        ("macro in its own scope", "{% macro m(x) %}[{{ x }}]{% endmacro %}{{ m(1) }}", "[1]"),
        (
            "caller block",
            "{% macro w() %}<{{ caller() }}>{% endmacro %}{% call w() %}x{% endcall %}", "<x>"
        ),
        ("namespace holding itself", "{% set ns = namespace() %}{% set ns.me = ns %}ok", "ok"),
        (
            "macro defined in a loop, kept in a namespace",
            "{% set ns = namespace() %}{% for i in [1, 2] %}{% macro m() %}{{ i }}{% endmacro %}"
                + "{% set ns.f = m %}{% endfor %}{{ ns.f() }}",
            "2"
        ),
        (
            "loop.changed holding the namespace that holds the loop",
            "{% set ns = namespace() %}{% for i in [1] %}{% set ns.l = loop %}"
                + "{{ loop.changed(ns) }}{% endfor %}",
            "True"
        ),
        (
            "recursive loop kept in a namespace",
            "{% set ns = namespace() %}{% for x in [[1]] recursive %}{% set ns.l = loop %}"
                + "{% if x is iterable %}{{ loop(x) }}{% else %}{{ x }}{% endif %}{% endfor %}",
            "1"
        ),
    ]

    @Test("every cycle is freed after the render", arguments: cycles)
    func freed(_ cycle: (name: String, source: String, output: String)) throws {
        let (out, boxes) = try renderObserved(cycle.source)
        #expect(out == cycle.output, "\(cycle.name)")
        for box in boxes {
            #expect(box.object == nil, "\(cycle.name): \(box.object.map { "\($0)" } ?? "")")
        }
    }

    /// The test sees a leak when there is one: without the tear-down the objects stay.
    @Test func withoutTearDownTheCycleLeaks() throws {
        let (_, boxes) = try renderObserved(Self.cycles[0].source, tearDown: false)
        #expect(boxes[0].object != nil)
        (boxes[0].object as? JinjaScope)?.tearDown()  // free it again
    }

    /// What `serve` does: the same template with macros, rendered request after request;
    /// every render's root scope is gone afterwards.
    @Test func manyRendersLeaveNothing() throws {
        let source = """
            {% macro line(m) %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endmacro %}\
            {% set ns = namespace(n=0) %}{% for m in messages %}{{ line(m) }}\
            {% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }}
            """
        let nodes = try JinjaParser.parse(source)
        let message = JinjaValue(
            TemplateValue.object([("role", .string("user")), ("content", .string("hi"))]))
        var boxes: [WeakBox] = []
        for _ in 0..<500 {
            let renderer = JinjaRenderer(
                context: ["messages": .list([message, message])], now: Self.now)
            boxes.append(WeakBox(renderer.root))
            #expect(try renderer.render(nodes) == "<|user|>hi<|end|><|user|>hi<|end|>2")
        }
        #expect(boxes.filter { $0.object != nil }.count == 0)
    }
}
