import PhiFormats

/// What a model's weights keep alive: the memory-mapped files their matrices point into, and
/// the float32 copies `TensorReader` made of the small tensors (norms, biases), freed with it.
/// One per loaded model, shared by every architecture's weights.
final class WeightStorage: @unchecked Sendable {  // immutable after init
    let files: ModelWeights
    private let copies: [UnsafeMutableRawPointer]

    init(_ files: ModelWeights, taking reader: TensorReader) {
        self.files = files
        copies = reader.takeCopies()
    }

    deinit {
        for copy in copies { copy.deallocate() }
    }

    /// Asks the kernel to start reading every tensor now (but those `skipping` names), in the
    /// background, so the first token does not wait for page faults one page at a time.
    func prefetch(skipping skipped: (String) -> Bool = { _ in false }) {
        for file in files.files {
            for tensor in file.tensors where !skipped(tensor.name) { file.willNeed(tensor) }
        }
    }
}
