/// The binary bitwise operators, which Apple's parser accepts and turns into the built-in
/// functions of the same meaning: `a & b` is `bitwiseAnd:with:(a, b)`. The tree holds the
/// function (as Apple's does), so the operators add syntax, not semantics.
///
/// Apple binds all of them tighter than comparisons (`2 & 1 == 0` is true), but does not
/// document their order among themselves or against `+ - * / **`. Remodel uses C's order
/// below the arithmetic operators (LANGUAGE.md, decision 3), and the parser warns when the
/// two kinds are mixed without parentheses, as it does for AND and OR.
public enum BitwiseOperator: String, Hashable, Sendable, CaseIterable {
    case and = "&"
    case or = "|"
    case xor = "^"
    case leftShift = "<<"
    case rightShift = ">>"

    /// Higher binds tighter; all bind looser than ``ArithmeticOperator``'s operators and
    /// tighter than assignment.
    public var precedence: Int {
        switch self {
        case .or: 6
        case .xor: 7
        case .and: 8
        case .leftShift, .rightShift: 9
        }
    }

    /// Left-associative, as in C: `1 << 2 << 3` is `(1 << 2) << 3`.
    public var associativity: ArithmeticOperator.Associativity { .left }

    /// The built-in function the operator stands for.
    public var selector: String {
        switch self {
        case .and: "bitwiseAnd:with:"
        case .or: "bitwiseOr:with:"
        case .xor: "bitwiseXor:with:"
        case .leftShift: "leftshift:by:"
        case .rightShift: "rightshift:by:"
        }
    }

    /// The operator written for `selector`, if it is one of theirs.
    public init?(selector: String) {
        guard let op = Self.allCases.first(where: { $0.selector == selector }) else { return nil }
        self = op
    }
}
