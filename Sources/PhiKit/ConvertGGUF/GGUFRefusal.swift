import Foundation
import PhiFormats

extension GGUFConvertError {
    /// Refuses a GGUF file where an MLX model directory is expected (`run`, `chat`, …).
    static func refuseGGUF(_ text: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: text, isDirectory: &isDirectory),
            !isDirectory.boolValue, isGGUF(path: text)
        else { return }
        throw GGUFConvertError.ggufGiven(path: text)
    }
}
