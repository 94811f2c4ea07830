import Foundation
import PhiFormats
import Synchronization

/// What to compute while reading one file.
struct ScanItem: @unchecked Sendable {  // SafeTensorsFile is immutable after init
    var path: String
    var sha256: Bool
    var gitSHA1: Bool
    /// A validated safetensors file whose tensors' numbers are wanted.
    var tensors: SafeTensorsFile?
    /// Bytes this item reads (for the order of work and progress).
    var size: Int
}

/// The digests of one file (those its item asked for).
struct FileDigests: Sendable, Equatable {
    var size: Int
    var sha256: String?
    var gitSHA1: String?
}

struct ScanResult: Sendable {
    var digests: [String: FileDigests] = [:]
    /// Files that could not be read, with the reason.
    var failures: [String: String] = [:]
    /// File path → tensor name → its numbers.
    var statistics: [String: [String: TensorStatistics]] = [:]
}

/// Reads every file once, at disk speed, on `threads` threads: one task hashes a file
/// (SHA-256 and/or the git blob SHA-1 from the same bytes), another walks its tensors with the
/// statistics kernels. The two tasks of a file run side by side on the two cores of the
/// reference machine, so a single 2 GB shard is hashed and scanned in the time of one read:
/// whichever task is ahead faults the pages in, the other finds them in the page cache.
/// Pages are dropped from the mappings behind each task (not from the page cache), so memory
/// stays flat on any model size.
enum FileScan {
    /// Bytes handed to a hasher or kernel at a time.
    static let chunkBytes = 8 << 20
    /// How far ahead of the reader the kernel is asked to read (cold caches).
    static let readAheadBytes = 64 << 20

    private enum Task {
        case digest(Int)
        case statistics(Int)
    }

    /// `progress(done, total)` is called on this thread about ten times a second.
    static func run(
        _ items: [ScanItem], threads: Int, cancellation: CancellationToken? = nil,
        progress: (Int, Int) -> Void = { _, _ in }
    ) throws -> ScanResult {
        // Largest files first, each file's two tasks next to each other.
        let order = items.indices.sorted { items[$0].size > items[$1].size }
        var tasks: [Task] = []
        for i in order {
            if items[i].sha256 || items[i].gitSHA1 { tasks.append(.digest(i)) }
            if items[i].tensors != nil { tasks.append(.statistics(i)) }
        }
        let total = tasks.reduce(0) { sum, task in
            switch task {
            case .digest(let i): sum + items[i].size
            case .statistics(let i): sum + (items[i].tensors.map(tensorBytes) ?? 0)
            }
        }
        let board = ScanBoard(cancellation: cancellation)
        let workers = max(1, min(threads, tasks.count))
        let finished = DispatchSemaphore(value: 0)
        let shared = SharedTasks(tasks: tasks, items: items)
        for _ in 0..<workers {
            Thread.detachNewThread {
                work(shared, board)
                finished.signal()
            }
        }
        var running = workers
        while running > 0 {
            if finished.wait(timeout: .now() + .milliseconds(100)) == .success { running -= 1 }
            progress(board.bytes.load(ordering: .relaxed), total)
        }
        if let error = board.error { throw error }
        return board.result()
    }

    private struct SharedTasks: @unchecked Sendable {  // read-only after creation
        let tasks: [Task]
        let items: [ScanItem]
    }

    private static func work(_ shared: SharedTasks, _ board: ScanBoard) {
        while let index = board.next(), index < shared.tasks.count {
            do {
                switch shared.tasks[index] {
                case .digest(let i):
                    let item = shared.items[i]
                    do {
                        board.store(digest: try digest(item, board), for: item.path)
                    } catch let error as FileError {
                        board.store(failure: error.message, for: item.path)
                    }
                case .statistics(let i):
                    let item = shared.items[i]
                    guard let file = item.tensors else { continue }
                    board.store(statistics: try statistics(file, board), for: item.path)
                }
            } catch {
                board.fail(error)
                return
            }
        }
    }

