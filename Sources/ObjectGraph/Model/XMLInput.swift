import Foundation

/// Checks on XML bytes before Foundation's `XMLParser` reads them: on Linux, names with
/// bytes that are not UTF-8 crash it (found by fuzzing, docs/testing.md), so such input is
/// refused first, with where the bad byte is.
public enum XMLInput {
    /// Where `data` stops being UTF-8: line and column (counted in bytes, from 1); nil when
    /// it is UTF-8 throughout.
    public static func invalidUTF8(in data: Data) -> (line: Int, column: Int)? {
        let bytes = [UInt8](data)
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0, line = 1, lineStart = 0
        while true {
            let before = offset
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                offset += UTF8.width(scalar)
                if scalar == "\n" { line += 1; lineStart = offset }
            case .emptyInput:
                return nil
            case .error:
                return (line, before - lineStart + 1)
            }
        }
    }

    /// The message for XML that is not UTF-8, or nil.
    public static func problem(in data: Data) -> String? {
        invalidUTF8(in: data).map { "invalid XML at line \($0.line), column \($0.column): a byte that is not UTF-8" }
    }
}
