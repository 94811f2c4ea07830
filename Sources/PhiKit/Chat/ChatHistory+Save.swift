#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import PhiFormats

extension ChatHistory {
    /// Writes `json()` to `path` atomically (a crash leaves the previous file), creating the
    /// file or replacing a regular one. The atomic rename would replace whatever is at `path`
    /// (a device such as /dev/full, a FIFO, a symlink), so anything but a regular file is
    /// refused, naming what is there; a regular file that is not a conversation (phikit's own
    /// or any `[{"role", "content"}]` file) is kept unless `force` says to replace it.
    public func save(to path: String, force: Bool = false) throws {
        try ChatSaveTarget.check(path, force: force)
        try AtomicFile.write(Array(json().utf8), to: path)
    }
}

/// What is at the path `/save` was given, and whether replacing it could lose something.
enum ChatSaveTarget {
    static func check(_ path: String, force: Bool) throws(ChatSaveError) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }  // a new file; a missing folder fails in the write
            throw .cannotInspect(path: path, errno: errno)
        }
        if let kind = kind(info.st_mode) { throw .notRegularFile(path: path, kind: kind) }
        // An empty file holds nothing to lose (`touch chat.json` first is common).
        guard !force, info.st_size > 0 else { return }
        do {
            _ = try ChatHistory.load(from: path)
        } catch {
            throw .notAConversation(path: path)
        }
    }

    /// "a symbolic link", "a directory"…; nil for a regular file.
    private static func kind(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFLNK: "a symbolic link"
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }
}

/// `/save` would replace something it must not.
public enum ChatSaveError: UserFacingError, Equatable {
    case notRegularFile(path: String, kind: String)
    case notAConversation(path: String)
    case cannotInspect(path: String, errno: Int32)

    public var message: String {
        switch self {
        case .notRegularFile(let path, let kind):
            "'\(path)' is \(kind); the conversation is saved only to a regular file"
        case .notAConversation(let path):
            "'\(path)' exists and is not a saved conversation; it was left as it is"
        case .cannotInspect(let path, let errno):
            "cannot save to '\(path)': \(String(cString: strerror(errno)))"
        }
    }

    public var hint: String? {
        switch self {
        case .notRegularFile: "give the name of a new file, or of a conversation saved before"
        case .notAConversation: "/save --force \(pathForHint) replaces it"
        case .cannotInspect: nil
        }
    }

    private var pathForHint: String {
        switch self {
        case .notRegularFile(let path, _), .notAConversation(let path),
            .cannotInspect(let path, _):
            path
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .notRegularFile, .notAConversation: .usage
        case .cannotInspect: .ioError
        }
    }
}
