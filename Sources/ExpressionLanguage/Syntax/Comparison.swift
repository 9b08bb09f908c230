/// One comparison of a predicate: `[ANY|ALL] lhs OP[options] rhs`.
public struct Comparison: Hashable, Sendable {
    public var modifier: Modifier
    public var lhs: FormatExpression
    public var op: ComparisonOperator
    public var rhs: FormatExpression
    public var options: ComparisonOptions

    public init(
        _ lhs: FormatExpression, _ op: ComparisonOperator, _ rhs: FormatExpression,
        modifier: Modifier = .direct, options: ComparisonOptions = []
    ) {
        self.modifier = modifier
        self.lhs = lhs
        self.op = op
        self.rhs = rhs
        self.options = options
    }

    /// How the comparison applies to the left side (Apple's NSComparisonPredicateModifier).
    public enum Modifier: Hashable, Sendable {
        /// Compare the left value itself.
        case direct
        /// `ANY` / `SOME`: true when the comparison holds for some element of the left collection.
        case any
        /// `ALL`: true when it holds for every element.
        case all
    }
}

/// The operator of a comparison, with Apple's spellings.
public enum ComparisonOperator: String, Hashable, Sendable, CaseIterable {
    case lessThan = "<"
    case lessThanOrEqualTo = "<="
    case greaterThan = ">"
    case greaterThanOrEqualTo = ">="
    case equalTo = "=="
    case notEqualTo = "!="
    case matches = "MATCHES"
    case like = "LIKE"
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case `in` = "IN"
    case contains = "CONTAINS"
    case between = "BETWEEN"
    case utiConformsTo = "UTI-CONFORMS-TO"
    case utiEquals = "UTI-EQUALS"

    /// The canonical spelling the printer uses.
    public var symbol: String { rawValue }

    /// Whether `[c]`-style options may follow the operator (not after BETWEEN).
    public var acceptsOptions: Bool { self != .between }
}
