/// The binary arithmetic operators, with the precedence table the parser and the printer
/// share (Grammar/precedence.md is the same table in prose).
public enum ArithmeticOperator: String, Hashable, Sendable, CaseIterable {
    case add = "+"
    case subtract = "-"
    case multiply = "*"
    case divide = "/"
    case power = "**"

    public enum Associativity: Sendable { case left, right }

    /// Higher binds tighter. Unary minus (``FormatExpression/Kind/negate(_:)``) binds
    /// tighter than all of these; assignment (`:=`) looser.
    public var precedence: Int {
        switch self {
        case .add, .subtract: 10
        case .multiply, .divide: 20
        case .power: 30
        }
    }

    /// `**` is left-associative, as in both open implementations (LANGUAGE.md decision 2):
    /// `2 ** 3 ** 2` is 64.
    public var associativity: Associativity { .left }

    /// The selector Apple's parser builds for the operator (`add:to:` for `+`).
    public var selector: String {
        switch self {
        case .add: "add:to:"
        case .subtract: "from:subtract:"
        case .multiply: "multiply:by:"
        case .divide: "divide:by:"
        case .power: "raise:toPower:"
        }
    }

    /// Precedence of the tightest-binding prefix and postfix forms, for the printer.
    static let unaryPrecedence = 40
    static let postfixPrecedence = 50
    /// Precedence of `:=`.
    static let assignmentPrecedence = 5
}
