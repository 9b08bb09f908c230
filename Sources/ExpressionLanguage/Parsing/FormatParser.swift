/// The recursive-descent parser of the format language. Each parsing function names the
/// production of Grammar/format.ebnf it implements; binary arithmetic is parsed by
/// precedence climbing over ``ArithmeticOperator``'s table.
///
///     let parser = FormatParser("name BEGINSWITH[cd] %@", arguments: ["jo"])
///     let predicate = try parser.parsePredicate()
///     parser.warnings   // e.g. AND and OR mixed without parentheses
///
/// Nesting deeper than ``maximumDepth`` is an error (``ExpressionError/Kind/tooDeep``),
/// never a stack overflow.
public final class FormatParser {
    /// How deeply constructs may nest: parentheses, brackets, braces, function calls, NOT,
    /// unary minus, `:=`, and each operator of an arithmetic chain such as `1 + 1 + …`
    /// (which builds a tree as deep as the chain is long) count one level. AND and OR
    /// chains build one flat node and do not count.
    public static let maximumDepth = 256

    public let source: String
    let sourceBytes: [UInt8]
    let arguments: [Value]
    var tokens: [Token] = []
    var index = 0
    var argumentIndex = 0
    var depth = 0
    /// The first lexical error, reported when parsing reaches it (the last token, `.end`,
    /// stands in its place).
    var lexicalError: ExpressionError?
    /// Token indexes of `(` where the text did not parse as a parenthesised predicate, and
    /// why (see ``notPredicate()``).
    var failedPredicateGroups: [Int: ExpressionError] = [:]
    /// Non-fatal findings, such as AND and OR mixed without parentheses.
    public internal(set) var warnings: [ParseWarning] = []

    public init(_ source: String, arguments: [Value] = []) {
        self.source = source
        self.sourceBytes = Array(source.utf8)
        self.arguments = arguments
    }

    /// Parses the whole text as an expression (`NSExpression(format:)`).
    ///
    /// expressionFormat := expression ? end of input ?
    public func parseExpression() throws(ExpressionError) -> FormatExpression {
        start()
        let expression = try self.expression()
        try expectEnd(after: "expression")
        return expression
    }

    /// Parses the whole text as a predicate (`NSPredicate(format:)`).
    ///
    /// predicateFormat := predicate ? end of input ?
    public func parsePredicate() throws(ExpressionError) -> FormatPredicate {
        start()
        let predicate = try self.predicate()
        try expectEnd(after: "predicate")
        return predicate
    }

    func start() {
        (tokens, lexicalError) = Lexer.tokenize(source)
        index = 0
        argumentIndex = 0
        depth = 0
        warnings = []
        failedPredicateGroups = [:]
    }

    // MARK: - Tokens

    var current: Token { tokens[index] }
    var next: Token { tokens[min(index + 1, tokens.count - 1)] }

    func advance() -> Token {
        let token = tokens[index]
        if index < tokens.count - 1 { index += 1 }
        return token
    }

    func isPunctuation(_ p: Token.Punctuation, _ token: Token? = nil) -> Bool {
        if case .punctuation(let q) = (token ?? current).kind { return q == p }
        return false
    }

    func isKeyword(_ k: Keyword, _ token: Token? = nil) -> Bool {
        if case .keyword(let q) = (token ?? current).kind { return q == k }
        return false
    }

    /// An error at `token` (the current one by default). Parsing that reaches the place of
    /// a lexical error reports that error instead.
    func error(_ message: String, at token: Token? = nil, kind: ExpressionError.Kind = .syntax) -> ExpressionError {
        let token = token ?? current
        if case .end = token.kind, let lexicalError { return lexicalError }
        return ExpressionError(kind, message, source: source, range: token.range, near: quoted(token))
    }

    /// The text of `token` as written.
    func text(of token: Token) -> String {
        String(decoding: sourceBytes[token.range.lowerBound..<token.range.upperBound], as: UTF8.self)
    }

    /// How a diagnostic quotes `token`: its text as written (`'first'`, `'0x10'`, shortened
    /// when long), or `end of input`.
    func quoted(_ token: Token) -> String {
        if case .end = token.kind { return "end of input" }
        let text = text(of: token)
        return "'" + (text.count > 40 ? String(text.prefix(39)) + "…" : text) + "'"
    }

    /// Consumes `p`, which closes `opener`; the error says where the opener was.
    @discardableResult
    func expectClosing(_ p: Token.Punctuation, opener: Token) throws(ExpressionError) -> Token {
        guard isPunctuation(p) else {
            if case .end = current.kind, let lexicalError { throw lexicalError }
            let openerLocation = SourceLocation(offset: opener.range.lowerBound, in: source)
            var e = error("expected '\(p.rawValue)' to close '\(text(of: opener))' at \(openerLocation)")
            e.related = opener.range
            throw e
        }
        return advance()
    }

    func expect(_ p: Token.Punctuation, _ what: String) throws(ExpressionError) -> Token {
        guard isPunctuation(p) else { throw error("expected '\(p.rawValue)' \(what)") }
        return advance()
    }

    /// The whole text must be one `what` ("expression" or "predicate").
    func expectEnd(after what: String) throws(ExpressionError) {
        if case .end = current.kind {
            if let lexicalError { throw lexicalError }
            return
        }
        if isPunctuation(.colonAssign) { throw misplacedAssignment() }
        throw error("unexpected \(quoted(current)) after a complete \(what)")
    }

    /// `:=` after something that is not a `$variable`.
    func misplacedAssignment() -> ExpressionError {
        error("only a $variable can be assigned with ':='")
    }

    /// Enters one level of nesting, just after the token that opens it (`(`, `NOT`, `+`, …),
    /// which is where a too-deep error points.
    func enter() throws(ExpressionError) {
        depth += 1
        if depth > FormatParser.maximumDepth {
            throw error(
                "nesting is deeper than \(FormatParser.maximumDepth) levels; split the expression",
                at: tokens[max(0, index - 1)], kind: .tooDeep)
        }
    }

    func leave(_ levels: Int = 1) { depth -= levels }

    struct State {
        var index: Int, argumentIndex: Int, depth: Int, warnings: Int
    }

    var state: State { State(index: index, argumentIndex: argumentIndex, depth: depth, warnings: warnings.count) }

    func restore(_ s: State) {
        index = s.index
        argumentIndex = s.argumentIndex
        depth = s.depth
        warnings.removeLast(warnings.count - s.warnings)
    }

    static func furthest(_ a: ExpressionError, _ b: ExpressionError) -> ExpressionError {
        if a.kind == .tooDeep { return a }
        if b.kind == .tooDeep { return b }
        return (a.range?.lowerBound ?? 0) > (b.range?.lowerBound ?? 0) ? a : b
    }
}

extension FormatParser {
    /// For the string literal at `range` of `source` (quotes included): the source offset
    /// of the character or escape that wrote each UTF-8 byte of its value, then the closing
    /// quote's offset; nil when no string literal is there. A place found in the value (a
    /// predicate inside a FETCH's string) maps back into the source through it.
    public static func valueOffsets(ofStringAt range: SourceRange, in source: String) -> [Int]? {
        Lexer.valueOffsets(ofStringAt: range, in: source)
    }
}
