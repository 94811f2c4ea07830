/// The byte sets of a run of bytes a state takes (see `ParseAutomaton.byteRunChain`): step k
/// of the run takes the bytes of set k, and when the run loops, its last set for every step
/// after. The same shape recurs across grammars and states (a key off the declared ones, an
/// email's local part after each character), so what a walk along it finds is kept per
/// vocabulary (`ByteRunSkeleton`).
struct ByteRunShape: Hashable, Sendable {
    /// Set k's 256 bits as 4 words at 4 * k.
    let bits: [UInt64]
    let loops: Bool
    /// The chain's states: how many bytes a run takes when it does not loop.
    let length: Int

    init(sets: [[Bool]], loops: Bool, length: Int) {
        var bits = [UInt64](repeating: 0, count: 4 * sets.count)
        for (k, set) in sets.enumerated() {
            for b in 0..<256 where set[b] { bits[4 * k + b >> 6] |= 1 << UInt64(b & 63) }
        }
        self.bits = bits
        self.loops = loops
        self.length = length
    }

    private init(bits: [UInt64], loops: Bool, length: Int) {
        self.bits = bits
        self.loops = loops
        self.length = length
    }

    /// The run of a key off the declared ones once past its first byte: any byte of a
    /// key (`JSONSchemaCompiler.keyBytes`), looping. Built with the vocabulary, since every
    /// such key's shape narrows it (see `narrowedLoop`).
    static let keyLoop: ByteRunShape = {
        let set = (0..<256).map { JSONSchemaCompiler.keyBytes.contains(UInt8($0)) }
        return ByteRunShape(sets: [set, set], loops: true, length: 1)
    }()

    /// For a loop whose first step takes some of the loop's bytes only (a key that may not
    /// start as a declared one does): the loop itself, whose skeleton narrows to this one
    /// (`ByteRunSkeleton.init(narrowing:to:trie:)`); nil for any other shape.
    var narrowedLoop: ByteRunShape? {
        guard loops, length == 1, setCount == 2 else { return nil }
        let first = bits[0..<4], loop = bits[4..<8]
        guard zip(first, loop).allSatisfy({ $0 & ~$1 == 0 }), !first.elementsEqual(loop) else { return nil }
        return ByteRunShape(bits: Array(loop + loop), loops: true, length: 1)
    }

    var setCount: Int { bits.count / 4 }

    /// Whether step `k` (from 1) takes `byte`; past the sets, the loop's or none.
    func takes(step k: Int, _ byte: UInt8) -> Bool {
        guard k <= setCount || loops else { return false }
        let set = min(k, setCount) - 1
        return bits[4 * set + Int(byte >> 6)] & (1 << UInt64(byte & 63)) != 0
    }

    /// The `TokenTrie.byteCode` bits of the codes whose bytes every step from `k` (from 1)
    /// on takes, for each k up to `setCount`.
    func codesFrom() -> [(UInt64, UInt64)] {
        var codes: [(UInt64, UInt64)] = (0..<setCount).map { k in
            TokenTrie.codes(allIn: (0..<256).map { takes(step: k + 1, UInt8($0)) })
        }
        for k in codes.indices.reversed().dropFirst() {
            codes[k] = (codes[k].0 & codes[k + 1].0, codes[k].1 & codes[k + 1].1)
        }
        return codes
    }
}

/// What a walk of the whole trie along a run finds without the grammar: the tokens every
/// byte of which the run takes (allowed from any state with that run: each leads to a live
/// state of the chain), and the nodes where a path leaves the run, grouped by the step they
/// leave at and their byte. A walk from a state with the run copies the tokens, and per
/// group asks the automaton once whether that byte may follow the chain's state there;
/// almost every group is refused at once (a control byte in a key, a space in an email), and
/// only the others' subtrees are walked. Built once per vocabulary and shape, it saves the
/// walk over the thousands of trie nodes the run takes (a key's printable ASCII: ~35k).
struct ByteRunSkeleton: Sendable {
    /// The tokens made of the run's bytes (each in the set of its step), as bits.
    let words: [UInt64]
    let count: Int
    /// The groups: bytes taken from the state after `step` bytes of the run (0: the walk's
    /// own state), and where their nodes are in `exits`.
    let groups: [(step: Int32, byte: UInt8, from: Int32, to: Int32)]
    /// Trie nodes leaving the run, by group.
    let exits: [Int32]

