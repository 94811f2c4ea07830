import Foundation
import PhiFormats

/// Gets one file of a snapshot into the cache: takes the blob's lock, resumes (or starts) its
/// partial, retries until every byte is there, verifies, and links it into the snapshot.
struct FileDownload {
    let client: HubClient
    let cache: HubCache
    let repoID: String
    let commit: String
    let entry: HubFileEntry
    /// Seconds to wait for another process downloading the same blob.
    let lockTimeout: Double

    enum Outcome: Equatable {
        /// Bytes fetched now; `resumedFrom` were already in the partial.
        case downloaded(bytes: Int, resumedFrom: Int, hashNanoseconds: UInt64)
        /// Another process finished this blob while we waited for its lock.
        case completedElsewhere
    }

    /// `onBytes` hears of each chunk written (false stops the transfer); `waiting` is told who
    /// holds the blob's lock if it is taken.
    func run(
        onBytes: @escaping (Int) -> Bool, waiting: (String?) -> Void
    ) throws(HubError) -> Outcome {
        let lock = FileLock(path: cache.lockPath(repoID: repoID, blobName: entry.blobName))
        let acquired: Bool
        do {
            acquired = try lock.acquire(
                timeout: lockTimeout, cancellation: client.configuration.cancellation,
                waiting: waiting)
        } catch {
            throw .local(error)
        }
        guard acquired else {
            if client.configuration.cancellation.isCancelled { throw .interrupted }
            throw .lockTimeout(path: lock.path, holder: lock.holder)
        }
        defer { lock.release() }

        let blob = cache.blobPath(repoID: repoID, blobName: entry.blobName)
        if HubCache.isCompleteBlob(blob, size: entry.size) {
            try cache.link(
                repoID: repoID, commit: commit, path: entry.path, blobName: entry.blobName)
            return .completedElsewhere
        }
        let writer = try BlobWriter(
            entry: entry, partialPath: cache.partialPath(repoID: repoID, blobName: entry.blobName),
            finalPath: blob, onBytes: onBytes)
        defer { writer.closeFile() }
        try transfer(into: writer)
        try writer.finish()

        try cache.link(repoID: repoID, commit: commit, path: entry.path, blobName: entry.blobName)
        return .downloaded(
            bytes: writer.received, resumedFrom: writer.resumedFrom,
            hashNanoseconds: writer.hashNanoseconds)
    }

    /// Requests until the partial holds the whole file. A connection that breaks resumes from
    /// the exact byte it reached; the retry budget refills whenever bytes arrived.
    private func transfer(into writer: BlobWriter) throws(HubError) {
        var backoff = Backoff(client.configuration.retry)
        var restartedAfter416 = false
        let context = HubClient.Context(repoID: repoID, revision: commit, path: entry.path)
        let url = client.resolveURL(repoID: repoID, commit: commit, path: entry.path)
        while writer.written < entry.size {
            let before = writer.written
            let result = client.fetchFile(repoID: repoID, commit: commit, writer: writer)
            if writer.problem == nil { try writer.flush() }  // what arrived goes to disk now
            if writer.written > before { backoff.madeProgress() }
            if let problem = writer.problem {
                // Offsets or sizes that contradict the listing: the partial cannot be trusted.
                if case .local = problem {} else { writer.discard() }
                throw problem
            }
            switch result {
            case .complete:
                guard writer.written < entry.size else { continue }
                // A body shorter than the file: ask for the rest.
                let short = TransportFailure(kind: .dropped, detail: "response ended early")
                try client.wait(&backoff, after: short, url: url, retryAfter: nil)
            case .transport(let failure):
                if failure.kind == .abortedByReceiver { throw .interrupted }
                try client.wait(&backoff, after: failure, url: url, retryAfter: nil)
            case .status(let head):
                if head.status == 416 && !restartedAfter416 {
                    // The partial is longer than what the server has: start over once.
                    restartedAfter416 = true
                    writer.restart()
                    continue
                }
                try client.retryOrThrow(head, &backoff, context: context)
            case .rejected(let error):
                throw error
            }
        }
    }
}

extension HubCache {
    /// A finished blob: a regular file of the announced size (huggingface_hub's shared blob
    /// store makes blobs symlinks to such files; stat follows them).
    static func isCompleteBlob(_ path: String, size: Int) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFREG && Int(st.st_size) == size
    }
}
