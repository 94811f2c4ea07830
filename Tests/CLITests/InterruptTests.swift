import Foundation
import Testing

#if os(Linux)
    @Suite("Ctrl-C")
    struct InterruptTests {
        /// `inspect` on a FIFO blocks in open(2) until a writer appears, which gives us a phikit
        /// that is busy long enough to interrupt.
        @Test func sigintExits130() throws {
            let binary = try #require(Phikit.url)
            let dir = try TinyModel.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let fifo = dir.appendingPathComponent("model.safetensors").path
            #expect(mkfifo(fifo, 0o600) == 0)

            let process = Process()
            process.executableURL = binary
            process.arguments = ["inspect", fifo]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Interrupt only once the handler is installed (SigCgt has bit 2 = SIGINT set);
            // before that, the default action would kill it with a signal instead.
            let deadline = Date().addingTimeInterval(30)
            while !catchesSIGINT(process.processIdentifier) && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.02)
            }
            Thread.sleep(forTimeInterval: 0.1)  // let it reach open(2)
            process.interrupt()
            // Never hang the test run: if SIGINT did not work, SIGKILL (which cannot be blocked).
            let exitDeadline = Date().addingTimeInterval(30)
            while process.isRunning && Date() < exitDeadline { Thread.sleep(forTimeInterval: 0.02) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                Issue.record("phikit ignored SIGINT")
            }
            process.waitUntilExit()
            #expect(process.terminationReason == .exit)
            #expect(process.terminationStatus == 130)
        }

        private func catchesSIGINT(_ pid: Int32) -> Bool {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
                let mask = UInt64(
                    line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16)
            else { return false }
            return mask & (1 << (SIGINT - 1)) != 0
        }
    }
#endif
