import Foundation
import Testing

#if os(Linux)
    @Suite("Ctrl-C")
    struct InterruptTests {
        /// `run -p -` waits for its prompt on a stdin nobody writes to, which gives us a phikit
        /// that is busy long enough to interrupt. (A FIFO in place of a model file used to
        /// serve; it is refused at once now.)
        @Test func sigintExits130() throws {
            let binary = try #require(Phikit.url)
            let stdin = Pipe()
            defer { try? stdin.fileHandleForWriting.close() }

            let process = Process()
            process.executableURL = binary
            process.arguments = ["run", "stories-260k", "-p", "-"]
            process.standardInput = stdin
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Interrupt only once the handler is installed (SigCgt has bit 2 = SIGINT set);
            // before that, the default action would kill it with a signal instead.
            let deadline = Date().addingTimeInterval(30)
            while !catchesSIGINT(process.processIdentifier) && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.02)
            }
            Thread.sleep(forTimeInterval: 0.3)  // let it reach read(2)
            Phikit.interruptAndWait(process, doing: "run")
            #expect(process.terminationReason == .exit)
            #expect(process.terminationStatus == 130)
        }

        /// Ctrl-C (or SIGTERM, as `kill` and service managers send) in the middle of a convert:
        /// exit 130, and neither the output nor its temporary `.incomplete-*` directory is left.
        @Test(arguments: [SIGINT, SIGTERM])
        func interruptedConvertLeavesNothing(signal: Int32) throws {
            let source = try TinyModel.mediumPhi3Directory()
            let work = try TinyModel.temporaryDirectory()
            defer {
                try? FileManager.default.removeItem(at: source)
                try? FileManager.default.removeItem(at: work)
            }
            let output = work.appendingPathComponent("out")
            let (status, message) = try Phikit.interruptOnceWriting(
                ["convert", source.path, "-o", output.path, "-q"], work: work, doing: "convert",
                signal: signal)
            #expect(status == 130, "stderr: \(message)")
            #expect(message.contains("error: interrupted"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: work.path) == [])
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
