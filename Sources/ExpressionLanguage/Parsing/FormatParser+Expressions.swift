// The expression productions of Grammar/format.ebnf (arithmetic by precedence climbing,
// key paths, calls, aggregates) and the format arguments (%@, %K, …) they take.

extension FormatParser {
    /// expression := assignment
    /// assignment := variable ":=" expression | bitwiseOr
    func expression() throws(ExpressionError) -> FormatExpression {
        if case .variable(let name) = current.kind, isPunctuation(.colonAssign, next) {
            let first = advance()
            _ = advance()
            try enter()
            let value = try expression()
            leave()
            return FormatExpression(
                .assignment(variable: name, value: value),
                range: first.range.union(value.range ?? first.range))
        }
        return try binary(minimumPrecedence: 0)
    }

    /// A binary operator of an expression: arithmetic, or bitwise (which builds the
    /// built-in function it stands for).
    enum BinaryOperator: Equatable {
        case arithmetic(ArithmeticOperator)
        case bitwise(BitwiseOperator)

        var precedence: Int {
            switch self {
            case .arithmetic(let op): op.precedence
            case .bitwise(let op): op.precedence
            }
        }

        var associativity: ArithmeticOperator.Associativity {
            switch self {
            case .arithmetic(let op): op.associativity
            case .bitwise(let op): op.associativity
            }
        }

        var isBitwise: Bool {
            if case .bitwise = self { return true }
            return false
        }

        func node(_ lhs: FormatExpression, _ rhs: FormatExpression) -> FormatExpression.Kind {
            switch self {
            case .arithmetic(let op): .arithmetic(op, lhs, rhs)
            case .bitwise(let op): .function(selector: op.selector, arguments: [lhs, rhs])
            }
        }
    }

    var binaryOperatorAhead: BinaryOperator? {
        guard case .punctuation(let p) = current.kind else { return nil }
        switch p {
        case .plus: return .arithmetic(.add)
        case .minus: return .arithmetic(.subtract)
        case .star: return .arithmetic(.multiply)
        case .slash: return .arithmetic(.divide)
        case .power: return .arithmetic(.power)
        case .ampersand: return .bitwise(.and)
        case .pipe: return .bitwise(.or)
        case .caret: return .bitwise(.xor)
        case .shiftLeft: return .bitwise(.leftShift)
        case .shiftRight: return .bitwise(.rightShift)
        default: return nil
        }
    }

    /// bitwiseOr := bitwiseXor { "|" bitwiseXor }
    /// bitwiseXor := bitwiseAnd { "^" bitwiseAnd }
    /// bitwiseAnd := shift { "&" shift }
    /// shift := additive { ("<<" | ">>") additive }
    /// additive := multiplicative { ("+" | "-") multiplicative }
    /// multiplicative := power { ("*" | "/") power }
    /// power := unary { "**" unary }
    ///
    /// One precedence-climbing loop parses the seven levels, driven by
    /// ``ArithmeticOperator/precedence`` and ``BitwiseOperator/precedence``.
    func binary(minimumPrecedence: Int) throws(ExpressionError) -> FormatExpression {
        try binaryTracked(minimumPrecedence: minimumPrecedence).expression
    }

    /// ``binary(minimumPrecedence:)``, saying whether the result's outermost operator,
    /// unparenthesised, is bitwise (true), arithmetic (false), or neither (nil): bitwise
    /// and arithmetic operators mixed without parentheses get a warning.
    private func binaryTracked(minimumPrecedence: Int) throws(ExpressionError) -> (
        expression: FormatExpression, bitwise: Bool?
    ) {
        var lhs = try unary()
        var lhsBitwise: Bool?
        var levels = 0
        defer { leave(levels) }
        while let op = binaryOperatorAhead, op.precedence >= minimumPrecedence {
            let opToken = advance()
            try enter()
            levels += 1
            let nextMinimum = op.associativity == .left ? op.precedence + 1 : op.precedence
            let (rhs, rhsBitwise) = try binaryTracked(minimumPrecedence: nextMinimum)
            if [lhsBitwise, rhsBitwise].contains(where: { $0 != nil && $0 != op.isBitwise }) {
                warnings.append(
                    ParseWarning(
                        "bitwise and arithmetic operators are mixed without parentheses; Remodel binds arithmetic tighter "
                            + "(as C does), but Apple does not document its order: add parentheses to say what you mean",
                        source: source, range: opToken.range))
            }
            lhs = FormatExpression(op.node(lhs, rhs), range: Self.span([lhs.range, rhs.range]))
            lhsBitwise = op.isBitwise
        }
        return (lhs, lhsBitwise)
    }

