/// Archived `NSExpression` and `NSPredicate` objects, as Xcode stores them in mapping models
/// (`valueexpressiondata`, `sourceexpressiondata`) and Core Data in compiled models (`.cdm`,
/// `.mom`), turned into the format language's trees.
///
/// No expression in those files is stored as text: `$source.title` is an
/// `NSKeyPathExpression` over an `NSVariableExpression`, `now()` an `NSFunctionExpression`
/// whose target is the class `_NSPredicateUtilities`, `a + b` the function `add:to:`, FETCH an
/// `NSFetchRequestExpression`. What this reads is docs/mapping-format.md's table "Archived
/// expressions"; an archived class it does not know is an error naming the class, its keys
/// and where it is in the archive, never a guess.
extension FormatExpression {
    /// The expression archived as `value` (an `NSExpression` subclass).
    public init(archived value: ArchivedValue) throws(ArchiveError) {
        var decoder = ArchivedExpressionDecoder()
        self = try decoder.expression(value)
    }
}

extension FormatPredicate {
    /// The predicate archived as `value` (an `NSPredicate` subclass).
    public init(archived value: ArchivedValue) throws(ArchiveError) {
        var decoder = ArchivedExpressionDecoder()
        self = try decoder.predicate(value)
    }
}

/// Walks archived expression objects; bounded in depth, so an archive whose objects refer
/// to themselves fails instead of recursing forever.
struct ArchivedExpressionDecoder {
    static let maximumDepth = FormatParser.maximumDepth
    private var depth = 0

    /// The class that stands for Apple's built-in functions (`now()`, `sqrt:`) as the target
    /// of an archived function expression.
    static let builtinTarget = "_NSPredicateUtilities"

    mutating func expression(_ value: ArchivedValue) throws(ArchiveError) -> FormatExpression {
        defer { depth -= 1 }
        try descend(into: value, "expressions")
        let hierarchy = value.classHierarchy
        func isA(_ name: String) -> Bool { hierarchy.contains(name) }
        if isA("NSConstantValueExpression") {
            guard let constant = try value.value(forKey: "NSConstantValue") else { return .constant(.null) }
            return .constant(try constant.foundationValue())
        }
        if isA("NSSelfExpression") { return FormatExpression(.evaluatedObject) }
        if isA("NSVariableExpression") { return .variable(try required(value, "NSVariable")) }
        if isA("NSAnyKeyExpression") { return FormatExpression(.anyKey) }
        if isA("NSKeyPathSpecifierExpression") {
            return FormatExpression(.keyPath(operand: nil, path: Self.components(try required(value, "NSKeyPath"))))
        }
        if isA("NSFetchRequestExpression") {
            let request = try expression(try value.required("NSFRExpression"))
            let context = try expression(try value.required("NSMOCExpression"))
            let countOnly = try value.bool(forKey: "NSCountOnlyFlag") ?? false
            return FormatExpression(.fetch(request: request, context: context, countOnly: .constant(.bool(countOnly))))
        }
        if isA("NSAggregateExpression") {
            let collection = try value.required("NSCollection")
            var elements: [FormatExpression] = []
            for element in try collection.elements() { elements.append(try expression(element)) }
            return FormatExpression(.aggregate(elements))
        }
        if isA("NSSubqueryExpression") {
            let collection = try expression(try value.required("NSCollection"))
            let variableValue = try value.required("NSVariableExpression")
            guard case .variable(let variable) = try expression(variableValue).kind else {
                throw ArchiveError(
                    "\(variableValue.path): a SUBQUERY's variable must be a variable expression, not \(variableValue.describe())"
                )
            }
            let predicate = try predicate(try value.required("NSPredicate"))
            return FormatExpression(.subquery(collection: collection, variable: variable, predicate: predicate))
        }
        if isA("NSTernaryExpression") {
            let condition = try predicate(try value.required("NSPredicate"))
            let whenTrue = try expression(try value.required("NSTrueExpression"))
            let whenFalse = try expression(try value.required("NSFalseExpression"))
            return FormatExpression(.ternary(condition, whenTrue, whenFalse))
        }
        if isA("NSKeyPathExpression") || isA("NSFunctionExpression") {
            return try function(value)
        }
        throw ArchiveError(
            "\(value.path): \(value.describe()) (keys \(value.keys.joined(separator: ", "))), "
                + "an expression Remodel cannot read from an archive; write this mapping as JSON (docs/mapping-format.md)"
        )
    }

