// Walks over syntax trees, for tools that look into expressions before they run (the
// mapping checker, SQL pushdown, the REPL).

extension FormatExpression {
    /// Calls `body` with this expression and every expression inside it, predicates'
    /// operands included, outermost first.
    public func forEachSubexpression(_ body: (FormatExpression) -> Void) {
        body(self)
        switch kind {
        case .constant, .evaluatedObject, .variable, .anyKey: break
        case .keyPath(let operand, _): operand?.forEachSubexpression(body)
        case .aggregate(let elements): elements.forEach { $0.forEachSubexpression(body) }
        case .arithmetic(_, let a, let b): a.forEachSubexpression(body); b.forEachSubexpression(body)
        case .negate(let a): a.forEachSubexpression(body)
        case .function(_, let arguments): arguments.forEach { $0.forEachSubexpression(body) }
        case .index(let base, let index):
            base.forEachSubexpression(body)
            if case .expression(let e) = index { e.forEachSubexpression(body) }
        case .functionCall(let target, let selector, let arguments):
            target.forEachSubexpression(body); selector.forEachSubexpression(body)
            arguments.forEach { $0.forEachSubexpression(body) }
        case .cast(let a, let b): a.forEachSubexpression(body); b.forEachSubexpression(body)
        case .ternary(let p, let a, let b):
            p.forEachSubexpression(body); a.forEachSubexpression(body); b.forEachSubexpression(body)
        case .subquery(let collection, _, let predicate):
            collection.forEachSubexpression(body); predicate.forEachSubexpression(body)
        case .fetch(let a, let b, let c):
            a.forEachSubexpression(body); b.forEachSubexpression(body); c.forEachSubexpression(body)
        case .assignment(_, let value): value.forEachSubexpression(body)
        }
    }

    /// The variable names the expression reads, or binds itself (SUBQUERY's variable, an
    /// assignment's), each once.
    public var variableNames: [String] { namesOfVariables { forEachSubexpression($0) } }

    /// Variables that the expression binds itself (SUBQUERY's, assignments'): not
    /// variables its caller must supply.
    public var localVariables: Set<String> {
        var names = Set<String>()
        forEachSubexpression { e in
            switch e.kind {
            case .subquery(_, let variable, _), .assignment(let variable, _): names.insert(variable)
            default: break
            }
        }
        return names
    }

    /// The string, when the expression is a constant string.
    public var constantString: String? {
        if case .constant(.string(let s)) = kind { return s }
        return nil
    }

    /// The variable this node reads or binds.
    fileprivate var variableNamed: String? {
        switch kind {
        case .variable(let name), .subquery(_, let name, _), .assignment(let name, _): name
        default: nil
        }
    }
}

extension FormatPredicate {
    /// Calls `body` with every expression in the predicate, outermost first.
    public func forEachSubexpression(_ body: (FormatExpression) -> Void) {
        switch kind {
        case .constant: break
        case .comparison(let c): c.lhs.forEachSubexpression(body); c.rhs.forEachSubexpression(body)
        case .and(let ps), .or(let ps): ps.forEach { $0.forEachSubexpression(body) }
        case .not(let p): p.forEachSubexpression(body)
        }
    }

    /// The variable names the predicate reads or binds, each once.
    public var variableNames: [String] { namesOfVariables { forEachSubexpression($0) } }
}

/// The variables that the nodes `walk` visits read or bind, each once, in the order met.
private func namesOfVariables(_ walk: ((FormatExpression) -> Void) -> Void) -> [String] {
    var names: [String] = []
    var seen = Set<String>()
    walk { e in
        if let name = e.variableNamed, seen.insert(name).inserted { names.append(name) }
    }
    return names
}
