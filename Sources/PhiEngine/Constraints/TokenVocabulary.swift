/// A tokenizer's pieces as bytes, in a trie the matcher walks against the grammar: tokens
/// sharing a prefix share its walk, and a refused prefix skips its whole subtree.
///
/// The trie is stored flat in depth-first order; each node keeps its byte, its depth, the
/// token ending there (if any) and where its subtree ends. Built once per tokenizer and
/// shared by every sequence (immutable). The engine knows nothing of tokenizers: the caller
/// gives each token's bytes (byte-level BPE pieces mapped back to bytes, SentencePiece's ▁ as
/// a space and `<0xNN>` as the byte) and the ids never generated as text (special tokens,
/// end tokens), which the trie leaves out.
public final class TokenVocabulary: Sendable {
    struct Node {
        /// The index just past this node's subtree.
        var next: Int32
        /// The token ending here, -1 if none, or -2 - k for `duplicates[k]` (several tokens
        /// with the same bytes).
        var token: Int32
        var depth: UInt16
        var byte: UInt8
    }

    public let size: Int
    let nodes: [Node]
    let duplicates: [[Int32]]
    let pieces: [[UInt8]?]
    let maxDepth: Int

    /// `pieces[id]` is token id's bytes; nil (or empty) for tokens that never appear as
    /// text. Tokens in `special` are left out too.
    public init(pieces: [[UInt8]?], special: Set<Int> = []) {
        size = pieces.count
        var ids: [Int] = []
        var kept = [[UInt8]?](repeating: nil, count: pieces.count)
        for (id, piece) in pieces.enumerated() {
            guard let piece, !piece.isEmpty, piece.count <= Int(UInt16.max), !special.contains(id)
            else { continue }
            ids.append(id)
            kept[id] = piece
        }
        ids.sort { kept[$0]!.lexicographicallyPrecedes(kept[$1]!) }
        var nodes: [Node] = []
        var duplicates: [[Int32]] = []
        var path: [Int] = []  // node index at each depth of the current token
        var previous: [UInt8] = []
        var maxDepth = 0
        for id in ids {
            let piece = kept[id]!
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
                nodes.append(
                    Node(next: 0, token: -1, depth: UInt16(d + 1), byte: piece[d]))
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
        self.pieces = kept
        self.maxDepth = maxDepth
    }

    /// The bytes of a token that appears as text, nil for special and unknown ids.
    public func piece(_ token: Int) -> [UInt8]? {
        token >= 0 && token < size ? pieces[token] : nil
    }

    var nodeCount: Int { nodes.count }

    /// The trie's size (benchmarks).
    public var trieNodeCount: Int { nodes.count }
}
