import Foundation
import PhiFormats

extension ConvertManifest {
    /// After `verify --fix` edited `file` of a converted model, records its new size and
    /// SHA-256 in the manifest (atomically), so the next verify's bytes check does not take
    /// the deliberate edit for damage. A model without a manifest is left as it is.
    static func refresh(_ file: String, directory: String) throws {
        guard var manifest = try read(directory: directory) else { return }
        let path = directory + "/" + file
        let bytes = try LocalFile.read(path)
        manifest.files[file] = File(size: bytes.count, sha256: SHA256Hasher.hex(of: bytes))
        try AtomicFile.write(
            Array(manifest.json().pythonJSONDump(indent: 2).utf8), to: directory + "/" + fileName)
    }
}
