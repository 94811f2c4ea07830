import Synchronization

/// What a connection is doing, so that a full server knows which one it can close: one that
/// waits for a request (kept alive, or never sent one) or is still receiving one can go; one
/// being answered never does.
final class ConnectionActivity: Sendable {
    enum Phase: Sendable, Equatable { case idle, reading, answering }

    private let state = Mutex<(phase: Phase, since: ContinuousClock.Instant)>((.idle, .now))

    func enter(_ phase: Phase) {
        state.withLock { if $0.phase != phase { $0 = (phase, .now) } }
    }

    var current: (phase: Phase, since: ContinuousClock.Instant) { state.withLock { $0 } }
}

/// The open connections of a server and who gets in when it is full. Idle and slow
/// connections cost a thread and a socket each; with only a cap, 64 connections that send
/// nothing (reopened as they time out) kept every real request at 503. So a newcomer takes
/// the place of the connection idle the longest (then of the one receiving its request the
/// longest); one client address holds at most `perClient` of the places, and makes room
/// from its own connections first.
struct ConnectionTable {
    struct Entry {
        let socket: ConnectionSocket
        let activity: ConnectionActivity
        let client: String
    }

    let capacity: Int
    let perClient: Int
    private(set) var entries: [Int: Entry] = [:]
    private var nextID = 0

    init(capacity: Int, perClient: Int) {
        self.capacity = capacity
        self.perClient = perClient
    }

    var count: Int { entries.count }

    /// Admits `entry` and returns its id and the connections closed to make room; nil when
    /// every place it could take is answering a request.
    mutating func admit(_ entry: Entry) -> (id: Int, evicted: [Entry])? {
        var victims: [Int] = []
        let sameClient = entries.filter { $0.value.client == entry.client }
        if sameClient.count >= perClient {
            guard let victim = Self.victim(in: sameClient) else { return nil }
            victims.append(victim)
        }
        if entries.count - victims.count >= capacity {
            guard let victim = Self.victim(in: entries.filter { !victims.contains($0.key) })
            else { return nil }
            victims.append(victim)
        }
        let evicted = victims.map { entries.removeValue(forKey: $0)! }
        let id = nextID
        nextID += 1
        entries[id] = entry
        return (id, evicted)
    }

    mutating func remove(_ id: Int) { entries[id] = nil }

    /// The connection idle the longest, else the one receiving its request the longest.
    private static func victim(in entries: [Int: Entry]) -> Int? {
        var best: (id: Int, rank: Int, since: ContinuousClock.Instant)?
        for (id, entry) in entries {
            let (phase, since) = entry.activity.current
            let rank: Int
            switch phase {
            case .idle: rank = 0
            case .reading: rank = 1
            case .answering: continue
            }
            if let b = best, (b.rank, b.since) <= (rank, since) { continue }
            best = (id, rank, since)
        }
        return best?.id
    }
}
