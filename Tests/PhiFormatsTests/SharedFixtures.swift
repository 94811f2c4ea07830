import Foundation
import TestSupport

/// The real Phi config files in `Tests/Fixtures` (`TestPaths`); a missing one fails the
/// test that reads it.
enum SharedFixtures {
    static var phi35: String {
        get throws { try TestPaths.shared("microsoft--Phi-3.5-mini-instruct") }
    }
    static var phi4MiniMLX4bit: String {
        get throws { try TestPaths.shared("_derived/mlx-community--Phi-4-mini-instruct-4bit") }
    }
}

/// A fresh temporary directory, removed when the value is dropped.
final class TempDir {
    let path: String

    init() throws {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("phikit-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }

    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let p = file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: p))
        return p
    }
}

/// Deterministic pseudo-random bytes (xorshift; the seed is made odd so it is never 0), so
/// failures reproduce.
func xorshiftBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var x = seed | 1
    return (0..<count).map { _ in
        x ^= x << 13
        x ^= x >> 7
        x ^= x << 17
        return UInt8(truncatingIfNeeded: x)
    }
}
