import Foundation

/// Prints syntax trees as canonical format strings: one spelling per construct, the fewest
/// parentheses the shared precedence table allows, and compound sub-predicates always in
/// parentheses. A printed tree parses back to an equal tree.
///
/// Constants that have no literal syntax print in forms that parse back to the same
/// *value*, not the same tree: dates as `CAST(<seconds since 2001>, "NSDate")`, arrays and
/// sets as `{…}`, infinities as `1.0 / 0.0`. Dictionaries, data and objects
/// (which can only come from `%@` arguments) print descriptively and do not parse back;
/// nor do keys from `%K` that are not identifiers (`%K` with `"ISO 3166-1"`).
struct FormatPrinter {
    /// Which text: the canonical form (the default), or Apple's (`appleFormat`;
    /// ApplePrinter.swift says how it differs).
    enum Style { case canonical, apple }

    let style: Style

    static func print(_ expression: FormatExpression, style: Style = .canonical) -> String {
        var out = ""
        FormatPrinter(style: style).write(expression, to: &out)
        return out
    }

    static func print(_ predicate: FormatPredicate, style: Style = .canonical) -> String {
        var out = ""
        FormatPrinter(style: style).write(predicate, to: &out)
        return out
    }

    // MARK: - Predicates

    func write(_ predicate: FormatPredicate, to out: inout String) {
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
            if children.isEmpty {
                out += predicate.isAnd ? "TRUEPREDICATE" : "FALSEPREDICATE"
                return
            }
            // Apple prints a compound of one as that one.
            if style == .apple, children.count == 1 { return write(children[0], to: &out) }
            let separator = predicate.isAnd ? " AND " : " OR "
            for (i, child) in children.enumerated() {
                if i > 0 { out += separator }
                writeOperand(child, to: &out)
            }
        case .not(let operand):
            out += "NOT "
            writeOperand(operand, to: &out)
        }
    }

    private func writeOperand(_ predicate: FormatPredicate, to out: inout String) {
        let parenthesized: Bool
        switch predicate.kind {
        case .and: parenthesized = true
        case .or(let children): parenthesized = style == .canonical || children.count > 1
        default: parenthesized = false
        }
        if parenthesized { out += "(" }
        write(predicate, to: &out)
        if parenthesized { out += ")" }
    }

    // MARK: - Expressions

    /// How tightly a printed expression binds; a child that binds less tightly than its
    /// place requires gets parentheses.
    static func precedence(_ expression: FormatExpression) -> Int {
        switch expression.kind {
        case .arithmetic(let op, _, _): op.precedence
        case .negate: ArithmeticOperator.unaryPrecedence
        case .assignment: ArithmeticOperator.assignmentPrecedence
        case .constant(let value):
            switch value {
            case .integer(let i) where i < 0: ArithmeticOperator.unaryPrecedence
            case .double(let d) where d.sign == .minus || !d.isFinite: ArithmeticOperator.unaryPrecedence
            default: ArithmeticOperator.postfixPrecedence
            }
        default: ArithmeticOperator.postfixPrecedence
        }
    }

    /// Whether Apple prints the expression as an infix operation, which it parenthesises
    /// wherever it is an operand of another, whatever the precedence.
    private static func isAppleInfix(_ expression: FormatExpression) -> Bool {
        switch expression.kind {
        case .arithmetic, .negate: true
        case .function(let selector, let arguments): BitwiseOperator(selector: selector) != nil && arguments.count == 2
        default: false
        }
    }

    /// `expression` as an operand: in parentheses when it binds less tightly than
    /// `minimum` (canonical), or when it is an infix operation (Apple).
    private func write(_ expression: FormatExpression, to out: inout String, atLeast minimum: Int) {
        let parenthesised = style == .apple ? Self.isAppleInfix(expression) : Self.precedence(expression) < minimum
        if parenthesised {
            out += "("
            write(expression, to: &out)
            out += ")"
        } else {
            write(expression, to: &out)
        }
    }

    func write(_ expression: FormatExpression, to out: inout String) {
        switch expression.kind {
        case .constant(let value):
            writeConstant(value, to: &out)
        case .evaluatedObject:
            out += "SELF"
        case .variable(let name):
            out += "$" + variableName(name)
        case .keyPath(let operand, let path):
            if let operand {
                write(operand, to: &out, atLeast: ArithmeticOperator.postfixPrecedence)
                for component in path { out += "." + key(component, first: false) }
            } else {
                for (i, component) in path.enumerated() {
                    if i > 0 { out += "." }
                    out += key(component, first: i == 0)
                }
            }
        case .aggregate(let elements):
            writeList("{", elements, "}", to: &out)
        case .arithmetic(let op, let lhs, let rhs):
            // Left-associative: a left child of equal precedence needs no parentheses,
            // a right child does.
            let leftMinimum = op.associativity == .left ? op.precedence : op.precedence + 1
            let rightMinimum = op.associativity == .left ? op.precedence + 1 : op.precedence
            write(lhs, to: &out, atLeast: leftMinimum)
            out += " " + op.rawValue + " "
            write(rhs, to: &out, atLeast: rightMinimum)
        case .negate(let operand):
            out += "-"
            if case .negate = operand.kind, style == .canonical {
                // `--a` parses back as it is; `-(-a)` would nest twice as deep, so a
                // tree at the parser's depth limit would not parse back.
                write(operand, to: &out)
            } else {
                // `-(-1)`: a negative literal under a minus keeps its parentheses.
                write(operand, to: &out, atLeast: ArithmeticOperator.unaryPrecedence + 1)
            }
        case .function(let selector, let arguments):
            if style == .apple, let op = BitwiseOperator(selector: selector), arguments.count == 2 {
                // Apple prints the bit functions as their operators.
                write(arguments[0], to: &out, atLeast: op.precedence)
                out += " " + op.rawValue + " "
                write(arguments[1], to: &out, atLeast: op.precedence + 1)
            } else {
                out += style == .apple ? selector : BuiltinFunction.bySelector(selector)?.formatName ?? selector
                writeList("(", arguments, ")", to: &out)
            }
        case .index(let base, let specifier):
            write(base, to: &out, atLeast: ArithmeticOperator.postfixPrecedence)
            out += "["
            switch specifier {
            case .first: out += "FIRST"
            case .last: out += "LAST"
            case .size: out += "SIZE"
            case .expression(let e): write(e, to: &out)
            }
            out += "]"
        case .functionCall(let target, let selector, let arguments):
            if style == .apple, case .constant(.string("valueForKeyPath:")) = selector.kind, arguments.count == 1,
                case .variable = arguments[0].kind
            {
                // `$a.$b`: Apple's key path with an expression after the dot.
                write(target, to: &out, atLeast: ArithmeticOperator.postfixPrecedence)
                out += "."
                write(arguments[0], to: &out)
            } else if style == .apple, !arguments.isEmpty {
                // Apple's format is `FUNCTION(%@, "%@" %@)` with the arguments after ", ".
                writeList("FUNCTION(", [target, selector], " , ", to: &out)
                writeList("", arguments, ")", to: &out)
            } else {
                writeList("FUNCTION(", [target, selector] + arguments, ")", to: &out)
            }
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
            out += ", $" + variableName(variable) + ", "
            write(predicate, to: &out)
            out += ")"
        case .fetch(let request, let context, let countOnly):
            writeList("FETCH(", [request, context, countOnly], ")", to: &out)
        case .assignment(let variable, let value):
            out += "$" + variableName(variable) + " := "
            write(value, to: &out, atLeast: ArithmeticOperator.assignmentPrecedence)
        case .anyKey:
            out += "ANYKEY"
        }
    }

    private func writeList(_ open: String, _ items: [FormatExpression], _ close: String, to out: inout String) {
        out += open
        for (i, item) in items.enumerated() {
            if i > 0 { out += ", " }
            write(item, to: &out)
        }
        out += close
    }

    /// A key as printed: canonically, `#` before a reserved word where it would be read
    /// as a keyword (in first position; after a dot it is a key anyway); Apple puts it
    /// before every reserved word.
    private func key(_ key: String, first: Bool) -> String {
        switch style {
        case .canonical: Self.keySpelling(key, first: first)
        case .apple: Self.keySpelling(key, first: true)
        }
    }

    /// A variable's name after `$`: as it is (canonical), or with `#` before a reserved
    /// word (Apple's `$#IN`).
    private func variableName(_ name: String) -> String {
        style == .apple ? Self.keySpelling(name, first: true) : name
    }

    /// A key as written in a key path: reserved words escaped with `#` where they would be
    /// read as keywords (first position only; after a dot they are keys anyway).
    static func keySpelling(_ key: String, first: Bool) -> String {
        if key.hasPrefix("@") { return key }
        if first && Keyword.isReserved(key) { return "#" + key }
        return key
    }

    // MARK: - Constants

    /// A constant in the canonical style.
    static func writeConstant(_ value: Value, to out: inout String) {
        FormatPrinter(style: .canonical).writeConstant(value, to: &out)
    }

    /// Canonically, a literal that parses back to the value; in Apple's style, numbers as
    /// `NSNumber` describes them (`YES` is `1`, `10.0` is `10`) and dates with six decimals.
    func writeConstant(_ value: Value, to out: inout String) {
        switch value {
        case .null: out += "nil"
        case .bool(let b): out += style == .apple ? (b ? "1" : "0") : (b ? "TRUE" : "FALSE")
        case .integer(let i): out += String(i)
        case .double(let d): out += style == .apple ? Value.numberDescription(d) : Self.doubleLiteral(d)
        case .decimal(let d):
            out += style == .apple ? d.description : "CAST(" + Self.quoted(d.description) + ", \"NSDecimalNumber\")"
        case .string(let s): out += Self.quoted(s)
        case .date(let date):
            let seconds = date.timeIntervalSinceReferenceDate
            out +=
                "CAST(" + (style == .apple ? String(format: "%f", seconds) : Self.doubleLiteral(seconds))
                + ", \"NSDate\")"
        case .array(let elements):
            writeConstantList(elements, to: &out)
        case .set(let elements):
            writeConstantList(elements.elements, to: &out)
        case .data(let data):
            out += "<data: \(data.count) bytes>"
        case .dictionary:
            out += value.formatDescription
        case .object(let reference):
            out += "<\(reference.object.objectDescription)>"
        }
    }

    private func writeConstantList(_ elements: [Value], to out: inout String) {
        out += "{"
        for (i, element) in elements.enumerated() {
            if i > 0 { out += ", " }
            writeConstant(element, to: &out)
        }
        out += "}"
    }

    /// A double literal that lexes back as a double: always with `.` or an exponent.
    static func doubleLiteral(_ d: Double) -> String {
        if d.isNaN { return "(0.0 / 0.0)" }
        if d.isInfinite { return d < 0 ? "(-1.0 / 0.0)" : "(1.0 / 0.0)" }
        return "\(d)"
    }

    /// A string literal in double quotes, escaping `"`, `\` and control characters.
    static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

extension FormatPredicate {
    var isAnd: Bool {
        if case .and = kind { return true }
        return false
    }
}

extension FormatExpression: CustomStringConvertible {
    /// The canonical format string.
    public var description: String { FormatPrinter.print(self) }
}

extension FormatPredicate: CustomStringConvertible {
    /// The canonical format string.
    public var description: String { FormatPrinter.print(self) }
}
