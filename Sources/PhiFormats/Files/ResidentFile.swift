#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A whole file read into anonymous memory, placed so that one chosen byte of it (a
/// safetensors file's data start) lies on a 64-byte cache line.
///
/// Why not a mapping: a mapped file's bytes sit at the same offset within a page as in the
/// file, so tensors that start 8 or 40 bytes past a line in the file (the MLX benchmark
/// models': data start = 8 + header length) start there in memory too, and every 64-byte
/// weight load of the AVX-512 kernels then spans two lines. A copy can put them on a line.
///
/// The memory is one 2 MiB-aligned anonymous region advised MADV_HUGEPAGE, so it keeps what
/// the 2 MiB-page mapping gave decode (`MappedFile`'s `hugePages`: one TLB entry per 2 MiB),
/// and read-only once filled. It is the process's own memory (RSS), not the shared page
/// cache: the cache's copy of the file becomes reclaimable, but two processes running the
/// same model hold it twice.
public final class ResidentFile: @unchecked Sendable {  // immutable after init
    public let path: String
    /// The whole mapping (nil for an empty file); `bytes` starts `lineShift` bytes into it.
    private let region: UnsafeMutableRawPointer?
    private let regionSize: Int
    public let bytes: UnsafeRawBufferPointer

    /// The cache line the kernels load: 64 bytes on every x86-64 and arm64 core phikit runs on.
    public static let lineSize = 64
    /// Bytes copied between cancellation checks: ~5 ms from a warm page cache.
    static let chunkSize = 16 << 20

    /// Reads `path` whole. `alignedOffset` is given the file's first 8 bytes (fewer if it is
    /// shorter) and returns the offset of the byte to put on a cache line; any offset is
    /// accepted (a nonsense one only costs the alignment). Failures are `FileError`s naming
    /// the file; `cancellation` is checked between chunks (`Interrupted`).
    ///
    /// The bytes come through a 2 MiB-page mapping of the file (`MappedFile`'s `hugePages`),
    /// not pread: pread leaves the page cache holding the file in read-ahead-sized folios
    /// (≤ 128 KiB), after which no process can map it in 2 MiB pages until they are dropped
    /// and read from disk again (measured: a mapping of Phi-3.5-mini after a pread copy had
    /// 12 MB of its 2.1 GB in 2 MiB pages). Faulting through the mapping keeps the cache in
    /// 2 MiB folios and reads a cold file in 2 MiB requests. As with any mapping, a file cut
    /// short by another process while it is copied raises SIGBUS.
    public convenience init(
        path: String, alignedOffset: ([UInt8]) -> Int, cancellation: CancellationToken? = nil
    ) throws {
        try self.init(
            copyOf: MappedFile(path: path, hugePages: true), alignedOffset: alignedOffset,
            cancellation: cancellation)
    }

    /// A copy of `source`'s bytes (mapped with `hugePages`, for the reason above), placed as
    /// `init(path:alignedOffset:cancellation:)` places them.
    public init(
        copyOf source: MappedFile, alignedOffset: ([UInt8]) -> Int,
        cancellation: CancellationToken? = nil
    ) throws {
        self.path = source.path
        let size = source.bytes.count
        guard let from = source.bytes.baseAddress, size > 0 else {
            region = nil
            regionSize = 0
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        let target = alignedOffset(Array(source.bytes.prefix(8)))
        let lineShift = (Self.lineSize - (target % Self.lineSize + Self.lineSize) % Self.lineSize)
            % Self.lineSize

        let huge = MappedFile.hugePageSize
        let regionSize = (lineShift + size + huge - 1) / huge * huge
        let region = try MappedFile.reserveHugeAligned(
            regionSize, protection: PROT_READ | PROT_WRITE, path: path,
            operation: "allocate memory for")
        #if os(Linux)
            _ = madvise(region, regionSize, 14)  // MADV_HUGEPAGE; small pages if refused
        #endif
        let start = region + lineShift
        do {
            for offset in stride(from: 0, to: size, by: Self.chunkSize) {
                try cancellation.check()
                let count = min(Self.chunkSize, size - offset)
                memcpy(start + offset, from + offset, count)
                // Unmapped as copied: the mapping's pages count in this process's memory
                // until then (peak RSS was the model twice: 4.23 GB for Phi-3.5-mini's 2.1).
                source.dropPages(offset..<offset + count)
            }
        } catch {
            munmap(region, regionSize)
            throw error
        }
        mprotect(region, regionSize, PROT_READ)  // the weights are immutable from here on
        self.region = region
        self.regionSize = regionSize
        bytes = UnsafeRawBufferPointer(start: start, count: size)
    }

    deinit {
        if let region { munmap(region, regionSize) }
    }
}
