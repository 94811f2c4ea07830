import Foundation
import PhiFormats
import Synchronization

/// The shared state of a snapshot download: the files still to fetch, byte counters, who is
/// doing what, and the first failure (after which every transfer stops at its next chunk).
final class DownloadBoard: Sendable {
    private struct State {
        /// Sorted by size, smallest first: `popLast` hands out the largest, so the big
        /// transfers start early and the small ones fill the gaps at the end.
        var queue: [HubFileEntry]
        var active: [String: SnapshotProgress.ActiveFile] = [:]
        var filesDone = 0
        var bytesDone: Int
        var outcomes: [String: FileDownload.Outcome] = [:]
        var firstError: HubError?
        var hashNanoseconds: UInt64 = 0
    }

    private let state: Mutex<State>
    let fileCount: Int
    private let bytesTotal: Int
    /// Once cancelled, no file starts and every transfer stops at its next chunk.
    private let cancellation: CancellationToken?

    init(files: [SnapshotFile], cancellation: CancellationToken?) {
        self.cancellation = cancellation
        let queue = files.map(\.entry).sorted { $0.size < $1.size }
        state = Mutex(State(queue: queue, bytesDone: files.reduce(0) { $0 + $1.bytesPresent }))
        fileCount = files.count
        bytesTotal = files.reduce(0) { $0 + $1.entry.size }
    }

    /// The next file to fetch, or nil when all are handed out or something failed.
    func next() -> HubFileEntry? {
        state.withLock { s in
            guard s.firstError == nil, !cancellation.isCancelled, let entry = s.queue.popLast()
            else { return nil }
            s.active[entry.path] = .init(path: entry.path, bytesDone: 0, bytesTotal: entry.size)
            return entry
        }
    }

    /// Counts a written chunk; false tells the transfer to stop.
    func add(bytes: Int, to path: String) -> Bool {
        state.withLock { s in
            s.bytesDone += bytes
            s.active[path]?.bytesDone += bytes
            s.active[path]?.waitingFor = nil
            return s.firstError == nil && !cancellation.isCancelled
        }
    }

    func waiting(for path: String, holder: String?) {
        state.withLock { $0.active[path]?.waitingFor = holder ?? "another process" }
    }

    func finish(_ entry: HubFileEntry, _ outcome: FileDownload.Outcome) {
        state.withLock { s in
            let counted = s.active[entry.path]?.bytesDone ?? 0
            s.active[entry.path] = nil
            s.filesDone += 1
            s.outcomes[entry.path] = outcome
            switch outcome {
            case .downloaded(let bytes, _, let nanoseconds):
                s.hashNanoseconds += nanoseconds
                s.bytesDone += bytes - counted
            case .completedElsewhere:
                s.bytesDone += entry.size - counted
            }
        }
    }

    /// Records a failure; the first one is what the pull reports.
    func fail(_ error: HubError) {
        state.withLock { s in
            if s.firstError == nil { s.firstError = error }
        }
    }

    var firstError: HubError? { state.withLock { $0.firstError } }
    var outcomes: [String: FileDownload.Outcome] { state.withLock { $0.outcomes } }
    var hashNanoseconds: UInt64 { state.withLock { $0.hashNanoseconds } }

    func progress(elapsed: Double) -> SnapshotProgress {
        state.withLock { s in
            SnapshotProgress(
                filesDone: s.filesDone, filesTotal: fileCount, bytesDone: s.bytesDone,
                bytesTotal: bytesTotal,
                active: s.active.values.sorted { $0.path < $1.path }, elapsed: elapsed)
        }
    }
}

/// Where a download stands, for progress displays.
public struct SnapshotProgress: Sendable, Equatable {
    public var filesDone: Int
    /// Files being fetched in this pull (cached ones excluded).
    public var filesTotal: Int
    /// Bytes of those files on disk so far, resumed partials included.
    public var bytesDone: Int
    public var bytesTotal: Int
    /// Transfers in flight, by path.
    public var active: [ActiveFile]
    /// Seconds since the download started.
    public var elapsed: Double

    public struct ActiveFile: Sendable, Equatable {
        public var path: String
        public var bytesDone: Int
        public var bytesTotal: Int
        /// Set while another process holds this blob's lock (`pid 4242@host`).
        public var waitingFor: String?
    }
}

/// What a snapshot download did.
public struct SnapshotResult: Sendable {
    public let repoID: String
    public let revision: String
    public let commit: String
    public let snapshotDirectory: String
    public private(set) var files: [FileResult]
    public private(set) var seconds: Double
    /// CPU time the download threads spent hashing, summed over threads.
    public private(set) var hashSeconds: Double

    public struct FileResult: Sendable, Equatable {
        public enum Action: String, Sendable, Codable {
            /// Already in the snapshot.
            case cached
            /// The blob was there; only the snapshot link was made.
            case linked
            /// Fetched now (`resumedFrom` bytes came from an earlier partial).
            case downloaded
        }
        public var path: String
        public var size: Int
        public var action: Action
        public var bytesDownloaded: Int
        public var resumedFrom: Int
    }

    public var bytesDownloaded: Int { files.reduce(0) { $0 + $1.bytesDownloaded } }

    init(
        plan: SnapshotPlan, outcomes: [String: FileDownload.Outcome], seconds: Double,
        hashSeconds: Double
    ) {
        repoID = plan.repoID
        revision = plan.revision
        commit = plan.commit
        snapshotDirectory = plan.snapshotDirectory
        files = plan.files.map { file in
            let entry = file.entry
            switch outcomes[entry.path] {
            case .downloaded(let bytes, let resumed, _):
                return FileResult(
                    path: entry.path, size: entry.size, action: .downloaded,
                    bytesDownloaded: bytes, resumedFrom: resumed)
            case .completedElsewhere, nil:
                let action: Action = file.state == .cached ? .cached : .linked
                return FileResult(
                    path: entry.path, size: entry.size, action: action, bytesDownloaded: 0,
                    resumedFrom: 0)
            }
        }
        self.seconds = seconds
        self.hashSeconds = hashSeconds
    }

    public typealias Action = FileResult.Action

    /// This result with an earlier part of the same pull folded in (`pull` fetches
    /// config.json first): what the earlier part fetched counts as fetched; times add up.
    public func including(_ earlier: SnapshotResult) -> SnapshotResult {
        var merged = self
        merged.files = files.map { file in
            earlier.files.first { $0.path == file.path && $0.action == .downloaded } ?? file
        }
        merged.seconds += earlier.seconds
        merged.hashSeconds += earlier.hashSeconds
        return merged
    }
}
