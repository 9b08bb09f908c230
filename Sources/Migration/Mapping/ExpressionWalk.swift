import ExpressionLanguage

/// Walks every sub-expression of an expression tree, predicates included, outermost first.
enum ExpressionWalk {
    static func visit(_ expression: FormatExpression, _ body: (FormatExpression) -> Void) {
        body(expression)
        switch expression.kind {
        case .constant, .evaluatedObject, .variable, .anyKey: break
        case .keyPath(let operand, _): operand.map { visit($0, body) }
        case .aggregate(let elements): elements.forEach { visit($0, body) }
        case .arithmetic(_, let a, let b): visit(a, body); visit(b, body)
        case .negate(let a): visit(a, body)
        case .function(_, let arguments): arguments.forEach { visit($0, body) }
        case .index(let base, let index):
            visit(base, body)
            if case .expression(let e) = index { visit(e, body) }
        case .functionCall(let target, let selector, let arguments):
            visit(target, body); visit(selector, body); arguments.forEach { visit($0, body) }
        case .cast(let a, let b): visit(a, body); visit(b, body)
        case .ternary(let p, let a, let b): visit(p, body); visit(a, body); visit(b, body)
        case .subquery(let collection, _, let predicate): visit(collection, body); visit(predicate, body)
        case .fetch(let a, let b, let c): visit(a, body); visit(b, body); visit(c, body)
        case .assignment(_, let value): visit(value, body)
        }
    }

    static func visit(_ predicate: FormatPredicate, _ body: (FormatExpression) -> Void) {
        switch predicate.kind {
        case .constant: break
        case .comparison(let c): visit(c.lhs, body); visit(c.rhs, body)
        case .and(let ps), .or(let ps): ps.forEach { visit($0, body) }
        case .not(let p): visit(p, body)
        }
    }

    /// Variables that the expression binds itself (`SUBQUERY`'s, assignments'): not
    /// variables a mapping must supply.
    static func localVariables(_ expression: FormatExpression) -> Set<String> {
        var names = Set<String>()
        visit(expression) { e in
            switch e.kind {
            case .subquery(_, let variable, _): names.insert(variable)
            case .assignment(let variable, _): names.insert(variable)
            default: break
            }
        }
        return names
    }

    /// The string of a constant expression.
    static func constantString(_ expression: FormatExpression) -> String? {
        if case .constant(.string(let s)) = expression.kind { return s }
        return nil
    }
}
