import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Checks on XML bytes before Foundation's `XMLParser` reads them, and the parse itself.
/// On Linux two inputs crash it (both found by fuzzing, docs/testing.md): names with bytes
/// that are not UTF-8, which are refused first with where the bad byte is; and a
/// processing instruction with nothing after its target (`<?name?>`), which
/// ``readable(_:)`` gives a blank to.
public enum XMLInput {
    /// Parses `data` (made ``readable(_:)``) with `delegate`, stopping at the first error:
    /// nil when the XML is well-formed, else the line of the error and the message
    /// `invalid XML at line L, column C: what`.
    ///
    /// Stopping matters: past an error libxml2 goes on, and Foundation on Linux keeps
    /// memory for every further error it reports (kilobytes a document, found by fuzzing).
    public static func parse(_ data: Data, with delegate: Reader) -> (line: Int, message: String)? {
        let parser = XMLParser(data: readable(data))
        parser.shouldResolveExternalEntities = false
        parser.delegate = delegate
        if parser.parse() { return nil }
        let (line, column, error) =
            delegate.firstError ?? (parser.lineNumber, parser.columnNumber, parser.parserError)
        let what = error.map { $0.localizedDescription } ?? "unknown error"
        return (line, "invalid XML at line \(line), column \(column): \(what)")
    }

    /// An `XMLParserDelegate` that stops the parser at the first error and keeps where it
    /// was. Model and mapping readers subclass it and override the element and text
    /// callbacks, which it declares so that the overrides are called: without the
    /// Objective-C runtime, a subclass's own delegate methods would not be.
    open class Reader: NSObject, XMLParserDelegate {
        /// Where the first error was, and what it was.
        public private(set) var firstError: (line: Int, column: Int, error: (any Error)?)?

        override public init() {}

        open func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {}

        open func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?)
        {}

        open func parser(_ parser: XMLParser, foundCharacters string: String) {}

        public func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            guard firstError == nil else { return }
            firstError = (parser.lineNumber, parser.columnNumber, parseError)
            parser.abortParsing()
        }
    }

    /// `data` with a blank after the target of each processing instruction that has
    /// nothing else (`<?name?>` becomes `<?name ?>`): libxml2 hands the first to
    /// `XMLParser` as no data at all, which it reads as a C string and crashes on, and the
    /// second as empty data. Nothing a model or mapping file says is in a processing
    /// instruction.
    public static func readable(_ data: Data) -> Data {
        let bytes = [UInt8](data)
        var output: [UInt8] = []
        var i = 0, copied = 0
        func isNameByte(_ b: UInt8) -> Bool {
            b >= 0x80 || (b >= 0x30 && b <= 0x3A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == 0x5F || b == 0x2D || b == 0x2E
        }
        while i + 1 < bytes.count {
            guard bytes[i] == 0x3C, bytes[i + 1] == 0x3F else {  // "<?"
                i += 1
                continue
            }
            var end = i + 2
            while end < bytes.count, isNameByte(bytes[end]) { end += 1 }
            if end > i + 2, end + 1 < bytes.count, bytes[end] == 0x3F, bytes[end + 1] == 0x3E {  // "?>"
                if output.isEmpty { output.reserveCapacity(bytes.count + 8) }
                output += bytes[copied..<end]
                output.append(0x20)
                copied = end
            }
            i = end
        }
        guard copied > 0 else { return data }
        output += bytes[copied...]
        return Data(output)
    }

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
