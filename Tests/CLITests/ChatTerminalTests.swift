import Foundation
import Testing

#if os(Linux)
    /// `phikit chat` at a terminal (a pseudo-terminal): the line editor's keys, multi-line
    /// input, Ctrl-C during an answer and at the prompt, Ctrl-D, and the terminal's settings
    /// put back on every way out.
    @Suite("phikit chat (terminal)")
    struct ChatTerminalTests {
        static let left = "\u{1B}[D", up = "\u{1B}[A", home = "\u{1B}[H", end = "\u{1B}[F"
        static let delete = "\u{1B}[3~", backspace = "\u{7F}"
        /// A fresh prompt (a redraw of the line being edited is not preceded by a line break).
        static let prompt = "\n>>> "

        static func savedMessages(_ path: String) throws -> [[String: Any]] {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            return try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        }

        /// The terminal is back in the user's cooked mode.
        static func expectCooked(_ t: PseudoTerminal) {
            let lflag = t.settings().c_lflag
            #expect(lflag & tcflag_t(ECHO) != 0 && lflag & tcflag_t(ICANON) != 0)
            #expect(lflag & tcflag_t(ISIG) != 0)
        }

        @Test("editing keys, history, \"\"\" blocks, paste, unknown commands, Ctrl-D")
        func editing() throws {
            let dir = try ChatTinyModel.phi35.directory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let saved = dir.appendingPathComponent("saved.json").path
            let t = try PseudoTerminal(["chat", dir.path, "-m", "3", "--temp", "0"])
            try #require(t.waitFor(Self.prompt), "\(t.text)")
            // Home/End, arrows, Backspace, Ctrl-A/Ctrl-E, over characters of 2 and 4 bytes.
            t.type("wörld🤖" + Self.home + "Hi " + Self.end + Self.left + Self.backspace + "D")
            t.type("\u{01}¡\u{05}!\r")
            try #require(t.waitFor(Self.prompt), "\(t.text)")
            // Up recalls the line; Ctrl-A then Delete removes its first character.
            t.type(Self.up + "\u{01}" + Self.delete + "\r")
            try #require(t.waitFor(Self.prompt), "\(t.text)")
            t.type("\"\"\"\r")
            try #require(t.waitFor("\n... "))
            t.type("line one\r")
            try #require(t.waitFor("\n... "))
            t.type("line two\"\"\"\r")
            try #require(t.waitFor(Self.prompt), "\(t.text)")
            t.type("\u{1B}[200~pasted one\rpasted two\u{1B}[201~\r")
            try #require(t.waitFor(Self.prompt), "\(t.text)")
            t.type("/x\r")
            try #require(t.waitFor("nothing was sent to the model"))
            t.type("/save \(saved)\r")
            try #require(t.waitFor("saved 8 messages"), "\(t.text)")
            t.type("\u{04}")  // Ctrl-D at an empty prompt
            #expect(t.exitStatus() == 0, "\(t.text)")
            Self.expectCooked(t)
            let users = try Self.savedMessages(saved).filter { $0["role"] as? String == "user" }
            #expect(
                users.map { $0["content"] as? String } == [
                    "¡Hi wörlD🤖!", "Hi wörlD🤖!", "line one\nline two", "pasted one\npasted two",
                ])
        }

        @Test("Ctrl-C stops the answer, keeps it marked cut; at an empty prompt it says how to leave")
        func interruptAnswer() throws {
            let dir = try ChatTinyModel.phi35.directory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let saved = dir.appendingPathComponent("saved.json").path
            let t = try PseudoTerminal(
                ["chat", dir.path, "-m", "100000", "--max-kv-size", "50000", "--temp", "0"])
            try #require(t.waitFor(Self.prompt))
            t.type("Hello\r")
            try #require(t.waitFor("Hello\n"))
            // Some of the answer, then Ctrl-C (the pty turns it into SIGINT while answering).
            let started = t.text.utf8.count
            let deadline = Date().addingTimeInterval(30)
            while t.text.utf8.count < started + 40 && Date() < deadline { t.pump(0.05) }
            t.type("\u{03}")
            try #require(t.waitFor("(stopped: the answer so far stays in the conversation)"))
            try #require(t.waitFor(Self.prompt))
            t.type("/save \(saved)\r")
            try #require(t.waitFor("saved 2 messages"))
            // The prompt is drawn once the line editor reads again: a Ctrl-C typed before that
            // raced the terminal's mode switch under load.
            try #require(t.waitFor(Self.prompt))
            // Ctrl-C at an empty prompt does not end the chat (issue 27): it says how to.
            t.type("\u{03}")
            try #require(t.waitFor("Use Ctrl + d or /bye to exit."), "\(t.text)")
            try #require(t.waitFor(Self.prompt))
            t.type("\u{03}")  // and again: still here
            try #require(t.waitFor("Use Ctrl + d or /bye to exit."), "\(t.text)")
            t.type("\u{04}")
            #expect(t.exitStatus() == 0, "\(t.text)")
            Self.expectCooked(t)
            let messages = try Self.savedMessages(saved)
            #expect(messages.last?["cut"] as? Bool == true)
            let answer = try #require(messages.last?["content"] as? String)
            #expect(!answer.isEmpty && t.text.contains(PseudoTerminal.plain(Array(answer.utf8))))
        }

        @Test("SIGTERM at the prompt puts the terminal back before dying")
        func terminateRestores() throws {
            let dir = try ChatTinyModel.phi35.directory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let t = try PseudoTerminal(["chat", dir.path])
            try #require(t.waitFor(Self.prompt))
            let raw = t.settings().c_lflag
            #expect(raw & tcflag_t(ECHO | ICANON | ISIG) == 0, "raw while editing")
            kill(t.pid, SIGTERM)
            #expect(t.exitStatus() == 128 + SIGTERM)
            Self.expectCooked(t)
        }
    }
#endif
