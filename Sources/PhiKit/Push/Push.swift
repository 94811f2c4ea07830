import Foundation
import PhiFormats
import PhiHub

/// `phikit push DIR ORG/NAME`: a local model folder → one commit on the Hub (see
/// `PhiHub.pushFolder` for the protocol). Before anything is sent, a folder without a
/// README.md — or with only the front matter `convert` writes — gets the model card
/// `mlx_lm.convert --upload-repo` publishes (`PushModelCard`), written into the folder so the
/// Hub and the folder hold the same files.
public struct PushOptions: Sendable {
    public var directory: String
    public var repoID: String
    public var revision = "main"
    public var isPrivate = false
    /// The commit message; nil: "Upload folder with phikit".
    public var message: String? = nil
    /// `--token`; nil: `HF_TOKEN`, then the token file.
    public var token: String? = nil
    public var environment: [String: String]

    public init(
        directory: String, repoID: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.directory = directory
        self.repoID = repoID
        self.environment = environment
    }
}

public func push(
    _ options: PushOptions, progress: (PushProgress) -> Void = { _ in }
) throws -> PushResult {
    guard isHubRepoID(options.repoID) else {
        throw PushUsageError.badRepoID(options.repoID)
    }
    let configuration = HubConfiguration.from(
        environment: options.environment, token: options.token,
        userAgent: "phikit/\(PhiKitVersion.string)")
    if configuration.offline { throw PushUsageError.offline }
    guard configuration.token != nil else { throw PushError.needsToken(repoID: options.repoID) }
    try PushModelCard.ensure(in: options.directory, repoID: options.repoID)
    return try pushFolder(
        PushRequest(
            directory: options.directory, repoID: options.repoID, revision: options.revision,
            isPrivate: options.isPrivate, message: options.message),
        configuration: configuration, progress: progress)
}

/// Whether `text` is a Hub repo id (ORG/NAME with the Hub's characters).
public func isHubRepoID(_ text: String) -> Bool { ModelReference.isRepoID(text) }

public enum PushUsageError: UserFacingError, Equatable {
    case badRepoID(String)
    case offline

    public var message: String {
        switch self {
        case .badRepoID(let id): "'\(id)' is not a Hub repo id"
        case .offline: "HF_HUB_OFFLINE is set: pushing needs the Hub"
        }
    }

    public var hint: String? {
        switch self {
        case .badRepoID: "name it ORG/NAME, for example my-org/Phi-4-mini-instruct-4bit"
        case .offline: "unset HF_HUB_OFFLINE to push"
        }
    }

    public var exitCode: ExitCode { .usage }
}
