import ExpressionLanguage

/// What one REPL input printed, in order, and how it ended.
public struct EvalOutput: Hashable, Sendable {
    public enum Stream: Hashable, Sendable {
        /// Values and the answers of commands.
        case output
        /// Errors and warnings.
        case diagnostics
    }

    /// One piece of text for one stream; it may span lines and has no final newline.
    public struct Line: Hashable, Sendable {
        public var stream: Stream
        public var text: String

        public init(_ stream: Stream, _ text: String) {
            self.stream = stream
            self.text = text
        }
    }

    public var lines: [Line] = []
    /// ``ExitStatus/failed`` when evaluating failed, ``ExitStatus/badInput`` for invalid
    /// input (a parse error, a bad command, bad JSON): the exit statuses of `mapping-eval`.
    public var status = ExitStatus.success
    /// True after `:quit`.
    public var quit = false

    public init(lines: [Line] = [], status: ExitStatus = .success, quit: Bool = false) {
        self.lines = lines
        self.status = status
        self.quit = quit
    }

    /// What goes to standard output: each line followed by a newline.
    public var output: String { text(of: .output) }
    /// What goes to standard error: each line followed by a newline.
    public var diagnostics: String { text(of: .diagnostics) }

    private func text(of stream: Stream) -> String {
        lines.filter { $0.stream == stream }.map { $0.text + "\n" }.joined()
    }

    mutating func print(_ text: String) { lines.append(Line(.output, text)) }

    mutating func fail(_ text: String, status: ExitStatus) {
        lines.append(Line(.diagnostics, text))
        self.status = max(self.status, status)
    }

    /// A diagnostic that leaves the status as it is (a warning).
    mutating func warn(_ text: String) { lines.append(Line(.diagnostics, text)) }

    static func failure(_ text: String, status: ExitStatus = .badInput) -> EvalOutput {
        var output = EvalOutput()
        output.fail(text, status: status)
        return output
    }
}

/// How `mapping-eval` writes values, types and diagnostics.
public enum EvalFormat {
    /// `3  (integer)`: the value as compact JSON, two spaces, its type in parentheses.
    public static func valueAndType(_ value: Value) -> String {
        "\(value.json.serialized())  (\(value.kind.rawValue))"
    }

    /// Like ``valueAndType(_:)`` with the JSON cut to `limit` characters (`…` marks a cut),
    /// for echoing bindings that may be large.
    static func abbreviated(_ value: Value, limit: Int = 120) -> String {
        var json = value.json.serialized()
        if json.count > limit { json = String(json.prefix(limit - 1)) + "…" }
        return "\(json)  (\(value.kind.rawValue))"
    }

    /// `error: 1:3: expected an expression, near end of input`, then the line of the text
    /// and a caret under the column.
    public static func error(_ error: ExpressionError) -> String {
        error.rendered(label: "error", caret: true)
    }

    /// `warning: 1:14: …`, then the line of the text and a caret.
    public static func warning(_ warning: ParseWarning) -> String {
        ExpressionError(.syntax, warning.message, source: warning.source, range: warning.range)
            .rendered(label: "warning", caret: true)
    }

    /// The exit status for a failure: bad input for parse and compile errors, failed for
    /// evaluation.
    static func status(_ failure: InputEvaluator.Failure) -> ExitStatus {
        failure.phase == .parse ? .badInput : .failed
    }
}