    init(shape: ByteRunShape, trie: TokenTrie, vocabularySize: Int) {
        var words = [UInt64](repeating: 0, count: (vocabularySize + 63) / 64)
        var count = 0
        // (group key, node) of each exit, sorted into groups at the end (a dictionary of
        // lists cost more than the walk: a key's run has ~30k exits, nearly all refused).
        var exitKeys: [Int32] = []
        var exitNodes: [Int32] = []
        let codesFrom = shape.codesFrom()
        let longest = shape.loops ? Int.max : shape.length
        let setCount = shape.setCount
        // Past the last set: the loop's, or off the run.
        let lastOnRun = shape.loops ? Int.max : setCount
        let duplicates = trie.duplicates
        // The walk only enters nodes on the run, so a node's parent is always on it.
        trie.nodes.withUnsafeBufferPointer { nodes in
            trie.subtrees.withUnsafeBufferPointer { subtrees in
                trie.tokensInOrder.withUnsafeBufferPointer { tokensInOrder in
                    shape.bits.withUnsafeBufferPointer { sets in
                        words.withUnsafeMutableBufferPointer { bits in
                            var i = 0
                            while i < nodes.count {
                                let node = nodes[i]
                                let depth = Int(node.depth)
                                let k = min(depth, setCount) &- 1
                                guard depth <= lastOnRun,
                                    sets[4 &* k &+ Int(node.byte >> 6)] & (1 << UInt64(node.byte & 63)) != 0
                                else {
                                    exitKeys.append(Int32(min(depth &- 1, shape.length) << 8 | Int(node.byte)))
                                    exitNodes.append(Int32(i))
                                    i = Int(node.next)
                                    continue
                                }
                                let codes = codesFrom[k]
                                let subtree = subtrees[i]
                                if subtree.bytes.0 & ~codes.0 == 0 && subtree.bytes.1 & ~codes.1 == 0
                                    && Int(subtree.depth) <= longest
                                {
                                    // Every token below runs along the chain.
                                    let end =
                                        Int(node.next) < subtrees.count
                                        ? Int(subtrees[Int(node.next)].tokensFrom) : tokensInOrder.count
                                    for t in tokensInOrder[Int(subtree.tokensFrom)..<end] {
                                        bits[Int(t) >> 6] |= 1 << UInt64(t & 63)
                                    }
                                    count &+= end &- Int(subtree.tokensFrom)
                                    i = Int(node.next)
                                    continue
                                }
                                if node.token >= 0 {
                                    bits[Int(node.token) >> 6] |= 1 << UInt64(node.token & 63)
                                    count &+= 1
                                } else if node.token != -1 {
                                    for t in duplicates[Int(-2 - node.token)] {
                                        bits[Int(t) >> 6] |= 1 << UInt64(t & 63)
                                        count &+= 1
                                    }
                                }
                                i &+= 1
                            }
                        }
                    }
                }
            }
        }
        self.words = words
        self.count = count
        (groups, exits) = Self.grouped(keys: exitKeys, nodes: exitNodes, length: shape.length)
    }

    /// The skeleton of `shape` from that of its loop (`ByteRunShape.narrowedLoop`): the
    /// same tokens and exits but those under a first byte the shape's first step refuses,
    /// whose nodes now leave the run at once. A few thousand tokens to clear instead of a
    /// walk of the run's ~35k nodes.
    init(narrowing loop: ByteRunSkeleton, to shape: ByteRunShape, trie: TokenTrie) {
        var words = loop.words
        var count = loop.count
        var dropped: [Range<Int32>] = []  // the subtrees of the first bytes refused
        var i = 0
        while i < trie.nodes.count {
            let node = trie.nodes[i]
            let next = Int(node.next)
            if !shape.takes(step: 1, node.byte) && shape.takes(step: 2, node.byte) {
                dropped.append(Int32(i)..<node.next)
                let end = next < trie.subtrees.count ? Int(trie.subtrees[next].tokensFrom) : trie.tokensInOrder.count
                for t in trie.tokensInOrder[Int(trie.subtrees[i].tokensFrom)..<end]
                where words[Int(t) >> 6] & (1 << UInt64(t & 63)) != 0 {
                    words[Int(t) >> 6] &= ~(1 << UInt64(t & 63))
                    count -= 1
                }
            }
            i = next
        }
        var exitKeys: [Int32] = []
        var exitNodes: [Int32] = []
        for group in loop.groups {
            for node in loop.exits[Int(group.from)..<Int(group.to)]
            where !dropped.contains(where: { $0.contains(node) }) {
                exitKeys.append(group.step << 8 | Int32(group.byte))
                exitNodes.append(node)
            }
        }
        for range in dropped {
            exitKeys.append(Int32(trie.nodes[Int(range.lowerBound)].byte))
            exitNodes.append(range.lowerBound)
        }
        self.words = words
        self.count = count
        (groups, exits) = Self.grouped(keys: exitKeys, nodes: exitNodes, length: shape.length)
    }

    /// Exits sorted into groups by key (step << 8 | byte): a counting sort.
    private static func grouped(keys: [Int32], nodes: [Int32], length: Int)
        -> ([(step: Int32, byte: UInt8, from: Int32, to: Int32)], [Int32])
    {
        var groups: [(step: Int32, byte: UInt8, from: Int32, to: Int32)] = []
        var starts = [Int32](repeating: 0, count: (length + 1) << 8 + 1)
        for key in keys { starts[Int(key) + 1] += 1 }
        for k in 1..<starts.count { starts[k] += starts[k - 1] }
        for k in 0..<starts.count - 1 where starts[k + 1] > starts[k] {
            groups.append((Int32(k >> 8), UInt8(k & 0xFF), starts[k], starts[k + 1]))
        }
        var exits = [Int32](repeating: 0, count: nodes.count)
        var next = starts
        for (key, node) in zip(keys, nodes) {
            exits[Int(next[Int(key)])] = node
            next[Int(key)] += 1
        }
        return (groups, exits)
    }
}
