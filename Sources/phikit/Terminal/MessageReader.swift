/// What the user gave the chat next.
enum ChatInput: Equatable {
    case message(String)
    /// A line starting with `/`.
    case command(String)
    /// Ctrl-C at the prompt; `empty` when nothing had been typed.
    case interrupt(empty: Bool)
    case end
}

/// Turns lines into messages, the same way on a terminal and on a pipe: a line is a message,
/// a line starting with `/` a command, and `"""` opens a message of several lines that a
/// line ending in `"""` closes (ollama's convention; text on the opening and closing lines
/// belongs to the message). Empty lines are skipped.
struct MessageReader {
    /// Reads one line; `continuation` is true inside a `"""` block (the editor shows `...`).
    var readLine: (_ continuation: Bool) -> LineEditor.Result

    private static let quotes = "\"\"\""

    func next() -> ChatInput {
        while true {
            switch readLine(false) {
            case .endOfInput: return .end
            case .interrupt(let empty): return .interrupt(empty: empty)
            case .line(let line):
                let trimmed = line.drop { $0 == " " || $0 == "\t" }
                if trimmed.isEmpty { continue }
                if trimmed.hasPrefix(Self.quotes) {
                    guard let message = block(opening: String(trimmed.dropFirst(3))) else {
                        continue  // Ctrl-C inside the block drops it
                    }
                    if message.isEmpty { continue }
                    return .message(message)
                }
                if trimmed.hasPrefix("/") { return .command(String(trimmed)) }
                return .message(line)
            }
        }
    }

    /// The rest of a `"""` block whose first line held `first` after the quotes; nil when
    /// the user pressed Ctrl-C inside it. End of input closes the block.
    private func block(opening first: String) -> String? {
        if first.hasSuffix(Self.quotes) { return String(first.dropLast(3)) }
        var lines = first.isEmpty ? [] : [first]
        while true {
            switch readLine(true) {
            case .endOfInput: return lines.joined(separator: "\n")
            case .interrupt: return nil
            case .line(let line):
                if line.hasSuffix(Self.quotes) {
                    let last = String(line.dropLast(3))
                    if !last.isEmpty { lines.append(last) }
                    return lines.joined(separator: "\n")
                }
                lines.append(line)
            }
        }
    }
}
