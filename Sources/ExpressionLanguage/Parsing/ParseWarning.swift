/// A finding that does not stop parsing, such as AND and OR mixed without parentheses.
public struct ParseWarning: Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public var source: String
    public var range: SourceRange?

    public init(_ message: String, source: String, range: SourceRange?) {
        self.message = message
        self.source = source
        self.range = range
    }

    public var location: SourceLocation? { range.map { SourceLocation(offset: $0.lowerBound, in: source) } }

    /// `1:5: warning: message`.
    public var description: String {
        (location.map { "\($0): " } ?? "") + "warning: " + message
    }
}