    /// unary := "-" unary | postfix
    func unary() throws(ExpressionError) -> FormatExpression {
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

    /// postfix := primary { "[" index "]" | "." keyComponent | "." variable }
    /// index := "FIRST" | "LAST" | "SIZE" | expression
    func postfix() throws(ExpressionError) -> FormatExpression {
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
                expression = FormatExpression(
                    .index(expression, specifier),
                    range: (expression.range ?? open.range).union(close.range))
            } else if isPunctuation(.dot), case .variable(let name) = next.kind {
                // A key path held in a variable, as Apple's parser takes it: `$a.$b` is
                // `$a`'s value for the key path in `$b` (its valueForKeyPath:).
                _ = advance()
                let variable = advance()
                // Each one nests the expression a level deeper (found by fuzzing: a long
                // `$a.$b.c.$d…` overflowed the compiler's stack).
                try enter()
                levels += 1
                let key = FormatExpression(.variable(name), range: variable.range)
                let selector = FormatExpression(.constant(.string("valueForKeyPath:")), range: variable.range)
                expression = FormatExpression(
                    .functionCall(target: expression, selector: selector, arguments: [key]),
                    range: (expression.range ?? variable.range).union(variable.range))
            } else if isPunctuation(.dot) {
                _ = advance()
                let (components, last) = try keyComponents()
                // Keys after anything but a key path make a new level (`f(x).a`).
                if case .keyPath = expression.kind {
                } else if case .evaluatedObject = expression.kind {
                } else {
                    try enter()
                    levels += 1
                }
                expression = Self.appending(
                    components, to: expression,
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
    func keyComponents() throws(ExpressionError) -> ([String], Token) {
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

    static func appending(_ components: [String], to base: FormatExpression, range: SourceRange) -> FormatExpression {
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
    func primary() throws(ExpressionError) -> FormatExpression {
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
    func parenthesizedExpression(_ open: Token) throws(ExpressionError) -> FormatExpression {
        _ = advance()
        try enter()
        var inner = try expression()
        let close = try expectClosing(.rightParen, opener: open)
        leave()
        inner.range = open.range.union(close.range)
        return inner
    }

    /// The primaries that do not nest: literals, format arguments, variables, keys.
    func atom(_ token: Token) throws(ExpressionError) -> FormatExpression {
        let kind: FormatExpression.Kind
        switch token.kind {
        case .number(let value): kind = .constant(value)
        case .minimumIntegerMagnitude:
            throw error(
                "the integer 9223372036854775808 does not fit in 64 bits; write it with a decimal point to make it a double"
            )
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

    func keywordAtom(_ keyword: Keyword, _ token: Token) throws(ExpressionError) -> FormatExpression.Kind {
        switch keyword {
        case .null, .nil: return .constant(.null)
        case .true, .yes: return .constant(.bool(true))
        case .false, .no: return .constant(.bool(false))
        case .self: return .evaluatedObject
        case .anyKey: return .anyKey
        default:
            throw error(
                "'\(text(of: token))' is a reserved word and cannot start an expression; "
                    + "write #\(text(of: token)) to use it as a key")
        }
    }

    /// aggregate := "{" [ expression { "," expression } ] "}"
    func aggregate() throws(ExpressionError) -> FormatExpression {
        let open = advance()
        try enter()
        defer { leave() }
        let elements = try expressionList(before: .rightBrace)
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
    func call(_ nameToken: Token) throws(ExpressionError) -> FormatExpression {
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

    enum CallForm {
        case ternary, subquery, cast, fetch, function
        case builtin(String)
    }

    /// Which call `nameToken` starts; an error unless `(` follows it.
    func callForm(_ nameToken: Token) throws(ExpressionError) -> CallForm {
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
    func finishCall(_ kind: FormatExpression.Kind, _ nameToken: Token, _ open: Token) throws(ExpressionError)
        -> FormatExpression
    {
        let close = try expectClosing(.rightParen, opener: open)
        return FormatExpression(kind, range: nameToken.range.union(close.range))
    }

    /// The `,` after the argument `what` of the special form `form`.
    func comma(after what: String, of form: String) throws(ExpressionError) {
        _ = try expect(.comma, "after the \(what) of \(form)")
    }

    /// `[ expression { "," expression } ]`, empty when `closer` comes first: a call's
    /// arguments, an aggregate's elements.
    func expressionList(before closer: Token.Punctuation) throws(ExpressionError) -> [FormatExpression] {
        var expressions: [FormatExpression] = []
        guard !isPunctuation(closer) else { return expressions }
        expressions.append(try expression())
        while isPunctuation(.comma) {
            _ = advance()
            expressions.append(try expression())
        }
        return expressions
    }

    func ternary(_ nameToken: Token, _ open: Token) throws(ExpressionError) -> FormatExpression {
        let condition = try predicate()
        try comma(after: "condition", of: "TERNARY")
        let whenTrue = try expression()
        try comma(after: "second argument", of: "TERNARY")
        let whenFalse = try expression()
        return try finishCall(.ternary(condition, whenTrue, whenFalse), nameToken, open)
    }

    func subquery(_ nameToken: Token, _ open: Token) throws(ExpressionError) -> FormatExpression {
        let collection = try expression()
        try comma(after: "collection", of: "SUBQUERY")
        guard case .variable(let variable) = current.kind else {
            throw error("expected a variable such as $x as the second argument of SUBQUERY")
        }
        _ = advance()
        try comma(after: "variable", of: "SUBQUERY")
        let condition = try predicate()
        return try finishCall(
            .subquery(collection: collection, variable: variable, predicate: condition), nameToken, open)
    }

    func cast(_ nameToken: Token, _ open: Token) throws(ExpressionError) -> FormatExpression {
        let value = try expression()
        try comma(after: "value", of: "CAST")
        let type = try expression()
        return try finishCall(.cast(value, type: type), nameToken, open)
    }

    func fetch(_ nameToken: Token, _ open: Token) throws(ExpressionError) -> FormatExpression {
        let request = try expression()
        try comma(after: "fetch request", of: "FETCH")
        let context = try expression()
        try comma(after: "context", of: "FETCH")
        let countOnly = try expression()
        return try finishCall(.fetch(request: request, context: context, countOnly: countOnly), nameToken, open)
    }

    func function(_ nameToken: Token, _ open: Token) throws(ExpressionError) -> FormatExpression {
        let arguments = try expressionList(before: .rightParen)
        guard arguments.count >= 2 else {
            throw error(
                "FUNCTION needs a target and a selector: FUNCTION(target, 'selector:', arguments…)", at: nameToken)
        }
        return try finishCall(
            .functionCall(
                target: arguments[0], selector: arguments[1],
                arguments: Array(arguments.dropFirst(2))), nameToken, open)
    }

    func builtin(_ name: String, _ nameToken: Token, _ open: Token) throws(ExpressionError) -> FormatExpression {
        let arguments = try expressionList(before: .rightParen)
        guard let function = BuiltinFunction.named(name) else {
            throw ExpressionError(
                .unknownFunction,
                "unknown function '\(name)'; the built-in functions are listed in docs/language.md, "
                    + "and methods are called with FUNCTION(target, 'selector:', …)",
                source: source, range: nameToken.range, near: quoted(nameToken))
        }
        guard function.arity == arguments.count else {
            throw ExpressionError(
                .unknownFunction,
                "\(function.formatName) takes \(function.arity) argument\(function.arity == 1 ? "" : "s"), not \(arguments.count)",
                source: source, range: nameToken.range, near: quoted(nameToken))
        }
        return try finishCall(.function(selector: function.selector, arguments: arguments), nameToken, open)
    }

    // MARK: - Format arguments

    func nextArgument(_ token: Token) throws(ExpressionError) -> Value {
        guard argumentIndex < arguments.count else {
            throw ExpressionError(
                .formatArgument,
                "\(text(of: token)) has no argument (\(arguments.count) given); pass one argument per format specifier",
                source: source, range: token.range, near: quoted(token))
        }
        defer { argumentIndex += 1 }
        return arguments[argumentIndex]
    }

    func keyPathArgument(_ token: Token) throws(ExpressionError) -> [String] {
        let argument = try nextArgument(token)
        guard case .string(let path) = argument, !path.isEmpty else {
            let given = argument == .string("") ? "an empty string" : argument.kind.rawValue
            throw ExpressionError(
                .formatArgument, "%K needs a key path string, not \(given)",
                source: source, range: token.range, near: quoted(token))
        }
        return path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    func formatArgument(_ specifier: FormatSpecifier, _ token: Token) throws(ExpressionError) -> FormatExpression {
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
            case .double(let d)
            where d.isFinite && d.rounded(.towardZero) >= -9.2e18 && d.rounded(.towardZero) <= 9.2e18:
                value = Int64(d.rounded(.towardZero))
            default:
                throw ExpressionError(
                    .formatArgument, "\(specifier) needs an integer argument, not \(argument.kind.rawValue)",
                    source: source, range: token.range, near: quoted(token))
            }
            return FormatExpression(.constant(.integer(value)), range: token.range)
        case .real:
            let argument = try nextArgument(token)
            guard let d = argument.doubleValue else {
                throw ExpressionError(
                    .formatArgument, "\(specifier) needs a number argument, not \(argument.kind.rawValue)",
                    source: source, range: token.range, near: quoted(token))
            }
            return FormatExpression(.constant(.double(d)), range: token.range)
        }
    }

    static func span(_ ranges: [SourceRange?]) -> SourceRange? {
        let present = ranges.compactMap { $0 }
        guard let first = present.first else { return nil }
        return present.dropFirst().reduce(first) { $0.union($1) }
    }
}
