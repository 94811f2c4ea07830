import CKernels

/// CRC-32C (Castagnoli), streamed: a checksum for files phikit writes and reads back itself
/// (the disk prefix cache), where damage, not an adversary, is the threat. With SSE4.2 it
/// runs at memory speed, several times SHA-256's (see pk_crc32c.h).
public struct CRC32C: Sendable, Equatable {
    public private(set) var value: UInt32 = 0

    public init() {}

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        value = pk_crc32c_update(value, base, bytes.count)
    }

    /// The checksum of `bytes` alone.
    public static func of(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CRC32C()
        crc.update(bytes)
        return crc.value
    }

    /// Whether the SSE4.2 path is in use on this machine.
    public static var isAccelerated: Bool { pk_crc32c_accelerated() != 0 }
}
