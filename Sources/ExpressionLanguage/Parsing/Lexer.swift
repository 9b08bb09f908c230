/// Splits format text into tokens (Grammar/tokens.md).
///
/// Works on UTF-8 bytes: every token of the language is ASCII outside string literals,
/// so the lexer never decodes characters except inside quotes.
struct Lexer {
    let source: String
    private let bytes: [UInt8]
    private var position = 0
    /// While a string literal is read for ``valueOffsets(ofStringAt:in:)``: the source
    /// offset of what wrote each UTF-8 byte of its value.
    private var valueOffsets: [Int]?

    init(_ source: String) {
        self.source = source
        self.bytes = Array(source.utf8)
    }

    /// The tokens up to the first lexical error, ending with `.end`, and that error.
    ///
    /// The `.end` after an error stands where the error is; the parser reports the error
    /// when it gets there, so that an earlier syntax error is reported first, as
    /// errors come in the order of the text.
    /// Where each UTF-8 byte of the value of the string literal at `range` of `source`
    /// (quotes included) comes from: the source offset of the character or escape that
    /// wrote it, then the closing quote's offset. Nil when no string literal is there.
    static func valueOffsets(ofStringAt range: SourceRange, in source: String) -> [Int]? {
        var lexer = Lexer(source)
        lexer.position = range.lowerBound
        lexer.valueOffsets = []
        guard let token = try? lexer.next(), case .string = token.kind, token.range == range else { return nil }
        return lexer.valueOffsets
    }

    static func tokenize(_ source: String) -> (tokens: [Token], error: ExpressionError?) {
        var lexer = Lexer(source)
        var tokens: [Token] = []
        while true {
            do {
                let token = try lexer.next()
                tokens.append(token)
                if case .end = token.kind { return (tokens, nil) }
            } catch {
                let offset = error.range?.lowerBound ?? lexer.position
                tokens.append(Token(kind: .end, range: SourceRange(offset, offset)))
                return (tokens, error)
            }
        }
    }

    private func error(_ message: String, _ start: Int, _ end: Int? = nil, near: String? = nil) -> ExpressionError {
        ExpressionError(.syntax, message, source: source, range: SourceRange(start, end ?? start + 1), near: near)
    }

    /// `'text'` for the bytes `start..<end`, to quote in a diagnostic.
    private func quoted(_ start: Int, _ end: Int) -> String {
        "'" + text(start, min(end, bytes.count)) + "'"
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

    /// token := number | string | identifier | reservedWord | selector | escapedWord | atKey
    ///        | variable | formatSpecifier | punctuation
    /// whitespace := " " | ? tab (U+0009) ? | ? line feed (U+000A) ? | ? carriage return (U+000D) ?
    /// variable := "$" letter { letterOrDigit }
    /// escapedWord := "#" letter { letterOrDigit }
    /// atKey := "@" letter { letterOrDigit }
    /// punctuation := "(" | ")" | "[" | "]" | "{" | "}" | "," | "." | "+" | "-" | "*" | "**" | "/"
    ///              | "=" | "==" | "!=" | "<>" | "<" | "<=" | "=<" | ">" | ">=" | "=>" | ":="
    ///              | "!" | "&&" | "||" | "&" | "|" | "^" | "<<" | ">>"
    ///
    /// Whitespace separates tokens and is otherwise ignored. Punctuation is matched longest
    /// first. Comments, `?`, a backslash outside quotes and the C bitwise operators are
    /// errors that say what to write instead.
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
        if let function = Lexer.bitwiseFunctions[b] {
            let symbol = text(start, start + 1)
            throw error(
                "'\(symbol)' is not an operator of the format language; write \(function)", start,
                near: "'\(symbol)'")
        }
        // An unexpected character; quote the whole character, not a byte of it.
        let scalarEnd = Lexer.scalarEnd(bytes, start)
        let ch = text(start, scalarEnd)
        throw error("unexpected character '\(ch)'", start, scalarEnd, near: "'\(ch)'")
    }

