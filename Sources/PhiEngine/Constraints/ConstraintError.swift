import PhiFormats

/// A schema, regular expression or grammar phikit cannot enforce: invalid, unsupported (the
/// keyword or construct is named: phikit never accepts a constraint and ignores part of it),
/// one that accepts nothing, or one over the compile budget. Usage errors (exit 64, HTTP 400).
public struct ConstraintError: UserFacingError, Equatable {
    public let message: String
    public let hint: String?
    /// The JSON Schema keyword or grammar construct refused, when one is to blame.
    public let unsupported: String?

    init(_ message: String, hint: String? = nil, unsupported: String? = nil) {
        self.message = message
        self.hint = hint
        self.unsupported = unsupported
    }

    public var exitCode: ExitCode { .usage }

    static func unsupportedKeyword(_ keyword: String, at path: String) -> ConstraintError {
        ConstraintError(
            "JSON schema keyword '\(keyword)' at \(path) is not supported",
            hint: "phikit enforces the keywords listed in docs/structured-output.md",
            unsupported: keyword)
    }

    static func tooLarge(_ what: String, limit: Int) -> ConstraintError {
        ConstraintError(
            "the \(what) is too large to enforce (more than \(limit) grammar elements)",
            hint: "simplify it (fewer alternatives, smaller repetition bounds)")
    }
}
