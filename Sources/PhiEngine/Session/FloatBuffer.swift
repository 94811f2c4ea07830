#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Zeroed float32 memory owned by one object, page-aligned, from an anonymous mapping: pages
/// are only committed when first written, so a KV cache sized for the whole context costs
/// resident memory only for the positions actually used. Freed in `deinit`.
final class FloatBuffer: @unchecked Sendable {  // the owner decides who writes
    let pointer: UnsafeMutablePointer<Float>
    let count: Int
    private let byteCount: Int

    /// Fails (as `outOfMemory`) only when the address space is exhausted.
    init(count: Int) throws(SessionError) {
        self.count = max(count, 1)
        byteCount = self.count * MemoryLayout<Float>.stride
        let raw = mmap(
            nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
            -1, 0)
        guard let raw, raw != MAP_FAILED else { throw .outOfMemory(bytes: byteCount) }
        pointer = raw.bindMemory(to: Float.self, capacity: self.count)
    }

    deinit { munmap(pointer, byteCount) }

    subscript(offset: Int) -> UnsafeMutablePointer<Float> { pointer + offset }
}
