import Foundation

// How the `--json` reports encode what the synthesized `Encodable` would write otherwise.

/// An optional that a report's JSON always carries: `null` when absent, where the synthesized
/// `Encodable` would leave the key out. Documented `--json` objects list every key, so a
/// script can read `.quantization` without asking first whether it is there.
@propertyWrapper
public struct ExplicitNull<Value: Encodable & Sendable & Equatable>: Encodable, Sendable,
    Equatable
{
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        if let wrappedValue { try c.encode(wrappedValue) } else { try c.encodeNil() }
    }
}

/// A date as ISO 8601 text (`2026-11-28T11:50:09Z`), as people and `jq` read dates
/// (Foundation's default is seconds since 2001).
@propertyWrapper
public struct ISO8601Date: Encodable, Sendable, Equatable {
    public var wrappedValue: Date

    public init(wrappedValue: Date) { self.wrappedValue = wrappedValue }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(ISO8601DateFormatter().string(from: wrappedValue))
    }
}
