/// The suffix automaton of a token sequence, built online (Blumer et al.; one state per
/// class of substrings that end at the same places, at most 2n states): after each appended
/// token it answers, in constant time, the longest suffix of the sequence that also occurs
/// earlier and where its first and its latest earlier occurrences end — what prompt-lookup
/// drafting continues from, without scanning the text per token. Appending is amortised
/// O(1) plus a bounded walk that keeps the latest ends current.
///
/// Transitions live in one dictionary keyed by (state, token); each state also lists its
/// tokens, so a state can be cloned (the construction's split) without searching.
struct SuffixAutomaton {
    /// The tokens appended so far.
    private(set) var text: [Int] = []
    // Per state: the longest substring's length, the suffix link, the end indices of the
    // substrings' first occurrence, their latest and the one before it, and the head of its
    // list of outgoing tokens.
    private var length: [Int32] = [0]
    private var link: [Int32] = [-1]
    private var firstEnd: [Int32] = [-1]
    private var lastEnd: [Int32] = [-1]
    private var priorEnd: [Int32] = [-1]
    private var firstEdge: [Int32] = [-1]
    // Outgoing-token lists: the token and the next entry of the same state's list.
    private var edgeToken: [Int32] = []
    private var edgeNext: [Int32] = []
    private var transitions: [Int: Int32] = [:]
    /// The state of the whole text.
    private var last: Int32 = 0

    /// States up the suffix links whose latest end each append records. The state queried
    /// next is always the first of them; the ones beyond may keep an older end (still a
    /// place where they occur), which only matters for very repetitive text.
    static let endWalk = 32

    /// The longest suffix of the text that also ends earlier in it: its length and the
    /// indices of the tokens that end its first and its latest earlier occurrence (so
    /// `text[end + 1]` is what followed it). nil when even the last token is new.
    var earlierMatch: (length: Int, end: Int, latestEnd: Int)? {
        guard last > 0 else { return nil }
        let state = Int(link[Int(last)])
        guard state > 0 else { return nil }
        return (Int(length[state]), Int(firstEnd[state]), Int(priorEnd[state]))
    }

    mutating func append(_ token: Int) {
        precondition(token >= 0 && token <= Int(Int32.max), "token id \(token)")
        let position = Int32(text.count)
        text.append(token)
        let current = newState(length: length[Int(last)] + 1, link: -1, end: position)
        var p = last
        while p != -1 && transition(p, token) == nil {
            setTransition(p, token, current)
            p = link[Int(p)]
        }
        if p == -1 {
            link[Int(current)] = 0
        } else {
            let q = transition(p, token)!
            if length[Int(p)] + 1 == length[Int(q)] {
                link[Int(current)] = q
            } else {
                // q also stands for longer substrings that do not end here: split off the
                // part that does
                let clone = newState(
                    length: length[Int(p)] + 1, link: link[Int(q)], end: firstEnd[Int(q)])
                lastEnd[Int(clone)] = lastEnd[Int(q)]
                priorEnd[Int(clone)] = priorEnd[Int(q)]
                var edge = firstEdge[Int(q)]
                while edge != -1 {
                    let t = Int(edgeToken[Int(edge)])
                    setTransition(clone, t, transition(q, t)!)
                    edge = edgeNext[Int(edge)]
                }
                while p != -1 && transition(p, token) == q {
                    setTransition(p, token, clone)
                    p = link[Int(p)]
                }
                link[Int(q)] = clone
                link[Int(current)] = clone
            }
        }
        last = current
        // every suffix of the text now also ends here
        var s = link[Int(current)]
        var walked = 0
        while s > 0 && walked < Self.endWalk {
            if lastEnd[Int(s)] != position {
                priorEnd[Int(s)] = lastEnd[Int(s)]
                lastEnd[Int(s)] = position
            }
            s = link[Int(s)]
            walked += 1
        }
    }

    /// Forgets everything.
    mutating func removeAll() {
        self = SuffixAutomaton()
    }

    private mutating func newState(length l: Int32, link s: Int32, end e: Int32) -> Int32 {
        length.append(l)
        link.append(s)
        firstEnd.append(e)
        lastEnd.append(e)
        priorEnd.append(-1)
        firstEdge.append(-1)
        return Int32(length.count - 1)
    }

    private func key(_ state: Int32, _ token: Int) -> Int { Int(state) << 32 | token }

    private func transition(_ state: Int32, _ token: Int) -> Int32? {
        transitions[key(state, token)]
    }

    private mutating func setTransition(_ state: Int32, _ token: Int, _ target: Int32) {
        if transitions.updateValue(target, forKey: key(state, token)) == nil {
            edgeToken.append(Int32(token))
            edgeNext.append(firstEdge[Int(state)])
            firstEdge[Int(state)] = Int32(edgeToken.count - 1)
        }
    }
}
