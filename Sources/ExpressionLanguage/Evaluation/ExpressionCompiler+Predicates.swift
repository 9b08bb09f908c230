// How predicates compile: comparisons with their options and modifiers, compound
// predicates short-circuited, constant parts folded.
extension Builder {
    func predicate(_ p: FormatPredicate) throws(ExpressionError) -> TestNode {
        switch p.kind {
        case .constant(let value):
            return .constant(value)
        case .comparison(let c):
            return try comparison(c, p.range)
        case .not(let operand):
            let o = try predicate(operand)
            if let v = o.constant { return .constant(!v) }
            let t = o.test
            return .dynamic { ctx throws(ExpressionError) in try !t(ctx) }
        case .and(let operands):
            var tests: [Test] = []
            for operand in operands {
                let node = try predicate(operand)
                switch node.constant {
                case true?: continue  // `TRUE AND x` is `x`: dropping it changes no result and no error.
                case false? where tests.isEmpty: return .constant(false)
                default: tests.append(node.test)
                }
            }
            return Builder.all(tests)
        case .or(let operands):
            var tests: [Test] = []
            for operand in operands {
                let node = try predicate(operand)
                switch node.constant {
                case false?: continue
                case true? where tests.isEmpty: return .constant(true)
                default: tests.append(node.test)
                }
            }
            return Builder.any(tests)
        }
    }

    private static func all(_ tests: [Test]) -> TestNode {
        switch tests.count {
        case 0: return .constant(true)
        case 1: return .dynamic(tests[0])
        case 2:
            let a = tests[0], b = tests[1]
            return .dynamic { ctx throws(ExpressionError) in
                guard try a(ctx) else { return false }
                return try b(ctx)
            }
        default:
            return .dynamic { ctx throws(ExpressionError) in
                for t in tests where !(try t(ctx)) { return false }
                return true
            }
        }
    }

    private static func any(_ tests: [Test]) -> TestNode {
        switch tests.count {
        case 0: return .constant(false)
        case 1: return .dynamic(tests[0])
        case 2:
            let a = tests[0], b = tests[1]
            return .dynamic { ctx throws(ExpressionError) in
                if try a(ctx) { return true }
                return try b(ctx)
            }
        default:
            return .dynamic { ctx throws(ExpressionError) in
                for t in tests where try t(ctx) { return true }
                return false
            }
        }
    }

    private func comparison(_ c: Comparison, _ range: SourceRange?) throws(ExpressionError) -> TestNode {
        let source = self.source
        let l = try expression(c.lhs)
        let r = try expression(c.rhs)
        let op = c.op
        let options = c.options

        // Constant patterns are compiled once. A constant MATCHES pattern that does not
        // compile is still an evaluation error (LANGUAGE.md decision 5), raised where the
        // comparison runs, so that a comparison that never runs (short-circuited, in an
        // untaken TERNARY branch, over nil) does not fail.
        var likePattern: LikePattern? = nil
        var compiledRegex: RegularExpression? = nil
        var patternError: ExpressionError? = nil
        if case .string(let pattern)? = r.constant {
            if op == .like { likePattern = LikePattern(pattern, options: options) }
            if op == .matches {
                do throws(ExpressionError) {
                    compiledRegex = try RegexCache.regularExpression(pattern: pattern, options: options)
                } catch {
                    patternError = error.located(c.rhs.range, in: source)
                }
            }
        }
        // The closures capture constants: a captured `var` would be a heap box, read with a
        // dynamic exclusivity check (swift_beginAccess) and a copy on every evaluation.
        let like = likePattern, regex = compiledRegex, invalidPattern = patternError
        let lt = l.thunk, rt = r.thunk
        let test: Test
        switch c.modifier {
        case .direct:
            if let rc = r.constant {
                test = { ctx throws(ExpressionError) in
                    let a = try lt(ctx)
                    return try locate(range, source) { () throws(ExpressionError) in
                        try ComparisonEvaluation.evaluate(
                            op, a, rc, options: options, like: like, regex: regex, invalidPattern: invalidPattern)
                    }
                }
            } else {
                test = { ctx throws(ExpressionError) in
                    let a = try lt(ctx)
                    let b = try rt(ctx)
                    return try locate(range, source) { () throws(ExpressionError) in
                        try ComparisonEvaluation.evaluate(
                            op, a, b, options: options, like: like, regex: regex, invalidPattern: invalidPattern)
                    }
                }
            }
        case .any, .all:
            let isAll = c.modifier == .all
            test = { ctx throws(ExpressionError) in
                // Both sides are evaluated first, as for a direct comparison (LANGUAGE.md A4).
                let collection = try lt(ctx)
                let b = try rt(ctx)
                if collection.isNull { return isAll }
                let elements: [Value]
                if let items = collection.collectionElements {
                    elements = items
                } else {
                    throw ExpressionError(
                        .type,
                        "\(isAll ? "ALL" : "ANY") needs a collection on the left, not \(Arithmetic.describe(collection))",
                        source: source, range: c.lhs.range ?? range)
                }
                return try locate(range, source) { () throws(ExpressionError) in
                    for element in elements {
                        let holds = try ComparisonEvaluation.evaluate(
                            op, element, b, options: options, like: like, regex: regex, invalidPattern: invalidPattern)
                        if holds != isAll { return holds }
                    }
                    return isAll
                }
            }
        }
        if l.constant != nil, r.constant != nil, let value = try? test(Builder.foldingContext) {
            return .constant(value)
        }
        return .dynamic(test)
    }
}
