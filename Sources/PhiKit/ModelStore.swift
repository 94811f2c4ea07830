import Foundation
import PhiFormats

/// phikit's own directory of converted models: `$PHIKIT_HOME`, else
/// `$XDG_DATA_HOME/phikit`, else `~/.local/share/phikit`; models live in `models/<name>`.
/// `convert` without `-o` writes there so `list` and `run` find the result by name.
public enum ModelStore {
    public static func root(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        if let home = environment["PHIKIT_HOME"], !home.isEmpty { return home }
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty { return xdg + "/phikit" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/share/phikit"
    }

    public static func modelsDirectory(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        root(environment: environment) + "/models"
    }

    /// `<base>-4bit` for a quantized output, `<base>-bf16` / `-fp16` / `-fp32` for a float one,
    /// where `base` is the source's name without an earlier `-4bit`/`-bf16`-style suffix
    /// (so dequantizing `Phi-3.5-mini-instruct-4bit` gives `Phi-3.5-mini-instruct-bf16`).
    /// `format` names a quantization that bits alone do not (`mxfp4`, `mixed_3_6`).
    public static func modelName(
        source: String, bits: Int?, floatType: String?, format: String? = nil
    ) -> String {
        var base = source
        let formats =
            MicroscaledMode.allCases.map(\.rawValue) + MixedQuantRecipe.allCases.map(\.rawValue)
        for suffix in ["-bf16", "-fp16", "-fp32", "-f16", "-f32"] + (2...8).map({ "-\($0)bit" })
            + formats.map({ "-" + $0 })
        where base.lowercased().hasSuffix(suffix) && base.count > suffix.count {
            base.removeLast(suffix.count)
            break
        }
        if let format { return "\(base)-\(format)" }
        if let bits { return "\(base)-\(bits)bit" }
        if let floatType { return "\(base)-\(floatType)" }
        return base
    }
}

/// What every command accepts as MODEL before looking it up: something that can name a model.
public enum ModelName {
    /// False for text that names nothing: empty or blank (an unset shell variable), or holding
    /// a NUL or a line break. `rm ""` used to resolve to the store folder itself.
    public static func isUsable(_ text: String) -> Bool {
        !text.trimmingCharacters(in: .whitespaces).isEmpty
            && !text.contains(where: { $0 == "\0" || $0.isNewline })
    }
}
