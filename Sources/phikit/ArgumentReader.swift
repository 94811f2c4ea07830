import PhiFormats

/// A bad command line: unknown flag, missing value, bad number, missing or extra argument.
/// The dispatcher prints `error: …`, the hint, then the command's usage, and exits 64.
struct UsageError: UserFacingError {
    var message: String
    var hint: String?
    var exitCode: ExitCode { .usage }

    init(_ message: String, hint: String? = nil) {
        self.message = message
        self.hint = hint
    }

    /// Throws "--port must be between 0 and 65535" unless `option`'s `value` (nil: not given)
    /// lies in `range`.
    static func check(
        _ option: String, _ value: Int?, in range: ClosedRange<Int>
    ) throws(UsageError) {
        if let value, !range.contains(value) {
            throw UsageError(
                "\(option) must be between \(range.lowerBound) and \(range.upperBound)")
        }
    }
}

/// Hand-written argument reader (no swift-argument-parser: the package has no dependencies).
///
/// A command pulls what it understands out of the reader in its `init`, then calls `finish()`,
/// which turns everything left over into a `UsageError`:
/// ```
/// json = args.flag("--json")
/// bits = try args.option("--bits", as: Int.self) ?? 4
/// includes = try args.options("--include")
/// path = try args.positional("path")     // options first, then positionals
/// try args.finish()
/// ```
/// Accepted spellings: `--flag`, `--opt value`, `--opt=value`, `-o value`, `-q`, repeated
/// options, and `--`, after which every token is a positional. A value may itself start with
/// `-` only if it is a number (`--temp -0.5`) or `-` (stdin), or the option is free text
/// (`textOption`: prompts, stop strings); otherwise write `--opt=-x`.
///
/// Every name a command asks about is remembered, so an unknown `--group-sise` gets the hint
/// "did you mean '--group-size'?" without a separate list of valid flags.
struct ArgumentReader {
    private let tokens: [String]
    private var consumed: [Bool]
    /// Index of the first token after which nothing is an option (`--`, or the end).
    private let optionsEnd: Int
    private var flagNames: Set<String> = ["--help", "-h"]
    private var optionNames: Set<String> = []
    /// Options must be read before positionals: until every option has claimed its value,
    /// a bare word might be `--out`'s DIR rather than the model.
    private var readingPositionals = false

    init(_ arguments: some Sequence<String>) {
        tokens = Array(arguments)
        consumed = Array(repeating: false, count: tokens.count)
        if let dashDash = tokens.firstIndex(of: "--") {
            optionsEnd = dashDash
            consumed[dashDash] = true
        } else {
            optionsEnd = tokens.count
        }
    }

    /// True when `--help` or `-h` appears before any `--`; the dispatcher shows help instead
    /// of parsing (so `phikit convert --help` works even without the required arguments).
    var wantsHelp: Bool {
        tokens[..<optionsEnd].contains { $0 == "--help" || $0 == "-h" }
    }

    // MARK: Flags and options

    /// Whether any of `names` (`"--quantize"`, `"-q"`) is present. Repeats are allowed;
    /// `--json=yes` is left for finish() to reject ("does not take a value").
    mutating func flag(_ names: String...) -> Bool {
        precondition(!readingPositionals, "read flags before positionals")
        flagNames.formUnion(names)
        var found = false
        for i in 0..<optionsEnd where !consumed[i] && names.contains(tokens[i]) {
            consumed[i] = true
            found = true
        }
        return found
    }

    /// Every value given for the option, in order (`--include A --include B` → `[A, B]`).
    mutating func options(_ names: String...) throws(UsageError) -> [String] {
        try values(names)
    }

    /// The option's value, or nil when absent. When repeated, the last one wins (as in git).
    mutating func option(_ names: String...) throws(UsageError) -> String? {
        try values(names).last
    }

    /// A free-text option (`-p`, `--system`): its value is the next token whatever it looks
    /// like, so `-p "-5 degrees?"` and `--stop "--"` work as in llama.cpp. Last one wins.
    /// Read these before other options: `-p "-m 3"` must not lend its value to `-m`.
    mutating func textOption(_ names: String...) throws(UsageError) -> String? {
        try values(names, anyValue: true).last
    }

