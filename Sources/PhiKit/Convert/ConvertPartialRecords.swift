import Foundation
import PhiFormats
import PhiHub

/// Where a running `convert` writes, noted in phikit's home so that `phikit rm --partials`
/// finds the `<out>.incomplete-XXXXXX` folder a SIGKILLed convert (or a power cut) leaves
/// beside a user's `-o`, which may be anywhere. One small file per temporary folder, in
/// `<PHIKIT_HOME>/partials/`, holding its absolute path; removed when convert ends either way.
enum ConvertPartialRecords {
    static func directory(environment: [String: String]) -> String {
        ModelStore.root(environment: environment) + "/partials"
    }

    /// Notes `temp` (absolute); returns the record to remove when convert ends, nil when it
    /// cannot be written (a read-only home: convert goes on, the folder is just not findable).
    static func record(_ temp: String, environment: [String: String]) -> String? {
        let dir = directory(environment: environment)
        let record = dir + "/" + (temp as NSString).lastPathComponent
        do {
            try FileManager.default.createDirectory(
                atPath: dir, withIntermediateDirectories: true)
            try Data(temp.utf8).write(to: URL(fileURLWithPath: record), options: .atomic)
        } catch {
            return nil
        }
        return record
    }

    /// The temporary folders noted by converts that are gone, and the records that note
    /// them. A record is believed only for a directory named `*.incomplete-*` and named as
    /// it is (a hostile record cannot aim `rm` elsewhere); any other file here is dropped: a
    /// record whose folder is gone, or the temporary file of a record's atomic write that a
    /// SIGKILL interrupted (it holds the path of a folder named otherwise).
    static func folders(environment: [String: String]) -> [(folder: String, record: String)] {
        let dir = directory(environment: environment)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        var found: [(String, String)] = []
        for name in names.sorted() {
            let record = dir + "/" + name
            guard let bytes = try? LocalFile.read(record, limit: 1 << 16) else { continue }
            let folder = String(decoding: bytes, as: UTF8.self)
            var isDirectory: ObjCBool = false
            guard folder.hasPrefix("/"),
                FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory)
            else {
                try? FileManager.default.removeItem(atPath: record)
                continue
            }
            let base = (folder as NSString).lastPathComponent
            guard isDirectory.boolValue, base.contains(".incomplete-"), base == name,
                (try? FileManager.default.destinationOfSymbolicLink(atPath: folder)) == nil
            else {
                try? FileManager.default.removeItem(atPath: record)
                continue
            }
            found.append((folder, record))
        }
        return found
    }
}
