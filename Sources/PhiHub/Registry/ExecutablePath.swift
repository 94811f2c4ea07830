import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The file the running process was started from, with symlinks resolved. The shipped
/// registry and the bundled model are found beside it (`<prefix>/bin/phikit` →
/// `<prefix>/share/phikit/`), so this must not be `argv[0]`: a binary run by name from PATH
/// gets `argv[0] == "phikit"`, which names nothing, and a shell or launcher may pass any text.
public enum ExecutablePath {
    public static let current: String = {
        #if os(Linux)
            // The kernel's own record of the executable.
            if let path = try? FileManager.default.destinationOfSymbolicLink(
                atPath: "/proc/self/exe")
            {
                return path
            }
        #elseif canImport(Darwin)
            var size: UInt32 = 0
            _ = _NSGetExecutablePath(nil, &size)
            var buffer = [CChar](repeating: 0, count: Int(size) + 1)
            if _NSGetExecutablePath(&buffer, &size) == 0 {
                let path = String(cString: buffer)
                return URL(fileURLWithPath: path).resolvingSymlinksInPath().path
            }
        #endif
        // Elsewhere, or with /proc not mounted: the best that is left.
        let first = CommandLine.arguments.first ?? ""
        return URL(fileURLWithPath: first).resolvingSymlinksInPath().path
    }()
}