    /// Hashes `item.path` from a private mapping, chunk by chunk, reading ahead.
    private static func digest(_ item: ScanItem, _ board: ScanBoard) throws -> FileDigests {
        let file = try MappedFile(path: item.path)
        let bytes = file.bytes
        var sha = item.sha256 ? SHA256Hasher() : nil
        var git = item.gitSHA1 ? GitBlobSHA1(size: bytes.count) : nil
        file.willNeed(0..<min(bytes.count, readAheadBytes))
        var offset = 0
        while offset < bytes.count {
            try board.cancellation.check()
            let end = min(bytes.count, offset + chunkBytes)
            file.willNeed((offset + readAheadBytes)..<(end + readAheadBytes))
            let piece = UnsafeRawBufferPointer(rebasing: bytes[offset..<end])
            sha?.update(piece)
            git?.update(piece)
            file.dropPages(offset..<end)
            board.bytes.add(end - offset, ordering: .relaxed)
            offset = end
        }
        return FileDigests(
            size: bytes.count, sha256: sha.map { $0.finalizeHex() },
            gitSHA1: git.map { $0.finalizeHex() })
    }

    /// Every tensor of a kernel-readable dtype, in file order.
    private static func statistics(
        _ file: SafeTensorsFile, _ board: ScanBoard
    ) throws -> [String: TensorStatistics] {
        var out: [String: TensorStatistics] = [:]
        let readable = file.tensors.filter { TensorStatistics.supports($0.dtype) }
        for (n, t) in readable.enumerated() {
            if n + 1 < readable.count { file.willNeed(readable[n + 1]) }
            var stats = TensorStatistics()
            let data = file.data(t)
            let step = Swift.max(1, chunkBytes / t.dtype.size) * t.dtype.size
            var offset = 0
            while offset < data.count {
                try board.cancellation.check()
                let end = Swift.min(data.count, offset + step)
                stats.add(UnsafeRawBufferPointer(rebasing: data[offset..<end]), dtype: t.dtype)
                file.release(slice(t, offset..<end))
                board.bytes.add(end - offset, ordering: .relaxed)
                offset = end
            }
            out[t.name] = stats
        }
        return out
    }

    static func tensorBytes(_ file: SafeTensorsFile) -> Int {
        file.tensors.filter { TensorStatistics.supports($0.dtype) }.reduce(0) { $0 + $1.byteCount }
    }

    /// Bytes `range` of tensor `t`, as a tensor entry (for page advice).
    private static func slice(_ t: TensorInfo, _ range: Range<Int>) -> TensorInfo {
        let base = t.dataOffsets.lowerBound
        return TensorInfo(
            name: t.name, dtype: .u8, shape: [range.count],
            dataOffsets: (base + range.lowerBound)..<(base + range.upperBound))
    }
}

/// What the workers share: the next task, the bytes done, results and the first error.
private final class ScanBoard: Sendable {
    let cancellation: CancellationToken?
    let bytes = Atomic<Int>(0)
    private let nextTask = Atomic<Int>(0)
    private let state = Mutex<ScanResult>(ScanResult())
    private let firstError = Mutex<(any Error)?>(nil)

    init(cancellation: CancellationToken?) { self.cancellation = cancellation }

    /// The next task index; nil once an error stopped the scan.
    func next() -> Int? {
        guard firstError.withLock({ $0 == nil }) else { return nil }
        return nextTask.add(1, ordering: .relaxed).oldValue
    }

    func store(digest: FileDigests, for path: String) {
        state.withLock { $0.digests[path] = digest }
    }

    func store(failure: String, for path: String) {
        state.withLock { $0.failures[path] = failure }
    }

    func store(statistics: [String: TensorStatistics], for path: String) {
        state.withLock { $0.statistics[path] = statistics }
    }

    func fail(_ error: any Error) {
        firstError.withLock { if $0 == nil { $0 = error } }
    }

    var error: (any Error)? { firstError.withLock { $0 } }

    func result() -> ScanResult {
        state.withLock { $0 }
    }
}
