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
    /// How deeply constructs may nest: parentheses, brackets, function arguments, and each
    /// operator of a chain such as `1 + 1 + …` count one level.
    public static let maximumDepth = 256

    public let source: String
    private let arguments: [Value]
    private var tokens: [Token] = []
    private var index = 0
    private var argumentIndex = 0
    private var depth = 0
    /// Non-fatal findings, such as AND and OR mixed without parentheses.
    public private(set) var warnings: [ParseWarning] = []

    public init(_ source: String, arguments: [Value] = []) {
        self.source = source
        self.arguments = arguments
    }

    /// Parses the whole text as an expression (`NSExpression(format:)`).
    public func parseExpression() throws(ExpressionError) -> FormatExpression {
        try start()
        let expression = try self.expression()
        try expectEnd()
        return expression
    }

    /// Parses the whole text as a predicate (`NSPredicate(format:)`).
    public func parsePredicate() throws(ExpressionError) -> FormatPredicate {
        try start()
        let predicate = try self.predicate()
        try expectEnd()
        return predicate
    }

    private func start() throws(ExpressionError) {
        tokens = try Lexer.tokenize(source)
        index = 0
        argumentIndex = 0
        depth = 0
        warnings = []
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

    private func error(_ message: String, at token: Token? = nil, kind: ExpressionError.Kind = .syntax) -> ExpressionError {
        let token = token ?? current
        return ExpressionError(kind, message, source: source, range: token.range, near: token.kind.quoted)
    }

    /// Consumes `p`, which closes `opener`; the error says where the opener was.
    @discardableResult
    private func expectClosing(_ p: Token.Punctuation, opener: Token) throws(ExpressionError) -> Token {
        guard isPunctuation(p) else {
            let openerLocation = SourceLocation(offset: opener.range.lowerBound, in: source)
            var e = error("expected '\(p.rawValue)' to close '\(opener.kind.quoted.dropFirst().dropLast())' at \(openerLocation)")
            e.related = opener.range
            throw e
        }
        return advance()
    }

    private func expect(_ p: Token.Punctuation, _ what: String) throws(ExpressionError) -> Token {
        guard isPunctuation(p) else { throw error("expected '\(p.rawValue)' \(what)") }
        return advance()
    }

    private func expectEnd() throws(ExpressionError) {
        guard case .end = current.kind else {
            throw error("unexpected \(current.kind.quoted) after a complete \(isPredicateContinuation ? "expression" : "format")")
        }
    }

    private var isPredicateContinuation: Bool { comparisonOperatorAhead != nil }

    /// Enters one level of nesting.
    private func enter() throws(ExpressionError) {
        depth += 1
        if depth > FormatParser.maximumDepth {
            throw error("nesting is deeper than \(FormatParser.maximumDepth) levels; split the expression", kind: .tooDeep)
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
        var levels = 0
        while isOr {
            _ = advance()
            try enter()
            levels += 1
            items.append(try andPredicate())
        }
        leave(levels)
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
        var levels = 0
        while isAnd {
            _ = advance()
            try enter()
            levels += 1
            items.append(try notPredicate())
        }
        leave(levels)
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
        if isPunctuation(.leftParen) {
            // `(` opens either a predicate or an expression (`(a + b) > 3`): try the
            // predicate first, then the comparison, and report the error that got further.
            let saved = state
            do {
                _ = advance()
                try enter()
                let inner = try predicate()
                let close = try expectClosing(.rightParen, opener: token)
                leave()
                var result = inner
                result.range = token.range.union(close.range)
                return result
            } catch let asPredicate {
                restore(saved)
                do {
                    return try comparison()
                } catch let asComparison {
                    throw Self.furthest(asPredicate, asComparison)
                }
            }
        }
        return try comparison()
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
        guard let op = comparisonOperatorAhead else {
            if case .end = current.kind {
                throw error("expected a comparison operator (==, <, IN, LIKE, …) to make a predicate")
            }
            throw error("expected a comparison operator (==, <, IN, LIKE, …)")
        }
        _ = advance()
        var options: ComparisonOptions = []
        if op.acceptsOptions, isPunctuation(.leftBracket), case .identifier(let letters) = next.kind,
            let parsed = ComparisonOptions(letters: letters)
        {
            let open = advance()
            _ = advance()
            try expectClosing(.rightBracket, opener: open)
            options = parsed
        }
        let rhs = try expression()
        let range = first.range.union(rhs.range ?? first.range)
        let comparison = FormatPredicate(
            .comparison(Comparison(lhs, op, rhs, modifier: modifier, options: options)), range: range)
        return negate ? FormatPredicate(.not(comparison), range: range) : comparison
    }

    /// comparisonOperator := "=" | "==" | "!=" | "<>" | "<" | "<=" | "=<" | ">" | ">=" | "=>"
    ///                     | "CONTAINS" | "IN" | "BEGINSWITH" | "ENDSWITH" | "LIKE" | "MATCHES"
    ///                     | "UTI-CONFORMS-TO" | "UTI-EQUALS" | "BETWEEN"
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
        try enter()
        let operand = try unary()
        leave()
        let range = minus.range.union(operand.range ?? minus.range)
        // A negative numeric literal is a constant, as Apple's parser folds it.
        switch operand.kind {
        case .constant(.integer(let i)): return FormatExpression(.constant(.integer(-i)), range: range)
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
                let specifier: FormatExpression.IndexSpecifier
                if isKeyword(.first), isPunctuation(.rightBracket, next) {
                    _ = advance(); specifier = .first
                } else if isKeyword(.last), isPunctuation(.rightBracket, next) {
                    _ = advance(); specifier = .last
                } else if isKeyword(.size), isPunctuation(.rightBracket, next) {
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

    /// keyComponent := identifier | reservedWord | "#" word | "@" identifier | "%K"
    private func keyComponents() throws(ExpressionError) -> ([String], Token) {
        let token = current
        switch token.kind {
        case .identifier(let name), .escapedIdentifier(let name):
            _ = advance(); return ([name], token)
        case .atKey(let name):
            _ = advance(); return (["@" + name], token)
        case .keyword(let k):
            // After a dot a reserved word can only be a key (`@max.self`, `person.first`).
            _ = advance()
            return ([Self.keySpelling(of: k, in: source, token.range)], token)
        case .format(.keyPath):
            _ = advance()
            return (try keyPathArgument(token), token)
        default:
            throw error("expected a key after '.'")
        }
    }

    private static func keySpelling(of keyword: Keyword, in source: String, _ range: SourceRange) -> String {
        String(decoding: Array(source.utf8)[range.lowerBound..<range.upperBound], as: UTF8.self)
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
    ///          | identifier | "#" word | "@" identifier | functionCall | specialForm
    private func primary() throws(ExpressionError) -> FormatExpression {
        let token = current
        switch token.kind {
        case .number(let value):
            _ = advance()
            return FormatExpression(.constant(value), range: token.range)
        case .string(let text):
            _ = advance()
            return FormatExpression(.constant(.string(text)), range: token.range)
        case .format(let specifier):
            _ = advance()
            return try formatArgument(specifier, token)
        case .variable(let name):
            _ = advance()
            return FormatExpression(.variable(name), range: token.range)
        case .escapedIdentifier(let name):
            _ = advance()
            return FormatExpression(.keyPath(operand: nil, path: [name]), range: token.range)
        case .atKey(let name):
            _ = advance()
            return FormatExpression(.keyPath(operand: nil, path: ["@" + name]), range: token.range)
        case .identifier(let name):
            if isPunctuation(.leftParen, next) { return try call(name, token) }
            _ = advance()
            return FormatExpression(.keyPath(operand: nil, path: [name]), range: token.range)
        case .selector(let name):
            guard isPunctuation(.leftParen, next) else {
                throw error("expected '(' after the function name '\(name)'", at: next)
            }
            return try call(name, token)
        case .keyword(let keyword):
            return try keywordPrimary(keyword, token)
        case .punctuation(.leftBrace):
            return try aggregate()
        case .punctuation(.leftParen):
            _ = advance()
            try enter()
            var inner = try expression()
            let close = try expectClosing(.rightParen, opener: token)
            leave()
            inner.range = token.range.union(close.range)
            return inner
        default:
            throw error("expected an expression")
        }
    }

    private func keywordPrimary(_ keyword: Keyword, _ token: Token) throws(ExpressionError) -> FormatExpression {
        let constant: Value?
        switch keyword {
        case .null, .nil: constant = .null
        case .true, .yes: constant = .bool(true)
        case .false, .no: constant = .bool(false)
        default: constant = nil
        }
        if let constant {
            _ = advance()
            return FormatExpression(.constant(constant), range: token.range)
        }
        switch keyword {
        case .self:
            _ = advance()
            return FormatExpression(.evaluatedObject, range: token.range)
        case .anyKey:
            _ = advance()
            return FormatExpression(.anyKey, range: token.range)
        case .subquery, .fetch, .cast:
            guard isPunctuation(.leftParen, next) else {
                throw error("expected '(' after \(keyword.rawValue)", at: next)
            }
            return try call(keyword.rawValue, token)
        default:
            throw error("'\(keyword.rawValue)' is a reserved word and cannot start an expression; "
                        + "write #\(Self.keySpelling(of: keyword, in: source, token.range)) to use it as a key")
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
    /// specialForm := "FUNCTION" "(" expression "," expression { "," expression } ")"
    ///              | "TERNARY" "(" predicate "," expression "," expression ")"
    ///              | "CAST" "(" expression "," expression ")"
    ///              | "SUBQUERY" "(" expression "," variable "," predicate ")"
    ///              | "FETCH" "(" expression "," expression "," expression ")"
    private func call(_ name: String, _ nameToken: Token) throws(ExpressionError) -> FormatExpression {
        _ = advance()
        let open = advance()
        try enter()
        defer { leave() }
        let upper = name.uppercased()

        func finish(_ kind: FormatExpression.Kind) throws(ExpressionError) -> FormatExpression {
            let close = try expectClosing(.rightParen, opener: open)
            return FormatExpression(kind, range: nameToken.range.union(close.range))
        }
        func comma(_ what: String) throws(ExpressionError) {
            _ = try expect(.comma, "after the \(what) of \(upper)")
        }

        switch upper {
        case "TERNARY":
            let condition = try predicate()
            try comma("condition")
            let whenTrue = try expression()
            try comma("second argument")
            let whenFalse = try expression()
            return try finish(.ternary(condition, whenTrue, whenFalse))
        case "SUBQUERY":
            let collection = try expression()
            try comma("collection")
            guard case .variable(let variable) = current.kind else {
                throw error("expected a variable such as $x as the second argument of SUBQUERY")
            }
            _ = advance()
            try comma("variable")
            let condition = try predicate()
            return try finish(.subquery(collection: collection, variable: variable, predicate: condition))
        case "CAST":
            let value = try expression()
            try comma("value")
            let type = try expression()
            return try finish(.cast(value, type: type))
        case "FETCH":
            let request = try expression()
            try comma("fetch request")
            let context = try expression()
            try comma("context")
            let countOnly = try expression()
            return try finish(.fetch(request: request, context: context, countOnly: countOnly))
        default:
            break
        }

        var arguments: [FormatExpression] = []
        if !isPunctuation(.rightParen) {
            arguments.append(try expression())
            while isPunctuation(.comma) {
                _ = advance()
                arguments.append(try expression())
            }
        }
        if upper == "FUNCTION" {
            guard arguments.count >= 2 else {
                throw error("FUNCTION needs a target and a selector: FUNCTION(target, 'selector:', arguments…)",
                            at: nameToken)
            }
            return try finish(.functionCall(target: arguments[0], selector: arguments[1],
                                            arguments: Array(arguments.dropFirst(2))))
        }
        guard let function = BuiltinFunction.named(name) else {
            throw ExpressionError(.unknownFunction,
                "unknown function '\(name)'; the built-in functions are listed in docs/language.md, "
                    + "and methods are called with FUNCTION(target, 'selector:', …)",
                source: source, range: nameToken.range, near: nameToken.kind.quoted)
        }
        guard function.arity == arguments.count else {
            throw ExpressionError(.unknownFunction,
                "\(function.formatName) takes \(function.arity) argument\(function.arity == 1 ? "" : "s"), not \(arguments.count)",
                source: source, range: nameToken.range, near: nameToken.kind.quoted)
        }
        return try finish(.function(selector: function.selector, arguments: arguments))
    }

    // MARK: - Format arguments

    private func nextArgument(_ token: Token) throws(ExpressionError) -> Value {
        guard argumentIndex < arguments.count else {
            throw ExpressionError(.formatArgument,
                "\(token.kind.quoted.dropFirst().dropLast()) has no argument (\(arguments.count) given); pass one argument per format specifier",
                source: source, range: token.range, near: token.kind.quoted)
        }
        defer { argumentIndex += 1 }
        return arguments[argumentIndex]
    }

    private func keyPathArgument(_ token: Token) throws(ExpressionError) -> [String] {
        let argument = try nextArgument(token)
        guard case .string(let path) = argument, !path.isEmpty else {
            throw ExpressionError(.formatArgument, "%K needs a key path string, not \(argument.kind.rawValue)",
                                  source: source, range: token.range, near: token.kind.quoted)
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
                                      source: source, range: token.range, near: token.kind.quoted)
            }
            return FormatExpression(.constant(.integer(value)), range: token.range)
        case .real:
            let argument = try nextArgument(token)
            guard let d = argument.doubleValue else {
                throw ExpressionError(.formatArgument, "\(specifier) needs a number argument, not \(argument.kind.rawValue)",
                                      source: source, range: token.range, near: token.kind.quoted)
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
