import PhiFormats

/// What can stop a push. The Hub's own failures (`HubError`) keep their messages; the hints
/// speak of pushing again, which resumes: objects the Hub already holds are not sent twice.
public enum PushError: UserFacingError, Equatable {
    case hub(HubError)
    /// Writing needs a token; phikit asks before sending anything.
    case needsToken(repoID: String)
    case notADirectory(path: String)
    case emptyFolder(path: String)
    case changedDuringPush(path: String)
    /// The branch moved twice while phikit was committing: another writer is busy there.
    case conflict(repoID: String, revision: String)
    /// The Hub refused one file (its LFS batch answer named an error for that object).
    case rejected(path: String, detail: String)
    case local(FileError)

    public var message: String {
        switch self {
        case .hub(let error): error.message
        case .needsToken(let repo): "pushing to '\(repo)' needs a Hub token with write access"
        case .notADirectory(let path): "\(path) is not a directory"
        case .emptyFolder(let path): "\(path) holds no file to push"
        case .changedDuringPush(let path): "\(path) changed while phikit was reading it"
        case .conflict(let repo, let revision):
            "'\(repo)' at \(revision) kept changing while phikit committed (another writer)"
        case .rejected(let path, let detail): "the Hub refused \(path): \(detail)"
        case .local(let error): error.message
        }
    }

    public var hint: String? {
        switch self {
        case .hub(.network), .hub(.serverError), .hub(.rateLimited):
            "push again later: files the Hub already holds are not sent again"
        case .hub(.repoNotFound), .hub(.gated):
            "check the name, and that the token can write to that namespace"
        case .hub(let error): error.hint
        case .needsToken: "set HF_TOKEN, pass --token, or log in with `hf auth login`"
        case .changedDuringPush: "wait until whatever writes the folder is done, then push again"
        case .conflict: "push again once the other writer is done"
        case .local(let error): error.hint
        default: nil
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .hub(let error): error.exitCode
        case .needsToken: .usage
        case .notADirectory, .emptyFolder: .noInput
        case .changedDuringPush, .local: .ioError
        case .conflict, .rejected: .unavailable
        }
    }
}
