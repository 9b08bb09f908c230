/// A place in the text of an expression or predicate.
public struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
    /// Offset from the start of the text, in UTF-8 bytes.
    public var offset: Int
    /// 1-based line.
    public var line: Int
    /// 1-based column, in characters (what a person counts on a terminal).
    public var column: Int

    public init(offset: Int, line: Int, column: Int) {
        self.offset = offset
        self.line = line
        self.column = column
    }

    /// The location of UTF-8 `offset` in `text`.
    public init(offset: Int, in text: String) {
        let utf8 = text.utf8
        let clamped = max(0, min(offset, utf8.count))
        var line = 1
        var lineStart = utf8.startIndex
        var index = utf8.startIndex
        for _ in 0..<clamped {
            if utf8[index] == UInt8(ascii: "\n") {
                line += 1
                lineStart = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        let column = text[lineStart..<index].count + 1
        self.init(offset: clamped, line: line, column: column)
    }

    /// `line:column`.
    public var description: String { "\(line):\(column)" }
}

/// A range of UTF-8 offsets in the text of an expression; what a syntax tree node or an
/// error points at.
public struct SourceRange: Hashable, Sendable {
    public var lowerBound: Int
    public var upperBound: Int

    public init(_ lowerBound: Int, _ upperBound: Int) {
        self.lowerBound = lowerBound
        self.upperBound = max(lowerBound, upperBound)
    }

    /// The smallest range covering both.
    public func union(_ other: SourceRange) -> SourceRange {
        SourceRange(min(lowerBound, other.lowerBound), max(upperBound, other.upperBound))
    }
}
