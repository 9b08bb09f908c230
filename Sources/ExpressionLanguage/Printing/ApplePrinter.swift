import Foundation

/// Apple's printed form: the text Apple's Foundation prints for a tree (`predicateFormat`,
/// `NSExpression.description`), for people who compare printed predicates with logs or
/// with tests that assert Apple's text. ``FormatPrinter`` prints it in its `.apple` style;
/// the canonical style stays what round-trips. This holds how Apple prints constants.
///
/// What Apple prints differently from the canonical form: numbers as `NSNumber` describes
/// them (`YES` is `1`, `10.0` is `10`), every infix operand that is itself an infix
/// operation in parentheses (`a + (b * 2)`), the bitwise functions as their operators,
/// other built-ins by their selectors (`sqrt:(2)`, `modulus:by:(7, 2)`),
/// `FUNCTION(a, "pow:" , 3)` with a space before the first argument's comma, dates as
/// `CAST(<seconds>, "NSDate")` with six decimals, and every reserved word in a key path
/// (not only the first) escaped with `#`. docs/language.md, "Apple's printed form", lists
/// the rules and which of them are taken from Apple's output and which from its code.
/// Remodel has one null, so `NSNull` (which Apple prints `<null>`) prints as `nil`.
enum ApplePrinter {
    static func writeConstant(_ value: Value, to out: inout String) {
        switch value {
        case .null: out += "nil"
        case .bool(let b): out += b ? "1" : "0"
        case .integer(let i): out += String(i)
        case .double(let d): out += numberDescription(d)
        case .decimal(let d): out += d.description
        case .string(let s): out += FormatPrinter.quoted(s)
        case .date(let date):
            out += "CAST(" + String(format: "%f", date.timeIntervalSinceReferenceDate) + ", \"NSDate\")"
        case .array(let elements): writeConstantList(elements, to: &out)
        case .set(let elements): writeConstantList(elements.elements, to: &out)
        case .data, .dictionary, .object: FormatPrinter.writeConstant(value, to: &out)
        }
    }

    private static func writeConstantList(_ elements: [Value], to out: inout String) {
        out += "{"
        for (i, element) in elements.enumerated() {
            if i > 0 { out += ", " }
            writeConstant(element, to: &out)
        }
        out += "}"
    }

    /// A double as `NSNumber` describes it: integral values without a fraction (`10`),
    /// others in their shortest form (`2.5`, `0.1`), `nan`, `inf` and `-inf`.
    static func numberDescription(_ d: Double) -> String {
        if d.isNaN { return "nan" }
        if d.isInfinite { return d < 0 ? "-inf" : "inf" }
        if d == d.rounded(), Swift.abs(d) < 1e15 { return String(Int64(d)) }
        return "\(d)"
    }
}

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
