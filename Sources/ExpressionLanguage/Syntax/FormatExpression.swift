/// An expression of the format language, as parsed: `$source.price * 1.03`,
/// `FUNCTION($manager, "sourceContext")`, `SUBQUERY(books, $b, $b.price > 10).@count`.
///
/// Two expressions are equal when their trees are equal; where they came from in the
/// source text (``range``) does not count. Printing (``description``) gives the canonical
/// format string, which parses back to an equal tree.
public struct FormatExpression: Hashable, Sendable {
    public var kind: Kind
    /// Where the expression stands in the text it was parsed from; nil for trees built in code.
    public var range: SourceRange?

    public init(_ kind: Kind, range: SourceRange? = nil) {
        self.kind = kind
        self.range = range
    }

    public static func == (lhs: FormatExpression, rhs: FormatExpression) -> Bool { lhs.kind == rhs.kind }
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    public indirect enum Kind: Hashable, Sendable {
        /// A literal or a `%@` argument: `42`, `'text'`, `nil`, `TRUE`.
        case constant(Value)
        /// `SELF`: the object the expression is evaluated against.
        case evaluatedObject
        /// `$name`.
        case variable(String)
        /// `a.b.@count`: a key path, read from `operand` (SELF when nil).
        case keyPath(operand: FormatExpression?, path: [String])
        /// `{a, b, c}`: an array of the elements' values.
        case aggregate([FormatExpression])
        /// `a + b`, `a - b`, `a * b`, `a / b`, `a ** b`.
        case arithmetic(ArithmeticOperator, FormatExpression, FormatExpression)
        /// `-a` (a negative numeric literal is folded into a constant by the parser).
        case negate(FormatExpression)
        /// A built-in function, by selector: `sqrt:` for `sqrt(x)`, `modulus:by:`, `now`.
        case function(selector: String, arguments: [FormatExpression])
        /// `a[FIRST]`, `a[LAST]`, `a[SIZE]`, `a[i]`.
        case index(FormatExpression, IndexSpecifier)
        /// `FUNCTION(target, 'selector:', args…)`: a registered method on the target's value.
        case functionCall(target: FormatExpression, selector: FormatExpression, arguments: [FormatExpression])
        /// `CAST(value, 'NSString')`.
        case cast(FormatExpression, type: FormatExpression)
        /// `TERNARY(predicate, whenTrue, whenFalse)`.
        case ternary(FormatPredicate, FormatExpression, FormatExpression)
        /// `SUBQUERY(collection, $x, predicate)`.
        case subquery(collection: FormatExpression, variable: String, predicate: FormatPredicate)
        /// `FETCH(request, context, countOnly)`: a Core Data fetch, evaluated by the host.
        case fetch(request: FormatExpression, context: FormatExpression, countOnly: FormatExpression)
        /// `$name := value`.
        case assignment(variable: String, value: FormatExpression)
        /// `ANYKEY` (Spotlight); parses, fails at evaluation.
        case anyKey
    }

    /// `x[FIRST]`, `x[LAST]`, `x[SIZE]` or `x[expression]`.
    public enum IndexSpecifier: Hashable, Sendable {
        case first
        case last
        case size
        case expression(FormatExpression)
    }
}

extension FormatExpression {
    /// A constant expression.
    public static func constant(_ value: Value) -> FormatExpression { FormatExpression(.constant(value)) }
    /// A key path read from SELF: `keyPath("user.name")`.
    public static func keyPath(_ path: String) -> FormatExpression {
        FormatExpression(.keyPath(operand: nil, path: path.split(separator: ".").map(String.init)))
    }
    /// A variable: `variable("source")` is `$source`.
    public static func variable(_ name: String) -> FormatExpression { FormatExpression(.variable(name)) }
}
