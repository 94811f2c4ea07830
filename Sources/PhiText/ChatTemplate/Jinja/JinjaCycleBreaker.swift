/// Breaks the reference cycles one render can build, when the render ends.
///
/// A macro is a closure over the scope it was defined in, and it is stored as a variable of
/// that same scope: scope → macro → scope. Namespaces, loop objects (`loop.changed`, a
/// recursive loop's `loop(…)`) and macros stored in namespaces close other cycles. Jinja's
/// semantics need the strong references while the template runs (a macro defined in a loop
/// and stored in a namespace outlives the iteration), so they are cut after it: without that,
/// every `serve` request whose template defines a macro would leak its whole render context.
///
/// Every cycle passes through a scope captured by a closure, a namespace or a loop object
/// (scopes nobody captured are reached only through their parent links from captured ones),
/// so tearing those down frees everything. They are held weakly: a template that makes
/// millions of namespaces in a loop frees them as it goes, as before.
final class JinjaCycleBreaker {
    private struct Entry {
        weak var object: (any JinjaTearDown)?
    }
    private var entries: [Entry] = []
    /// Entries are compacted (dead ones dropped) when their count reaches this.
    private var compactAt = 64

    func register(_ object: any JinjaTearDown) {
        if entries.count >= compactAt {
            entries.removeAll { $0.object == nil }
            compactAt = max(64, entries.count * 2)
        }
        entries.append(Entry(object: object))
    }

    /// The objects registered and still alive (tests check that a render leaves none).
    var liveObjects: [AnyObject] { entries.compactMap { $0.object } }

    /// Cuts every outgoing reference of the registered objects still alive.
    func tearDown() {
        let alive = entries.compactMap { $0.object }
        entries = []
        for object in alive { object.tearDown() }
    }
}

/// An object that can sit in a render's reference cycle, and can drop what it references.
protocol JinjaTearDown: AnyObject {
    func tearDown()
}

extension JinjaScope: JinjaTearDown {}

extension JinjaNamespace: JinjaTearDown {
    func tearDown() { attributes = JinjaDict() }
}

extension JinjaLoop: JinjaTearDown {
    func tearDown() {
        lastChanged = nil
        recurse = nil
    }
}
