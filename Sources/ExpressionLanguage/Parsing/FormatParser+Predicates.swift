// The predicate productions of Grammar/format.ebnf: OR, AND, NOT, comparisons.

extension FormatParser {
    /// predicate := orPredicate
    func predicate() throws(ExpressionError) -> FormatPredicate {
        try orPredicate()
    }

    /// orPredicate := andPredicate { ("OR" | "||") andPredicate }
    func orPredicate() throws(ExpressionError) -> FormatPredicate {
        let first = try andPredicate()
        guard isOr else { return first.predicate }
        var items = [first]
        while isOr {
            _ = advance()
            items.append(try andPredicate())
        }
        if let chain = items.first(where: \.isUnparenthesizedChain) {
            warnings.append(
                ParseWarning(
                    "AND and OR are mixed without parentheses; Remodel binds AND tighter than OR (as C and SQL do), "
                        + "but Apple does not document its order: add parentheses to say what you mean",
                    source: source, range: chain.predicate.range))
        }
        let predicates = items.map(\.predicate)
        return FormatPredicate(.or(predicates), range: Self.span(predicates.map(\.range)))
    }

    var isOr: Bool { isKeyword(.or) || isPunctuation(.pipes) }
    var isAnd: Bool { isKeyword(.and) || isPunctuation(.ampersands) }

    struct ChainItem {
        var predicate: FormatPredicate
        var isUnparenthesizedChain: Bool
    }

    /// andPredicate := notPredicate { ("AND" | "&&") notPredicate }
    func andPredicate() throws(ExpressionError) -> ChainItem {
        let first = try notPredicate()
        guard isAnd else { return ChainItem(predicate: first, isUnparenthesizedChain: false) }
        var items = [first]
        while isAnd {
            _ = advance()
            items.append(try notPredicate())
        }
        return ChainItem(
            predicate: FormatPredicate(.and(items), range: Self.span(items.map(\.range))),
            isUnparenthesizedChain: true)
    }

    /// notPredicate := ("NOT" | "!") notPredicate | "(" predicate ")"
    ///               | "TRUEPREDICATE" | "FALSEPREDICATE" | comparison
    func notPredicate() throws(ExpressionError) -> FormatPredicate {
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
    func parenthesizedPredicate(_ token: Token) throws(ExpressionError) -> FormatPredicate {
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
    func comparison() throws(ExpressionError) -> FormatPredicate {
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
    func comparisonOperator() throws(ExpressionError) -> (ComparisonOperator, ComparisonOptions) {
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

    var comparisonOperatorAhead: ComparisonOperator? {
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
}
