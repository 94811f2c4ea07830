import Foundation
import Testing

#if os(Linux)
    extension Phikit {
        /// Sends Ctrl-C (SIGINT) and waits for the process to end. A phikit that ignores it is
        /// killed with SIGKILL after 30 s and recorded as an issue, so a broken handler fails
        /// the test instead of hanging the whole run.
        static func interruptAndWait(
            _ process: Process, doing job: String, signal: Int32 = SIGINT
        ) {
            kill(process.processIdentifier, signal)
            let deadline = Date().addingTimeInterval(30)
            while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                Issue.record("phikit \(job) ignored signal \(signal)")
            }
            process.waitUntilExit()
        }

        /// Runs phikit with `arguments`, which write the directory `work/out`; once its
        /// temporary `out.incomplete-*` appears (the job has started writing), sends `signal`
        /// and waits. Returns the exit status and stderr.
        static func interruptOnceWriting(
            _ arguments: [String], work: URL, doing job: String, signal: Int32 = SIGINT
        ) throws -> (status: Int32, stderr: String) {
            let process = Process()
            process.executableURL = url
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            let stderr = Pipe()
            process.standardError = stderr
            try process.run()
            let deadline = Date().addingTimeInterval(30)
            func started() -> Bool {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: work.path)) ?? []
                return names.contains { $0.hasPrefix("out.incomplete-") }
            }
            while !started() && process.isRunning && Date() < deadline { usleep(500) }
            interruptAndWait(process, doing: job, signal: signal)
            let message = String(
                decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            return (process.terminationStatus, message)
        }
    }
#endif
