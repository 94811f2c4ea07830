/// Matches a `RegexNode` the way Oniguruma does: depth-first backtracking, alternatives in
/// order, greedy quantifiers longest first. The general fallback for patterns that have no
/// hand-written matcher, and the oracle the fast matchers are tested against.
///
/// Bounded like Oniguruma's retry limit: nested quantifiers on a long input backtracked for
/// ever or overflowed the stack. Each call of `run` is a step and each level of recursion is
/// depth; past `RegexBudget`'s limits every attempt fails and the budget says so, which
/// `Tokenizer.encode` reports as an error (HF tokenizers stops with a retry-limit error).
struct BacktrackingMatcher: Sendable {
    let root: RegexNode

    /// The end (scalar index) of the match starting exactly at `start`, if any.
    func match(_ text: ScalarText, at start: Int, budget: RegexBudget = RegexBudget()) -> Int? {
        guard !budget.exhausted else { return nil }
        var end: Int?
        _ = text.scalars.withUnsafeBufferPointer { scalars in
            text.packed.withUnsafeBufferPointer { packed in
                let input = Input(scalars: scalars, packed: packed, budget: budget)
                return input.run(root, start) { e in
                    end = e
                    return true
                }
            }
        }
        return end
    }

    private struct Input {
        let scalars: UnsafeBufferPointer<UInt32>
        let packed: UnsafeBufferPointer<UInt8>
        let budget: RegexBudget

        @inline(__always)
        func test(_ set: ScalarSet, _ i: Int) -> Bool {
            i < scalars.count && set.contains(scalars[i], packed[i])
        }

        /// Tries `node` at `i`; for each way it matches (in priority order) calls `next` with
        /// the end; stops at the first `true`.
        func run(_ node: RegexNode, _ i: Int, _ next: (Int) -> Bool) -> Bool {
            guard budget.enter() else { return false }
            defer { budget.depth -= 1 }
            switch node {
            case .set(let set):
                return test(set, i) && next(i + 1)
            case .sequence(let nodes):
                return sequence(nodes, 0, i, next)
            case .alternation(let branches):
                for branch in branches where run(branch, i, next) { return true }
                return false
            case .repetition(let inner, let min, let max, let mode):
                if case .set(let set) = inner { return repeatSet(set, min, max, mode, i, next) }
                if mode == .possessive {
                    var end: Int?
                    _ = repeatNode(inner, min, max, .greedy, 0, i) { e in
                        end = e
                        return true
                    }
                    return end.map(next) ?? false
                }
                return repeatNode(inner, min, max, mode, 0, i, next)
            case .lookahead(let inner, let negative):
                let found = run(inner, i) { _ in true }
                return found != negative && next(i)
            case .atomic(let inner):
                var end: Int?
                _ = run(inner, i) { e in
                    end = e
                    return true
                }
                return end.map(next) ?? false
            case .textStart:
                return i == 0 && next(i)
            case .textEnd:
                return i == scalars.count && next(i)
            case .lineStart:
                return (i == 0 || scalars[i - 1] == 0x0A) && next(i)
            case .lineEnd:
                return (i == scalars.count || scalars[i] == 0x0A) && next(i)
            }
        }

        private func sequence(
            _ nodes: [RegexNode], _ index: Int, _ i: Int, _ next: (Int) -> Bool
        ) -> Bool {
            if index == nodes.count { return next(i) }
            return run(nodes[index], i) { j in sequence(nodes, index + 1, j, next) }
        }

        /// A repeated single-scalar set: count the run once, then back off one at a time.
        private func repeatSet(
            _ set: ScalarSet, _ min: Int, _ max: Int, _ mode: RegexNode.RepetitionMode,
            _ i: Int, _ next: (Int) -> Bool
        ) -> Bool {
            var run = 0
            while run < max, test(set, i + run) { run += 1 }
            guard run >= min else { return false }
            switch mode {
            case .possessive:
                return next(i + run)
            case .greedy:
                for count in stride(from: run, through: min, by: -1) where next(i + count) {
                    return true
                }
            case .lazy:
                for count in min...run where next(i + count) { return true }
            }
            return false
        }

        private func repeatNode(
            _ node: RegexNode, _ min: Int, _ max: Int, _ mode: RegexNode.RepetitionMode,
            _ count: Int, _ i: Int, _ next: (Int) -> Bool
        ) -> Bool {
            let canStop = count >= min
            if mode == .lazy, canStop, next(i) { return true }
            if count < max {
                // An iteration that consumes nothing would loop forever; Oniguruma stops it.
                let more = run(node, i) { j in
                    j != i && repeatNode(node, min, max, mode, count + 1, j, next)
                }
                if more { return true }
            }
            return mode == .greedy && canStop && next(i)
        }
    }
}

/// Steps and recursion depth one `SplitPattern.matches` call may spend in the backtracking
/// matcher. A class: the recursion shares it without threading it through every return.
final class RegexBudget {
    /// Steps for a text of `length` bytes: a base plus a few dozen per byte. Oniguruma's
    /// retry limit is 10,000,000 per search; this bounds the whole text, so that a pattern
    /// that backtracks exponentially stops within a second or so, not after minutes.
    static func steps(forLength length: Int) -> Int { 250_000 + 64 * length }
    /// Levels of `run` (a few stack frames each): well inside a 512 KB thread stack.
    static let maxDepth = 2_000

    private let maxSteps: Int
    private var steps = 0
    fileprivate(set) var depth = 0
    private(set) var exhausted = false

    init(length: Int = 0) { maxSteps = Self.steps(forLength: length) }

    /// Counts one step into a deeper level; false (for good) once either limit is passed.
    @inline(__always)
    fileprivate func enter() -> Bool {
        steps += 1
        depth += 1
        if steps > maxSteps || depth > Self.maxDepth { exhausted = true }
        return !exhausted
    }
}
