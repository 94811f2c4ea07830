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
    }
#endif
