/// Splits format text into tokens (Grammar/tokens.md).
///
/// Works on UTF-8 bytes: every token of the language is ASCII outside string literals,
/// so the lexer never decodes characters except inside quotes.
struct Lexer {
    let source: String
    private let bytes: [UInt8]
    private var position = 0

    init(_ source: String) {
        self.source = source
        self.bytes = Array(source.utf8)
    }

    /// All tokens, ending with `.end`.
    static func tokenize(_ source: String) throws(ExpressionError) -> [Token] {
        var lexer = Lexer(source)
        var tokens: [Token] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if case .end = token.kind { return tokens }
        }
    }

    private func error(_ message: String, _ start: Int, _ end: Int? = nil, near: String? = nil) -> ExpressionError {
        ExpressionError(.syntax, message, source: source, range: SourceRange(start, end ?? start + 1), near: near)
    }

    private func peek(_ ahead: Int = 0) -> UInt8? {
        let i = position + ahead
        return i < bytes.count ? bytes[i] : nil
    }

    private static func isIdentifierStart(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F
    }

    private static func isIdentifierPart(_ b: UInt8) -> Bool {
        isIdentifierStart(b) || isDigit(b)
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    private func text(_ start: Int, _ end: Int) -> String {
        String(decoding: bytes[start..<end], as: UTF8.self)
    }

    mutating func next() throws(ExpressionError) -> Token {
        while let b = peek(), b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D {
            position += 1
        }
        let start = position
        guard let b = peek() else { return Token(kind: .end, range: SourceRange(start, start)) }

        func token(_ kind: Token.Kind) -> Token { Token(kind: kind, range: SourceRange(start, position)) }

        if Lexer.isIdentifierStart(b) { return try identifierOrKeyword(start) }
        if Lexer.isDigit(b) || (b == UInt8(ascii: ".") && peek(1).map(Lexer.isDigit) == true) {
            return try number(start)
        }
        switch b {
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return try string(start, quote: b)
        case UInt8(ascii: "$"):
            position += 1
            guard let c = peek(), Lexer.isIdentifierStart(c) else {
                throw error("expected a variable name after '$'", start, near: "'$'")
            }
            let name = identifierText()
            return token(.variable(name))
        case UInt8(ascii: "#"):
            position += 1
            guard let c = peek(), Lexer.isIdentifierStart(c) else {
                throw error("expected a word after '#'", start, near: "'#'")
            }
            return token(.escapedIdentifier(identifierText()))
        case UInt8(ascii: "@"):
            position += 1
            guard let c = peek(), Lexer.isIdentifierStart(c) else {
                throw error("expected a key after '@'", start, near: "'@'")
            }
            return token(.atKey(identifierText()))
        case UInt8(ascii: "%"):
            return try formatSpecifier(start)
        default:
            break
        }

        // Punctuation and operators, longest match first.
        let two: String? = peek(1) == nil ? nil : text(start, start + 2)
        if let two {
            if two == "/*" || two == "//" {
                throw error("comments are not part of the format language", start, start + 2, near: "'\(two)'")
            }
            if let p = Token.Punctuation(rawValue: two), two.count == 2 {
                position += 2
                return token(.punctuation(p))
            }
        }
        if let p = Token.Punctuation(rawValue: text(start, start + 1)) {
            position += 1
            return token(.punctuation(p))
        }
        if b == UInt8(ascii: "?") {
            throw error("'?' is not part of the format language; use a format argument such as %@", start, near: "'?'")
        }
        if b == UInt8(ascii: "\\") {
            throw error("a backslash is allowed only inside a quoted string", start, near: "'\\'")
        }
        if b == UInt8(ascii: ":") {
            throw error("expected '=' after ':' (assignment is '$variable := value')", start, near: "':'")
        }
        // An unexpected character; quote the whole character, not a byte of it.
        let scalarEnd = Lexer.scalarEnd(bytes, start)
        let ch = text(start, scalarEnd)
        throw error("unexpected character '\(ch)'", start, scalarEnd, near: "'\(ch)'")
    }

    private static func scalarEnd(_ bytes: [UInt8], _ start: Int) -> Int {
        var end = start + 1
        while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
        return end
    }

    private mutating func identifierText() -> String {
        let start = position
        while let c = peek(), Lexer.isIdentifierPart(c) { position += 1 }
        return text(start, position)
    }

    private mutating func identifierOrKeyword(_ start: Int) throws(ExpressionError) -> Token {
        let word = identifierText()
        // UTI-CONFORMS-TO and UTI-EQUALS are the two reserved words with hyphens.
        if word.uppercased() == "UTI", peek() == UInt8(ascii: "-") {
            for candidate in ["-CONFORMS-TO", "-EQUALS"] {
                let end = position + candidate.utf8.count
                if end <= bytes.count, text(position, end).uppercased() == candidate,
                    end == bytes.count || !Lexer.isIdentifierPart(bytes[end])
                {
                    position = end
                    let keyword: Keyword = candidate == "-EQUALS" ? .utiEquals : .utiConformsTo
                    return Token(kind: .keyword(keyword), range: SourceRange(start, position))
                }
            }
        }
        // A multi-part selector: `modulus:by:`, `sqrt:`; but not `$x :=` (handled by '$').
        if peek() == UInt8(ascii: ":"), peek(1) != UInt8(ascii: "=") {
            var selector = word
            while peek() == UInt8(ascii: ":"), peek(1) != UInt8(ascii: "=") {
                position += 1
                selector += ":"
                if let c = peek(), Lexer.isIdentifierStart(c) {
                    let part = identifierText()
                    guard peek() == UInt8(ascii: ":") else {
                        throw error("expected ':' after '\(part)' in the function name '\(selector + part)'",
                                    start, position, near: "'\(selector + part)'")
                    }
                    selector += part
                }
            }
            return Token(kind: .selector(selector), range: SourceRange(start, position))
        }
        if let keyword = Keyword.byName[word.uppercased()] {
            return Token(kind: .keyword(keyword), range: SourceRange(start, position))
        }
        return Token(kind: .identifier(word), range: SourceRange(start, position))
    }

    private mutating func number(_ start: Int) throws(ExpressionError) -> Token {
        func digits(_ isValid: (UInt8) -> Bool) -> String {
            let s = position
            while let c = peek(), isValid(c) { position += 1 }
            return text(s, position)
        }
        if peek() == UInt8(ascii: "0"), let p = peek(1) {
            let radix: Int?
            switch p | 0x20 {  // lower-case the prefix letter
            case UInt8(ascii: "x"): radix = 16
            case UInt8(ascii: "o"): radix = 8
            case UInt8(ascii: "b"): radix = 2
            default: radix = nil
            }
            if let radix {
                position += 2
                let body = digits { c in
                    let l = c | 0x20
                    switch radix {
                    case 16: return Lexer.isDigit(c) || (l >= UInt8(ascii: "a") && l <= UInt8(ascii: "f"))
                    case 8: return c >= UInt8(ascii: "0") && c <= UInt8(ascii: "7")
                    default: return c == UInt8(ascii: "0") || c == UInt8(ascii: "1")
                    }
                }
                let literal = text(start, position)
                if let c = peek(), Lexer.isIdentifierPart(c) {
                    throw error("invalid digit '\(text(position, position + 1))' in the number '\(literal)'",
                                position, near: "'\(literal)'")
                }
                guard !body.isEmpty else { throw error("expected digits after '\(literal)'", start, position, near: "'\(literal)'") }
                guard let value = Int64(body, radix: radix) else {
                    throw error("the integer \(literal) does not fit in 64 bits", start, position, near: "'\(literal)'")
                }
                return Token(kind: .number(.integer(value)), range: SourceRange(start, position))
            }
        }
        var isReal = false
        _ = digits(Lexer.isDigit)
        if peek() == UInt8(ascii: "."), let next = peek(1), Lexer.isDigit(next) {
            isReal = true
            position += 1
            _ = digits(Lexer.isDigit)
        }
        if let e = peek(), e | 0x20 == UInt8(ascii: "e") {
            var look = 1
            if let sign = peek(1), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { look = 2 }
            if let d = peek(look), Lexer.isDigit(d) {
                isReal = true
                position += look
                _ = digits(Lexer.isDigit)
            }
        }
        let literal = text(start, position)
        if let c = peek(), Lexer.isIdentifierStart(c) {
            throw error("a number cannot be followed directly by '\(text(position, position + 1))'", position,
                        near: "'\(literal)\(text(position, position + 1))'")
        }
        let range = SourceRange(start, position)
        if isReal {
            guard let d = Double(literal) else { throw error("invalid number '\(literal)'", start, position) }
            return Token(kind: .number(.double(d)), range: range)
        }
        guard let i = Int64(literal) else {
            throw error("the integer \(literal) does not fit in 64 bits; write it with a decimal point to make it a double",
                        start, position, near: "'\(literal)'")
        }
        return Token(kind: .number(.integer(i)), range: range)
    }

    private mutating func string(_ start: Int, quote: UInt8) throws(ExpressionError) -> Token {
        position += 1
        var runStart = position
        var result = ""
        func flushRun() {
            if runStart < position { result += text(runStart, position) }
        }
        while true {
            guard let c = peek() else {
                throw ExpressionError(.syntax, "unterminated string", source: source,
                                      range: SourceRange(start, start + 1), near: "end of input")
            }
            if c == quote {
                flushRun()
                position += 1
                return Token(kind: .string(result), range: SourceRange(start, position))
            }
            if c != UInt8(ascii: "\\") {
                position += 1
                continue
            }
            flushRun()
            let escapeStart = position
            position += 1
            guard let e = peek() else {
                throw error("unterminated string", start, near: "end of input")
            }
            position += 1
            switch e {
            case UInt8(ascii: "a"): result.unicodeScalars.append("\u{07}")
            case UInt8(ascii: "b"): result.unicodeScalars.append("\u{08}")
            case UInt8(ascii: "f"): result.unicodeScalars.append("\u{0C}")
            case UInt8(ascii: "n"): result.unicodeScalars.append("\n")
            case UInt8(ascii: "r"): result.unicodeScalars.append("\r")
            case UInt8(ascii: "t"): result.unicodeScalars.append("\t")
            case UInt8(ascii: "v"): result.unicodeScalars.append("\u{0B}")
            case UInt8(ascii: "x"), UInt8(ascii: "X"):
                result.unicodeScalars.append(try hexEscape(count: 2, escapeStart))
            case UInt8(ascii: "u"), UInt8(ascii: "U"):
                var scalar = try hexEscapeValue(count: 4, escapeStart)
                // A UTF-16 surrogate pair written as two \u escapes.
                if (0xD800...0xDBFF).contains(scalar), peek() == UInt8(ascii: "\\"),
                    let u = peek(1), u | 0x20 == UInt8(ascii: "u")
                {
                    let save = position
                    position += 2
                    let low = try hexEscapeValue(count: 4, save)
                    if (0xDC00...0xDFFF).contains(low) {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        position = save
                    }
                }
                guard let s = Unicode.Scalar(scalar) else {
                    throw error("\\u escape \(text(escapeStart, position)) is not a Unicode scalar", escapeStart, position)
                }
                result.unicodeScalars.append(s)
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                // \ooo: exactly three octal digits.
                var value = UInt32(e - UInt8(ascii: "0"))
                for _ in 0..<2 {
                    guard let d = peek(), d >= UInt8(ascii: "0"), d <= UInt8(ascii: "7") else {
                        throw error("octal escape needs three digits (\\ooo)", escapeStart, position)
                    }
                    value = value * 8 + UInt32(d - UInt8(ascii: "0"))
                    position += 1
                }
                guard let s = Unicode.Scalar(value) else { throw error("invalid octal escape", escapeStart, position) }
                result.unicodeScalars.append(s)
            default:
                // `\` before any other character yields that character (`\"`, `\'`, `\\`).
                position = escapeStart + 1
                let end = Lexer.scalarEnd(bytes, position)
                result += text(position, end)
                position = end
            }
            runStart = position
        }
    }

    private mutating func hexEscapeValue(count: Int, _ escapeStart: Int) throws(ExpressionError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<count {
            guard let d = peek(), let digit = Lexer.hexDigit(d) else {
                throw error("expected \(count) hexadecimal digits in the escape", escapeStart, position)
            }
            value = value * 16 + digit
            position += 1
        }
        return value
    }

    private mutating func hexEscape(count: Int, _ escapeStart: Int) throws(ExpressionError) -> Unicode.Scalar {
        let value = try hexEscapeValue(count: count, escapeStart)
        guard let s = Unicode.Scalar(value) else { throw error("invalid escape", escapeStart, position) }
        return s
    }

    private static func hexDigit(_ b: UInt8) -> UInt32? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(b - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(b - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(b - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    private mutating func formatSpecifier(_ start: Int) throws(ExpressionError) -> Token {
        position += 1
        guard let c = peek() else { throw error("expected a format specifier after '%'", start, near: "'%'") }
        if c == UInt8(ascii: "@") { position += 1; return Token(kind: .format(.object), range: SourceRange(start, position)) }
        if c == UInt8(ascii: "K") { position += 1; return Token(kind: .format(.keyPath), range: SourceRange(start, position)) }
        if c == UInt8(ascii: "%") {
            throw error("'%%' is a literal percent sign, which is not valid outside a quoted string", start, start + 2, near: "'%%'")
        }
        // printf-style: optional precision (ignored), length modifiers, conversion.
        let specStart = position
        while let d = peek(), Lexer.isDigit(d) || d == UInt8(ascii: ".") { position += 1 }
        while let m = peek(), "hlqLzjt".utf8.contains(m) { position += 1 }
        guard let conversion = peek() else { throw error("incomplete format specifier", start, position, near: "'%'") }
        position += 1
        let spec = text(specStart, position)
        let range = SourceRange(start, position)
        switch conversion {
        case UInt8(ascii: "d"), UInt8(ascii: "D"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "U"),
            UInt8(ascii: "o"), UInt8(ascii: "O"), UInt8(ascii: "x"), UInt8(ascii: "X"), UInt8(ascii: "c"),
            UInt8(ascii: "C"):
            return Token(kind: .format(.integer(spec)), range: range)
        case UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "f"), UInt8(ascii: "F"), UInt8(ascii: "g"),
            UInt8(ascii: "G"), UInt8(ascii: "a"), UInt8(ascii: "A"):
            return Token(kind: .format(.real(spec)), range: range)
        default:
            throw error("unknown format specifier '%\(spec)'", start, position, near: "'%\(spec)'")
        }
    }
}
