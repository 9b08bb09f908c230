import Foundation

// Apple's printed form: the text Apple's Foundation prints for a tree (`predicateFormat`,
// `NSExpression.description`), for people who compare printed predicates with logs or
// with tests that assert Apple's text. ``FormatPrinter`` prints it in its `.apple` style;
// the canonical style stays what round-trips.
//
// What Apple prints differently from the canonical form: numbers as `NSNumber` describes
// them (`YES` is `1`, `10.0` is `10`), every infix operand that is itself an infix
// operation in parentheses (`a + (b * 2)`), the bitwise functions as their operators,
// other built-ins by their selectors (`sqrt:(2)`, `modulus:by:(7, 2)`),
// `FUNCTION(a, "pow:" , 3)` with a space before the first argument's comma, dates as
// `CAST(<seconds>, "NSDate")` with six decimals, and every reserved word in a key path
// (not only the first) escaped with `#`. docs/language.md, "Apple's printed form", lists
// the rules and which of them are taken from Apple's output and which from its code.
// Remodel has one null, so `NSNull` (which Apple prints `<null>`) prints as `nil`.

extension FormatExpression {
    /// The text Apple's Foundation prints for the same tree (`NSExpression.description`):
    /// for comparing with logs and with tests that assert Apple's text. It does not always
    /// parse back to this tree; ``description`` (the canonical form) does.
    public var appleFormat: String { FormatPrinter.print(self, style: .apple) }
}

extension FormatPredicate {
    /// The text Apple's Foundation prints for the same tree (`predicateFormat`): for
    /// comparing with logs and with tests that assert Apple's text. It does not always
    /// parse back to this tree; ``description`` (the canonical form) does.
    public var appleFormat: String { FormatPrinter.print(self, style: .apple) }
}
