/// Everything that can go wrong with an expression, from parsing to evaluation: a kind, a
/// message, and where in the expression's text it happened.
///
/// Render with ``description`` (`1:17: expected ')' to close '(' at 1:9, near end of
/// input`) or ``rendered(label:caret:)`` for a terminal, which adds the line and a caret.
public struct ExpressionError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable {
        /// The text is not a valid expression or predicate.
        case syntax
        /// Nesting is deeper than ``FormatParser/maximumDepth``.
        case tooDeep
        /// A `%@`, `%K`, `%d`… has no argument, or the argument does not fit.
        case formatArgument
        /// A function name that is not a built-in, or a built-in called with the wrong
        /// number of arguments.
        case unknownFunction
        /// A FUNCTION selector that is not registered for the target.
        case unknownSelector
        /// A `$variable` with no binding.
        case unboundVariable
        /// A key that an object does not have.
        case unknownKey
        /// An operand of the wrong kind (a string where a number is needed, …).
        case type
        /// Integer division by zero.
        case divisionByZero
        /// Integer arithmetic overflowed.
        case overflow
        /// An index out of range, or an empty collection where an element is needed.
        case range
        /// A MATCHES pattern that does not compile, or a match that hit its limits.
        case regex
        /// A construct this platform does not support (UTI, CoreLocation).
        case unsupported
        /// An error raised by a host object or a registered function.
        case host
    }

    public var kind: Kind
    public var message: String
    /// The text of the expression, when known.
    public var source: String?
    /// What the error points at, in UTF-8 offsets into ``source``.
    public var range: SourceRange?
    /// The token near which a syntax error happened, already quoted (`'foo'`), or
    /// `end of input`.
    public var near: String?
    /// A second place the message refers to, such as the opener of an unclosed bracket.
    public var related: SourceRange?

    public init(
        _ kind: Kind, _ message: String, source: String? = nil, range: SourceRange? = nil,
        near: String? = nil, related: SourceRange? = nil
    ) {
        self.kind = kind
        self.message = message
        self.source = source
        self.range = range
        self.near = near
        self.related = related
    }

    /// Where the error starts, when its place is known.
    public var location: SourceLocation? {
        guard let source, let range else { return nil }
        return SourceLocation(offset: range.lowerBound, in: source)
    }

    /// The related place (an unclosed bracket's opener), when there is one.
    public var relatedLocation: SourceLocation? {
        guard let source, let related else { return nil }
        return SourceLocation(offset: related.lowerBound, in: source)
    }

    /// `1:17: message, near 'x'` — the one-line form.
    public var description: String {
        var text = ""
        if let location { text += "\(location): " }
        text += message
        if let near { text += ", near \(near)" }
        return text
    }

    /// The error as a terminal shows it: an optional label (a file, a JSON path), the
    /// one-line form, then the offending line of the expression with a caret under the
    /// column when `caret` is true.
    ///
    ///     price.mapping.json: .attributeMappings.price: 1:10: expected an expression, near end of input
    ///       $source.*
    ///               ^
    public func rendered(label: String? = nil, caret: Bool = true) -> String {
        var text = label.map { "\($0): " } ?? ""
        text += description
        guard caret, let source, let range else { return text }
        let location = SourceLocation(offset: range.lowerBound, in: source)
        // Lines split on the byte "\n", as SourceLocation counts them (a Character split
        // would keep "\r\n" lines together); a "\r" before it is not shown.
        let lines = source.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        guard location.line - 1 < lines.count else { return text }
        var lineBytes = lines[location.line - 1]
        if lineBytes.last == UInt8(ascii: "\r") { lineBytes = lineBytes.dropLast() }
        let line = String(decoding: lineBytes, as: UTF8.self)
        let lineStartOffset = lines[..<(location.line - 1)].reduce(0) { $0 + $1.count + 1 }
        let width = max(1, min(range.upperBound, lineStartOffset + line.utf8.count) - range.lowerBound)
        let underlined = String(
            decoding: line.utf8.dropFirst(range.lowerBound - lineStartOffset).prefix(width), as: UTF8.self)
        return text + Self.caretLines(line, column: location.column, marks: underlined.count)
    }

    /// The two lines that every error pointing into text ends with: `line` (in a window
    /// around the column when it is long, marked with … where cut) and a caret under the
    /// 1-based character `column`, with `~` under the rest of the `marks` characters.
    ///
    ///     "\n  $source.pricee * 1.03\n          ^~~~~~"
    public static func caretLines(_ line: String, column: Int, marks: Int = 1) -> String {
        var marks = max(1, marks)
        let characters = Array(line)
        let caretAt = max(0, min(column - 1, characters.count))
        var start = 0, end = characters.count
        if characters.count > quotedLineLimit {
            start = max(0, min(caretAt - quotedWindow / 2, characters.count - quotedWindow))
            end = min(characters.count, start + quotedWindow)
            marks = min(marks, max(1, end - caretAt))
        }
        let shown = (start > 0 ? "…" : "") + String(characters[start..<end]) + (end < characters.count ? "…" : "")
        // Tabs before the caret stay tabs, so that the caret lines up with the text.
        let indent =
            (start > 0 ? " " : "")
            + String(characters[start..<caretAt].map { $0 == "\t" ? Character("\t") : Character(" ") })
        return "\n  " + shown + "\n  " + indent + "^" + String(repeating: "~", count: marks - 1)
    }

    /// The longest line ``rendered(label:caret:)`` quotes whole; a longer one is quoted in
    /// a window of ``quotedWindow`` characters around the column.
    public static let quotedLineLimit = 240
    public static let quotedWindow = 160

    /// The same error, placed at `range` in `source` unless it already has a place.
    func located(_ range: SourceRange?, in source: String?) -> ExpressionError {
        guard self.range == nil, let range else { return self }
        var copy = self
        copy.range = range
        copy.source = copy.source ?? source
        return copy
    }
}
