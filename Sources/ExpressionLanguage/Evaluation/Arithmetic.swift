import Foundation

/// Arithmetic with Apple's typing: two integral operands (integers, booleans) give an
/// integer with truncating division; a double operand gives a double; decimals stay
/// decimal unless a double is involved. Integer overflow and integer division by zero are
/// errors (LANGUAGE.md decision 4); doubles follow IEEE 754.
enum Arithmetic {
    static func apply(_ op: ArithmeticOperator, _ lhs: Value, _ rhs: Value) throws(ExpressionError) -> Value {
        // Two doubles, the common case of mappings (`$source.price * 1.03`): what the
        // general path below computes for them, without its checks of the operands' kinds.
        if case .double(let a) = lhs, case .double(let b) = rhs { return double(op, a, b) }
        if op == .power {
            return .double(Foundation.pow(try number(lhs, op), try number(rhs, op)))
        }
        if let a = lhs.integerValue, let b = rhs.integerValue {
            return try integer(op, a, b)
        }
        switch (lhs, rhs) {
        case (.decimal, .decimal), (.decimal, .integer), (.decimal, .bool), (.integer, .decimal), (.bool, .decimal):
            return try decimal(op, decimalValue(lhs), decimalValue(rhs))
        default:
            return double(op, try number(lhs, op), try number(rhs, op))
        }
    }

    /// IEEE 754 arithmetic on two doubles.
    @inline(__always)
    static func double(_ op: ArithmeticOperator, _ a: Double, _ b: Double) -> Value {
        switch op {
        case .add: .double(a + b)
        case .subtract: .double(a - b)
        case .multiply: .double(a * b)
        case .divide: .double(a / b)
        case .power: .double(Foundation.pow(a, b))
        }
    }

    static func integer(_ op: ArithmeticOperator, _ a: Int64, _ b: Int64) throws(ExpressionError) -> Value {
        let result: (partialValue: Int64, overflow: Bool)
        switch op {
        case .add: result = a.addingReportingOverflow(b)
        case .subtract: result = a.subtractingReportingOverflow(b)
        case .multiply: result = a.multipliedReportingOverflow(by: b)
        case .divide:
            guard b != 0 else {
                throw ExpressionError(
                    .divisionByZero,
                    "integer division by zero (\(a) / 0); divide by a double (\(a) / 0.0) for IEEE infinity")
            }
            result = a.dividedReportingOverflow(by: b)
        case .power:
            return .double(Foundation.pow(Double(a), Double(b)))
        }
        guard !result.overflow else {
            throw ExpressionError(
                .overflow,
                "integer overflow in \(a) \(op.rawValue) \(b); use a double operand (such as \(a).0) for floating-point arithmetic"
            )
        }
        return .integer(result.partialValue)
    }

    static func decimal(_ op: ArithmeticOperator, _ a: Decimal, _ b: Decimal) throws(ExpressionError) -> Value {
        switch op {
        case .add: return .decimal(a + b)
        case .subtract: return .decimal(a - b)
        case .multiply: return .decimal(a * b)
        case .divide:
            guard !b.isZero else { throw ExpressionError(.divisionByZero, "decimal division by zero") }
            return .decimal(a / b)
        case .power:
            return .double(Foundation.pow(Value.double(a), Value.double(b)))
        }
    }

    /// `integer modulo`: `modulus:by:`; doubles use `fmod`.
    static func modulus(_ lhs: Value, _ rhs: Value) throws(ExpressionError) -> Value {
        if let a = lhs.integerValue, let b = rhs.integerValue {
            guard b != 0 else { throw ExpressionError(.divisionByZero, "modulus by zero (\(a) % 0)") }
            return .integer(b == -1 ? 0 : a % b)
        }
        return .double(fmod(try number(lhs, "modulus:by:"), try number(rhs, "modulus:by:")))
    }

    static func negate(_ value: Value) throws(ExpressionError) -> Value {
        switch value {
        case .integer(let i):
            guard i != .min else { throw ExpressionError(.overflow, "integer overflow in -(\(i))") }
            return .integer(-i)
        case .bool(let b): return .integer(b ? -1 : 0)
        case .double(let d): return .double(-d)
        case .decimal(let d): return .decimal(-d)
        default:
            throw ExpressionError(.type, "unary '-' needs a number, not \(describe(value))")
        }
    }

    /// Sums numbers: integral when every value is integral and `integral` is allowed, else double.
    static func sum(_ values: [Value], integral: Bool) throws(ExpressionError) -> Value {
        if integral, values.allSatisfy({ $0.integerValue != nil }) {
            var total: Int64 = 0
            for v in values {
                let (r, o) = total.addingReportingOverflow(v.integerValue!)
                guard !o else { throw ExpressionError(.overflow, "integer overflow in a sum") }
                total = r
            }
            return .integer(total)
        }
        var total = 0.0
        for v in values { total += try number(v, "sum") }
        return .double(total)
    }

    static func number(_ value: Value, _ op: ArithmeticOperator) throws(ExpressionError) -> Double {
        // The operation's name is only needed for the error: build it only then.
        if let d = value.doubleValue { return d }
        return try number(value, "'\(op.rawValue)'")
    }

    /// The value as a double, or a type error naming the operation.
    static func number(_ value: Value, _ operation: String) throws(ExpressionError) -> Double {
        if let d = value.doubleValue { return d }
        if value.isNull {
            throw ExpressionError(
                .type,
                "\(operation) needs numbers, not nil; guard with TERNARY(x == nil, …, …) where a value may be missing")
        }
        throw ExpressionError(
            .type,
            "\(operation) needs numbers, not \(describe(value)); convert with CAST(x, 'NSNumber')")
    }

    static func decimalValue(_ value: Value) -> Decimal {
        switch value {
        case .decimal(let d): d
        case .integer(let i): Decimal(i)
        case .bool(let b): b ? 1 : 0
        case .double(let d): Value.decimal(exactly: d)
        default: 0
        }
    }

    /// `a string ("abc")`, `an integer (42)`: how error messages name an operand.
    static func describe(_ value: Value) -> String {
        switch value {
        case .null: return "nil"
        case .string(let s):
            let shown = s.count > 40 ? String(s.prefix(40)) + "…" : s
            return "a string (\(FormatPrinter.quoted(shown)))"
        case .integer(let i): return "an integer (\(i))"
        case .double(let d): return "a double (\(d))"
        case .bool(let b): return "a boolean (\(b ? "TRUE" : "FALSE"))"
        case .decimal(let d): return "a decimal (\(d))"
        case .date: return "a date"
        case .data(let d): return "data (\(d.count) bytes)"
        case .array(let a): return "an array of \(a.count)"
        case .set(let s): return "a set of \(s.count)"
        case .dictionary: return "a dictionary"
        case .object(let o): return "an object (\(o.object.objectDescription))"
        }
    }
}
