import Foundation
import PhiFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The running hash of one blob (SHA-256 for LFS files, git's blob SHA-1 otherwise), fed from
/// a ring of 256 KiB buffers. For a large file it hashes on a thread of its own: the receiving
/// thread fills the next buffer (and goes back to the socket) while the previous one is
/// hashed, so with a core to spare hashing stops slowing the transfer. Small files are hashed
/// inline; a thread would cost more than it saves.
///
///     let buffer = hasher.buffer        // fill some of it, write it to the file, then
///     hasher.commit(count)              // hand it over; `buffer` is now the next one
///     let hex = hasher.finish()         // waits for the last buffers
final class BlobHasher: @unchecked Sendable {  // the ring is handed over through semaphores
    static let bufferSize = 256 << 10
    /// Files above this size get their own hashing thread.
    static let threadedAbove = 8 << 20

    private var digest: Digest
    private let slots: [UnsafeMutableRawBufferPointer]
    private var counts: [Int]
    private var producer = 0
    private var consumer = 0
    private let threaded: Bool
    private let free: DispatchSemaphore
    private let filled = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    private var running = false
    /// CPU time spent hashing (on whichever thread did it).
    private(set) var cpuNanoseconds: UInt64 = 0

    init(_ entry: HubFileEntry) {
        digest = Digest(entry)
        threaded = entry.size > Self.threadedAbove
        let count = threaded ? 4 : 1
        slots = (0..<count).map { _ in
            .allocate(byteCount: Self.bufferSize, alignment: 64)
        }
        counts = Array(repeating: 0, count: count)
        free = DispatchSemaphore(value: count - 1)  // one slot is always the producer's
    }

    deinit {
        stopThread()
        for slot in slots { slot.deallocate() }
    }

    /// Where the next bytes go (`bufferSize` bytes).
    var buffer: UnsafeMutableRawBufferPointer { slots[producer] }

    /// Hashes the first `count` bytes of `buffer` (now or on the hashing thread) and makes
    /// `buffer` the next free slot, waiting for one if the hashing thread is behind.
    func commit(_ count: Int) {
        guard threaded else {
            hash(UnsafeRawBufferPointer(rebasing: slots[0][0..<count]))
            return
        }
        startThread()
        counts[producer] = count
        filled.signal()
        free.wait()
        producer = (producer + 1) % slots.count
    }

    /// Waits for everything committed, then the hex digest.
    func finish() -> String {
        stopThread()
        return digest.hex
    }

    /// Forgets everything hashed so far (the server restarted the file from byte 0).
    func reset(_ entry: HubFileEntry) {
        stopThread()
        digest = Digest(entry)
    }

    private func hash(_ bytes: UnsafeRawBufferPointer) {
        let start = Self.threadCPUNanoseconds()
        digest.update(bytes)
        cpuNanoseconds += Self.threadCPUNanoseconds() - start
    }

    private func startThread() {
        guard !running else { return }
        running = true
        Thread.detachNewThread { [self] in
            while true {
                filled.wait()
                let count = counts[consumer]
                if count < 0 { break }
                hash(UnsafeRawBufferPointer(rebasing: slots[consumer][0..<count]))
                consumer = (consumer + 1) % slots.count
                free.signal()
            }
            stopped.signal()
        }
    }

    /// Sends the stop mark after the committed buffers and waits for the thread to end.
    private func stopThread() {
        guard running else { return }
        counts[producer] = -1
        filled.signal()
        stopped.wait()
        running = false
        // Every committed slot was hashed and freed again, and the thread stopped on the
        // producer's slot (`consumer == producer`): the ring is as new.
    }

    /// Ends the hashing thread without using the digest (the download failed).
    func stop() { stopThread() }

    /// CPU time of the calling thread.
    static func threadCPUNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// The hash a blob is checked against.
    private enum Digest {
        case sha256(SHA256Hasher)
        case gitSHA1(GitBlobSHA1)

        init(_ entry: HubFileEntry) {
            self =
                entry.lfs == nil ? .gitSHA1(GitBlobSHA1(size: entry.size)) : .sha256(SHA256Hasher())
        }

        mutating func update(_ bytes: UnsafeRawBufferPointer) {
            switch self {
            case .sha256(var h):
                h.update(bytes)
                self = .sha256(h)
            case .gitSHA1(var h):
                h.update(bytes)
                self = .gitSHA1(h)
            }
        }

        var hex: String {
            switch self {
            case .sha256(let h): h.finalizeHex()
            case .gitSHA1(let h): h.finalizeHex()
            }
        }
    }
}
