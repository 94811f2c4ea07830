/// The logits after each token of a block (`InferenceSession.verify`): `count` rows of
/// `vocabularySize` floats in the session's buffers, valid until the session's next call.
public struct LogitRows {
    let base: UnsafePointer<Float>
    public let count: Int
    public let vocabularySize: Int

    /// The logits that follow the block's token `i`.
    public subscript(i: Int) -> UnsafeBufferPointer<Float> {
        precondition(i >= 0 && i < count, "logit row \(i) of \(count)")
        return UnsafeBufferPointer(start: base + i * vocabularySize, count: vocabularySize)
    }
}