    /// No prefix `~` (Apple's parser is not known to take it; LANGUAGE.md, decision 3):
    /// what to write instead.
    private static let bitwiseFunctions: [UInt8: String] = [UInt8(ascii: "~"): "onesComplement(a)"]

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

    /// identifier := ( letter { letterOrDigit } ) - reservedWord
    /// letter := ? "A" to "Z" ? | ? "a" to "z" ? | "_"
    /// letterOrDigit := letter | digit
    /// selector := letter { letterOrDigit } ":" { [ letter { letterOrDigit } ] ":" }
    ///
    /// A selector's colons are never followed by `=` (that is `:=`). Reserved words are
    /// matched case-insensitively; identifiers are case-sensitive.
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
                        throw error(
                            "expected ':' after '\(part)' in the function name '\(selector + part)'",
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

    /// number := hexNumber | octalNumber | binaryNumber | decimalNumber
    /// decimalNumber := ( digits [ "." digits ] | "." digits ) [ exponent ]
    /// exponent := ( "e" | "E" ) [ "+" | "-" ] digits
    /// digits := digit { digit }
    /// digit := ? "0" to "9" ?
    /// hexNumber := "0" ( "x" | "X" ) hexDigit { hexDigit }
    /// octalNumber := "0" ( "o" | "O" ) octalDigit { octalDigit }
    /// binaryNumber := "0" ( "b" | "B" ) binaryDigit { binaryDigit }
    /// hexDigit := digit | ? "a" to "f" ? | ? "A" to "F" ?
    /// octalDigit := ? "0" to "7" ?
    /// binaryDigit := "0" | "1"
    ///
    /// A decimal number with a `.` or an exponent is a double, any other number an
    /// integer (Int64). A letter or digit may not follow a number directly.
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
                    throw error(
                        "invalid digit '\(text(position, position + 1))' in the number '\(literal)'",
                        position, near: "'\(literal)'")
                }
                guard !body.isEmpty else {
                    throw error("expected digits after '\(literal)'", start, position, near: "'\(literal)'")
                }
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
            throw error(
                "a number cannot be followed directly by '\(text(position, position + 1))'", position,
                near: "'\(literal)\(text(position, position + 1))'")
        }
        let range = SourceRange(start, position)
        if isReal {
            guard let d = Double(literal) else {
                throw error("invalid number '\(literal)'", start, position, near: "'\(literal)'")
            }
            return Token(kind: .number(.double(d)), range: range)
        }
        if literal == "9223372036854775808" { return Token(kind: .minimumIntegerMagnitude, range: range) }
        guard let i = Int64(literal) else {
            throw error(
                "the integer \(literal) does not fit in 64 bits; write it with a decimal point to make it a double",
                start, position, near: "'\(literal)'")
        }
        return Token(kind: .number(.integer(i)), range: range)
    }

    /// string := '"' { character - ( '"' | "\" ) | escape } '"'
    ///         | "'" { character - ( "'" | "\" ) | escape } "'"
    /// escape := "\" ( octalDigit octalDigit octalDigit | ( "x" | "X" ) hexDigit hexDigit
    ///         | ( "u" | "U" ) hexDigit hexDigit hexDigit hexDigit
    ///         | "a" | "b" | "f" | "n" | "r" | "t" | "v"
    ///         | character - ( octalDigit | "x" | "X" | "u" | "U" ) )
    /// character := ? any Unicode scalar ?
    ///
    /// Two `\u` escapes that form a UTF-16 surrogate pair are one scalar.
    private mutating func string(_ start: Int, quote: UInt8) throws(ExpressionError) -> Token {
        /// The string never ends: the error stands at the end and names the opening quote.
        func unterminated() -> ExpressionError {
            let quoteText = quote == UInt8(ascii: "'") ? "\"'\"" : "'\"'"
            let opener = SourceLocation(offset: start, in: source)
            return ExpressionError(
                .syntax, "expected \(quoteText) to close the string at \(opener)", source: source,
                range: SourceRange(bytes.count, bytes.count), near: "end of input",
                related: SourceRange(start, start + 1))
        }
        position += 1
        var runStart = position
        var result = ""
        func flushRun() {
            if runStart < position {
                result += text(runStart, position)
                valueOffsets? += Array(runStart..<position)
            }
        }
        while true {
            guard let c = peek() else { throw unterminated() }
            if c == quote {
                flushRun()
                valueOffsets?.append(position)
                position += 1
                return Token(kind: .string(result), range: SourceRange(start, position))
            }
            if c != UInt8(ascii: "\\") {
                position += 1
                continue
            }
            flushRun()
            let escapeStart = position
            let written = result.utf8.count
            defer { valueOffsets? += Array(repeating: escapeStart, count: result.utf8.count - written) }
            position += 1
            guard let e = peek() else { throw unterminated() }
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
                    throw error(
                        "the escape \(text(escapeStart, position)) is not a Unicode scalar (a lone surrogate)",
                        escapeStart, position, near: quoted(escapeStart, position))
                }
                result.unicodeScalars.append(s)
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                // \ooo: exactly three octal digits.
                var value = UInt32(e - UInt8(ascii: "0"))
                for _ in 0..<2 {
                    guard let d = peek(), d >= UInt8(ascii: "0"), d <= UInt8(ascii: "7") else {
                        throw error(
                            "an octal escape needs three octal digits (\\ooo)", escapeStart, position,
                            near: quoted(escapeStart, position))
                    }
                    value = value * 8 + UInt32(d - UInt8(ascii: "0"))
                    position += 1
                }
                guard let s = Unicode.Scalar(value) else {
                    throw error("invalid octal escape", escapeStart, position, near: quoted(escapeStart, position))
                }
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
                let letter = text(escapeStart + 1, escapeStart + 2)
                throw error(
                    "the escape \\\(letter) needs \(count) hexadecimal digits", escapeStart, position,
                    near: quoted(escapeStart, position))
            }
            value = value * 16 + digit
            position += 1
        }
        return value
    }

    private mutating func hexEscape(count: Int, _ escapeStart: Int) throws(ExpressionError) -> Unicode.Scalar {
        let value = try hexEscapeValue(count: count, escapeStart)
        guard let s = Unicode.Scalar(value) else {
            throw error("invalid escape", escapeStart, position, near: quoted(escapeStart, position))
        }
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

    /// formatSpecifier := "%@" | "%K" | "%" { digit | "." } { lengthModifier } conversion
    /// lengthModifier := "h" | "l" | "q" | "L" | "z" | "j" | "t"
    /// conversion := integerConversion | realConversion
    /// integerConversion := "d" | "D" | "i" | "u" | "U" | "o" | "O" | "x" | "X" | "c" | "C"
    /// realConversion := "e" | "E" | "f" | "F" | "g" | "G" | "a" | "A"
    ///
    /// `%%` (a literal percent sign in printf) has no meaning outside quotes and is an
    /// error, as is `%` used as an operator.
    private mutating func formatSpecifier(_ start: Int) throws(ExpressionError) -> Token {
        position += 1
        let notASpecifier =
            "'%' starts a format specifier such as %@, %K or %d; for the remainder write modulus:by:(a, b)"
        guard let c = peek() else { throw error(notASpecifier, start, near: "'%'") }
        if c == UInt8(ascii: "@") {
            position += 1; return Token(kind: .format(.object), range: SourceRange(start, position))
        }
        if c == UInt8(ascii: "K") {
            position += 1; return Token(kind: .format(.keyPath), range: SourceRange(start, position))
        }
        if c == UInt8(ascii: "%") {
            throw error(
                "'%%' is a literal percent sign, which is not valid outside a quoted string", start, start + 2,
                near: "'%%'")
        }
        // printf-style: optional precision (ignored), length modifiers, conversion.
        let specStart = position
        while let d = peek(), Lexer.isDigit(d) || d == UInt8(ascii: ".") { position += 1 }
        while let m = peek(), "hlqLzjt".utf8.contains(m) { position += 1 }
        guard let conversion = peek(), Lexer.isIdentifierStart(conversion) || conversion == UInt8(ascii: "@") else {
            throw error(notASpecifier, start, position, near: quoted(start, position))
        }
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
