import Foundation

/// Prints syntax trees as Apple's Foundation prints the same trees (`predicateFormat`,
/// `NSExpression.description`), for people who compare printed predicates with logs or
/// with tests that assert Apple's text. The canonical printer (``FormatPrinter``) stays
/// what round-trips; this one is for reading and comparing.
///
/// What Apple prints differently from the canonical form: numbers as `NSNumber` describes
/// them (`YES` is `1`, `10.0` is `10`), every infix operand that is
/// itself an infix operation in parentheses (`a + (b * 2)`), the bitwise functions as
/// their operators, other built-ins by their selectors (`sqrt:(2)`, `modulus:by:(7, 2)`),
/// `FUNCTION(a, "pow:" , 3)` with a space before the first argument's comma, `==` for
/// `=`, dates as `CAST(<seconds>, "NSDate")` with six decimals, and every reserved word in
/// a key path (not only the first) escaped with `#`. docs/language.md, "Apple's printed
/// form", lists the rules and which of them are taken from Apple's output and which from
/// its code. Remodel has one null, so `NSNull` (which Apple prints `<null>`) prints as `nil`.
enum ApplePrinter {
    static func print(_ expression: FormatExpression) -> String {
        var out = ""
        write(expression, to: &out)
        return out
    }

    static func print(_ predicate: FormatPredicate) -> String {
        var out = ""
        write(predicate, to: &out)
        return out
    }

    // MARK: - Predicates

    static func write(_ predicate: FormatPredicate, to out: inout String) {
        switch predicate.kind {
        case .constant(let value):
            out += value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let c):
            switch c.modifier {
            case .direct: break
            case .any: out += "ANY "
            case .all: out += "ALL "
            }
            write(c.lhs, to: &out)
            out += " " + c.op.symbol
            if !c.options.isEmpty { out += "[" + c.options.letters + "]" }
            out += " "
            write(c.rhs, to: &out)
        case .and(let children), .or(let children):
            // No children: Apple's empty AND is true, its empty OR false; one child prints
            // alone.
            if children.isEmpty {
                out += predicate.isAnd ? "TRUEPREDICATE" : "FALSEPREDICATE"
            } else if children.count == 1 {
                write(children[0], to: &out)
            } else {
                for (i, child) in children.enumerated() {
                    if i > 0 { out += predicate.isAnd ? " AND " : " OR " }
                    writeOperand(child, to: &out)
                }
            }
        case .not(let operand):
            out += "NOT "
            writeOperand(operand, to: &out)
        }
    }

    private static func writeOperand(_ predicate: FormatPredicate, to out: inout String) {
        switch predicate.kind {
        case .and(let children),
            .or(let children) where children.count > 1:
            out += "("
            write(predicate, to: &out)
            out += ")"
        default:
            write(predicate, to: &out)
        }
    }

    // MARK: - Expressions

    /// Whether Apple prints the expression as an infix operation, which it parenthesises
    /// wherever it is an operand of another.
    private static func isInfix(_ expression: FormatExpression) -> Bool {
        switch expression.kind {
        case .arithmetic, .negate: true
        case .function(let selector, let arguments): BitwiseOperator(selector: selector) != nil && arguments.count == 2
        default: false
        }
    }

    private static func writeOperand(_ expression: FormatExpression, to out: inout String) {
        if isInfix(expression) {
            out += "("
            write(expression, to: &out)
            out += ")"
        } else {
            write(expression, to: &out)
        }
    }

    static func write(_ expression: FormatExpression, to out: inout String) {
        switch expression.kind {
        case .constant(let value):
            writeConstant(value, to: &out)
        case .evaluatedObject:
            out += "SELF"
        case .variable(let name):
            out += "$" + escaped(name)
        case .keyPath(let operand, let path):
            if let operand {
                writeOperand(operand, to: &out)
                out += "."
            }
            out += path.map(escaped).joined(separator: ".")
        case .aggregate(let elements):
            writeList("{", elements, "}", to: &out)
        case .arithmetic(let op, let lhs, let rhs):
            writeOperand(lhs, to: &out)
            out += " " + op.rawValue + " "
            writeOperand(rhs, to: &out)
        case .negate(let operand):
            out += "-"
            writeOperand(operand, to: &out)
        case .function(let selector, let arguments):
            if let op = BitwiseOperator(selector: selector), arguments.count == 2 {
                writeOperand(arguments[0], to: &out)
                out += " " + op.rawValue + " "
                writeOperand(arguments[1], to: &out)
            } else {
                out += selector
                writeList("(", arguments, ")", to: &out)
            }
        case .index(let base, let specifier):
            writeOperand(base, to: &out)
            out += "["
            switch specifier {
            case .first: out += "FIRST"
            case .last: out += "LAST"
            case .size: out += "SIZE"
            case .expression(let e): write(e, to: &out)
            }
            out += "]"
        case .functionCall(let target, let selector, let arguments):
            if case .constant(.string("valueForKeyPath:")) = selector.kind, arguments.count == 1,
                case .variable = arguments[0].kind
            {
                // `$a.$b`: Apple's key path expression with an expression after the dot.
                writeOperand(target, to: &out)
                out += "."
                write(arguments[0], to: &out)
                return
            }
            out += "FUNCTION("
            write(target, to: &out)
            out += ", "
            write(selector, to: &out)
            if !arguments.isEmpty {
                out += " , "
                for (i, argument) in arguments.enumerated() {
                    if i > 0 { out += ", " }
                    write(argument, to: &out)
                }
            }
            out += ")"
        case .cast(let value, let type):
            writeList("CAST(", [value, type], ")", to: &out)
        case .ternary(let condition, let whenTrue, let whenFalse):
            out += "TERNARY("
            write(condition, to: &out)
            out += ", "
            write(whenTrue, to: &out)
            out += ", "
            write(whenFalse, to: &out)
            out += ")"
        case .subquery(let collection, let variable, let predicate):
            out += "SUBQUERY("
            write(collection, to: &out)
            out += ", $" + escaped(variable) + ", "
            write(predicate, to: &out)
            out += ")"
        case .fetch(let request, let context, let countOnly):
            writeList("FETCH(", [request, context, countOnly], ")", to: &out)
        case .assignment(let variable, let value):
            out += "$" + escaped(variable) + " := "
            write(value, to: &out)
        case .anyKey:
            out += "ANYKEY"
        }
    }

    private static func writeList(_ open: String, _ items: [FormatExpression], _ close: String, to out: inout String) {
        out += open
        for (i, item) in items.enumerated() {
            if i > 0 { out += ", " }
            write(item, to: &out)
        }
        out += close
    }

    /// A key or a variable name, with `#` before a reserved word wherever it stands.
    private static func escaped(_ name: String) -> String {
        !name.hasPrefix("@") && Keyword.isReserved(name) ? "#" + name : name
    }

    // MARK: - Constants

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
    public var appleFormat: String { ApplePrinter.print(self) }
}

extension FormatPredicate {
    /// The text Apple's Foundation prints for the same tree (`predicateFormat`): for
    /// comparing with logs and with tests that assert Apple's text. It does not always
    /// parse back to this tree; ``description`` (the canonical form) does.
    public var appleFormat: String { ApplePrinter.print(self) }
}
