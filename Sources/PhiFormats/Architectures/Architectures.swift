/// The architectures phikit knows, by config.json's `model_type`. One line per architecture.
public enum Architectures {
    public static let all: [any ArchitectureSchema] = [
        Phi3Schema(),
        PhiSchema(),
        PhiMoESchema(),
    ]

    public static func schema(for modelType: String) -> (any ArchitectureSchema)? {
        all.first { $0.modelType == modelType }
    }

    /// Sorted, for messages ("phikit runs phi3").
    public static var modelTypes: [String] { all.map(\.modelType).sorted() }
}