    /// Every value of a repeatable free-text option (`--stop A --stop -B`).
    mutating func textOptions(_ names: String...) throws(UsageError) -> [String] {
        try values(names, anyValue: true)
    }

    /// The option's value converted to `T`; a value that does not parse is a usage error
    /// ("invalid value 'four' for '--bits': expected an integer").
    mutating func option<T: ArgumentValue>(
        _ names: String..., as type: T.Type
    ) throws(UsageError)
        -> T?
    {
        try option(names, as: type)
    }

    /// As above, the names as a list (a table of flags).
    mutating func option<T: ArgumentValue>(
        _ names: [String], as type: T.Type
    ) throws(UsageError) -> T? {
        guard let raw = try values(names).last else { return nil }
        guard let value = T(argument: raw) else {
            throw UsageError("invalid value '\(raw)' for '\(names[0])': expected \(T.expected)")
        }
        return value
    }

    private mutating func values(
        _ names: [String], anyValue: Bool = false
    ) throws(UsageError) -> [String] {
        precondition(!readingPositionals, "read options before positionals")
        optionNames.formUnion(names)
        var found: [String] = []
        var i = 0
        while i < optionsEnd {
            defer { i += 1 }
            guard !consumed[i] else { continue }
            let token = tokens[i]
            if names.contains(token) {
                consumed[i] = true
                guard i + 1 < optionsEnd, !consumed[i + 1],
                    anyValue || Self.canBeValue(tokens[i + 1])
                else {
                    throw UsageError("missing value for option '\(token)'")
                }
                consumed[i + 1] = true
                found.append(tokens[i + 1])
                i += 1
            } else if token.hasPrefix("--"), let eq = token.firstIndex(of: "="),
                names.contains(String(token[..<eq]))
            {
                consumed[i] = true
                found.append(String(token[token.index(after: eq)...]))
            }
        }
        return found
    }

    /// A following token is taken as a value unless it looks like another option.
    private static func canBeValue(_ token: String) -> Bool {
        !token.hasPrefix("-") || token == "-" || Double(token) != nil
    }

    /// Every flag and option name the command asked about: `completions` lists them.
    var knownFlags: Set<String> { flagNames }
    var knownOptions: Set<String> { optionNames }

    // MARK: Positionals

    /// The next positional argument; `label` names it in the error ("missing argument <path>").
    mutating func positional(_ label: String) throws(UsageError) -> String {
        guard let value = optionalPositional() else {
            try finish()  // a mistyped option explains more than "missing argument"
            throw UsageError("missing argument <\(label)>")
        }
        return value
    }

    /// The next positional argument, if any.
    mutating func optionalPositional() -> String? {
        readingPositionals = true
        for i in tokens.indices where !consumed[i] {
            // Before `--`, dash tokens are (unknown) options; finish() reports them.
            if i < optionsEnd && Self.looksLikeOption(tokens[i]) { continue }
            consumed[i] = true
            return tokens[i]
        }
        return nil
    }

    /// All remaining positional arguments (`phikit rm A B C`).
    mutating func remainingPositionals() -> [String] {
        var all: [String] = []
        while let next = optionalPositional() { all.append(next) }
        return all
    }

    private static func looksLikeOption(_ token: String) -> Bool {
        token.hasPrefix("-") && token != "-" && Double(token) == nil
    }

    // MARK: Leftovers

    /// Rejects whatever the command did not read: unknown options first (with a "did you
    /// mean" hint), then extra positionals.
    func finish() throws(UsageError) {
        for i in 0..<optionsEnd where !consumed[i] && Self.looksLikeOption(tokens[i]) {
            let token = tokens[i]
            let name = token.hasPrefix("--") ? String(token.prefix { $0 != "=" }) : token
            if flagNames.contains(name) {
                throw UsageError("option '\(name)' does not take a value")
            }
            let known = flagNames.union(optionNames).sorted()
            let hint = FlagSuggestion.hint(for: name, known: known)
            throw UsageError("unknown option '\(name)'", hint: hint)
        }
        if let i = tokens.indices.first(where: { !consumed[$0] }) {
            throw UsageError("unexpected argument '\(tokens[i])'")
        }
    }
}
