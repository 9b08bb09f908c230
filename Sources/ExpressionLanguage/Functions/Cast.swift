import Foundation

/// `CAST(value, 'Type')` (Apple's `castObject:toType:`).
enum Cast {
    /// The type names CAST accepts.
    static let typeNames = ["NSString", "NSNumber", "NSDecimalNumber", "NSDate"]

    typealias Converter = @Sendable (Value) throws(ExpressionError) -> Value

    /// The conversion to `typeName`, or nil when CAST does not know the type.
    static func converter(to typeName: String) -> Converter? {
        switch typeName {
        case "NSString": return { v throws(ExpressionError) in v.isNull ? .null : .string(v.formatDescription) }
        case "NSNumber": return toNumber
        case "NSDecimalNumber": return toDecimal
        case "NSDate": return toDate
        default: return nil
        }
    }

    static func unknownType(_ typeName: String) -> ExpressionError {
        ExpressionError(
            .type,
            "CAST does not know the type '\(typeName)'; use one of "
                + typeNames.joined(separator: ", "))
    }

    /// From a string: an integer when it has no `.` or exponent, a decimal otherwise; from
    /// a date: seconds since 2001-01-01; numbers stay as they are (booleans become 0 or 1).
    static func toNumber(_ value: Value) throws(ExpressionError) -> Value {
        switch value {
        case .null, .integer, .double, .decimal: return value
        case .bool(let b): return .integer(b ? 1 : 0)
        case .date(let d): return .double(d.timeIntervalSinceReferenceDate)
        case .string(let s):
            let text = s.trimmingCharacters(in: .whitespaces)
            if let i = Int64(text) { return .integer(i) }
            if !text.isEmpty, text.allSatisfy({ "0123456789+-.eE".contains($0) }), Double(text) != nil,
                let d = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
            {
                return .decimal(d)
            }
            throw ExpressionError(.type, "CAST cannot make a number of the string \(FormatPrinter.quoted(s))")
        default:
            throw ExpressionError(.type, "CAST cannot make a number of \(Arithmetic.describe(value))")
        }
    }

    static func toDecimal(_ value: Value) throws(ExpressionError) -> Value {
        switch value {
        case .null: return .null
        case .decimal: return value
        case .integer(let i): return .decimal(Decimal(i))
        case .bool(let b): return .decimal(b ? 1 : 0)
        case .double(let d): return .decimal(Value.decimal(d))
        case .string(let s):
            guard
                let d = Decimal(
                    string: s.trimmingCharacters(in: .whitespaces), locale: Locale(identifier: "en_US_POSIX")),
                Double(s.trimmingCharacters(in: .whitespaces)) != nil
            else {
                throw ExpressionError(
                    .type, "CAST cannot make a decimal number of the string \(FormatPrinter.quoted(s))")
            }
            return .decimal(d)
        default:
            throw ExpressionError(.type, "CAST cannot make a decimal number of \(Arithmetic.describe(value))")
        }
    }

    /// From a number: that many seconds after 2001-01-01T00:00:00Z; from an ISO 8601 string.
    static func toDate(_ value: Value) throws(ExpressionError) -> Value {
        switch value {
        case .null, .date: return value
        case .integer, .double, .decimal, .bool:
            return .date(Date(timeIntervalSinceReferenceDate: value.doubleValue ?? 0))
        case .string(let s):
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            if let d = formatter.date(from: s) { return .date(d) }
            formatter.formatOptions = [.withInternetDateTime]
            if let d = formatter.date(from: s) { return .date(d) }
            throw ExpressionError(
                .type,
                "CAST cannot make a date of the string \(FormatPrinter.quoted(s)); use ISO 8601 such as \"2001-01-01T00:00:00Z\""
            )
        default:
            throw ExpressionError(.type, "CAST cannot make a date of \(Arithmetic.describe(value))")
        }
    }
}
