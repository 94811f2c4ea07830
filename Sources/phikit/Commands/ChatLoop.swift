import Foundation
import PhiEngine
import PhiFormats
import PhiKit

/// The conversation at the prompt: read a message or a command, answer, repeat. On a
/// terminal it owns the line editor and the terminal modes; on a pipe it reads lines and
/// prints plain answers, each followed by a blank line.
final class ChatLoop {
    let chat: ChatSession
    let interactive: Bool
    var showStats: Bool
    /// `--json-schema` & co. or `/format`: every answer follows it until `/format off`.
    var answerFormat: StructuredOutput?
    private let editor = LineEditor()
    private let color: Bool
    /// On a pipe, the exit code of the last refused message or command (scripts should know).
    private var failure: ExitCode?
    /// stdout could not be written (a full disk, a closed pipe): the chat ends with it, as
    /// `run` does (StandardOutput: exit 74, quietly for a closed pipe).
    private var outputFailure: (any Error)?

    /// The file `--load` read, said once at the start.
    private let loaded: String?

    init(
        chat: ChatSession, interactive: Bool, stats: Bool, loaded: String? = nil,
        answerFormat: StructuredOutput? = nil
    ) {
        self.chat = chat
        self.answerFormat = answerFormat
        self.loaded = loaded
        self.interactive = interactive
        showStats = stats
        color = interactive && Self.colorAllowed
    }

    /// no-color.org and `TERM=dumb`, as for diagnostics.
    private static var colorAllowed: Bool {
        if let noColor = ProcessInfo.processInfo.environment["NO_COLOR"], !noColor.isEmpty {
            return false
        }
        return ProcessInfo.processInfo.environment["TERM"] != "dumb"
    }

    func run() throws {
        if interactive {
            guard TerminalMode.prepare() else { throw ChatTerminalError.noTerminal }
            TerminalMode.enterAnswer()
        }
        defer { TerminalMode.restore() }
        if interactive {
            note("Send a message (/help for the commands, Ctrl-D or /bye to leave)")
        }
        if let loaded {
            note("(loaded \(chat.history.messages.count) messages from \(loaded))")
        }
        let reader = MessageReader { [self] continuation in readLine(continuation) }
        while true {
            // The line editor reads keys raw (Ctrl-C is a key), but between two reads — a note
            // printed, a command run — Ctrl-C is a signal: a job of the conversation's own
            // takes it there instead of ending the chat (an answer runs its own job inside).
            let leave =
                interactive
                ? try InterruptibleJob.run(.answer) { _ in try handle(reader.next()) }
                : try handle(reader.next())
            if leave { break }
        }
        if let failure { throw ChatFailed(exitCode: failure) }
    }

    /// Acts on what the user sent; true when the chat should end.
    private func handle(_ input: ChatInput) throws -> Bool {
        switch input {
        case .end: return true
        case .interrupt(let empty):
            // Leaving on Ctrl-C would lose an unsaved conversation to a key pressed once
            // too often (the first stopped an answer or cleared the line): say how to
            // leave instead, as ollama does.
            if empty { note("Use Ctrl + d or /bye to exit.") }
        case .message(let text):
            answer(text)
            if let outputFailure { throw outputFailure }
        case .command(let line):
            do {
                if try perform(SlashCommand.parse(line)) == .leave { return true }
            } catch let error as any UserFacingError {
                report(error)
            }
        }
        return false
    }

    private func readLine(_ continuation: Bool) -> LineEditor.Result {
        guard interactive else {
            guard let line = Swift.readLine(strippingNewline: true) else { return .endOfInput }
            return .line(line)
        }
        let prompt = continuation ? "... " : ">>> "
        let shown = color ? "\u{1B}[1;32m\(prompt)\u{1B}[0m" : prompt
        return editor.readLine(prompt: shown, promptWidth: prompt.count)
    }

    // MARK: Answers

    private func answer(_ text: String) {
        var printed = ""
        do {
            let constraint = answerFormat?.makeConstraint()
            // max_tokens may have changed since the format was set (/set).
            try constraint?.checkRoom(maxTokens: chat.parameters.maxTokens, naming: "--max-tokens")
            let reply = try InterruptibleJob.run(.answer) { cancel in
                try chat.send(
                    text, constraint: constraint, cancel: cancel,
                    trimmed: { dropped in
                        self.note(
                            "(dropped the \(dropped) oldest messages to fit the context of "
                                + "\(self.chat.maxContext) tokens)")
                    }
                ) { piece in
                    guard self.outputFailure == nil else { return }
                    printed += piece
                    // Nobody sees the rest of an answer stdout cannot take: stop generating.
                    if !write(piece, terminator: "") { cancel.cancel() }
                }
            }
            guard outputFailure == nil else { return }
            guard write(printed.hasSuffix("\n") || printed.isEmpty ? "" : "\n") else { return }
            if reply.isCut { note("(stopped: the answer so far stays in the conversation)") }
            if showStats { note(Self.statistics(reply)) }
        } catch let error as any UserFacingError {
            if !printed.isEmpty, outputFailure == nil { _ = write("") }
            report(error)
        } catch {
            report(ChatInternalError(detail: "\(error)"))
        }
    }

    /// One line: `prompt 1,512 tokens (12 new, 1,500 reused), first token 0.123 s,
    /// 45 tokens at 12.3 tok/s`, and `, 20 of 24 drafted accepted` when drafts were made.
    static func statistics(_ r: ChatReply) -> String {
        let g = r.generation
        return "prompt \(r.promptTokens) tokens (\(r.newPromptTokens) new, \(r.reusedTokens) "
            + "reused), first token \(Format.fixed(g.timeToFirstToken, decimals: 3)) s, "
            + "\(g.tokens.count) tokens at \(Format.fixed(g.generationTokensPerSecond, decimals: 1)) "
            + "tok/s"
            + (g.draftedTokens > 0
                ? ", \(g.acceptedDraftTokens) of \(g.draftedTokens) drafted accepted" : "")
    }

    /// Writes answer text to stdout; false (and `outputFailure` set) when it cannot.
    private func write(_ text: String, terminator: String = "\n") -> Bool {
        do {
            try StandardOutput.print(text, terminator: terminator)
            return true
        } catch {
            outputFailure = error
            return false
        }
    }

    // MARK: Messages to the user

    /// A remark that is not part of the answer: stderr, dim on a terminal.
    func note(_ text: String) {
        fflush(nil)
        if color {
            Diagnostics.writeStderr("\u{1B}[2m\(text)\u{1B}[0m\n")
        } else {
            Diagnostics.writeStderr(text + "\n")
        }
    }

    func report(_ error: any UserFacingError) {
        Diagnostics.error(error.message, hint: error.hint)
        if !interactive { failure = error.exitCode }
    }
}

/// `chat` needs a terminal it can switch to raw mode (stdin and stdout are ttys, yet the
/// settings cannot be read: a broken pty).
enum ChatTerminalError: UserFacingError {
    case noTerminal
    var message: String { "cannot read the terminal's settings" }
    var hint: String? { "pipe the messages in instead: echo 'Hi' | phikit chat MODEL" }
    var exitCode: ExitCode { .ioError }
}

/// On a pipe, a message or command was refused: the chat went on, and ends with its code.
struct ChatFailed: UserFacingError {
    var exitCode: ExitCode
    var message: String { "some messages or commands were refused (see above)" }
}

struct ChatInternalError: UserFacingError {
    var detail: String
    var message: String { "internal error: \(detail)" }
    var hint: String? { "this is a bug in phikit; please report it with the command you ran" }
    var exitCode: ExitCode { .software }
}
