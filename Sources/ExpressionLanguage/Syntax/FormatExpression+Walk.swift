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

/// `list` with each element replaced by what `transform` makes of it; nil where it gives
/// nil for one (``FormatExpression/mappingChildren(_:predicates:)``).
private func mappingEach<Element>(_ list: [Element], _ transform: (Element) -> Element?) -> [Element]? {
    var mapped: [Element] = []
    mapped.reserveCapacity(list.count)
    for element in list {
        guard let element = transform(element) else { return nil }
        mapped.append(element)
    }
    return mapped
}

extension FormatExpression {
    /// This expression with each expression directly inside it replaced by what
    /// `expression` makes of it, and each predicate (a TERNARY's, a SUBQUERY's) by what
    /// `predicate` makes of it; nil where one of them gives nil. A FUNCTION call's
    /// selector is kept as it is; leaves (constants, variables, SELF, key paths of SELF)
    /// come back unchanged. For rewriters that handle some kinds themselves and leave the
    /// others to this.
    public func mappingChildren(
        _ expression: (FormatExpression) -> FormatExpression?,
        predicates predicate: (FormatPredicate) -> FormatPredicate?
    ) -> FormatExpression? {
        func all(_ list: [FormatExpression]) -> [FormatExpression]? { mappingEach(list, expression) }
        switch kind {
        case .constant, .evaluatedObject, .variable, .anyKey, .keyPath(nil, _):
            return self
        case .keyPath(let operand?, let path):
            return expression(operand).map { FormatExpression(.keyPath(operand: $0, path: path)) }
        case .aggregate(let elements):
            return all(elements).map { FormatExpression(.aggregate($0)) }
        case .arithmetic(let op, let a, let b):
            guard let a = expression(a), let b = expression(b) else { return nil }
            return FormatExpression(.arithmetic(op, a, b))
        case .negate(let a):
            return expression(a).map { FormatExpression(.negate($0)) }
        case .function(let selector, let arguments):
            return all(arguments).map { FormatExpression(.function(selector: selector, arguments: $0)) }
        case .index(let base, let index):
            guard let base = expression(base) else { return nil }
            guard case .expression(let i) = index else { return FormatExpression(.index(base, index)) }
            return expression(i).map { FormatExpression(.index(base, .expression($0))) }
        case .functionCall(let target, let selector, let arguments):
            guard let target = expression(target), let arguments = all(arguments) else { return nil }
            return FormatExpression(.functionCall(target: target, selector: selector, arguments: arguments))
        case .cast(let a, let type):
            guard let a = expression(a), let type = expression(type) else { return nil }
            return FormatExpression(.cast(a, type: type))
        case .ternary(let p, let a, let b):
            guard let p = predicate(p), let a = expression(a), let b = expression(b) else { return nil }
            return FormatExpression(.ternary(p, a, b))
        case .subquery(let collection, let variable, let inner):
            guard let collection = expression(collection), let inner = predicate(inner) else { return nil }
            return FormatExpression(.subquery(collection: collection, variable: variable, predicate: inner))
        case .fetch(let request, let context, let countOnly):
            guard let request = expression(request), let context = expression(context),
                let countOnly = expression(countOnly)
            else { return nil }
            return FormatExpression(.fetch(request: request, context: context, countOnly: countOnly))
        case .assignment(let variable, let value):
            return expression(value).map { FormatExpression(.assignment(variable: variable, value: $0)) }
        }
    }
}

extension FormatPredicate {
    /// This predicate with each comparison's operands replaced by what `expression` makes
    /// of them, and each predicate directly inside it by what `predicate` makes of it; nil
    /// where one of them gives nil (``FormatExpression/mappingChildren(_:predicates:)``).
    public func mappingChildren(
        _ expression: (FormatExpression) -> FormatExpression?,
        predicates predicate: (FormatPredicate) -> FormatPredicate?
    ) -> FormatPredicate? {
        func all(_ list: [FormatPredicate]) -> [FormatPredicate]? { mappingEach(list, predicate) }
        switch kind {
        case .constant:
            return self
        case .comparison(var comparison):
            guard let lhs = expression(comparison.lhs), let rhs = expression(comparison.rhs) else { return nil }
            (comparison.lhs, comparison.rhs) = (lhs, rhs)
            return FormatPredicate(.comparison(comparison))
        case .and(let list): return all(list).map { FormatPredicate(.and($0)) }
        case .or(let list): return all(list).map { FormatPredicate(.or($0)) }
        case .not(let inner): return predicate(inner).map { FormatPredicate(.not($0)) }
        }
    }
}