    /// `NSFunctionExpression` and its `NSKeyPathExpression` subclass: a key path, a built-in
    /// function, an arithmetic operator, or a method called with FUNCTION.
    private mutating func function(_ value: ArchivedValue) throws(ArchiveError) -> FormatExpression {
        let selector = try required(value, "NSSelectorName")
        var arguments: [FormatExpression] = []
        if let list = try value.value(forKey: "NSArguments") {
            for argument in try list.elements() { arguments.append(try expression(argument)) }
        }
        let operandValue = try value.value(forKey: "NSOperand")
        if let operandValue, isBuiltinTarget(operandValue) {
            if let op = ArithmeticOperator.allCases.first(where: { $0.selector == selector }), arguments.count == 2 {
                return FormatExpression(.arithmetic(op, arguments[0], arguments[1]))
            }
            guard let builtin = BuiltinFunction.bySelector(selector) else {
                throw ArchiveError(
                    "\(value.path): the built-in function '\(selector)', which Remodel does not have (docs/language.md lists them)"
                )
            }
            guard builtin.arity == arguments.count else {
                throw ArchiveError(
                    "\(value.path): \(selector) takes \(builtin.arity) arguments, the archive gives \(arguments.count)")
            }
            return FormatExpression(.function(selector: selector, arguments: arguments))
        }
        let operand =
            try operandValue.map { (v) throws(ArchiveError) in try expression(v) } ?? FormatExpression(.evaluatedObject)
        if selector == "valueForKeyPath:" || selector == "valueForKey:", arguments.count == 1 {
            let path: [String]
            switch arguments[0].kind {
            case .keyPath(operand: nil, let components): path = components
            case .constant(.string(let text)): path = Self.components(text)
            default:
                throw ArchiveError("\(value.path): a key path expression whose key is not a key path")
            }
            switch operand.kind {
            case .evaluatedObject: return FormatExpression(.keyPath(operand: nil, path: path))
            case .keyPath(let inner, let head): return FormatExpression(.keyPath(operand: inner, path: head + path))
            default: return FormatExpression(.keyPath(operand: operand, path: path))
            }
        }
        return FormatExpression(
            .functionCall(target: operand, selector: .constant(.string(selector)), arguments: arguments))
    }

    /// Whether an archived function's target is the class of Apple's built-in functions.
    private func isBuiltinTarget(_ operand: ArchivedValue) -> Bool {
        guard operand.classHierarchy.contains("NSConstantValueExpression"),
            let constant = try? operand.value(forKey: "NSConstantValue")
        else { return false }
        if constant.stringValue == Self.builtinTarget || constant.className == Self.builtinTarget { return true }
        guard case .dictionary(let fields) = constant.plist else { return false }
        return fields.values.contains { $0.string == Self.builtinTarget }
    }

    mutating func predicate(_ value: ArchivedValue) throws(ArchiveError) -> FormatPredicate {
        defer { depth -= 1 }
        try descend(into: value, "predicates")
        let hierarchy = value.classHierarchy
        if hierarchy.contains("NSTruePredicate") { return FormatPredicate(.constant(true)) }
        if hierarchy.contains("NSFalsePredicate") { return FormatPredicate(.constant(false)) }
        if hierarchy.contains("NSCompoundPredicate") {
            let type = try value.integer(forKey: "NSCompoundPredicateType") ?? -1
            var subpredicates: [FormatPredicate] = []
            for sub in try value.required("NSSubpredicates").elements() { subpredicates.append(try predicate(sub)) }
            switch type {
            case 0 where subpredicates.count == 1: return FormatPredicate(.not(subpredicates[0]))
            case 1: return FormatPredicate(.and(subpredicates))
            case 2: return FormatPredicate(.or(subpredicates))
            default:
                throw ArchiveError(
                    "\(value.path): a compound predicate of type \(type) with \(subpredicates.count) parts")
            }
        }
        if hierarchy.contains("NSComparisonPredicate") {
            let lhs = try expression(try value.required("NSLeftExpression"))
            let rhs = try expression(try value.required("NSRightExpression"))
            let op = try value.required("NSPredicateOperator")
            let type = try op.integer(forKey: "NSOperatorType") ?? -1
            guard let comparison = Self.operators[type] else {
                throw ArchiveError(
                    "\(op.path): the comparison operator \(type), which Remodel cannot read (custom selectors are not supported)"
                )
            }
            let modifier: Comparison.Modifier
            switch try op.integer(forKey: "NSModifier") ?? 0 {
            case 1: modifier = .all
            case 2: modifier = .any
            default: modifier = .direct
            }
            let options = ComparisonOptions(rawValue: Int(try op.integer(forKey: "NSOptions") ?? 0) & 0xF)
            return FormatPredicate(.comparison(Comparison(lhs, comparison, rhs, modifier: modifier, options: options)))
        }
        throw ArchiveError(
            "\(value.path): \(value.describe()) (keys \(value.keys.joined(separator: ", "))), "
                + "a predicate Remodel cannot read from an archive; write it as a predicate string")
    }

    /// One level deeper into `value`; an error past ``maximumDepth`` (each caller undoes
    /// the level with a `defer` made before the call).
    private mutating func descend(into value: ArchivedValue, _ what: String) throws(ArchiveError) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw ArchiveError(
                "\(value.path): \(what) nested deeper than \(Self.maximumDepth) levels, or one that contains itself")
        }
    }

    /// `NSPredicateOperatorType`'s values.
    static let operators: [Int64: ComparisonOperator] = [
        0: .lessThan, 1: .lessThanOrEqualTo, 2: .greaterThan, 3: .greaterThanOrEqualTo, 4: .equalTo,
        5: .notEqualTo, 6: .matches, 7: .like, 8: .beginsWith, 9: .endsWith, 10: .in, 99: .contains, 100: .between
    ]

    private func required(_ value: ArchivedValue, _ key: String) throws(ArchiveError) -> String {
        guard let string = try value.string(forKey: key) else {
            throw ArchiveError("\(value.path): \(value.className ?? "the expression") has no \(key)")
        }
        return string
    }

    static func components(_ keyPath: String) -> [String] {
        keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }
}
