import OrderedCollections

/// JSON text that is not valid: what is wrong and where.
///
/// ``description`` is `line:column: message`, for example
/// `1:7: expected ',' or ']' to close '[' at 1:1, found '2'`.
public struct JSONError: Error, CustomStringConvertible, Hashable, Sendable {
    /// What is wrong, quoting the offending text (`found 'x'`, `found end of input`).
    public var message: String
    /// Where, in UTF-8 bytes from the start of the text.
    public var offset: Int
    /// 1-based line; lines are separated by `\n`.
    public var line: Int
    /// 1-based column, in characters, as ``SourceLocation`` counts them.
    public var column: Int

    public init(message: String, offset: Int, line: Int, column: Int) {
        self.message = message
        self.offset = offset
        self.line = line
        self.column = column
    }

    /// `line:column: message`.
    public var description: String { "\(line):\(column): \(message)" }
}

extension JSON {
    /// How deeply arrays and objects may nest in text that `parse(_:)` reads.
    /// Deeper text is an error (never a stack overflow: the reader does not recurse).
    public static let maximumDepth = 512

    /// Reads one JSON value from `text`, strictly by RFC 8259.
    ///
    /// Numbers without `.`, `e` or `E` become ``integer(_:)`` (an error outside `Int64`),
    /// others ``double(_:)`` (an error when they overflow a double). Rejected, with the
    /// place and the offending text: trailing commas, leading zeros, unescaped control
    /// characters, unknown escapes, lone surrogates (`"\ud83d"`), invalid UTF-8,
    /// duplicate keys in an object, nesting deeper than ``maximumDepth``, and anything
    /// after the value other than whitespace. A leading byte order mark is ignored, as
    /// RFC 8259 §8.1 allows. Keys are compared as Swift strings compare, so `"é"` and
    /// `"e\u0301"` are the same key.
    ///
    ///     try JSON.parse("[1, 1.0]")    // [.integer(1), .double(1.0)]
    ///     try JSON.parse("[1, 2,]")     // 1:6: trailing comma before ']'
    public static func parse(_ text: String) throws(JSONError) -> JSON {
        var text = text
        // `withUTF8` is `rethrows`, which would widen the error to `any Error`.
        let result = text.withUTF8 { bytes in
            Result { () throws(JSONError) in try JSONReader.read(bytes, isValidUTF8: true) }
        }
        return try result.get()
    }

    /// Reads one JSON value from UTF-8 bytes (`Data`, `[UInt8]`, …); see
    /// `parse(_:)`. Invalid UTF-8 is an error.
    public static func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(JSONError) -> JSON {
        let result = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONError) in try JSONReader.read(buffer, isValidUTF8: false) }
        }
        if let result { return try result.get() }
        return try parse(Array(bytes))
    }
}

