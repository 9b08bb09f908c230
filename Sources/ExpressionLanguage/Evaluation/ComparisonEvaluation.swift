import Foundation

/// The semantics of comparison operators (LANGUAGE.md A4): nil rules first, then
/// `isEqual:` for equality, `compare:` for ordering (strings with their options), and the
/// string, collection, LIKE, MATCHES and BETWEEN operators.
enum ComparisonEvaluation {
    /// Evaluates `lhs op rhs` for one pair of values (the ANY/ALL modifier is applied by
    /// the caller). `like` and `regex` are the compiled constant pattern, when there is
    /// one; `invalidPattern` is the error of a constant MATCHES pattern that did not
    /// compile, thrown here, when a string is matched against it (LANGUAGE.md decision 5).
    static func evaluate(
        _ op: ComparisonOperator, _ lhs: Value, _ rhs: Value, options: ComparisonOptions,
        like: LikePattern? = nil, regex: RegularExpression? = nil, invalidPattern: ExpressionError? = nil
    ) throws(ExpressionError) -> Bool {
        // Nil rules: NSNull is nil; both nil are equal; any other operator on nil is false,
        // except <= and >= which hold for two nils.
        if lhs.isNull || rhs.isNull {
            let both = lhs.isNull && rhs.isNull
            switch op {
            case .equalTo: return both
            case .notEqualTo: return !both
            case .lessThanOrEqualTo, .greaterThanOrEqualTo: return both
            default: return false
            }
        }
        // NaN as IEEE 754 has it: equal to nothing, itself included, and neither less nor
        // greater than anything.
        if lhs.isNaN || rhs.isNaN {
            switch op {
            case .equalTo, .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo, .between: return false
            case .notEqualTo: return true
            default: break
            }
        }
        switch op {
        case .equalTo: return equal(lhs, rhs, options)
        case .notEqualTo: return !equal(lhs, rhs, options)
        case .lessThan: return try order(lhs, rhs, options: options, op: "<") == .orderedAscending
        case .lessThanOrEqualTo: return try order(lhs, rhs, options: options, op: "<=") != .orderedDescending
        case .greaterThan: return try order(lhs, rhs, options: options, op: ">") == .orderedDescending
        case .greaterThanOrEqualTo: return try order(lhs, rhs, options: options, op: ">=") != .orderedAscending
        case .beginsWith:
            let (s, p) = try strings(lhs, rhs, op)
            return StringFolding.hasPrefix(s, p, options)
        case .endsWith:
            let (s, p) = try strings(lhs, rhs, op)
            return StringFolding.hasSuffix(s, p, options)
        case .contains:
            return try contains(lhs, rhs, options, op: "CONTAINS")
        case .in:
            return try contains(rhs, lhs, options, op: "IN")
        case .like:
            let (s, p) = try strings(lhs, rhs, op)
            return (like ?? LikePattern(p, options: options)).matches(s)
        case .matches:
            let (s, p) = try strings(lhs, rhs, op)
            if let invalidPattern { throw invalidPattern }
            if let regex { return try regex.matches(s) }
            return try RegexCache.regularExpression(pattern: p, options: options).matches(s)
        case .between:
            guard let bounds = rhs.collectionElements, bounds.count == 2 else {
                throw ExpressionError(
                    .type,
                    "BETWEEN needs a collection of two bounds on the right, such as {1, 10}, not \(Arithmetic.describe(rhs))"
                )
            }
            if bounds[0].isNull || bounds[1].isNull || bounds[0].isNaN || bounds[1].isNaN { return false }
            guard try order(lhs, bounds[0], options: options, op: "BETWEEN") != .orderedAscending else { return false }
            return try order(lhs, bounds[1], options: options, op: "BETWEEN") != .orderedDescending
        case .utiConformsTo, .utiEquals:
            throw ExpressionError(.unsupported, "\(op.symbol) is not supported on this platform")
        }
    }

    /// `isEqual:`, with case/diacritic folding when both are strings and options ask for it;
    /// a NaN equals nothing.
    static func equal(_ lhs: Value, _ rhs: Value, _ options: ComparisonOptions) -> Bool {
        if lhs.isNaN || rhs.isNaN { return false }
        if case .string(let a) = lhs, case .string(let b) = rhs {
            return options.isEmpty ? a.utf16.elementsEqual(b.utf16) : StringFolding.equals(a, b, options)
        }
        return lhs == rhs
    }

    /// `compare:`: strings (with options), numbers, dates. Anything else, or a mix such as
    /// a string with a number, is a type error, as on Apple (no implicit conversion).
    static func order(_ lhs: Value, _ rhs: Value, options: ComparisonOptions, op: String) throws(ExpressionError)
        -> ComparisonResult
    {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)):
            if options.isEmpty { return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending) }
            return StringFolding.compare(a, b, options)
        case (.date(let a), .date(let b)):
            return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        default:
            if lhs.isNumber && rhs.isNumber {
                if case .double(let a) = lhs, a.isNaN { return .orderedDescending }
                if case .double(let b) = rhs, b.isNaN { return .orderedAscending }
                return Value.compareNumbers(lhs, rhs)
            }
            throw ExpressionError(
                .type,
                "cannot order \(Arithmetic.describe(lhs)) and \(Arithmetic.describe(rhs)) with \(op); "
                    + "both sides must be numbers, strings or dates (convert with CAST)")
        }
    }

    private static func strings(_ lhs: Value, _ rhs: Value, _ op: ComparisonOperator) throws(ExpressionError) -> (
        String, String
    ) {
        guard case .string(let a) = lhs else {
            throw ExpressionError(.type, "\(op.symbol) needs a string on the left, not \(Arithmetic.describe(lhs))")
        }
        guard case .string(let b) = rhs else {
            throw ExpressionError(.type, "\(op.symbol) needs a string on the right, not \(Arithmetic.describe(rhs))")
        }
        return (a, b)
    }

    /// `container CONTAINS element`: a substring test for two strings, membership for
    /// arrays and sets (`[c]`/`[d]` fold string elements), and a search of the values of a
    /// dictionary.
    static func contains(_ container: Value, _ element: Value, _ options: ComparisonOptions, op: String)
        throws(ExpressionError) -> Bool
    {
        switch container {
        case .string(let s):
            guard case .string(let needle) = element else {
                throw ExpressionError(
                    .type, "\(op) with a string container needs a string element, not \(Arithmetic.describe(element))")
            }
            return StringFolding.contains(s, needle, options)
        case .array(let elements):
            return elements.contains { equal($0, element, options) }
        case .set(let elements):
            if options.isEmpty { return elements.contains(element) }
            return elements.contains { equal($0, element, options) }
        case .dictionary(let d):
            return d.values.contains { equal($0, element, options) }
        default:
            throw ExpressionError(
                .type,
                "\(op) needs a collection or a string to search, not \(Arithmetic.describe(container))")
        }
    }
}
