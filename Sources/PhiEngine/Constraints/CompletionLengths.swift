/// For every element position of a `Grammar`, the fewest bytes that finish its alternative
/// from there (`rest[position]`), counting only bytes in `usable`: the bytes the vocabulary
/// has as one-byte tokens, so a completion of n bytes is a completion of at most n tokens.
/// A parse stack needs the sum over its frames; a matcher state the least over its stacks
/// (`ParseAutomaton.distance`). The budget-aware mask (`GrammarMatcher.allow(_:budget:)`)
/// keeps only tokens after which that many tokens still fit.
///
/// Computed with Knuth's generalisation of Dijkstra's algorithm to grammars (a rule's length
/// is final once it is the least pending one), O(n log n) in the grammar's elements, so the
/// compile budget on elements bounds it too.
struct CompletionLengths: Sendable {
    /// What a position that cannot finish (with `usable` bytes) counts as; sums saturate here.
    static let unreachable: Int32 = Int32.max / 4

    /// rest[position]: bytes from the element at `position` to its alternative's end.
    let rest: [Int32]
    /// The fewest bytes of a whole answer.
    let shortestAnswer: Int32

    /// A placeholder while the grammar is built.
    static let none = CompletionLengths(rest: [], shortestAnswer: 0)

    private init(rest: [Int32], shortestAnswer: Int32) {
        self.rest = rest
        self.shortestAnswer = shortestAnswer
    }

    static func add(_ a: Int32, _ b: Int32) -> Int32 { min(a &+ b, unreachable) }

    init(grammar: Grammar, usable: ByteSet) {
        let elements = grammar.elements
        let ruleCount = grammar.alternatives.count
        let setUsable = grammar.byteSets.map { $0.intersects(usable) }
        // Per alternative (at its first position): bytes so far, calls still unknown (-1: it
        // cannot finish), its rule.
        var altSum = [Int32](repeating: 0, count: elements.count)
        var altPending = [Int32](repeating: -1, count: elements.count)
        var altRule = [Int32](repeating: 0, count: elements.count)
        var callers = [[Int32]](repeating: [], count: ruleCount)  // alternative starts, per call
        var heap = MinHeap()
        for (rule, starts) in grammar.alternatives.enumerated() {
            for start in starts {
                var p = Int(start)
                var sum: Int32 = 0
                var pending: Int32 = 0
                var dead = false
                while elements[p] != Grammar.end {
                    let e = elements[p]
                    if e >= 0 {
                        if setUsable[Int(e)] { sum += 1 } else { dead = true }
                    } else {
                        pending += 1
                        callers[Int(-2 - e)].append(start)
                    }
                    p += 1
                }
                guard !dead else { continue }
                altSum[Int(start)] = sum
                altPending[Int(start)] = pending
                altRule[Int(start)] = Int32(rule)
                if pending == 0 { heap.push(sum, rule) }
            }
        }
        var length = [Int32](repeating: Self.unreachable, count: ruleCount)
        var final = [Bool](repeating: false, count: ruleCount)
        while let (value, rule) = heap.pop() {
            guard !final[rule] else { continue }
            final[rule] = true
            length[rule] = value
            for start in callers[rule] {
                let a = Int(start)
                guard altPending[a] > 0 else { continue }
                altSum[a] = Self.add(altSum[a], value)
                altPending[a] -= 1
                let owner = Int(altRule[a])
                if altPending[a] == 0 && !final[owner] { heap.push(altSum[a], owner) }
            }
        }
        // Suffix sums per alternative, from each end backwards.
        var rest = [Int32](repeating: 0, count: elements.count)
        var p = elements.count - 1
        var after: Int32 = 0
        while p >= 0 {
            let e = elements[p]
            if e == Grammar.end {
                after = 0
            } else if e >= 0 {
                after = setUsable[Int(e)] ? Self.add(after, 1) : Self.unreachable
            } else {
                after = Self.add(after, length[Int(-2 - e)])
            }
            rest[p] = after
            p -= 1
        }
        self.rest = rest
        shortestAnswer = length[grammar.root]
    }
}

/// A binary min-heap of (length, rule) pairs.
private struct MinHeap {
    private var items: [(Int32, Int)] = []

    mutating func push(_ value: Int32, _ rule: Int) {
        items.append((value, rule))
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard items[i].0 < items[parent].0 else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    mutating func pop() -> (Int32, Int)? {
        guard let top = items.first else { return nil }
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1
                let r = l + 1
                var m = i
                if l < items.count && items[l].0 < items[m].0 { m = l }
                if r < items.count && items[r].0 < items[m].0 { m = r }
                if m == i { break }
                items.swapAt(i, m)
                i = m
            }
        }
        return top
    }
}
