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
    /// The parent of a stack cut from its context (see `contextFree`).
    static let context: Int32 = -3

    let grammar: Grammar
    let classCount: Int
    /// transitions[state * classCount + class]: the next state, `dead` or `unknown`.
    private(set) var transitions: [Int32] = []
    private(set) var accepting: [Bool] = []
    /// Whether reaching the state popped a stack into its cut-off context: what follows
    /// depends on the real context.
    private(set) var touchesContext: [Bool] = []
    /// distance[state]: the fewest bytes (one-byte tokens) that finish the answer from the
    /// state (0 where it may end), see `CompletionLengths`. For a state cut from its context
    /// (`contextFree`), the bytes above the cut only.
    private(set) var distance: [Int32] = []
    /// For a state cut from its context: the bytes the cut-off frames add (the same for every
    /// stack, as they share them).
    private var contextDistance: [Int32: Int32] = [:]
    private let rest: [Int32]
    private var nodeDistance: [Int32] = []
    private var contextFreeStates: [Int32: Int32] = [:]
    private var stringBodyLoopCache: [Int32: Int32] = [:]

    /// The UTF-8 byte ranges of the string-body characters (see `TokenVocabulary`).
    private static let stringBodySequences = TokenVocabulary.stringBodyCharacters.ranges
        .flatMap { ScalarSet.utf8Sequences($0.lowerBound, $0.upperBound) }
    /// Each state's stacks (node ids whose position is a byte set), sorted.
    private var stacks: [[Int32]] = []
    private var stateIndex: [StateKey: Int32] = [:]
    private var nodePosition: [Int32] = []
    private var nodeParent: [Int32] = []
    private var nodeIndex = Int64Table()
    /// The items a closure has seen (reused: cleared per closure).
    private var visited = Int64Table()
    private(set) var start: Int32 = 0

    private struct StateKey: Hashable {
        let stacks: [Int32]
        let accepting: Bool
        var touchesContext = false
        /// A multiplicative hash of the rest, computed once: hashing the stacks element by
        /// element with SipHash cost more than building the state.
        let hash: UInt64

        init(stacks: [Int32], accepting: Bool, touchesContext: Bool = false) {
            self.stacks = stacks
            self.accepting = accepting
            self.touchesContext = touchesContext
            var h: UInt64 = (accepting ? 1 : 2) &+ (touchesContext ? 4 : 0)
            for s in stacks { h = (h ^ UInt64(UInt32(bitPattern: s))) &* 0x100_0000_01B3 }
            hash = h
        }

        static func == (a: StateKey, b: StateKey) -> Bool {
            a.hash == b.hash && a.accepting == b.accepting && a.touchesContext == b.touchesContext
                && a.stacks == b.stacks
        }

        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    }

    /// `rest` is `CompletionLengths.rest` for the vocabulary at hand.
    init(grammar: Grammar, rest: [Int32]) {
        self.grammar = grammar
        self.rest = rest
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
        // Every class that the same stacks take (and the same refuse) gives the same items,
        // so the same state: filled now, a run's chain or a first walk builds one closure
        // per distinct move instead of one per class (a key's letters are a class each).
        let row = Int(state) * classCount
        let tops = stacks[Int(state)]
        for c in 0..<classCount where transitions[row + c] == Self.unknown {
            var same = true
            for node in tops {
                let set = Int(elements[Int(nodePosition[Int(node)])]) * classCount
                if grammar.setContainsClass[set + c] != grammar.setContainsClass[set + byteClass] {
                    same = false
                    break
                }
            }
            if same { transitions[row + c] = target }
        }
        return target
    }

    private func node(_ position: Int32, _ parent: Int32) -> Int32 {
        let key = Int64(position) << 32 | Int64(UInt32(bitPattern: parent))
        if let id = nodeIndex[key] { return id }
        let id = Int32(nodePosition.count)
        nodePosition.append(position)
        nodeParent.append(parent)
        let below = parent >= 0 ? nodeDistance[Int(parent)] : 0
        nodeDistance.append(CompletionLengths.add(rest[Int(position)], below))
        nodeIndex.insert(key, id)
        return id
    }

    /// Expands items until every stack stops at a byte set: calls push their alternatives,
    /// ends pop to the parent; an end with no parent means the input may end here.
    private func closure(_ seeds: [(position: Int32, parent: Int32)]) -> StateKey {
        let elements = grammar.elements
        var work = seeds
        visited.removeAll()
        var result: [Int32] = []
        var accepts = false
        var touches = false
        while let (position, parent) = work.popLast() {
            guard visited.insertIfAbsent(Int64(position) << 32 | Int64(UInt32(bitPattern: parent)))
            else { continue }
            let element = elements[Int(position)]
            if element >= 0 {
                result.append(node(position, parent))
            } else if element == Grammar.end {
                if parent == Self.context {
                    touches = true
                } else if parent < 0 {
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
        return StateKey(stacks: result, accepting: accepts, touchesContext: touches)
    }

    private func intern(_ key: StateKey) -> Int32 {
        if let id = stateIndex[key] { return id }
        if key.stacks.isEmpty && !key.accepting && !key.touchesContext { return Self.dead }
        let id = Int32(stacks.count)
        stacks.append(key.stacks)
        accepting.append(key.accepting)
        touchesContext.append(key.touchesContext)
        distance.append(
            key.accepting ? 0 : key.stacks.map { nodeDistance[Int($0)] }.min() ?? CompletionLengths.unreachable)
        stateIndex[key] = id
        transitions.append(contentsOf: repeatElement(Self.unknown, count: classCount))
        return id
    }

    /// The state with its stacks cut below their deepest shared frame: the frames above it
    /// are kept, and that frame returns into an unknown `context`. Two states that differ
    /// only in where their common part returns to (the inside of a string under two different
    /// keys) have the same context-free state, so one mask walk serves both: tokens that stay
    /// above the cut are decided by it, and the ones that pop into the context (reaching a
    /// state that `touchesContext`) are rechecked from the real state. Returns `state` itself
    /// when there is nothing to cut.
    func contextFree(_ state: Int32) -> Int32 {
        if let known = contextFreeStates[state] { return known }
        let tops = stacks[Int(state)]
        var result = state
        if !tops.isEmpty {
            // Each stack's frames, top first.
            let chains: [[Int32]] = tops.map { top in
                var chain: [Int32] = []
                var n = top
                while n >= 0 {
                    chain.append(n)
                    n = nodeParent[Int(n)]
                }
                return chain
            }
            // The deepest frame all chains share, counted from the bottom.
            var shared = 0
            let shortest = chains.map(\.count).min()!
            while shared < shortest
                && chains.allSatisfy({ $0[$0.count - 1 - shared] == chains[0][chains[0].count - 1 - shared] })
            {
                shared += 1
            }
            if shared > 1 {  // keep the topmost shared frame; cut what is below it
                let firstCut = chains[0][chains[0].count - shared + 1]
                var newTops: [Int32] = []
                for chain in chains {
                    let keep = chain.count - shared + 1
                    var parent = Self.context
                    for frame in chain[..<keep].reversed() {
                        parent = node(nodePosition[Int(frame)], parent)
                    }
                    newTops.append(parent)
                }
                newTops.sort()
                result = intern(StateKey(stacks: newTops, accepting: accepting[Int(state)]))
                contextDistance[state] = nodeDistance[Int(firstCut)]
            }
        }
        contextFreeStates[state] = result
        return result
    }

    /// What the frames `contextFree(state)` cut off add to the distance of a state reached
    /// from the cut one without popping into the context (0 when nothing was cut).
    func cutDistance(_ state: Int32) -> Int32 { contextDistance[state] ?? 0 }

    /// Whether every token of the string-body slice (see `TokenVocabulary`) is allowed
    /// from `state`: every string-body character leads from it to one state that every
    /// such character leads back to (a string's inside, or its start when it needs a first
    /// character), without popping into a cut-off context.
    func acceptsStringBody(_ state: Int32) -> Bool { stringBodyLoop(state) != nil }

    /// The state every token of the string-body slice leads to from `state`, and back to
    /// itself (see `acceptsStringBody`), nil when the slice does not apply.
    func stringBodyLoop(_ state: Int32) -> Int32? {
        if let known = stringBodyLoopCache[state] { return known >= 0 ? known : nil }
        var loop: Int32 = -1
        if case .to(let next) = stringBodyStep(state), next == state || stringBodyStep(next) == .to(next) {
            loop = next
        }
        stringBodyLoopCache[state] = loop
        return loop >= 0 ? loop : nil
    }

    /// Where one character of a kind (a string-body character, a byte of a set) leads.
    enum RunStep: Equatable {
        /// Every such character is refused.
        case refused
        /// Every one leads to this state, which does not pop into a cut-off context.
        case to(Int32)
        /// Some are refused or they part ways: no run from here.
        case mixed
    }

    /// How runs of characters of one kind move the automaton from a state: `states[i]` after
    /// i + 1 characters, whichever they are. When `loops`, longer runs stay in `states.last`;
    /// otherwise one character more is refused, or no token is longer than the chain (a
    /// byte-run chain also ends where too few bytes go one way: the walk takes what follows
    /// the chain node by node).
    struct RunChain {
        var states: [Int32]
        var loops: Bool
    }

    /// The chain of runs from `state` (see `RunChain`) up to `longest` characters, following
    /// `step`; nil when no run of one character is allowed or the characters part ways.
    func runChain(from state: Int32, longest: Int, step: (Int32) -> RunStep) -> RunChain? {
        var states: [Int32] = []
        var s = state
        while states.count < longest {
            switch step(s) {
            case .mixed: return nil
            case .refused: return states.isEmpty ? nil : RunChain(states: states, loops: false)
            case .to(let t):
                if !states.isEmpty && t == s { return RunChain(states: states, loops: true) }
                states.append(t)
                s = t
            }
        }
        return states.isEmpty ? nil : RunChain(states: states, loops: false)
    }

    /// Where one string-body character (every scalar but `"`, `\` and the controls) leads
    /// from `state`.
    func stringBodyStep(_ state: Int32) -> RunStep {
        var target: Int32? = nil
        var refused = 0
        sequences: for sequence in stringBodyClassSequences {
            var frontier: [Int32] = [state]
            for (i, classes) in sequence.enumerated() {
                var next: [Int32] = []
                var dead = 0
                for s in frontier {
                    for c in classes {
                        var t = transitions[Int(s) * classCount + c]
                        if t == Self.unknown { t = computeTransition(s, c) }
                        if t < 0 {
                            dead += 1
                        } else if touchesContext[Int(t)] {
                            return .mixed
                        } else if !next.contains(t) {
                            next.append(t)
                        }
                    }
                }
                if i == 0 && next.isEmpty {  // no character of this sequence may come
                    refused += 1
                    continue sequences
                }
                guard dead == 0 else { return .mixed }
                frontier = next
            }
            guard frontier.count == 1, let end = frontier.first, target == nil || target == end
            else { return .mixed }
            target = end
        }
        if refused == stringBodyClassSequences.count { return .refused }
        guard refused == 0, let target else { return .mixed }
        return .to(target)
    }

    /// A chain of runs of bytes from `state` (see `RunChain`), with the bytes each step takes
    /// (256 flags per step): at each step, the most bytes that go on to one state. A step
    /// has its own set (a key off the declared ones refuses `i` first, then takes any
    /// character), so `sets[k]` is the bytes of step k + 1; when the chain loops, the last
    /// set is the loop's, for every step past the chain. The chain ends where no state takes
    /// `smallest` bytes. Nil when no run of one byte is allowed.
    func byteRunChain(from state: Int32, longest: Int, smallest: Int) -> (RunChain, [[Bool]])? {
        let bytesIn = classSizes
        var targets: [Int32] = []
        var bytes: [Int] = []
        var targetOf = [Int32](repeating: 0, count: classCount)
        var sets: [[Bool]] = []
        let chain = runChain(from: state, longest: longest) { s in
            // The classes' targets, and the bytes going to each live one.
            targets.removeAll(keepingCapacity: true)
            bytes.removeAll(keepingCapacity: true)
            for c in 0..<classCount {
                var t = transitions[Int(s) * classCount + c]
                if t == Self.unknown { t = computeTransition(s, c) }
                if t >= 0 && touchesContext[Int(t)] { t = Self.context }  // never chosen
                targetOf[c] = t
                guard t >= 0 else { continue }
                if let j = targets.firstIndex(of: t) {
                    bytes[j] += bytesIn[c]
                } else {
                    targets.append(t)
                    bytes.append(bytesIn[c])
                }
            }
            guard let best = bytes.indices.max(by: { bytes[$0] < bytes[$1] }), bytes[best] >= smallest
            else { return .refused }
            let chosen = targets[best]
            var member = [Bool](repeating: false, count: 256)
            for b in 0..<256 where targetOf[Int(grammar.classOf[b])] == chosen { member[b] = true }
            sets.append(member)
            return .to(chosen)
        }
        guard let chain else { return nil }
        return (chain, sets)
    }

    /// The string-body characters' UTF-8 sequences as the byte classes of each byte, the
    /// sequences that are the same in classes merged.
    private lazy var stringBodyClassSequences: [[[Int]]] = {
        var seen = Set<[[Int]]>()
        var sequences: [[[Int]]] = []
        for sequence in Self.stringBodySequences {
            let classes = sequence.map { (low, high) in
                Set((low...high).map { Int(grammar.classOf[Int($0)]) }).sorted()
            }
            if seen.insert(classes).inserted { sequences.append(classes) }
        }
        return sequences
    }()

    /// How many bytes each byte class has.
    private lazy var classSizes: [Int] = {
        var sizes = [Int](repeating: 0, count: classCount)
        for b in 0..<256 { sizes[Int(grammar.classOf[b])] += 1 }
        return sizes
    }()
}
