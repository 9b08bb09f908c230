import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Checks on XML bytes before Foundation's `XMLParser` reads them, and the parse itself.
/// On Linux some inputs crash it (all found by fuzzing, docs/testing.md): names with bytes
/// that are not UTF-8, and input that has libxml2 switch encodings, which are refused
/// first with where the bad byte is (``problem(in:)``); and a processing instruction with
/// nothing after its target (`<?name?>`), which ``readable(_:)`` gives a blank to.
public enum XMLInput {
    /// Parses `data` (refused first for a ``problem(in:)``, then made ``readable(_:)``)
    /// with `delegate`, stopping at the first error: nil when the XML is well-formed,
    /// else the line of the error and the message `invalid XML at line L, column C: what`.
    ///
    /// Stopping matters: past an error libxml2 goes on, and Foundation on Linux keeps
    /// memory for every further error it reports (kilobytes a document, found by fuzzing).
    public static func parse(_ data: Data, with delegate: Reader) -> (line: Int, message: String)? {
        if let problem = problem(in: data) { return problem }
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
        firstRefusedByte(in: [UInt8](data), refusingNUL: false).map { ($0.line, $0.column) }
    }

    /// The first byte that is not UTF-8 (or, when `refusingNUL`, the first NUL): its line
    /// and column (counted in bytes, from 1), and whether it is a NUL.
    private static func firstRefusedByte(in bytes: [UInt8], refusingNUL: Bool) -> (
        line: Int, column: Int, isNUL: Bool
    )? {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0, line = 1, lineStart = 0
        while true {
            let before = offset
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                if refusingNUL, scalar == "\0" { return (line, before - lineStart + 1, true) }
                offset += UTF8.width(scalar)
                if scalar == "\n" { line += 1; lineStart = offset }
            case .emptyInput:
                return nil
            case .error:
                return (line, before - lineStart + 1, false)
            }
        }
    }

    /// Why `data` is refused before the parser reads it, with the line; nil when it may be
    /// parsed. Model and mapping XML is read as UTF-8, as Xcode writes it. Refused:
    /// - bytes that are not UTF-8;
    /// - a NUL, which XML does not allow anywhere, and from which libxml2 guesses another
    ///   encoding (`\0\0\0<` as UCS-4);
    /// - an XML declaration naming another encoding than UTF-8.
    ///
    /// The last two would have libxml2 switch encodings, and stopping the parser at an
    /// error it raises while switching (see ``parse(_:with:)``) crashes it (found by
    /// fuzzing).
    public static func problem(in data: Data) -> (line: Int, message: String)? {
        let bytes = [UInt8](data)
        if let bad = firstRefusedByte(in: bytes, refusingNUL: true) {
            let what = bad.isNUL ? "a NUL byte, which XML does not allow" : "a byte that is not UTF-8"
            return (bad.line, "invalid XML at line \(bad.line), column \(bad.column): \(what)")
        }
        if let encoding = declaredEncoding(in: bytes),
            !["utf-8", "utf8"].contains(encoding.lowercased())
        {
            return (
                1,
                "invalid XML at line 1: the document says it is in \(encoding); model and mapping files are read as UTF-8, as Xcode writes them. Save it as UTF-8 (encoding=\"UTF-8\")"
            )
        }
        return nil
    }

    /// The `encoding` of the XML declaration the document starts with, if it names one,
    /// however the declaration ends (libxml2 switches encodings before it finds out that
    /// `?>` is missing).
    static func declaredEncoding(in bytes: [UInt8]) -> String? {
        var text = bytes[...]
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
        guard text.starts(with: Array("<?xml".utf8)) else { return nil }
        // The declaration ends at the first ">" outside quotes (or with the document).
        var end = text.endIndex, open: UInt8? = nil
        for i in text.indices {
            let b = text[i]
            if let q = open {
                if b == q { open = nil }
            } else if b == 0x22 || b == 0x27 {
                open = b
            } else if b == 0x3E {
                end = i
                break
            }
        }
        guard let name = text[..<end].firstRange(of: Array("encoding".utf8))?.upperBound else { return nil }
        var i = name
        while i < end, [0x20, 0x09, 0x0D, 0x0A, 0x3D].contains(text[i]) { i += 1 }  // blanks and "="
        guard i < end, text[i] == 0x22 || text[i] == 0x27 else { return nil }
        let quote = text[i]
        guard let close = text[(i + 1)..<end].firstIndex(of: quote) else { return nil }
        return String(decoding: text[(i + 1)..<close], as: UTF8.self)
    }
}
