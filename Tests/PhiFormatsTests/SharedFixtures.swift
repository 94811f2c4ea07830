import Foundation

/// The real Phi tokenizer and config files live beside the repo in `../shared/fixtures`; tests
/// read them in place and never copy them into the project.
enum SharedFixtures {
    static let root: String = {
        let repoRoot = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()  // <repo>/Tests/PhiFormatsTests/this.swift
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return repoRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures").path
    }()
    static let phi35 = root + "/microsoft--Phi-3.5-mini-instruct"
    static let phi4MiniMLX4bit = root + "/_derived/mlx-community--Phi-4-mini-instruct-4bit"
}
