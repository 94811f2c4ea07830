import Dispatch
import Foundation

/// Moves the output's disk writes onto their own thread, so copying one chunk into the page
/// cache overlaps computing the next (on the 2-core reference machine the `write` copy is a
/// quarter of the work). Jobs run in submission order; the first error stops the rest and is
/// rethrown by the next `check()` / `finish()`.
final class ConvertWriter: @unchecked Sendable {  // `output` is touched only on `queue`
    private let output: ConvertOutput
    private let queue = DispatchQueue(label: "phikit.convert.writer")
    private let lock = NSLock()
    private var _failure: (any Error)?
    private var failure: (any Error)? {
        get { lock.withLock { _failure } }
        set { lock.withLock { _failure = newValue } }
    }
    /// Bytes handed over so far (read on the submitting thread only).
    private(set) var bytesSubmitted = 0

    init(output: ConvertOutput) {
        self.output = output
    }

    private func enqueue(_ job: @escaping @Sendable () -> Void) {
        queue.async(execute: job)
    }

    /// Writes `bytes` (which must stay valid until `done` runs), then runs `done` on the
    /// writer thread whether or not the write happened (so buffers are always recycled).
    func write(_ bytes: UnsafeRawBufferPointer, done: @escaping @Sendable () -> Void = {}) {
        let chunk = Bytes(buffer: bytes)
        bytesSubmitted += bytes.count
        enqueue { [self] in
            if failure == nil {
                do { try output.write(chunk.buffer) } catch { failure = error }
            }
            done()
        }
    }

    func endTensor(_ name: String) {
        enqueue { [self] in
            guard failure == nil else { return }
            do { try output.endTensor(name) } catch { failure = error }
        }
    }

    /// Rethrows a write error without waiting for the queue to drain (so a full disk stops
    /// the conversion at the next chunk, not at the end).
    func check() throws {
        if let error = failure { throw error }
    }

    /// Waits for every job; rethrows the first error.
    func finish() throws {
        queue.sync {}
        try check()
    }

    /// Waits for every job, then removes an unfinished shard's partial file.
    func abandon() {
        queue.sync { output.abandon() }
    }

    /// A byte range handed to the writer thread; the submitter guarantees it outlives the job.
    private struct Bytes: @unchecked Sendable {
        let buffer: UnsafeRawBufferPointer
    }
}
