/// Working memory of one encode call, reused for every word.
struct BPEScratch {
    /// (symbols) token id, byte length (0 once merged away), and neighbours (-1: none).
    var ids: [Int32] = []
    var lengths: [Int32] = []
    var previous: [Int32] = []
    var next: [Int32] = []
    /// Candidate merges, rank << 32 | position; a binary min-heap.
    var heap: [UInt64] = []
    var key: [UInt8] = []
}

extension BPEModel {
    /// Appends the ids of one pre-tokenized word (tokenizers' `BPE::tokenize`).
    func encode(
        _ word: UnsafeBufferPointer<UInt8>, into out: inout [Int], scratch s: inout BPEScratch
    ) {
        guard !word.isEmpty else { return }
        if options.ignoreMerges, let id = table.lookup(word) {
            out.append(Int(id))
            return
        }
        let cacheable = word.count < WordCache.maxWordLength
        let hash = cacheable ? ByteStringTable.hash(word) : 0
        if cacheable, cache.lookup(word, hash: hash, into: &out) { return }
        let start = out.count
        makeSymbols(word, &s)
        mergeAll(&s)
        for i in s.ids.indices where s.lengths[i] != 0 { out.append(Int(s.ids[i])) }
        if cacheable { cache.store(word, hash: hash, ids: out[start...]) }
    }

    /// One symbol per character (per byte in byte-level mode), with unknown characters
    /// handled as `BPE::merge_word` does: byte fallback, else the (fused) unk token, else
    /// dropped.
    private func makeSymbols(_ word: UnsafeBufferPointer<UInt8>, _ s: inout BPEScratch) {
        s.ids.removeAll(keepingCapacity: true)
        s.lengths.removeAll(keepingCapacity: true)
        var pendingUnk: (id: Int32, length: Int32)?
        func add(_ id: Int32, _ length: Int32) {
            s.ids.append(id)
            s.lengths.append(length)
        }
        var i = 0
        while i < word.count {
            let length = byteLevel ? 1 : utf8Length(lead: word[i])
            let end = min(i + length, word.count)
            let char = UnsafeBufferPointer(rebasing: word[i..<end])
            let affixed = (!prefix.isEmpty && i > 0) || (!suffix.isEmpty && end == word.count)
            var id: Int32?
            if affixed {
                s.key.removeAll(keepingCapacity: true)
                if i > 0 { s.key.append(contentsOf: prefix) }
                s.key.append(contentsOf: char)
                if end == word.count { s.key.append(contentsOf: suffix) }
                id = table.lookup(s.key)
            } else if byteLevel {
                let b = byteIDs[Int(word[i])]
                id = b >= 0 ? b : nil
            } else {
                id = table.lookup(char)
            }
            defer { i = end }
            if let id {
                if let unk = pendingUnk {
                    add(unk.id, unk.length)
                    pendingUnk = nil
                }
                add(id, Int32(end - i))
                continue
            }
            if options.byteFallback, appendFallback(affixed ? s.key : Array(char), &s) { continue }
            guard let unkID else { continue }
            if let unk = pendingUnk {
                if options.fuseUnk {
                    pendingUnk = (unk.id, unk.length + Int32(end - i))
                    continue
                }
                add(unk.id, unk.length)
            }
            pendingUnk = (unkID, Int32(end - i))
        }
        if let unk = pendingUnk { add(unk.id, unk.length) }
    }

    /// `<0xNN>` for every byte of the symbol's string, if the vocabulary has them all.
    private func appendFallback(_ key: [UInt8], _ s: inout BPEScratch) -> Bool {
        // In byte-level mode the symbol's string is its GPT-2 alphabet spelling.
        let bytes = byteLevel ? Array(ByteLevelAlphabet.string(forRaw: key).utf8) : key
        guard bytes.allSatisfy({ fallbackIDs[Int($0)] >= 0 }) else { return false }
        for b in bytes {
            s.ids.append(fallbackIDs[Int(b)])
            s.lengths.append(1)
        }
        return true
    }

    /// Applies merges lowest rank first (leftmost among equal ranks) with a priority queue,
    /// exactly as tokenizers' `Word::merge_all` (including how it skips stale entries).
    private func mergeAll(_ s: inout BPEScratch) {
        let n = s.ids.count
        guard n > 1 else { return }
        s.previous.removeAll(keepingCapacity: true)
        s.next.removeAll(keepingCapacity: true)
        for i in 0..<n {
            s.previous.append(Int32(i - 1))
            s.next.append(i + 1 < n ? Int32(i + 1) : -1)
        }
        s.heap.removeAll(keepingCapacity: true)
        for i in 0..<(n - 1) {
            if let m = merges.lookup(s.ids[i], s.ids[i + 1]) { push(&s.heap, m.rank, i) }
        }
        while let top = pop(&s.heap) {
            let rank = Int(top >> 32)
            let pos = Int(top & 0xFFFF_FFFF)
            guard s.lengths[pos] != 0, s.next[pos] != -1 else { continue }
            let right = Int(s.next[pos])
            guard let m = merges.lookup(s.ids[pos], s.ids[right]), m.newID == rankNewIDs[rank]
            else { continue }
            s.ids[pos] = m.newID
            s.lengths[pos] += s.lengths[right]
            s.next[pos] = s.next[right]
            s.lengths[right] = 0
            let after = Int(s.next[right])
            if after >= 0 && after < n { s.previous[after] = Int32(pos) }
            let before = Int(s.previous[pos])
            if before >= 0, let p = merges.lookup(s.ids[before], s.ids[pos]) {
                push(&s.heap, p.rank, before)
            }
            if after >= 0 && after < n, let p = merges.lookup(s.ids[pos], s.ids[after]) {
                push(&s.heap, p.rank, pos)
            }
        }
    }

    @inline(__always)
    private func push(_ heap: inout [UInt64], _ rank: Int32, _ pos: Int) {
        heap.append(UInt64(UInt32(bitPattern: rank)) << 32 | UInt64(pos))
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[parent] > heap[i] else { break }
            heap.swapAt(parent, i)
            i = parent
        }
    }

    @inline(__always)
    private func pop(_ heap: inout [UInt64]) -> UInt64? {
        guard let last = heap.popLast() else { return nil }
        guard !heap.isEmpty else { return last }
        let top = heap[0]
        heap[0] = last
        var i = 0
        let n = heap.count
        while true {
            let l = 2 * i + 1
            guard l < n else { break }
            let r = l + 1
            let child = r < n && heap[r] < heap[l] ? r : l
            guard heap[child] < heap[i] else { break }
            heap.swapAt(child, i)
            i = child
        }
        return top
    }
}
