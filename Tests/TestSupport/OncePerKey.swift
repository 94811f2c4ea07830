import Foundation

/// Values computed once per test process and key (a loaded tokenizer, a built checkpoint):
/// callers asking for a key being computed wait for it, different keys are computed in
/// parallel, and a computation that throws is not kept (the next caller tries again and
/// reports the failure too).
public final class OncePerKey<Value>: @unchecked Sendable {
    private final class Slot {
        let lock = NSLock()
        var value: Value?
    }
    private var slots: [String: Slot] = [:]
    private let lock = NSLock()

    public init() {}

    public func value(_ key: String, _ compute: () throws -> Value) rethrows -> Value {
        lock.lock()
        let slot = slots[key] ?? Slot()
        slots[key] = slot
        lock.unlock()
        slot.lock.lock()
        defer { slot.lock.unlock() }
        if let value = slot.value { return value }
        let value = try compute()
        slot.value = value
        return value
    }
}
