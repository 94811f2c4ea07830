import Foundation
import Testing

@testable import PhiFormats

/// A resident copy (`SafeTensorsFile(residentCopyOf:)`, `ResidentFile`) holds the file's bytes
/// with the data section on a 64-byte line, whatever the header length, and fails as the
/// mapped reader does on bad files.
@Suite struct ResidentFileTests {
    /// A safetensors image whose header is `headerLength` bytes (spaces after the JSON; not
    /// padded to 8, so the data section may start anywhere), with tensors at offsets that are
    /// multiples of 64 (as mlx writes them) and random data.
    static func image(headerLength: Int, dataBytes: Int = 3 * 64 + 6) -> [UInt8] {
        let tail = dataBytes - 3 * 64
        var header = Array(
            (#"{"a":{"dtype":"U32","shape":[4,4],"data_offsets":[0,64]},"#
                + #""b":{"dtype":"U8","shape":[128],"data_offsets":[64,192]},"#
                + #""c":{"dtype":"F16","shape":[\#(tail / 2)],"data_offsets":[192,\#(dataBytes)]}}"#)
                .utf8)
        precondition(header.count <= headerLength)
        header += [UInt8](repeating: UInt8(ascii: " "), count: headerLength - header.count)
        return stImage(header, data: xorshiftBytes(dataBytes, seed: UInt64(headerLength)))
    }

    @Test("tensors byte-identical to the mapped file's and on 64-byte lines", arguments: [0, 1, 7, 8, 40, 63])
    func alignsEveryDataStart(extra: Int) throws {
        let dir = try TempDir()
        let headerLength = 192 + extra  // data start 200 + extra: 8 past a line for extra 0
        let path = try dir.write("m.safetensors", Self.image(headerLength: headerLength))
        let mapped = try SafeTensorsFile(path: path)
        let resident = try SafeTensorsFile(residentCopyOf: path)
        #expect(resident.isResident && !mapped.isResident)
        #expect(resident.dataSectionOffset == 8 + headerLength)
        #expect(resident.tensors == mapped.tensors)
        #expect(resident.fileSize == mapped.fileSize)
        for tensor in resident.tensors {
            let copy = resident.data(tensor)
            #expect(Array(copy) == Array(mapped.data(tensor)), "\(tensor.name)")
            #expect(Int(bitPattern: copy.baseAddress) % ResidentFile.lineSize == 0, "\(tensor.name)")
        }
        resident.release(resident.tensors[0])  // a copy keeps its bytes
        resident.willNeed(resident.tensors[0])
        #expect(Array(resident.data(resident.tensors[0])) == Array(mapped.data(mapped.tensors[0])))
    }

    /// Over 2 MiB: the copy spans several 2 MiB pages; every byte is the file's. (The 2 GB
    /// benchmark models, read in many chunks, give bit-identical logits: scripts/bench/README.md.)
    @Test func largeFileReadsWhole() throws {
        let dir = try TempDir()
        let dataBytes = (5 << 20) + 6
        let bytes = Self.image(headerLength: 200, dataBytes: dataBytes)
        let path = try dir.write("big.safetensors", bytes)
        let resident = try SafeTensorsFile(residentCopyOf: path)
        let c = try #require(resident.info("c"))
        #expect(Array(resident.data(c)) == Array(bytes[(208 + 192)...]))
        #expect(Int(bitPattern: resident.data(c).baseAddress) % ResidentFile.lineSize == 0)
    }

    /// `.hugePagesOrResident`'s file: faulted in whole, then kept mapped when the page cache
    /// gave enough of it 2 MiB pages, else copied from that mapping. The share is forced
    /// both ways with the threshold (any share is >= 0; none is >= 1.01), since the page
    /// cache's folios are the kernel's choice; either way every byte is the file's.
    @Test func mappedOrResidentByHugePageShare() throws {
        let dir = try TempDir()
        let bytes = Self.image(headerLength: 200, dataBytes: (5 << 20) + 6)
        let path = try dir.write("big.safetensors", bytes)
        let kept = try SafeTensorsFile(mappedOrResidentCopyOf: path, minimumHugePageShare: 0)
        let copied = try SafeTensorsFile(mappedOrResidentCopyOf: path, minimumHugePageShare: 1.01)
        let c = try #require(kept.info("c"))
        #expect(!kept.isResident)
        #expect(Array(kept.data(c)) == Array(bytes[(208 + 192)...]))
        #if os(Linux)
            #expect(copied.isResident)
            #expect(Int(bitPattern: copied.data(c).baseAddress) % ResidentFile.lineSize == 0)
        #endif
        #expect(Array(copied.data(c)) == Array(bytes[(208 + 192)...]))
    }

    /// `MappedFile.populate` measures this mapping alone (its /proc/self/smaps entry): a share
    /// of the file's whole 2 MiB pages, between 0 and 1, on Linux; nothing for a mapping in
    /// small pages; a cancelled load stops with `Interrupted`.
    @Test func populateMeasuresItsOwnMapping() throws {
        let dir = try TempDir()
        let path = try dir.write("big.bin", xorshiftBytes((4 << 20) + 100, seed: 3))
        let huge = try MappedFile(path: path, hugePages: true)
        let share = try huge.populate(cancellation: nil)
        #if os(Linux)
            let measured = try #require(share)
            #expect(measured >= 0 && measured <= 1)
            #expect(MappedFile.filePmdMappedKB(mappingAt: huge.bytes.baseAddress!) != nil)
        #endif
        #expect(try MappedFile(path: path).populate(cancellation: nil) == nil)
        let token = CancellationToken()
        token.cancel()
        #if os(Linux)
            #expect(throws: Interrupted.self) { try huge.populate(cancellation: token) }
        #endif
    }

    /// Truncated, too short, empty, missing, a directory: the mapped reader's errors, never a
    /// crash. A truncation is found by the header check, as for a mapping.
    @Test func badFilesFailAsMapped() throws {
        let dir = try TempDir()
        let whole = Self.image(headerLength: 200)
        let cases: [(String, [UInt8]?)] = [
            ("truncated-data", Array(whole.dropLast(10))),
            ("truncated-header", Array(whole.prefix(100))),
            ("short", [1, 2, 3]),
            ("empty", []),
            ("missing", nil),
        ]
        for (name, bytes) in cases {
            let path = try bytes.map { try dir.write(name, $0) } ?? dir.file(name)
            let expected = #expect(throws: SafeTensorsError.self) { _ = try SafeTensorsFile(path: path) }
            let actual = #expect(throws: SafeTensorsError.self) {
                _ = try SafeTensorsFile(residentCopyOf: path)
            }
            #expect(actual == expected, "\(name)")
        }
        #expect(throws: SafeTensorsError.io(
            FileError(path: dir.path, operation: "open", errno: EINVAL, wrongType: "a directory"))
        ) { _ = try SafeTensorsFile(residentCopyOf: dir.path) }
    }

    @Test func cancelledBeforeReading() throws {
        let dir = try TempDir()
        let path = try dir.write("m.safetensors", Self.image(headerLength: 200))
        let token = CancellationToken()
        token.cancel()
        #expect(throws: Interrupted.self) {
            _ = try SafeTensorsFile(residentCopyOf: path, cancellation: token)
        }
        #expect(throws: Interrupted.self) {
            _ = try ModelWeights(directory: dir.path, placement: .resident, cancellation: token)
        }
    }

    /// Every placement of a model directory gives the same tensors, byte for byte.
    @Test func modelWeightsPlacementsAgree() throws {
        let dir = try TempDir()
        try dir.write("model.safetensors", Self.image(headerLength: 205))
        let placements = try WeightPlacement.allCases.map {
            try ModelWeights(directory: dir.path, placement: $0)
        }
        for name in placements[0].tensorNames {
            let views = placements.map { w in w.tensor(name).map { Array($0.file.data($0.info)) } }
            #expect(views.allSatisfy { $0 != nil && $0 == views[0] }, "\(name)")
        }
        // A file under 2 MiB has no 2 MiB page to miss: `.hugePagesOrResident` keeps it mapped.
        #expect(placements.map { $0.files[0].isResident } == [false, false, true, false])
    }

    @Test func dataSectionOffsetOfHead() {
        #expect(SafeTensorsFile.dataSectionOffset(head: [200, 0, 0, 0, 0, 0, 0, 0]) == 208)
        #expect(SafeTensorsFile.dataSectionOffset(head: [1, 2, 3]) == 0)
        #expect(SafeTensorsFile.dataSectionOffset(head: [255, 255, 255, 255, 255, 255, 255, 255]) == 0)
    }
}
