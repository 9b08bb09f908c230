import Foundation

extension BuiltinFunction {
    /// Apple's built-in functions (LANGUAGE.md A5), in the order docs/language.md lists them.
    static let all: [BuiltinFunction] = [
        // Statistics over a collection of numbers.
        pure("sum:") { a throws(ExpressionError) in
            .double(try numbers(a[0], "sum").reduce(0, +))
        },
        pure("count:") { a throws(ExpressionError) in .integer(Int64(try collection(a[0], "count").count)) },
        pure("min:") { a throws(ExpressionError) in try extreme(a[0], "min", .orderedAscending) },
        pure("max:") { a throws(ExpressionError) in try extreme(a[0], "max", .orderedDescending) },
        pure("average:") { a throws(ExpressionError) in
            let values = try numbers(a[0], "average")
            guard !values.isEmpty else { throw ExpressionError(.range, "average of an empty collection") }
            return .double(values.reduce(0, +) / Double(values.count))
        },
        pure("median:") { a throws(ExpressionError) in
            let values = try numbers(a[0], "median").sorted()
            guard !values.isEmpty else { throw ExpressionError(.range, "median of an empty collection") }
            let mid = values.count / 2
            // An even count gives the mean of the two middle values (Apple's is undocumented).
            return .double(values.count % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2)
        },
        pure("mode:") { a throws(ExpressionError) in
            let items = try collection(a[0], "mode")
            var counts: [Value: Int] = [:]
            var order: [Value] = []
            for item in items {
                if counts[item] == nil { order.append(item) }
                counts[item, default: 0] += 1
            }
            let best = counts.values.max() ?? 0
            return .array(order.filter { counts[$0] == best })
        },
        pure("stddev:") { a throws(ExpressionError) in
            let values = try numbers(a[0], "stddev")
            guard !values.isEmpty else { throw ExpressionError(.range, "stddev of an empty collection") }
            let mean = values.reduce(0, +) / Double(values.count)
            let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count)
            return .double(variance.squareRoot())
        },

        // Arithmetic, as the operators build it.
        pure("add:to:") { a throws(ExpressionError) in try Arithmetic.apply(.add, a[0], a[1]) },
        pure("from:subtract:") { a throws(ExpressionError) in try Arithmetic.apply(.subtract, a[0], a[1]) },
        pure("multiply:by:") { a throws(ExpressionError) in try Arithmetic.apply(.multiply, a[0], a[1]) },
        pure("divide:by:") { a throws(ExpressionError) in try Arithmetic.apply(.divide, a[0], a[1]) },
        pure("modulus:by:") { a throws(ExpressionError) in try Arithmetic.modulus(a[0], a[1]) },
        pure("raise:toPower:") { a throws(ExpressionError) in try Arithmetic.apply(.power, a[0], a[1]) },
        pure("sqrt:") { a throws(ExpressionError) in .double(try Arithmetic.number(a[0], "sqrt").squareRoot()) },
        pure("log:") { a throws(ExpressionError) in .double(Foundation.log10(try Arithmetic.number(a[0], "log"))) },
        pure("ln:") { a throws(ExpressionError) in .double(Foundation.log(try Arithmetic.number(a[0], "ln"))) },
        pure("exp:") { a throws(ExpressionError) in .double(Foundation.exp(try Arithmetic.number(a[0], "exp"))) },
        pure("floor:") { a throws(ExpressionError) in .double(Foundation.floor(try Arithmetic.number(a[0], "floor"))) },
        pure("ceiling:") { a throws(ExpressionError) in .double(Foundation.ceil(try Arithmetic.number(a[0], "ceiling")))
        },
        pure("trunc:") { a throws(ExpressionError) in .double(Foundation.trunc(try Arithmetic.number(a[0], "trunc"))) },
        pure("abs:") { a throws(ExpressionError) in .double(Swift.abs(try Arithmetic.number(a[0], "abs"))) },

        // Bits (also the operators & | ^ << >>): on NSInteger values, as Apple's are.
        pure("bitwiseAnd:with:") { a throws(ExpressionError) in
            .integer(try bits(a[0], "bitwiseAnd") & bits(a[1], "bitwiseAnd"))
        },
        pure("bitwiseOr:with:") { a throws(ExpressionError) in
            .integer(try bits(a[0], "bitwiseOr") | bits(a[1], "bitwiseOr"))
        },
        pure("bitwiseXor:with:") { a throws(ExpressionError) in
            .integer(try bits(a[0], "bitwiseXor") ^ bits(a[1], "bitwiseXor"))
        },
        pure("leftshift:by:") { a throws(ExpressionError) in
            .integer(try bits(a[0], "leftshift") << bits(a[1], "leftshift"))
        },
        pure("rightshift:by:") { a throws(ExpressionError) in
            .integer(try bits(a[0], "rightshift") >> bits(a[1], "rightshift"))
        },
        pure("onesComplement:") { a throws(ExpressionError) in .integer(~(try bits(a[0], "onesComplement"))) },

