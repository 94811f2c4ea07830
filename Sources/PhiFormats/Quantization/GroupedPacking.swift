/// What every MLX quantization mode shares: values packed `bits` wide into uint32 words, low
/// bits first, with one scale (and, for affine, one bias) per `groupSize` values of a row.
public protocol GroupedPacking {
    var bits: Int { get }
    var groupSize: Int { get }
}

extension GroupedPacking {
    /// uint32 words per row of the packed weight: `cols * bits / 32`.
    public func packedColumns(_ cols: Int) -> Int { cols * bits / 32 }

    /// Scales (and biases) per row: `cols / groupSize`.
    public func groupsPerRow(_ cols: Int) -> Int { cols / groupSize }

    /// Whether a tensor of this shape can be quantized: at least 2-D (what mlx accepts),
    /// every dimension positive, and a last dimension divisible by the group size. That also
    /// makes it divisible into whole uint32 words, since `groupSize * bits` is a multiple
    /// of 32 for every supported pair.
    public func canQuantize(shape: [Int]) -> Bool {
        guard shape.count >= 2, shape.allSatisfy({ $0 > 0 }), let last = shape.last else {
            return false
        }
        return last % groupSize == 0
    }

    /// The checks every buffer-based quantize and dequantize starts with: a row count of
    /// zero or more, and a positive last dimension in whole groups.
    func checkShape(rows: Int, cols: Int) throws(QuantizationError) {
        guard rows >= 0 else { throw .negativeRows(rows) }
        guard cols > 0, cols % groupSize == 0 else {
            throw .shapeNotDivisible(cols: cols, groupSize: groupSize)
        }
    }

    /// Shapes of what quantizing a tensor of `shape` writes. mlx keeps the leading
    /// dimensions: weight `[..., cols*bits/32]` (uint32), scales/biases `[..., cols/group]`.
    public func quantizedShapes(for shape: [Int]) -> (weight: [Int], scales: [Int]) {
        let lead = shape.dropLast()
        let cols = shape.last ?? 0
        return (lead + [packedColumns(cols)], lead + [groupsPerRow(cols)])
    }
}
