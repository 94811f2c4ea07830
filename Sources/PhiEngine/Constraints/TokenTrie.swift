/// Tokens' bytes in a trie stored flat in depth-first order: each node keeps its byte, its
/// depth, the token ending there (if any) and where its subtree ends, so a walk is one pass
/// over an array that skips a refused prefix's whole subtree in one step.
struct TokenTrie: Sendable {
    struct Node {
        /// The index just past this node's subtree.
        var next: Int32
        /// The token ending here, -1 if none, or -2 - k for `duplicates[k]` (several tokens
        /// with the same bytes).
        var token: Int32
        var depth: UInt16
        var byte: UInt8
    }

    let nodes: [Node]
    let duplicates: [[Int32]]
    let maxDepth: Int
    /// What each node's subtree holds, one entry per node (apart from `nodes`: a plain walk
    /// reads only those).
    struct Subtree {
        /// The bytes of the subtree (the node's own included) as `byteCode` bits, so a walk
        /// can tell a subtree made only of bytes it takes.
        var bytes: (UInt64, UInt64)
        /// Where the subtree's tokens start in `tokensInOrder` (they are one run there).
        var tokensFrom: Int32
        /// The depth of its deepest node: its longest token.
        var depth: UInt16
    }

    let subtrees: [Subtree]
    /// The tokens in trie order (duplicates included).
    let tokensInOrder: [Int32]

    /// A byte's bit in `subtreeBytes`: one per printable ASCII byte, one for all the control
    /// bytes below 0x20, one for all the bytes from 0x80 (JSON strings take them in bulk).
    static func byteCode(_ byte: UInt8) -> Int {
        byte < 0x20 ? 0 : byte < 0x80 ? Int(byte) - 0x1F : 97
    }

    /// The `byteCode` bits of the codes whose every byte is in `member` (256 flags).
    static func codes(allIn member: [Bool]) -> (UInt64, UInt64) {
        var bits: (UInt64, UInt64) = (0, 0)
        for code in 0...97 {
            let bytes = code == 0 ? 0...0x1F : code == 97 ? 0x80...0xFF : (code + 0x1F)...(code + 0x1F)
            guard bytes.allSatisfy({ member[$0] }) else { continue }
            if code < 64 { bits.0 |= 1 << UInt64(code) } else { bits.1 |= 1 << UInt64(code - 64) }
        }
        return bits
    }

    /// The trie of `ids`, whose bytes are `pieces[id]` (non-empty, at most 65,535 bytes).
    init(ids: [Int], pieces: [[UInt8]?]) {
        // Sorted by each piece's first 8 bytes as one big-endian number (zero-padded: where
        // two keys differ, they order as the pieces do), the pieces compared only on a tie:
        // the sort was most of the cost of building a vocabulary per process.
        var keys = [UInt64](repeating: 0, count: pieces.count)
        for id in ids {
            var key: UInt64 = 0
            let piece = pieces[id]!
            for i in 0..<8 { key = key << 8 | UInt64(i < piece.count ? piece[i] : 0) }
            keys[id] = key
        }
        let ids = ids.sorted { a, b in
            keys[a] != keys[b] ? keys[a] < keys[b] : pieces[a]!.lexicographicallyPrecedes(pieces[b]!)
        }
        var nodes: [Node] = []
        var duplicates: [[Int32]] = []
        var path: [Int] = []  // node index at each depth of the current token
        var previous: [UInt8] = []
        var maxDepth = 0
        for id in ids {
            let piece = pieces[id]!
            var common = 0
            while common < piece.count && common < previous.count
                && piece[common] == previous[common]
            {
                common += 1
            }
            if common == piece.count && common == previous.count {
                // Same bytes as the previous token: record both on its node.
                let last = path[common - 1]
                let existing = nodes[last].token
                if existing >= 0 {
                    nodes[last].token = -2 - Int32(duplicates.count)
                    duplicates.append([existing, Int32(id)])
                } else {
                    duplicates[Int(-2 - existing)].append(Int32(id))
                }
                continue
            }
            path.removeLast(path.count - common)
            for d in common..<piece.count {
                path.append(nodes.count)
                nodes.append(Node(next: 0, token: -1, depth: UInt16(d + 1), byte: piece[d]))
            }
            nodes[nodes.count - 1].token = Int32(id)
            previous = piece
            maxDepth = max(maxDepth, piece.count)
        }
        // A node's subtree ends at the first later node no deeper than it.
        var open: [Int] = []
        for i in nodes.indices {
            while let top = open.last, nodes[top].depth >= nodes[i].depth {
                nodes[top].next = Int32(i)
                open.removeLast()
            }
            open.append(i)
        }
        for top in open { nodes[top].next = Int32(nodes.count) }
        self.nodes = nodes
        self.duplicates = duplicates
        self.maxDepth = maxDepth

        var inOrder: [Int32] = []
        var from = [Int32](repeating: 0, count: nodes.count + 1)  // one more: the end
        for (i, node) in nodes.enumerated() {
            from[i] = Int32(inOrder.count)
            if node.token >= 0 {
                inOrder.append(node.token)
            } else if node.token != -1 {
                inOrder += duplicates[Int(-2 - node.token)]
            }
        }
        from[nodes.count] = Int32(inOrder.count)
        tokensInOrder = inOrder
        // Backwards, each node's children are done when it comes: below[d] gathers the
        // subtrees at depth d until their parent takes them.
        var bytes = [UInt64](repeating: 0, count: 2 * nodes.count)
        var deepest = [UInt16](repeating: 0, count: nodes.count)
        var below = [(UInt64, UInt64)](repeating: (0, 0), count: maxDepth + 2)
        var belowDepth = [UInt16](repeating: 0, count: maxDepth + 2)
        for i in nodes.indices.reversed() {
            let d = Int(nodes[i].depth)
            var summary = below[d + 1]
            let code = Self.byteCode(nodes[i].byte)
            if code < 64 { summary.0 |= 1 << UInt64(code) } else { summary.1 |= 1 << UInt64(code - 64) }
            let depth = max(UInt16(d), belowDepth[d + 1])
            below[d + 1] = (0, 0)
            belowDepth[d + 1] = 0
            bytes[2 * i] = summary.0
            bytes[2 * i + 1] = summary.1
            deepest[i] = depth
            below[d].0 |= summary.0
            below[d].1 |= summary.1
            belowDepth[d] = max(belowDepth[d], depth)
        }
        subtrees = nodes.indices.map { i in
            Subtree(bytes: (bytes[2 * i], bytes[2 * i + 1]), tokensFrom: from[i], depth: deepest[i])
        }
    }

    /// A token ending at or below node `n` (its first bytes are the path to `n`).
    func someToken(under n: Int) -> Int {
        var i = n
        while nodes[i].token == -1 { i += 1 }
        let token = nodes[i].token
        return token >= 0 ? Int(token) : Int(duplicates[Int(-2 - token)][0])
    }
}
