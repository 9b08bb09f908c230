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
    private let sourceBytes: [UInt8]
    private let arguments: [Value]
    private var tokens: [Token] = []
    private var index = 0
    private var argumentIndex = 0
    private var depth = 0
    /// The first lexical error, reported when parsing reaches it (the last token, `.end`,
    /// stands in its place).
    private var lexicalError: ExpressionError?
    /// Token indexes of `(` where the text did not parse as a parenthesised predicate, and
    /// why (see ``notPredicate()``).
    private var failedPredicateGroups: [Int: ExpressionError] = [:]
    /// Non-fatal findings, such as AND and OR mixed without parentheses.
    public private(set) var warnings: [ParseWarning] = []

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

    private func start() {
        (tokens, lexicalError) = Lexer.tokenize(source)
        index = 0
        argumentIndex = 0
        depth = 0
        warnings = []
        failedPredicateGroups = [:]
    }

    // MARK: - Tokens

    private var current: Token { tokens[index] }
    private var next: Token { tokens[min(index + 1, tokens.count - 1)] }

    private func advance() -> Token {
        let token = tokens[index]
        if index < tokens.count - 1 { index += 1 }
        return token
    }

    private func isPunctuation(_ p: Token.Punctuation, _ token: Token? = nil) -> Bool {
        if case .punctuation(let q) = (token ?? current).kind { return q == p }
        return false
    }

    private func isKeyword(_ k: Keyword, _ token: Token? = nil) -> Bool {
        if case .keyword(let q) = (token ?? current).kind { return q == k }
        return false
    }

    /// An error at `token` (the current one by default). Parsing that reaches the place of
    /// a lexical error reports that error instead.
    private func error(_ message: String, at token: Token? = nil, kind: ExpressionError.Kind = .syntax) -> ExpressionError {
        let token = token ?? current
        if case .end = token.kind, let lexicalError { return lexicalError }
        return ExpressionError(kind, message, source: source, range: token.range, near: quoted(token))
    }

    /// The text of `token` as written.
    private func text(of token: Token) -> String {
        String(decoding: sourceBytes[token.range.lowerBound..<token.range.upperBound], as: UTF8.self)
    }

    /// How a diagnostic quotes `token`: its text as written (`'first'`, `'0x10'`, shortened
    /// when long), or `end of input`.
    private func quoted(_ token: Token) -> String {
        if case .end = token.kind { return "end of input" }
        let text = text(of: token)
        return "'" + (text.count > 40 ? String(text.prefix(39)) + "…" : text) + "'"
    }

    /// Consumes `p`, which closes `opener`; the error says where the opener was.
    @discardableResult
    private func expectClosing(_ p: Token.Punctuation, opener: Token) throws(ExpressionError) -> Token {
        guard isPunctuation(p) else {
            if case .end = current.kind, let lexicalError { throw lexicalError }
            let openerLocation = SourceLocation(offset: opener.range.lowerBound, in: source)
            var e = error("expected '\(p.rawValue)' to close '\(text(of: opener))' at \(openerLocation)")
            e.related = opener.range
            throw e
        }
        return advance()
    }

    private func expect(_ p: Token.Punctuation, _ what: String) throws(ExpressionError) -> Token {
        guard isPunctuation(p) else { throw error("expected '\(p.rawValue)' \(what)") }
        return advance()
    }

    /// The whole text must be one `what` ("expression" or "predicate").
    private func expectEnd(after what: String) throws(ExpressionError) {
        if case .end = current.kind {
            if let lexicalError { throw lexicalError }
            return
        }
        if isPunctuation(.colonAssign) { throw misplacedAssignment() }
        throw error("unexpected \(quoted(current)) after a complete \(what)")
    }

    /// `:=` after something that is not a `$variable`.
    private func misplacedAssignment() -> ExpressionError {
        error("only a $variable can be assigned with ':='")
    }

    /// Enters one level of nesting, just after the token that opens it (`(`, `NOT`, `+`, …),
    /// which is where a too-deep error points.
    private func enter() throws(ExpressionError) {
        depth += 1
        if depth > FormatParser.maximumDepth {
            throw error("nesting is deeper than \(FormatParser.maximumDepth) levels; split the expression",
                        at: tokens[max(0, index - 1)], kind: .tooDeep)
        }
    }

    private func leave(_ levels: Int = 1) { depth -= levels }

    private struct State {
        var index: Int, argumentIndex: Int, depth: Int, warnings: Int
    }

    private var state: State { State(index: index, argumentIndex: argumentIndex, depth: depth, warnings: warnings.count) }

    private func restore(_ s: State) {
        index = s.index
        argumentIndex = s.argumentIndex
        depth = s.depth
        warnings.removeLast(warnings.count - s.warnings)
    }

    private static func furthest(_ a: ExpressionError, _ b: ExpressionError) -> ExpressionError {
        if a.kind == .tooDeep { return a }
        if b.kind == .tooDeep { return b }
        return (a.range?.lowerBound ?? 0) > (b.range?.lowerBound ?? 0) ? a : b
    }

    // MARK: - Predicates

    /// predicate := orPredicate
    private func predicate() throws(ExpressionError) -> FormatPredicate {
        try orPredicate()
    }

    /// orPredicate := andPredicate { ("OR" | "||") andPredicate }
    private func orPredicate() throws(ExpressionError) -> FormatPredicate {
        let first = try andPredicate()
        guard isOr else { return first.predicate }
        var items = [first]
        while isOr {
            _ = advance()
            items.append(try andPredicate())
        }
        if let chain = items.first(where: \.isUnparenthesizedChain) {
            warnings.append(ParseWarning(
                "AND and OR are mixed without parentheses; Remodel binds AND tighter than OR (as C and SQL do), "
                    + "but Apple does not document its order: add parentheses to say what you mean",
                source: source, range: chain.predicate.range))
        }
        let predicates = items.map(\.predicate)
        return FormatPredicate(.or(predicates), range: Self.span(predicates.map(\.range)))
    }

    private var isOr: Bool { isKeyword(.or) || isPunctuation(.pipes) }
    private var isAnd: Bool { isKeyword(.and) || isPunctuation(.ampersands) }

    private struct ChainItem {
        var predicate: FormatPredicate
        var isUnparenthesizedChain: Bool
    }

    /// andPredicate := notPredicate { ("AND" | "&&") notPredicate }
    private func andPredicate() throws(ExpressionError) -> ChainItem {
        let first = try notPredicate()
        guard isAnd else { return ChainItem(predicate: first, isUnparenthesizedChain: false) }
        var items = [first]
        while isAnd {
            _ = advance()
            items.append(try notPredicate())
        }
        return ChainItem(predicate: FormatPredicate(.and(items), range: Self.span(items.map(\.range))),
                         isUnparenthesizedChain: true)
    }

    /// notPredicate := ("NOT" | "!") notPredicate | "(" predicate ")"
    ///               | "TRUEPREDICATE" | "FALSEPREDICATE" | comparison
    private func notPredicate() throws(ExpressionError) -> FormatPredicate {
        let token = current
        if isKeyword(.not) || isPunctuation(.bang) {
            _ = advance()
            try enter()
            let operand = try notPredicate()
            leave()
            return FormatPredicate(.not(operand), range: token.range.union(operand.range ?? token.range))
        }
        if isKeyword(.truePredicate) || isKeyword(.falsePredicate) {
            _ = advance()
            return FormatPredicate(.constant(isKeyword(.truePredicate, token)), range: token.range)
        }
        if isPunctuation(.leftParen) { return try parenthesizedPredicate(token) }
        return try comparison()
    }

    /// `"(" predicate ")"`, or a comparison whose left side starts with `"(" expression ")"`.
    private func parenthesizedPredicate(_ token: Token) throws(ExpressionError) -> FormatPredicate {
        // `(` opens either a predicate or an expression (`(a + b) > 3`): try the
        // predicate first, then the comparison, and report the error that got further.
        // A failed predicate attempt is remembered by position: text that is parsed
        // again (a TERNARY in parentheses inside a TERNARY in parentheses …) is not
        // tried both ways again, which would double the time with each level.
        let saved = state
        let asPredicate: ExpressionError
        if let known = failedPredicateGroups[index] {
            asPredicate = known
        } else {
            do {
                _ = advance()
                try enter()
                let inner = try predicate()
                let close = try expectClosing(.rightParen, opener: token)
                leave()
                var result = inner
                result.range = token.range.union(close.range)
                return result
            } catch {
                if error.kind == .tooDeep { throw error }
                failedPredicateGroups[saved.index] = error
                asPredicate = error
                restore(saved)
            }
        }
        do {
            return try comparison()
        } catch let asComparison {
            throw Self.furthest(asPredicate, asComparison)
        }
    }

    /// comparison := [ "ANY" | "SOME" | "ALL" | "NONE" ] expression comparisonOperator expression
    private func comparison() throws(ExpressionError) -> FormatPredicate {
        let first = current
        var modifier = Comparison.Modifier.direct
        var negate = false
        if isKeyword(.any) || isKeyword(.some) {
            modifier = .any
            _ = advance()
        } else if isKeyword(.all) {
            modifier = .all
            _ = advance()
        } else if isKeyword(.none) {
            modifier = .any
            negate = true
            _ = advance()
        }
        let lhs = try expression()
        let (op, options) = try comparisonOperator()
        let rhs = try expression()
        let range = first.range.union(rhs.range ?? first.range)
        let comparison = FormatPredicate(
            .comparison(Comparison(lhs, op, rhs, modifier: modifier, options: options)), range: range)
        return negate ? FormatPredicate(.not(comparison), range: range) : comparison
    }

    /// comparisonOperator := ( "=" | "==" | "!=" | "<>" | "<" | "<=" | "=<" | ">" | ">=" | "=>"
    ///                       | "CONTAINS" | "IN" | "BEGINSWITH" | "ENDSWITH" | "LIKE" | "MATCHES"
    ///                       | "UTI-CONFORMS-TO" | "UTI-EQUALS" ) [ options ]
    ///                     | "BETWEEN"
    /// options := "[" identifier "]"
    ///
    /// The identifier of `options` is made of the letters c, d, n and l, in any order and case.
    private func comparisonOperator() throws(ExpressionError) -> (ComparisonOperator, ComparisonOptions) {
        guard let op = comparisonOperatorAhead else {
            if isPunctuation(.colonAssign) { throw misplacedAssignment() }
            if case .end = current.kind {
                throw error("expected a comparison operator (==, <, IN, LIKE, …) to make a predicate")
            }
            throw error("expected a comparison operator (==, <, IN, LIKE, …)")
        }
        _ = advance()
        guard isPunctuation(.leftBracket) else { return (op, []) }
        // No expression starts with `[`, so a `[` here always opens options.
        let open = advance()
        guard op.acceptsOptions else { throw error("BETWEEN takes no options such as [c]", at: open) }
        guard case .identifier(let letters) = current.kind, let options = ComparisonOptions(letters: letters) else {
            throw error("expected comparison options: the letters c, d, n and l, as in [c] or [cd]")
        }
        _ = advance()
        try expectClosing(.rightBracket, opener: open)
        return (op, options)
    }

    private var comparisonOperatorAhead: ComparisonOperator? {
        switch current.kind {
        case .punctuation(let p):
            switch p {
            case .assign, .equal: return .equalTo
            case .notEqual, .notEqualAlt: return .notEqualTo
            case .less: return .lessThan
            case .lessOrEqual, .lessOrEqualAlt: return .lessThanOrEqualTo
            case .greater: return .greaterThan
            case .greaterOrEqual, .greaterOrEqualAlt: return .greaterThanOrEqualTo
            default: return nil
            }
        case .keyword(let k):
            switch k {
            case .contains: return .contains
            case .in: return .in
            case .beginsWith: return .beginsWith
            case .endsWith: return .endsWith
            case .like: return .like
            case .matches: return .matches
            case .between: return .between
            case .utiConformsTo: return .utiConformsTo
            case .utiEquals: return .utiEquals
            default: return nil
            }
        default: return nil
        }
    }

    // MARK: - Expressions

    /// expression := assignment
    /// assignment := variable ":=" expression | additive
    private func expression() throws(ExpressionError) -> FormatExpression {
        if case .variable(let name) = current.kind, isPunctuation(.colonAssign, next) {
            let first = advance()
            _ = advance()
            try enter()
            let value = try expression()
            leave()
            return FormatExpression(.assignment(variable: name, value: value),
                                    range: first.range.union(value.range ?? first.range))
        }
        return try binary(minimumPrecedence: 0)
    }

    private var arithmeticOperatorAhead: ArithmeticOperator? {
        guard case .punctuation(let p) = current.kind else { return nil }
        switch p {
        case .plus: return .add
        case .minus: return .subtract
        case .star: return .multiply
        case .slash: return .divide
        case .power: return .power
        default: return nil
        }
    }

    /// additive := multiplicative { ("+" | "-") multiplicative }
    /// multiplicative := power { ("*" | "/") power }
    /// power := unary { "**" unary }
    ///
    /// One precedence-climbing loop parses the three levels, driven by
    /// ``ArithmeticOperator/precedence`` and ``ArithmeticOperator/associativity``.
    private func binary(minimumPrecedence: Int) throws(ExpressionError) -> FormatExpression {
        var lhs = try unary()
        var levels = 0
        defer { leave(levels) }
        while let op = arithmeticOperatorAhead, op.precedence >= minimumPrecedence {
            _ = advance()
            try enter()
            levels += 1
            let nextMinimum = op.associativity == .left ? op.precedence + 1 : op.precedence
            let rhs = try binary(minimumPrecedence: nextMinimum)
            lhs = FormatExpression(.arithmetic(op, lhs, rhs), range: Self.span([lhs.range, rhs.range]))
        }
        return lhs
    }

    /// unary := "-" unary | postfix
    private func unary() throws(ExpressionError) -> FormatExpression {
        guard isPunctuation(.minus) else { return try postfix() }
        let minus = advance()
        if case .minimumIntegerMagnitude = current.kind {
            let literal = advance()
            return FormatExpression(.constant(.integer(.min)), range: minus.range.union(literal.range))
        }
        try enter()
        let operand = try unary()
        leave()
        let range = minus.range.union(operand.range ?? minus.range)
        // A negative numeric literal is a constant, as Apple's parser folds it (but not
        // the smallest integer from a %d argument, whose negation overflows).
        switch operand.kind {
        case .constant(.integer(let i)) where i != .min: return FormatExpression(.constant(.integer(-i)), range: range)
        case .constant(.double(let d)): return FormatExpression(.constant(.double(-d)), range: range)
        default: return FormatExpression(.negate(operand), range: range)
        }
    }

    /// postfix := primary { "[" index "]" | "." keyComponent }
    /// index := "FIRST" | "LAST" | "SIZE" | expression
    private func postfix() throws(ExpressionError) -> FormatExpression {
        var expression = try primary()
        var levels = 0
        defer { leave(levels) }
        while true {
            if isPunctuation(.leftBracket) {
                let open = advance()
                try enter()
                levels += 1
                // FIRST, LAST and SIZE cannot start an expression, so they are always the
                // specifier (and a missing `]` after them is reported as such).
                let specifier: FormatExpression.IndexSpecifier
                if isKeyword(.first) {
                    _ = advance(); specifier = .first
                } else if isKeyword(.last) {
                    _ = advance(); specifier = .last
                } else if isKeyword(.size) {
                    _ = advance(); specifier = .size
                } else {
                    specifier = .expression(try self.expression())
                }
                let close = try expectClosing(.rightBracket, opener: open)
                expression = FormatExpression(.index(expression, specifier),
                                              range: (expression.range ?? open.range).union(close.range))
            } else if isPunctuation(.dot) {
                _ = advance()
                let (components, last) = try keyComponents()
                expression = Self.appending(components, to: expression,
                                            range: (expression.range ?? last.range).union(last.range))
            } else {
                return expression
            }
        }
    }

    /// keyComponent := identifier | reservedWord | escapedWord | atKey | "%K" | "(" expression ")"
    ///
    /// After a dot a reserved word is a key, spelled as written (`@max.self`,
    /// `person.first`). `%K` may stand for several components (`a.b`), and so may a key
    /// path in parentheses: `(a).(b.c)` is `a.b.c`.
    private func keyComponents() throws(ExpressionError) -> ([String], Token) {
        let token = current
        switch token.kind {
        case .identifier(let name), .escapedIdentifier(let name):
            _ = advance(); return ([name], token)
        case .atKey(let name):
            _ = advance(); return (["@" + name], token)
        case .keyword:
            // After a dot a reserved word can only be a key (`@max.self`, `person.first`).
            _ = advance()
            return ([text(of: token)], token)
        case .format(.keyPath):
            _ = advance()
            return (try keyPathArgument(token), token)
        case .punctuation(.leftParen):
            _ = advance()
            try enter()
            let inner = try expression()
            let close = try expectClosing(.rightParen, opener: token)
            leave()
            guard case .keyPath(operand: nil, let path) = inner.kind else {
                throw error("expected a key path between the parentheses after '.'", at: token)
            }
            return (path, close)
        default:
            throw error("expected a key after '.'")
        }
    }

    private static func appending(_ components: [String], to base: FormatExpression, range: SourceRange) -> FormatExpression {
        switch base.kind {
        case .keyPath(let operand, let path):
            return FormatExpression(.keyPath(operand: operand, path: path + components), range: range)
        case .evaluatedObject:
            // `SELF.x` is the key path `x`.
            return FormatExpression(.keyPath(operand: nil, path: components), range: range)
        default:
            return FormatExpression(.keyPath(operand: base, path: components), range: range)
        }
    }

    /// primary := number | string | formatSpecifier | variable | "NULL" | "NIL" | "TRUE" | "YES"
    ///          | "FALSE" | "NO" | "SELF" | "ANYKEY" | aggregate | "(" expression ")"
    ///          | functionCall | specialForm | identifier | escapedWord | atKey
    ///
    /// An identifier followed by `(` is a function call; otherwise it is a key.
    ///
    /// The forms that nest are handled here, the others by ``atom(_:)``, which keeps this
    /// function's stack frame small (it is on the stack once per level of nesting).
    private func primary() throws(ExpressionError) -> FormatExpression {
        let token = current
        switch token.kind {
        case .identifier where isPunctuation(.leftParen, next), .selector, .keyword(.subquery), .keyword(.fetch),
            .keyword(.cast):
            return try call(token)
        case .punctuation(.leftBrace):
            return try aggregate()
        case .punctuation(.leftParen):
            return try parenthesizedExpression(token)
        default:
            return try atom(token)
        }
    }

    /// `"(" expression ")"`.
    private func parenthesizedExpression(_ open: Token) throws(ExpressionError) -> FormatExpression {
        _ = advance()
        try enter()
        var inner = try expression()
        let close = try expectClosing(.rightParen, opener: open)
        leave()
        inner.range = open.range.union(close.range)
        return inner
    }

    /// The primaries that do not nest: literals, format arguments, variables, keys.
    private func atom(_ token: Token) throws(ExpressionError) -> FormatExpression {
        let kind: FormatExpression.Kind
        switch token.kind {
        case .number(let value): kind = .constant(value)
        case .minimumIntegerMagnitude:
            throw error("the integer 9223372036854775808 does not fit in 64 bits; write it with a decimal point to make it a double")
        case .string(let text): kind = .constant(.string(text))
        case .format(let specifier):
            _ = advance()
            return try formatArgument(specifier, token)
        case .variable(let name): kind = .variable(name)
        case .escapedIdentifier(let name), .identifier(let name): kind = .keyPath(operand: nil, path: [name])
        case .atKey(let name): kind = .keyPath(operand: nil, path: ["@" + name])
        case .keyword(let keyword): kind = try keywordAtom(keyword, token)
        default: throw error("expected an expression")
        }
        _ = advance()
        return FormatExpression(kind, range: token.range)
    }

    private func keywordAtom(_ keyword: Keyword, _ token: Token) throws(ExpressionError) -> FormatExpression.Kind {
        switch keyword {
        case .null, .nil: return .constant(.null)
        case .true, .yes: return .constant(.bool(true))
        case .false, .no: return .constant(.bool(false))
        case .self: return .evaluatedObject
        case .anyKey: return .anyKey
        default:
            throw error("'\(text(of: token))' is a reserved word and cannot start an expression; "
                        + "write #\(text(of: token)) to use it as a key")
        }
    }

    /// aggregate := "{" [ expression { "," expression } ] "}"
    private func aggregate() throws(ExpressionError) -> FormatExpression {
        let open = advance()
        try enter()
        defer { leave() }
        var elements: [FormatExpression] = []
        if !isPunctuation(.rightBrace) {
            elements.append(try expression())
            while isPunctuation(.comma) {
                _ = advance()
                elements.append(try expression())
            }
        }
        let close = try expectClosing(.rightBrace, opener: open)
        return FormatExpression(.aggregate(elements), range: open.range.union(close.range))
    }

    /// functionCall := functionName "(" [ expression { "," expression } ] ")"
    /// functionName := identifier | selector
    /// specialForm := "FUNCTION" "(" expression "," expression { "," expression } ")"
    ///              | "TERNARY" "(" predicate "," expression "," expression ")"
    ///              | "CAST" "(" expression "," expression ")"
    ///              | "SUBQUERY" "(" expression "," variable "," predicate ")"
    ///              | "FETCH" "(" expression "," expression "," expression ")"
    ///
    /// FUNCTION and TERNARY are identifiers (matched case-insensitively) that are special
    /// only before `(`. A function name must name a built-in function and be given its
    /// number of arguments: `sqrt(2)` or `sqrt:(2)`, `now()`, `modulus:by:(7, 2)`.
    ///
    /// Each form has its own small function: calls nest (`SUBQUERY(…, TERNARY(…))`), and
    /// one function for all of them would put every form's locals on the stack at every
    /// level, which in debug builds overflows the stack before ``maximumDepth``.
    private func call(_ nameToken: Token) throws(ExpressionError) -> FormatExpression {
        let form = try callForm(nameToken)
        _ = advance()
        let open = advance()
        try enter()
        defer { leave() }
        switch form {
        case .ternary: return try ternary(nameToken, open)
        case .subquery: return try subquery(nameToken, open)
        case .cast: return try cast(nameToken, open)
        case .fetch: return try fetch(nameToken, open)
        case .function: return try function(nameToken, open)
        case .builtin(let name): return try builtin(name, nameToken, open)
        }
    }

    private enum CallForm {
        case ternary, subquery, cast, fetch, function
        case builtin(String)
    }

    /// Which call `nameToken` starts; an error unless `(` follows it.
    private func callForm(_ nameToken: Token) throws(ExpressionError) -> CallForm {
        let name: String
        switch nameToken.kind {
        case .identifier(let n), .selector(let n): name = n
        case .keyword(let k): name = k.rawValue
        default: name = text(of: nameToken)
        }
        guard isPunctuation(.leftParen, next) else {
            if case .keyword = nameToken.kind { throw error("expected '(' after \(name)", at: next) }
            throw error("expected '(' after the function name '\(name)'", at: next)
        }
        switch name.uppercased() {
        case "TERNARY": return .ternary
        case "SUBQUERY": return .subquery
        case "CAST": return .cast
        case "FETCH": return .fetch
        case "FUNCTION": return .function
        default: return .builtin(name)
        }
    }

    /// The `)` that ends the call `name(…`, and the call's node.
    private func finishCall(_ kind: FormatExpression.Kind, _ nameToken: Token, _ open: Token) throws(ExpressionError) -> FormatExpression {
        let close = try expectClosing(.rightParen, opener: open)
        return FormatExpression(kind, range: nameToken.range.union(close.range))
    }

    /// The `,` after the argument `what` of the special form `form`.
    private func comma(after what: String, of form: String) throws(ExpressionError) {
        _ = try expect(.comma, "after the \(what) of \(form)")
    }

    /// The arguments of a call: `[ expression { "," expression } ]`, up to `)`.
    private func callArguments() throws(ExpressionError) -> [FormatExpression] {
        var arguments: [FormatExpression] = []
        if !isPunctuation(.rightParen) {
            arguments.append(try expression())
            while isPunctuation(.comma) {
                _ = advance()
                arguments.append(try expression())
            }
        }
        return arguments
    }

    private func ternary(_ nameToken: Token, _ open: Token) throws(ExpressionError) -> FormatExpression {
        let condition = try predicate()
        try comma(after: "condition", of: "TERNARY")
        let whenTrue = try expression()
        try comma(after: "second argument", of: "TERNARY")
        let whenFalse = try expression()
        return try finishCall(.ternary(condition, whenTrue, whenFalse), nameToken, open)
    }

    private func subquery(_ nameToken: Token, _ open: Token) throws(ExpressionError) -> FormatExpression {
        let collection = try expression()
        try comma(after: "collection", of: "SUBQUERY")
        guard case .variable(let variable) = current.kind else {
            throw error("expected a variable such as $x as the second argument of SUBQUERY")
        }
        _ = advance()
        try comma(after: "variable", of: "SUBQUERY")
        let condition = try predicate()
        return try finishCall(.subquery(collection: collection, variable: variable, predicate: condition), nameToken, open)
    }

    private func cast(_ nameToken: Token, _ open: Token) throws(ExpressionError) -> FormatExpression {
        let value = try expression()
        try comma(after: "value", of: "CAST")
        let type = try expression()
        return try finishCall(.cast(value, type: type), nameToken, open)
    }

    private func fetch(_ nameToken: Token, _ open: Token) throws(ExpressionError) -> FormatExpression {
        let request = try expression()
        try comma(after: "fetch request", of: "FETCH")
        let context = try expression()
        try comma(after: "context", of: "FETCH")
        let countOnly = try expression()
        return try finishCall(.fetch(request: request, context: context, countOnly: countOnly), nameToken, open)
    }

    private func function(_ nameToken: Token, _ open: Token) throws(ExpressionError) -> FormatExpression {
        let arguments = try callArguments()
        guard arguments.count >= 2 else {
            throw error("FUNCTION needs a target and a selector: FUNCTION(target, 'selector:', arguments…)", at: nameToken)
        }
        return try finishCall(.functionCall(target: arguments[0], selector: arguments[1],
                                            arguments: Array(arguments.dropFirst(2))), nameToken, open)
    }

    private func builtin(_ name: String, _ nameToken: Token, _ open: Token) throws(ExpressionError) -> FormatExpression {
        let arguments = try callArguments()
        guard let function = BuiltinFunction.named(name) else {
            throw ExpressionError(.unknownFunction,
                "unknown function '\(name)'; the built-in functions are listed in docs/language.md, "
                    + "and methods are called with FUNCTION(target, 'selector:', …)",
                source: source, range: nameToken.range, near: quoted(nameToken))
        }
        guard function.arity == arguments.count else {
            throw ExpressionError(.unknownFunction,
                "\(function.formatName) takes \(function.arity) argument\(function.arity == 1 ? "" : "s"), not \(arguments.count)",
                source: source, range: nameToken.range, near: quoted(nameToken))
        }
        return try finishCall(.function(selector: function.selector, arguments: arguments), nameToken, open)
    }

    // MARK: - Format arguments

    private func nextArgument(_ token: Token) throws(ExpressionError) -> Value {
        guard argumentIndex < arguments.count else {
            throw ExpressionError(.formatArgument,
                "\(text(of: token)) has no argument (\(arguments.count) given); pass one argument per format specifier",
                source: source, range: token.range, near: quoted(token))
        }
        defer { argumentIndex += 1 }
        return arguments[argumentIndex]
    }

    private func keyPathArgument(_ token: Token) throws(ExpressionError) -> [String] {
        let argument = try nextArgument(token)
        guard case .string(let path) = argument, !path.isEmpty else {
            let given = argument == .string("") ? "an empty string" : argument.kind.rawValue
            throw ExpressionError(.formatArgument, "%K needs a key path string, not \(given)",
                                  source: source, range: token.range, near: quoted(token))
        }
        return path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    private func formatArgument(_ specifier: FormatSpecifier, _ token: Token) throws(ExpressionError) -> FormatExpression {
        switch specifier {
        case .object:
            return FormatExpression(.constant(try nextArgument(token)), range: token.range)
        case .keyPath:
            return FormatExpression(.keyPath(operand: nil, path: try keyPathArgument(token)), range: token.range)
        case .integer:
            let argument = try nextArgument(token)
            let value: Int64
            switch argument {
            case .integer(let i): value = i
            case .bool(let b): value = b ? 1 : 0
            case .double(let d) where d.isFinite && d.rounded(.towardZero) >= -9.2e18 && d.rounded(.towardZero) <= 9.2e18:
                value = Int64(d.rounded(.towardZero))
            default:
                throw ExpressionError(.formatArgument, "\(specifier) needs an integer argument, not \(argument.kind.rawValue)",
                                      source: source, range: token.range, near: quoted(token))
            }
            return FormatExpression(.constant(.integer(value)), range: token.range)
        case .real:
            let argument = try nextArgument(token)
            guard let d = argument.doubleValue else {
                throw ExpressionError(.formatArgument, "\(specifier) needs a number argument, not \(argument.kind.rawValue)",
                                      source: source, range: token.range, near: quoted(token))
            }
            return FormatExpression(.constant(.double(d)), range: token.range)
        }
    }

    private static func span(_ ranges: [SourceRange?]) -> SourceRange? {
        let present = ranges.compactMap { $0 }
        guard let first = present.first else { return nil }
        return present.dropFirst().reduce(first) { $0.union($1) }
    }
}

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
