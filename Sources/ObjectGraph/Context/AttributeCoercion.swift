import ExpressionLanguage
import Foundation

/// Converts a value to what an attribute stores, as Core Data accepts it: numbers across
/// numeric types (checked against integer ranges), 0 and 1 for booleans, ISO 8601 strings
/// and seconds since 2001 are not dates — only dates are. Anything else is a type error
/// naming the attribute.
enum AttributeCoercion {
    static func coerce(_ value: Value, to attribute: AttributeDescription) throws(ContextError) -> Value {
        try coerce(value, to: attribute.type, name: attribute.name)
    }

    /// The same, with the type and the name (for errors) apart: the hot path's form.
    static func coerce(_ value: Value, to type: AttributeType, name: @autoclosure () -> String) throws(ContextError)
        -> Value
    {
        func mismatch() -> ContextError {
            ContextError(
                .type,
                "a \(type.rawValue) attribute cannot hold \(value.kind.rawValue) \(value.formatDescription.prefix(40))",
                key: name())
        }
        switch (type, value) {
        case (_, .null):
            return .null
        case (.int16, _), (.int32, _), (.int64, _):
            let integer: Int64
            switch value {
            case .integer(let i): integer = i
            case .bool(let b): integer = b ? 1 : 0
            case .double(let d) where d == d.rounded() && abs(d) < 9.2e18: integer = Int64(d)
            case .decimal(let d) where Decimal(NSDecimalNumber(decimal: d).int64Value) == d:
                integer = NSDecimalNumber(decimal: d).int64Value
            default: throw mismatch()
            }
            guard type.integerRange!.contains(integer) else {
                throw ContextError(.type, "\(integer) is out of range for a \(type.rawValue) attribute", key: name())
            }
            return .integer(integer)
        case (.boolean, .bool): return value
        case (.boolean, .integer(let i)) where i == 0 || i == 1: return .bool(i == 1)
        case (.double, _), (.float, _):
            guard value.isNumber, let d = value.doubleValue else { throw mismatch() }
            return .double(type == .float ? Double(Float(d)) : d)
        case (.decimal, .decimal): return value
        case (.decimal, .integer(let i)): return .decimal(Decimal(i))
        case (.decimal, .double(let d)):
            return .decimal(Value.decimal(d))
        case (.string, .string), (.uri, .string): return value
        case (.date, .date): return value
        case (.binary, .data), (.transformable, .data): return value
        case (.uuid, .string(let s)):
            guard let uuid = UUID(uuidString: s) else { throw mismatch() }
            return .string(uuid.uuidString)
        default:
            throw mismatch()
        }
    }

    /// Whether a double in a Decimal attribute's column is written back as itself once
    /// read (`Value.decimal(describing:)`, then `Value.double(_:)`): the same bits. Not so for what a
    /// Decimal does not hold (NaN, the infinities, magnitudes beyond its exponents), nor for
    /// -0, read as 0.
    ///
    /// Told without the conversions where the answer is known: a double of magnitude
    /// 1e-100 to 1e100 has a shortest text of at most 17 digits and an exponent a Decimal
    /// holds, so the decimal is that text's number exactly, and its own text parses back
    /// to the double (a store's rows are checked with it, row by row).
    static func keepsDecimal(_ d: Double) -> Bool {
        let magnitude = d.magnitude
        if magnitude >= 1e-100 && magnitude <= 1e100 { return true }
        if d == 0 { return d.sign == .plus }
        return writesBackAsDecimal(d)
    }

    /// Whether a double in a Decimal attribute's column reads as the decimal its text
    /// says; not so for one no Decimal holds (an infinity, a magnitude beyond a Decimal's
    /// exponents), which reads as 0 (``EntityBinding/read(_:as:)``: Foundation reads "inf"
    /// as nothing, and "-inf" as 0).
    static func decimalHolds(_ d: Double) -> Bool {
        d.isFinite && Value.decimal(describing: d) != nil
    }

    /// ``keepsDecimal(_:)`` by its definition: the two conversions.
    static func writesBackAsDecimal(_ d: Double) -> Bool {
        guard let decimal = Value.decimal(describing: d) else { return false }
        return Value.double(decimal).bitPattern == d.bitPattern
    }

    /// The integers a Decimal attribute's column holds that it, reading them, writes back
    /// as themselves wherever SQLite keeps them: read as the decimal it is, one of them is
    /// written as the double it is, exactly (within ±2^53), which a column of NUMERIC
    /// affinity (a Decimal's) keeps as that integer (SQLite makes an integral double of
    /// the Int64 range an integer there: `sqlite3VdbeIntegerAffinity`), and one of REAL
    /// affinity (a Double's) as the double it is. Beyond, the double is another integer.
    static let decimalIntegers: ClosedRange<Int64> = -(1 << 53)...(1 << 53)
}

extension AttributeDescription {
    /// `value` as this attribute stores it (what a context's `setValue` keeps), or the
    /// type error a save would meet.
    public func stored(_ value: Value) throws(ContextError) -> Value {
        try AttributeCoercion.coerce(value, to: self)
    }
}
