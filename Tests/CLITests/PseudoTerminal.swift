import Foundation
import Testing

#if os(Linux)
    /// Runs phikit on a pseudo-terminal, as a user at a terminal would: the child is a session
    /// leader whose controlling terminal is the pty's slave, so Ctrl-C typed on the master
    /// becomes SIGINT when the child's terminal settings say so, and plain bytes otherwise.
    final class PseudoTerminal {
        let master: Int32
        let pid: pid_t
        private(set) var output: [UInt8] = []
        /// How much of `text` (UTF-8 bytes) earlier `waitFor` calls have consumed.
        private var consumed = 0
        private var status: Int32?

        // Not exported by Glibc's module map.
        private static let unlockPTY: UInt = 0x4004_5431  // TIOCSPTLCK
        private static let ptyNumber: UInt = 0x8004_5430  // TIOCGPTN
        private static let spawnSetSID: Int16 = 0x80  // POSIX_SPAWN_SETSID

        init(
            _ arguments: [String], columns: Int = 80, environment extra: [String: String] = [:]
        ) throws {
            let binary = try #require(Phikit.url)
            master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
            try #require(master >= 0)
            var unlock: Int32 = 0
            var number: UInt32 = 0
            try #require(ioctl(master, Self.unlockPTY, &unlock) == 0)
            try #require(ioctl(master, Self.ptyNumber, &number) == 0)
            var size = winsize(ws_row: 24, ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
            _ = ioctl(master, UInt(TIOCSWINSZ), &size)

            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            posix_spawnattr_setflags(&attributes, Self.spawnSetSID | Int16(POSIX_SPAWN_SETSIGMASK))
            var none = sigset_t()
            sigemptyset(&none)
            posix_spawnattr_setsigmask(&attributes, &none)
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            // Opened by the new session leader: the slave becomes its controlling terminal.
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/pts/\(number)", O_RDWR, 0)
            posix_spawn_file_actions_adddup2(&actions, 0, 1)
            posix_spawn_file_actions_adddup2(&actions, 0, 2)
            posix_spawn_file_actions_addclose(&actions, master)

            var environment = ProcessInfo.processInfo.environment
            environment["TERM"] = "xterm"
            environment["NO_COLOR"] = "1"
            environment.merge(extra) { $1 }
            let argv = ([binary.path] + arguments).map { strdup($0) } + [nil]
            let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { (argv + envp).forEach { free($0) } }
            var child: pid_t = 0
            let spawned = posix_spawn(&child, binary.path, &actions, &attributes, argv, envp)
            try #require(spawned == 0, "posix_spawn: \(spawned)")
            pid = child
        }

        deinit {
            if status == nil {
                kill(pid, SIGKILL)
                var ignored: Int32 = 0
                waitpid(pid, &ignored, 0)
            }
            close(master)
        }

        /// Everything printed so far, escape sequences removed.
        var text: String { Self.plain(output) }

        func type(_ text: String) {
            var bytes = Array(text.utf8)
            _ = write(master, &bytes, bytes.count)
        }

        /// Reads until `needle` appears after what earlier waits consumed (then consumes up to
        /// it); false after `timeout` seconds or when the child has exited without printing it.
        @discardableResult
        func waitFor(_ needle: String, timeout: Double = 60) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                let all = text
                let start = all.utf8.index(all.startIndex, offsetBy: min(consumed, all.utf8.count))
                if let range = all[start...].range(of: needle) {
                    consumed = all.utf8.distance(from: all.startIndex, to: range.upperBound)
                    return true
                }
                if Date() >= deadline || !readMore(until: deadline) { return false }
            }
        }

        /// Reads what arrives for `seconds`.
        func pump(_ seconds: Double) {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline && readMore(until: deadline) {}
        }

        /// Waits for the child to exit (reading what it prints); its exit code, or 128 + the
        /// signal that ended it, or nil after `timeout`.
        func exitStatus(timeout: Double = 60) -> Int32? {
            let deadline = Date().addingTimeInterval(timeout)
            while status == nil && Date() < deadline {
                var raw: Int32 = 0
                let done = waitpid(pid, &raw, WNOHANG)
                if done == pid {
                    let signal = raw & 0x7F
                    status = signal == 0 ? (raw >> 8) & 0xFF : 128 + signal
                    drain()
                    break
                }
                _ = readMore(until: Date().addingTimeInterval(0.05))
            }
            return status
        }

        /// Reads what the exited child left in the pty: its last line may still be buffered
        /// when waitpid reaps it (seen in CI: "nothing removed" missing after exit 0).
        private func drain() {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
                guard poll(&descriptor, 1, 100) > 0 else { return }
                let count = read(master, &buffer, buffer.count)
                guard count > 0 else { return }  // EIO: nothing left
                output.append(contentsOf: buffer[..<count])
            }
        }

        /// The pty's settings as the child left them (master and slave share them).
        func settings() -> termios {
            var t = termios()
            tcgetattr(master, &t)
            return t
        }

        private func readMore(until deadline: Date) -> Bool {
            var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            let wait = Int32(max(1, min(200, deadline.timeIntervalSinceNow * 1000)))
            guard poll(&descriptor, 1, wait) > 0 else { return true }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = read(master, &buffer, buffer.count)
            guard count > 0 else { return false }  // EIO: the child closed the terminal
            output.append(contentsOf: buffer[..<count])
            return true
        }

        /// Output without CSI sequences and carriage returns: the text as the user reads it.
        static func plain(_ bytes: [UInt8]) -> String {
            var out: [UInt8] = []
            var i = 0
            while i < bytes.count {
                if bytes[i] == 0x1B, i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "[") {
                    i += 2
                    while i < bytes.count && !(0x40...0x7E).contains(bytes[i]) { i += 1 }
                    i += 1
                } else {
                    if bytes[i] != 0x0D { out.append(bytes[i]) }
                    i += 1
                }
            }
            return String(decoding: out, as: UTF8.self)
        }
    }
#endif
