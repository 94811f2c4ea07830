/// The grammar run as a deterministic automaton over byte classes, built lazily: a state is
/// the set of parse stacks the bytes so far leave open (an Earley-like set of stacks, each
/// stopped at a byte set), plus whether the whole input may end here. States and their
/// transitions are made the first time they are needed and kept, so after a few tokens almost
/// every step is one table lookup.
///
/// Stacks are shared persistent lists: node (position, parent) means "at `position`, and on
/// reaching the end of this alternative, continue at `parent`". A call that is the last
/// element of its alternative pushes nothing (a tail call), so loops and right recursion in
/// tail position run in constant stack; the grammar's left-recursion check rules out the
/// calls that would grow it without consuming input.
final class ParseAutomaton {
    static let dead: Int32 = -1
    static let unknown: Int32 = -2

    let grammar: Grammar
    let classCount: Int
    /// transitions[state * classCount + class]: the next state, `dead` or `unknown`.
    private(set) var transitions: [Int32] = []
    private(set) var accepting: [Bool] = []
    /// Each state's stacks (node ids whose position is a byte set), sorted.
    private var stacks: [[Int32]] = []
    private var stateIndex: [StateKey: Int32] = [:]
    private var nodePosition: [Int32] = []
    private var nodeParent: [Int32] = []
    private var nodeIndex: [Int64: Int32] = [:]
    private(set) var start: Int32 = 0

    private struct StateKey: Hashable {
        let stacks: [Int32]
        let accepting: Bool
    }

    init(grammar: Grammar) {
        self.grammar = grammar
        classCount = grammar.classCount
        var items: [(position: Int32, parent: Int32)] = []
        for a in grammar.alternatives[grammar.root] { items.append((a, -1)) }
        start = intern(closure(items))
    }

    var stateCount: Int { stacks.count }

    /// Whether the state's stacks are all finished (nothing more may follow).
    func isFinal(_ state: Int32) -> Bool { stacks[Int(state)].isEmpty }

    /// The state after `byte`, or `dead`.
    func next(_ state: Int32, _ byte: UInt8) -> Int32 {
        let c = Int(grammar.classOf[Int(byte)])
        let t = transitions[Int(state) * classCount + c]
        return t == Self.unknown ? computeTransition(state, c) : t
    }

    /// The state after `bytes` (dead as soon as one is refused).
    func next(_ state: Int32, _ bytes: [UInt8]) -> Int32 {
        var s = state
        for b in bytes {
            s = next(s, b)
            if s < 0 { return Self.dead }
        }
        return s
    }

    /// Fills in transitions[state, class] and returns it.
    func computeTransition(_ state: Int32, _ byteClass: Int) -> Int32 {
        let elements = grammar.elements
        var items: [(position: Int32, parent: Int32)] = []
        for node in stacks[Int(state)] {
            let position = nodePosition[Int(node)]
            let set = Int(elements[Int(position)])
            if grammar.setContainsClass[set * classCount + byteClass] {
                items.append((position + 1, nodeParent[Int(node)]))
            }
        }
        let target = items.isEmpty ? Self.dead : intern(closure(items))
        transitions[Int(state) * classCount + byteClass] = target
        return target
    }

    private func node(_ position: Int32, _ parent: Int32) -> Int32 {
        let key = Int64(position) << 32 | Int64(UInt32(bitPattern: parent))
        if let id = nodeIndex[key] { return id }
        let id = Int32(nodePosition.count)
        nodePosition.append(position)
        nodeParent.append(parent)
        nodeIndex[key] = id
        return id
    }

    /// Expands items until every stack stops at a byte set: calls push their alternatives,
    /// ends pop to the parent; an end with no parent means the input may end here.
    private func closure(_ seeds: [(position: Int32, parent: Int32)]) -> StateKey {
        let elements = grammar.elements
        var work = seeds
        var visited = Set<Int64>()
        var result: [Int32] = []
        var accepts = false
        while let (position, parent) = work.popLast() {
            guard visited.insert(Int64(position) << 32 | Int64(UInt32(bitPattern: parent)))
                .inserted
            else { continue }
            let element = elements[Int(position)]
            if element >= 0 {
                result.append(node(position, parent))
            } else if element == Grammar.end {
                if parent < 0 {
                    accepts = true
                } else {
                    work.append((nodePosition[Int(parent)], nodeParent[Int(parent)]))
                }
            } else {
                let rule = Int(-2 - element)
                let after = position + 1
                let returnTo = elements[Int(after)] == Grammar.end ? parent : node(after, parent)
                for a in grammar.alternatives[rule] { work.append((a, returnTo)) }
            }
        }
        result.sort()
        return StateKey(stacks: result, accepting: accepts)
    }

    private func intern(_ key: StateKey) -> Int32 {
        if let id = stateIndex[key] { return id }
        if key.stacks.isEmpty && !key.accepting { return Self.dead }
        let id = Int32(stacks.count)
        stacks.append(key.stacks)
        accepting.append(key.accepting)
        stateIndex[key] = id
        transitions.append(contentsOf: repeatElement(Self.unknown, count: classCount))
        return id
    }
}
