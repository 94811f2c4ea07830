import Foundation

/// Bytes and newest modification time of the files under a folder (for converted models and
/// convert's temporary folders, which hold plain files).
struct FolderStats {
    var bytes = 0
    var newest = Date(timeIntervalSince1970: 0)

    init(_ path: String) {
        guard let walker = FileManager.default.enumerator(atPath: path) else { return }
        while let file = walker.nextObject() as? String {
            let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + file)
            bytes += (attributes?[.size] as? NSNumber)?.intValue ?? 0
            if let date = attributes?[.modificationDate] as? Date, date > newest { newest = date }
        }
    }
}