/// The reader behind `JSON.parse`: one pass over UTF-8 bytes, with an explicit stack of
/// open containers instead of recursion.
struct JSONReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    /// True when the bytes come from a `String`, so strings need no UTF-8 validation.
    private let isValidUTF8: Bool
    private var position = 0
    /// Where the text starts after a byte order mark; columns count from here.
    private var contentStart = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>, isValidUTF8: Bool) {
        self.bytes = bytes
        self.isValidUTF8 = isValidUTF8
    }

    /// The one JSON value in `bytes`; `isValidUTF8` is true when they come from a `String`.
    static func read(_ bytes: UnsafeBufferPointer<UInt8>, isValidUTF8: Bool) throws(JSONError) -> JSON {
        var reader = JSONReader(bytes, isValidUTF8: isValidUTF8)
        return try reader.readDocument()
    }

    /// An array or object whose closing bracket has not been read yet.
    private struct Frame {
        /// Offset of the `[` or `{`, for "to close '[' at 1:1".
        let opener: Int
        let isObject: Bool
        var elements: [JSON] = []
        var members: OrderedDictionary<String, JSON> = [:]
        /// The key whose value is being read.
        var key = ""
    }

    /// `JSON-text := ws value ws`
    private mutating func readDocument() throws(JSONError) -> JSON {
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF {
            position = 3
            contentStart = 3
        }
        var stack: [Frame] = []
        var value: JSON
        readValue: while true {
            // `value := false / null / true / object / array / number / string`
            skipWhitespace()
            guard position < bytes.count else { throw error("expected a value, found end of input", at: position) }
            switch bytes[position] {
            case UInt8(ascii: "["):
                guard stack.count < JSON.maximumDepth else { throw tooDeep() }
                let opener = position
                position += 1
                skipWhitespace()
                if peek(UInt8(ascii: "]")) {
                    position += 1
                    value = .array([])
                } else {
                    stack.append(Frame(opener: opener, isObject: false))
                    continue readValue
                }
            case UInt8(ascii: "{"):
                guard stack.count < JSON.maximumDepth else { throw tooDeep() }
                let opener = position
                position += 1
                skipWhitespace()
                if peek(UInt8(ascii: "}")) {
                    position += 1
                    value = .object([:])
                } else {
                    var frame = Frame(opener: opener, isObject: true)
                    frame.key = try readKey(after: frame.members, isFirst: true)
                    stack.append(frame)
                    continue readValue
                }
            default:
                value = try readScalar()
            }

            // Store the value in its container; close every container that ends here.
            while !stack.isEmpty {
                let top = stack.count - 1
                skipWhitespace()
                if stack[top].isObject {
                    // `object := '{' [ member *( ',' member ) ] '}'`
                    let key = stack[top].key
                    stack[top].members[key] = value
                    if peek(UInt8(ascii: ",")) {
                        let comma = position
                        position += 1
                        skipWhitespace()
                        if peek(UInt8(ascii: "}")) { throw error("trailing comma before '}'", at: comma) }
                        stack[top].key = try readKey(after: stack[top].members, isFirst: false)
                        continue readValue
                    }
                    guard peek(UInt8(ascii: "}")) else {
                        throw error(
                            "expected ',' or '}' to close '{' at \(location(of: stack[top].opener)), found \(token(at: position))",
                            at: position)
                    }
                    position += 1
                    value = .object(stack.removeLast().members)
                } else {
                    // `array := '[' [ value *( ',' value ) ] ']'`
                    stack[top].elements.append(value)
                    if peek(UInt8(ascii: ",")) {
                        let comma = position
                        position += 1
                        skipWhitespace()
                        if peek(UInt8(ascii: "]")) { throw error("trailing comma before ']'", at: comma) }
                        continue readValue
                    }
                    guard peek(UInt8(ascii: "]")) else {
                        throw error(
                            "expected ',' or ']' to close '[' at \(location(of: stack[top].opener)), found \(token(at: position))",
                            at: position)
                    }
                    position += 1
                    value = .array(stack.removeLast().elements)
                }
            }

            skipWhitespace()
            guard position == bytes.count else {
                throw error("expected end of input, found \(token(at: position))", at: position)
            }
            return value
        }
    }

    /// `member := string ':' value` — reads the string and the colon; the caller reads the
    /// value. `members` are the object's members so far, to reject a repeated key.
    private mutating func readKey(
        after members: OrderedDictionary<String, JSON>, isFirst: Bool
    ) throws(JSONError) -> String {
        guard peek(UInt8(ascii: "\"")) else {
            let expected = isFirst ? "a string key or '}'" : "a string key"
            throw error("expected \(expected), found \(token(at: position))", at: position)
        }
        let start = position
        let key = try readString()
        guard members.index(forKey: key) == nil else {
            throw error("duplicate key \(JSON.quoted(key)) in object", at: start)
        }
        skipWhitespace()
        guard peek(UInt8(ascii: ":")) else {
            throw error("expected ':' after key \(JSON.quoted(key)), found \(token(at: position))", at: position)
        }
        position += 1
        return key
    }

    /// A string, number or literal name, at a byte that is known to be there.
    private mutating func readScalar() throws(JSONError) -> JSON {
        switch bytes[position] {
        case UInt8(ascii: "\""):
            return .string(try readString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try readNumber()
        case UInt8(ascii: "t") where matchLiteral("true"):
            return .bool(true)
        case UInt8(ascii: "f") where matchLiteral("false"):
            return .bool(false)
        case UInt8(ascii: "n") where matchLiteral("null"):
            return .null
        default:
            throw error("expected a value, found \(token(at: position))", at: position)
        }
    }

    /// Consumes `literal` if it is next and is not the start of a longer word (`nullx`).
    private mutating func matchLiteral(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        let matches = literal.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[position + $0] == expected[$0] }
        }
        guard matches, position + count == bytes.count || !Self.isWordByte(bytes[position + count]) else {
            return false
        }
        position += count
        return true
    }

    // MARK: Numbers

    /// `number := [ '-' ] int [ frac ] [ exp ]`, `int := '0' / digit1-9 *digit`,
    /// `frac := '.' 1*digit`, `exp := ('e' / 'E') [ '-' / '+' ] 1*digit`.
    private mutating func readNumber() throws(JSONError) -> JSON {
        let start = position
        let isNegative = bytes[position] == UInt8(ascii: "-")
        if isNegative { position += 1 }
        let digitsStart = position
        guard position < bytes.count, Self.isDigit(bytes[position]) else {
            throw error("invalid number \(token(at: start)): expected a digit after '-'", at: start)
        }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count, Self.isDigit(bytes[position]) {
                throw error("invalid number \(token(at: start)): leading zeros are not allowed", at: start)
            }
        } else {
            skipDigits()
        }
        let digitsEnd = position
        var isInteger = true
        if peek(UInt8(ascii: ".")) {
            isInteger = false
            position += 1
            guard position < bytes.count, Self.isDigit(bytes[position]) else {
                throw error("invalid number \(token(at: start)): expected a digit after '.'", at: start)
            }
            skipDigits()
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            isInteger = false
            position += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { position += 1 }
            guard position < bytes.count, Self.isDigit(bytes[position]) else {
                throw error("invalid number \(token(at: start)): expected a digit in the exponent", at: start)
            }
            skipDigits()
        }

        if isInteger {
            // Up to 18 digits cannot overflow; longer runs are checked.
            var magnitude: UInt64 = 0
            var overflow = false
            for index in digitsStart..<digitsEnd {
                let digit = UInt64(bytes[index] &- UInt8(ascii: "0"))
                if digitsEnd - digitsStart <= 18 {
                    magnitude = magnitude &* 10 &+ digit
                } else {
                    let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
                    let (sum, o2) = times10.addingReportingOverflow(digit)
                    magnitude = sum
                    overflow = overflow || o1 || o2
                }
            }
            let limit = isNegative ? UInt64(Int64.max) + 1 : UInt64(Int64.max)
            guard !overflow, magnitude <= limit else {
                let text = text(start..<position)
                throw error(
                    "integer \(text) does not fit in 64 bits; write \(text).0 to read it as a double", at: start)
            }
            return .integer(isNegative ? Int64(bitPattern: 0 &- magnitude) : Int64(magnitude))
        }
        let text = text(start..<position)
        guard let double = Double(text), double.isFinite else {
            throw error("number \(text) is too large for a double", at: start)
        }
        return .double(double)
    }

    private mutating func skipDigits() {
        while position < bytes.count, Self.isDigit(bytes[position]) { position += 1 }
    }

    // MARK: Strings

    /// `string := '"' *char '"'`, at the opening quote. Strings without escapes are made
    /// straight from the input's bytes.
    private mutating func readString() throws(JSONError) -> String {
        let quote = position
        position += 1
        var runStart = position
        var unescaped: [UInt8]? = nil
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let run = UnsafeBufferPointer(rebasing: bytes[runStart..<position])
                position += 1
                guard var unescaped else { return String(decoding: run, as: UTF8.self) }
                unescaped.append(contentsOf: run)
                return String(decoding: unescaped, as: UTF8.self)
            } else if byte == UInt8(ascii: "\\") {
                if unescaped == nil { unescaped = [] }
                unescaped!.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                try readEscape(into: &unescaped!, quote: quote)
                runStart = position
            } else if byte < 0x20 {
                let escape = Self.shortEscapes[Int(byte)] ?? String(format4: UInt32(byte))
                throw error(
                    "unescaped control character \(Self.scalarName(UInt32(byte))) in string (write \(escape))",
                    at: position)
            } else if byte < 0x80 || isValidUTF8 {
                position += 1
            } else {
                guard let length = utf8SequenceLength(at: position) else {
                    throw error("invalid UTF-8 byte \(Self.hex(byte)) in string", at: position)
                }
                position += length
            }
        }
        throw unterminatedString(quote)
    }

    /// `escape := '\' ( '"' / '\' / '/' / 'b' / 'f' / 'n' / 'r' / 't' / 'u' 4hexdig )`, at
    /// the backslash. A high surrogate must be followed by an escaped low surrogate.
    private mutating func readEscape(into buffer: inout [UInt8], quote: Int) throws(JSONError) {
        let escapeStart = position
        position += 1
        guard position < bytes.count else { throw unterminatedString(quote) }
        let byte = bytes[position]
        position += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(byte)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try readHex4(escapeStart)
            var scalar = unit
            if (0xD800...0xDBFF).contains(unit) {
                let lowStart = position
                guard peek(UInt8(ascii: "\\")), lowStart + 1 < bytes.count, bytes[lowStart + 1] == UInt8(ascii: "u")
                else {
                    throw loneHighSurrogate(escapeStart)
                }
                position += 2
                let low = try readHex4(lowStart)
                guard (0xDC00...0xDFFF).contains(low) else { throw loneHighSurrogate(escapeStart) }
                scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(unit) {
                throw error(
                    "lone low surrogate '\(text(escapeStart..<position))' (it must follow a high surrogate \\ud800...\\udbff)",
                    at: escapeStart)
            }
            Self.appendUTF8(scalar, to: &buffer)
        default:
            if byte < 0x20 || byte == 0x7F {
                throw error(
                    "invalid escape: '\\' followed by control character \(Self.scalarName(UInt32(byte))) in string",
                    at: escapeStart)
            }
            throw error("invalid escape '\\\(tokenCharacter(at: position - 1))' in string", at: escapeStart)
        }
    }

    /// Four hexadecimal digits after `\u`; `escapeStart` is the backslash.
    private mutating func readHex4(_ escapeStart: Int) throws(JSONError) -> UInt32 {
        var value: UInt32 = 0
        for index in position..<(position + 4) {
            guard index < bytes.count, let digit = Self.hexDigitValue(bytes[index]) else {
                var end = escapeStart + 2
                while end < min(escapeStart + 6, bytes.count), bytes[end] > 0x20, bytes[end] < 0x7F,
                    bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\")
                { end += 1 }
                throw error(
                    "invalid escape '\(text(escapeStart..<end))' in string: expected four hexadecimal digits after '\\u'",
                    at: escapeStart)
            }
            value = value << 4 | digit
        }
        position += 4
        return value
    }

    private func loneHighSurrogate(_ escapeStart: Int) -> JSONError {
        error(
            "lone high surrogate '\(text(escapeStart..<(escapeStart + 6)))' (it must be followed by a low surrogate \\udc00...\\udfff)",
            at: escapeStart)
    }

    private func unterminatedString(_ quote: Int) -> JSONError {
        error("expected '\"' to close the string at \(location(of: quote)), found end of input", at: bytes.count)
    }

    private func tooDeep() -> JSONError {
        error("too deeply nested: more than \(JSON.maximumDepth) levels of arrays and objects", at: position)
    }

    // MARK: Bytes

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private func peek(_ byte: UInt8) -> Bool {
        position < bytes.count && bytes[position] == byte
    }

    private func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range.clamped(to: 0..<bytes.count)]), as: UTF8.self)
    }

    /// The length of the well-formed UTF-8 sequence at `offset` (2 to 4), or nil: overlong
    /// forms, surrogates and values above U+10FFFF are rejected (Unicode Table 3-7).
    private func utf8SequenceLength(at offset: Int) -> Int? {
        UTF8Sequence.length(in: bytes, at: offset)
    }

    // MARK: Diagnostics

    private func error(_ message: String, at offset: Int) -> JSONError {
        let (line, column) = lineAndColumn(of: offset)
        return JSONError(message: message, offset: offset, line: line, column: column)
    }

    /// 1-based line and column (in characters) of a byte offset. Only errors need it.
    private func lineAndColumn(of offset: Int) -> (line: Int, column: Int) {
        var line = 1
        var lineStart = contentStart
        for index in contentStart..<min(offset, bytes.count) where bytes[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        return (line, text(lineStart..<max(lineStart, offset)).count + 1)
    }

    private func location(of offset: Int) -> String {
        let (line, column) = lineAndColumn(of: offset)
        return "\(line):\(column)"
    }

    /// The text at `offset` for "found …": a quoted word or number (`'tru'`, `'01'`), a
    /// quoted character, a control character's code point, or `end of input`.
    private func token(at offset: Int) -> String {
        guard offset < bytes.count else { return "end of input" }
        if Self.isWordByte(bytes[offset]) {
            var end = offset
            while end < bytes.count, Self.isWordByte(bytes[end]) { end += 1 }
            let word = text(offset..<min(end, offset + 24))
            return "'\(word)\(end > offset + 24 ? "…" : "")'"
        }
        let byte = bytes[offset]
        if byte < 0x20 || byte == 0x7F { return "control character \(Self.scalarName(UInt32(byte)))" }
        if byte >= 0x80 && utf8SequenceLength(at: offset) == nil { return "invalid UTF-8 byte \(Self.hex(byte))" }
        return "'\(tokenCharacter(at: offset))'"
    }

    /// The printable character (Unicode scalar) at `offset`, for messages.
    private func tokenCharacter(at offset: Int) -> String {
        let byte = bytes[offset]
        if byte < 0x80 { return String(UnicodeScalar(byte)) }
        guard let length = utf8SequenceLength(at: offset) else { return Self.hex(byte) }
        return text(offset..<(offset + length))
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Bytes that make up words and numbers in messages: letters, digits, `_ + - .`.
    private static func isWordByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "+"), UInt8(ascii: "-"),
            UInt8(ascii: "."):
            true
        default: false
        }
    }

    private static func hexDigitValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        "0x" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
    }

    /// `U+000A`.
    static func scalarName(_ value: UInt32) -> String {
        "U+" + String(value, radix: 16, uppercase: true).leftPadded(to: 4)
    }

    /// The short escapes JSON has for control characters, by code point.
    static let shortEscapes: [Int: String] = [0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"]

    static func appendUTF8(_ scalar: UInt32, to buffer: inout [UInt8]) {
        switch scalar {
        case ..<0x80:
            buffer.append(UInt8(scalar))
        case ..<0x800:
            buffer.append(UInt8(0xC0 | scalar >> 6))
            buffer.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            buffer.append(UInt8(0xE0 | scalar >> 12))
            buffer.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            buffer.append(UInt8(0x80 | scalar & 0x3F))
        default:
            buffer.append(UInt8(0xF0 | scalar >> 18))
            buffer.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            buffer.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            buffer.append(UInt8(0x80 | scalar & 0x3F))
        }
    }
}

extension String {
    /// `\u001f`: the JSON escape of a code point below U+10000.
    fileprivate init(format4 value: UInt32) {
        self = "\\u" + String(value, radix: 16).leftPadded(to: 4)
    }

    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
