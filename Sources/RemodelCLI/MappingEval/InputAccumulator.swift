/// Collects the lines of REPL inputs: a line ending with `\` continues on the next line,
/// and so does input with an unclosed `(`, `[` or `{` or an unterminated quote. A line
/// that starts with a command (`:load …`) outside a quote ends a pending input first, so
/// that one unbalanced line does not swallow the rest of a script.
///
///     var input = InputAccumulator()
///     input.add("SUBQUERY(books, $b,")    // []: more is needed
///     input.add("  $b.price > 10)")       // one input, "SUBQUERY(books, $b,\n  $b.price > 10)"
public struct InputAccumulator: Sendable {
    /// One complete input.
    public struct Input: Hashable, Sendable {
        /// The lines joined with `\n` (continuation backslashes removed), so that error
        /// positions keep their lines.
        public var text: String
        /// What history should keep: the lines joined with spaces, so that recalling it
        /// gives one editable line (the language reads line breaks as spaces), unless a
        /// line break is part of a string.
        public var historyEntry: String

        public init(text: String, historyEntry: String) {
            self.text = text
            self.historyEntry = historyEntry
        }
    }

    private var lines: [String] = []
    /// True when a line break fell inside a string literal, where it is part of the string.
    private var brokeInsideQuote = false

    public init() {}

    /// True when no line is waiting for its continuation.
    public var isEmpty: Bool { lines.isEmpty }

    /// Adds a line; returns the inputs it completes (none while more lines are needed; two
    /// when a command line ends an incomplete input).
    public mutating func add(_ line: String) -> [Input] {
        var completed: [Input] = []
        if !lines.isEmpty, Self.startsCommand(line), !Self.scan(lines.joined(separator: "\n")).inQuote {
            completed.append(finish()!)
        }
        var line = line
        var continued = false
        if Self.allowsContinuation(lines.first ?? line) {
            let trimmed = line.trimmingTrailingWhitespace
            if trimmed.hasSuffix("\\") {
                line = String(trimmed.dropLast())
                continued = true
            }
        }
        lines.append(line)
        if Self.allowsContinuation(lines[0]) {
            let state = Self.scan(lines.joined(separator: "\n"))
            if continued || state.depth > 0 || state.inQuote {
                if state.inQuote { brokeInsideQuote = true }
                return completed
            }
        }
        completed.append(finish()!)
        return completed
    }

    /// The input collected so far, even if incomplete (at the end of the input); nil when
    /// there is none. Starts afresh.
    public mutating func finish() -> Input? {
        guard !lines.isEmpty else { return nil }
        let text = lines.joined(separator: "\n")
        let history =
            lines.count == 1 || brokeInsideQuote
            ? text
            : lines.map(\.trimmingWhitespace).filter { !$0.isEmpty }.joined(separator: " ")
        discard()
        return Input(text: text, historyEntry: history)
    }

    /// Forgets the lines collected so far (Ctrl-C at the continuation prompt).
    public mutating func discard() {
        lines = []
        brokeInsideQuote = false
    }

    /// Whether `line` starts with a command: `:` and a letter.
    static func startsCommand(_ line: String) -> Bool {
        let trimmed = line.drop(while: { $0 == " " || $0 == "\t" })
        return trimmed.first == ":" && trimmed.dropFirst().first?.isLetter == true
    }

    /// Commands whose argument is an expression or JSON continue like expressions; the
    /// others (`:load`, `:quit`, …) take one line, so a file named `Ada's.json` loads.
    static func allowsContinuation(_ text: String) -> Bool {
        let trimmed = text.drop(while: { $0 == " " || $0 == "\t" })
        guard trimmed.hasPrefix(":") else { return true }
        let name = trimmed.prefix(while: { !$0.isWhitespace })
        return ["let", "self", "args", "print", "ast", "type", "time"].contains(String(name.dropFirst()))
    }

    /// The bracket depth at the end of `text` and whether a quote is open there.
    static func scan(_ text: String) -> (depth: Int, inQuote: Bool) {
        var depth = 0
        var quote: Character?
        var escaped = false
        for character in text {
            if let open = quote {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == open {
                    quote = nil
                }
                continue
            }
            switch character {
            case "'", "\"": quote = character
            case "(", "[", "{": depth += 1
            case ")", "]", "}": depth -= 1
            default: break
            }
        }
        return (depth, quote != nil)
    }
}

extension String {
    var trimmingTrailingWhitespace: String {
        var s = Substring(self)
        while let last = s.last, last == " " || last == "\t" || last == "\r" { s = s.dropLast() }
        return String(s)
    }

    var trimmingWhitespace: String {
        var s = Substring(self)
        while let first = s.first, first.isWhitespace { s = s.dropFirst() }
        while let last = s.last, last.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}
