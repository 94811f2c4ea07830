/// The config.json fields only one architecture reads (phi's `qk_layernorm`, phimoe's expert
/// counts), declared, decoded and defaulted beside its schema, as mlx-swift-lm's per-model
/// configurations; `ModelConfig` keeps the fields every architecture shares and holds the
/// schema's own, read back with `config.fields(PhiMoESchema.Fields.self)`. Decoded
/// leniently (absent → the transformers default); the schema's `validate` checks the values.
public protocol ArchitectureFields: Sendable, Decodable {
    /// Every field at its default (a config built in code, or one without the keys).
    init()
    func isEqual(to other: any ArchitectureFields) -> Bool
}

extension ArchitectureFields where Self: Equatable {
    public func isEqual(to other: any ArchitectureFields) -> Bool { (other as? Self) == self }
}

/// An architecture that reads no field of its own (phi3).
public struct NoArchitectureFields: ArchitectureFields, Equatable {
    public init() {}
    public init(from decoder: any Decoder) throws {}
}

/// A schema's fields inside `ModelConfig` (which compares them through `isEqual`).
public struct ArchitectureFieldsValue: Sendable, Equatable {
    public var value: any ArchitectureFields

    public init(_ value: any ArchitectureFields) { self.value = value }

    public static func == (a: Self, b: Self) -> Bool { a.value.isEqual(to: b.value) }
}

extension ModelConfig {
    /// The schema's own fields, or their defaults when this config holds another type's.
    public func fields<F: ArchitectureFields>(_ type: F.Type) -> F {
        (architectureFields.value as? F) ?? F()
    }
}
