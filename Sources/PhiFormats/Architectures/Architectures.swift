/// The architectures phikit knows, by config.json's `model_type`: the one registry. One line
/// per architecture; its schema file beside this one and its model folder in the engine (which
/// declares the schema `RunnableSchema`) are the rest of what adding one takes.
public enum Architectures {
    public static let all: [any ArchitectureSchema] = [
        Phi3Schema(),
        PhiSchema(),
        PhiMoESchema(),
        LlamaSchema(),
    ]

    public static func schema(for modelType: String) -> (any ArchitectureSchema)? {
        all.first { $0.modelType == modelType }
    }

    /// Sorted, for messages ("phikit runs phi3").
    public static var modelTypes: [String] { all.map(\.modelType).sorted() }

    /// The schema whose GGUF files say `general.architecture` = `name`.
    public static func gguf(named name: String) -> (any GGUFArchitecture)? {
        all.lazy.compactMap { $0 as? any GGUFArchitecture }.first { $0.ggufName == name }
    }

    /// The GGUF architectures `convert` reads, sorted, for messages.
    public static var ggufNames: [String] {
        all.compactMap { ($0 as? any GGUFArchitecture)?.ggufName }.sorted()
    }
}
