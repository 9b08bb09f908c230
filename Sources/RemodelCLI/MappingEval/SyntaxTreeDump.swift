import ExpressionLanguage

/// A node of a parsed expression or predicate, for walking and printing trees.
public enum SyntaxNode {
    case expression(FormatExpression)
    case predicate(FormatPredicate)

    /// One line describing the node itself, without its children:
    /// `comparison BEGINSWITH[cd]`, `keyPath name`, `constant 18  (integer)`.
    public var label: String {
        switch self {
        case .expression(let e):
            switch e.kind {
            case .constant(let value): return "constant \(value.json.serialized())  (\(value.kind.rawValue))"
            case .evaluatedObject: return "SELF"
            case .variable(let name): return "variable $\(name)"
            case .keyPath(_, let path): return "keyPath " + path.joined(separator: ".")
            case .aggregate(let elements): return "aggregate {…} of \(elements.count)"
            case .arithmetic(let op, _, _): return "arithmetic \(op.rawValue)"
            case .negate: return "negate"
            case .function(let selector, _): return "function \(selector)"
            case .index(_, let specifier):
                switch specifier {
                case .first: return "index [FIRST]"
                case .last: return "index [LAST]"
                case .size: return "index [SIZE]"
                case .expression: return "index"
                }
            case .functionCall: return "FUNCTION"
            case .cast: return "CAST"
            case .ternary: return "TERNARY"
            case .subquery(_, let variable, _): return "SUBQUERY $\(variable)"
            case .fetch: return "FETCH"
            case .assignment(let name, _): return "assign $\(name)"
            case .anyKey: return "ANYKEY"
            }
        case .predicate(let p):
            switch p.kind {
            case .constant(let value): return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
            case .comparison(let c):
                var text = "comparison "
                switch c.modifier {
                case .direct: break
                case .any: text += "ANY "
                case .all: text += "ALL "
                }
                text += c.op.symbol
                if !c.options.isEmpty { text += "[\(c.options.letters)]" }
                return text
            case .and: return "AND"
            case .or: return "OR"
            case .not: return "NOT"
            }
        }
    }

    /// The node's operands, in the order they appear in the text.
    public var children: [SyntaxNode] {
        switch self {
        case .expression(let e):
            switch e.kind {
            case .constant, .evaluatedObject, .variable, .anyKey: return []
            case .keyPath(let operand, _): return operand.map { [.expression($0)] } ?? []
            case .aggregate(let elements): return elements.map { .expression($0) }
            case .arithmetic(_, let a, let b): return [.expression(a), .expression(b)]
            case .negate(let a): return [.expression(a)]
            case .function(_, let arguments): return arguments.map { .expression($0) }
            case .index(let base, let specifier):
                if case .expression(let index) = specifier { return [.expression(base), .expression(index)] }
                return [.expression(base)]
            case .functionCall(let target, let selector, let arguments):
                return [.expression(target), .expression(selector)] + arguments.map { .expression($0) }
            case .cast(let value, let type): return [.expression(value), .expression(type)]
            case .ternary(let p, let a, let b): return [.predicate(p), .expression(a), .expression(b)]
            case .subquery(let collection, _, let predicate): return [.expression(collection), .predicate(predicate)]
            case .fetch(let request, let context, let countOnly):
                return [.expression(request), .expression(context), .expression(countOnly)]
            case .assignment(_, let value): return [.expression(value)]
            }
        case .predicate(let p):
            switch p.kind {
            case .constant: return []
            case .comparison(let c): return [.expression(c.lhs), .expression(c.rhs)]
            case .and(let items), .or(let items): return items.map { .predicate($0) }
            case .not(let operand): return [.predicate(operand)]
            }
        }
    }

    /// The tree as indented lines, two spaces per level:
    ///
    ///     AND
    ///       comparison BEGINSWITH[cd]
    ///         keyPath name
    ///         constant "ad"  (string)
    ///       comparison >
    ///         keyPath age
    ///         constant 18  (integer)
    public var dump: String {
        var lines: [String] = []
        func write(_ node: SyntaxNode, depth: Int) {
            lines.append(String(repeating: "  ", count: depth) + node.label)
            for child in node.children { write(child, depth: depth + 1) }
        }
        write(self, depth: 0)
        return lines.joined(separator: "\n")
    }
}