        // Strings.
        pure("uppercase:") { a throws(ExpressionError) in .string(try string(a[0], "uppercase").uppercased()) },
        pure("lowercase:") { a throws(ExpressionError) in .string(try string(a[0], "lowercase").lowercased()) },

        // Other.
        pure("noindex:") { a throws(ExpressionError) in a[0] },
        pure("castObject:toType:") { a throws(ExpressionError) in
            guard case .string(let typeName) = a[1] else {
                throw ExpressionError(.type, "CAST needs a type name string, not \(Arithmetic.describe(a[1]))")
            }
            guard let convert = Cast.converter(to: typeName) else { throw Cast.unknownType(typeName) }
            return try convert(a[0])
        },
        impure("now") { _ throws(ExpressionError) in .date(Date()) },
        impure("random") { _ throws(ExpressionError) in .double(Double.random(in: 0..<1)) },
        impure("randomn:") { a throws(ExpressionError) in
            let n = try int(a[0], "randomn")
            guard n > 0 else { throw ExpressionError(.range, "randomn needs a positive bound, not \(n)") }
            return .integer(Int64.random(in: 0..<n))
        },
        pure("distanceToLocation:fromLocation:") { _ throws(ExpressionError) in
            throw ExpressionError(
                .unsupported,
                "distanceToLocation:fromLocation: is not supported on this platform (it needs CoreLocation)")
        }
    ]

    private static func pure(_ selector: String, _ body: @escaping @Sendable ([Value]) throws(ExpressionError) -> Value)
        -> BuiltinFunction
    {
        BuiltinFunction(selector: selector, arity: FunctionRegistry.arity(of: selector), isPure: true, body: body)
    }

    private static func impure(
        _ selector: String, _ body: @escaping @Sendable ([Value]) throws(ExpressionError) -> Value
    ) -> BuiltinFunction {
        BuiltinFunction(selector: selector, arity: FunctionRegistry.arity(of: selector), isPure: false, body: body)
    }

    private static func collection(_ value: Value, _ name: String) throws(ExpressionError) -> [Value] {
        if let elements = value.collectionElements { return elements }
        if case .dictionary(let d) = value { return Array(d.values) }
        throw ExpressionError(.type, "\(name) needs a collection, not \(Arithmetic.describe(value))")
    }

    private static func numbers(_ value: Value, _ name: String) throws(ExpressionError) -> [Double] {
        var out: [Double] = []
        for element in try collection(value, name) {
            out.append(try Arithmetic.number(element, name))
        }
        return out
    }

    private static func extreme(_ value: Value, _ name: String, _ wanted: ComparisonResult) throws(ExpressionError)
        -> Value
    {
        let items = try collection(value, name)
        guard var best = items.first else { throw ExpressionError(.range, "\(name) of an empty collection") }
        for item in items.dropFirst() {
            if try ComparisonEvaluation.order(item, best, options: [], op: name) == wanted { best = item }
        }
        return best
    }

    private static func int(_ value: Value, _ name: String) throws(ExpressionError) -> Int64 {
        guard let i = value.integerValue else {
            throw ExpressionError(.type, "\(name) needs integers, not \(Arithmetic.describe(value))")
        }
        return i
    }

    /// A bit operator's operand: a number as `NSNumber.integerValue` gives it (a double or
    /// a decimal truncated toward zero); NaN, the infinities and numbers beyond 64 bits,
    /// where Apple's answer is not defined, and anything that is not a number are errors.
    private static func bits(_ value: Value, _ name: String) throws(ExpressionError) -> Int64 {
        if let i = value.integerValue { return i }
        let number: Double
        switch value {
        case .double(let d): number = d
        case .decimal(let d): number = Value.double(d)
        default:
            throw ExpressionError(
                .type, "\(name) needs numbers (bit operators work on integers), not \(Arithmetic.describe(value))")
        }
        guard let i = Int64(exactly: number.rounded(.towardZero)) else {
            throw ExpressionError(.range, "\(name) needs a number within 64-bit integers, not \(number)")
        }
        return i
    }

    private static func string(_ value: Value, _ name: String) throws(ExpressionError) -> String {
        guard case .string(let s) = value else {
            throw ExpressionError(.type, "\(name) needs a string, not \(Arithmetic.describe(value))")
        }
        return s
    }
}
