import PhiFormats

/// The output tensors of a plan as one stream of bytes spread over its shards. Steps write
/// tensor after tensor without knowing where shard boundaries fall (mlx_lm may put a
/// `.weight` and its `.scales` in different shards); each shard's writer is opened when its
/// first tensor starts and finished (fsync + rename) when its last one ends.
final class ConvertOutput {
    private let directory: String
    private let shards: [(file: String, tensors: [TensorSpec])]
    private var shard = 0
    private var tensor = 0
    private var writtenInTensor = 0
    private var writer: SafeTensorsWriter?

    init(directory: String, shards: [(file: String, tensors: [TensorSpec])]) {
        self.directory = directory
        self.shards = shards
    }

    /// The tensor the next bytes belong to.
    var current: TensorSpec? {
        shard < shards.count ? shards[shard].tensors[tensor] : nil
    }

    /// Appends bytes to the current tensor.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let spec = current, writtenInTensor + bytes.count <= spec.byteCount else {
            preconditionFailure("convert: more bytes than the plan's tensors hold")
        }
        if writer == nil {
            writer = try SafeTensorsWriter(
                path: directory + "/" + shards[shard].file, tensors: shards[shard].tensors,
                metadata: ["format": "mlx"])
        }
        try writer!.write(bytes)
        writtenInTensor += bytes.count
    }

    /// Ends the current tensor (which must be complete) and, after a shard's last tensor,
    /// finishes that shard's file.
    func endTensor(_ name: String) throws {
        guard let spec = current, spec.name == name, writtenInTensor == spec.byteCount else {
            preconditionFailure("convert: tensor \(name) ended out of plan order or incomplete")
        }
        if spec.byteCount == 0 && writer == nil {
            try write(UnsafeRawBufferPointer(start: nil, count: 0))  // opens the writer
        }
        writtenInTensor = 0
        tensor += 1
        if tensor == shards[shard].tensors.count {
            try writer?.finish()
            writer = nil
            shard += 1
            tensor = 0
        }
    }

    /// Removes the partial file of an unfinished shard (the caller removes the directory).
    func abandon() {
        writer?.abandon()
        writer = nil
    }
}
