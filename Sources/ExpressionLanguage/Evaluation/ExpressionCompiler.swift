import Foundation

/// Compiles syntax trees to closures (``CompiledExpression``, ``CompiledPredicate``).
///
/// Names are resolved once: `$variables` to slots of ``layout``, built-in functions and
/// FUNCTION selectors to their implementations in ``functions``, CAST types to
/// converters, constant LIKE and MATCHES patterns to matchers. Constant subtrees of pure
/// operations are folded, except where folding would hide an error (division by zero
/// stays a run-time error) or depends on time or randomness (`now()`, `random()`).
///
/// Expressions compiled by one compiler share its layout, so one ``EvaluationContext``
/// evaluates them all. Compile before sharing: compiling is not thread-safe.
public final class ExpressionCompiler {
    public let functions: FunctionRegistry
    public let layout: VariableLayout

    public init(functions: FunctionRegistry = .standard, layout: VariableLayout = VariableLayout()) {
        self.functions = functions
        self.layout = layout
    }

    /// Parses (through the parse cache) and compiles an expression.
    public func compileExpression(_ source: String, arguments: [Value] = []) throws(ExpressionError)
        -> CompiledExpression
    {
        try compile(FormatExpression(parsing: source, arguments: arguments), source: source)
    }

    /// Parses (through the parse cache) and compiles a predicate.
    public func compilePredicate(_ source: String, arguments: [Value] = []) throws(ExpressionError) -> CompiledPredicate
    {
        try compile(FormatPredicate(parsing: source, arguments: arguments), source: source)
    }

    /// Compiles a parsed expression; `source` is the text its ranges refer to.
    public func compile(_ expression: FormatExpression, source: String? = nil) throws(ExpressionError)
        -> CompiledExpression
    {
        let builder = Builder(functions: functions, layout: layout, source: source)
        let node = try builder.expression(expression)
        return CompiledExpression(
            expression: expression, source: source, layout: layout, functions: functions,
            thunk: node.thunk, constantValue: node.constant)
    }

    /// Compiles a parsed predicate; `source` is the text its ranges refer to.
    public func compile(_ predicate: FormatPredicate, source: String? = nil) throws(ExpressionError)
        -> CompiledPredicate
    {
        let builder = Builder(functions: functions, layout: layout, source: source)
        let node = try builder.predicate(predicate)
        return CompiledPredicate(
            predicate: predicate, source: source, layout: layout, functions: functions,
            test: node.test, constantValue: node.constant)
    }
}

/// A compiled expression node: a folded constant or a closure.
enum Node {
    case constant(Value)
    case dynamic(Thunk)

    var constant: Value? {
        if case .constant(let v) = self { return v }
        return nil
    }

    var thunk: Thunk {
        switch self {
        case .constant(let v): return { _ in v }
        case .dynamic(let f): return f
        }
    }
}

enum TestNode {
    case constant(Bool)
    case dynamic(Test)

    var constant: Bool? {
        if case .constant(let v) = self { return v }
        return nil
    }

    var test: Test {
        switch self {
        case .constant(let v): return { _ in v }
        case .dynamic(let f): return f
        }
    }
}

struct Builder {
    let functions: FunctionRegistry
    let layout: VariableLayout
    let source: String?

    /// A context for folding constants: no variables, no object.
    static var foldingContext: EvaluationContext { EvaluationContext(layout: VariableLayout()) }

    func compileError(_ kind: ExpressionError.Kind, _ message: String, _ range: SourceRange?) -> ExpressionError {
        ExpressionError(kind, message, source: source, range: range)
    }

    /// Folds `thunk` to a constant when `foldable` and it evaluates without error.
    func fold(_ foldable: Bool, _ thunk: @escaping Thunk) -> Node {
        if foldable, let value = try? thunk(Builder.foldingContext), !value.containsObjects {
            return .constant(value)
        }
        return .dynamic(thunk)
    }

    // MARK: Expressions

    func expression(_ e: FormatExpression) throws(ExpressionError) -> Node {
        let range = e.range
        let source = self.source
        switch e.kind {
        case .constant(let value):
            return .constant(value)

        case .evaluatedObject:
            return .dynamic { ctx in ctx.object }

        case .variable(let name):
            let slot = layout.slot(for: name)
            return .dynamic { ctx throws(ExpressionError) in
                guard let value = ctx.value(slot: slot) else { throw Builder.unbound(name, range, source) }
                return value
            }

        case .keyPath(let operand, let path):
            return try keyPath(operand, path, range)

        case .aggregate(let elements):
            let nodes = try elements.map { e throws(ExpressionError) in try expression(e) }
            if nodes.allSatisfy({ $0.constant != nil }) { return .constant(.array(nodes.map { $0.constant! })) }
            let thunks = nodes.map(\.thunk)
            return .dynamic { ctx throws(ExpressionError) in
                var values: [Value] = []
                values.reserveCapacity(thunks.count)
                for t in thunks { values.append(try t(ctx)) }
                return .array(values)
            }

        case .arithmetic(let op, let lhs, let rhs):
            let l = try expression(lhs)
            let r = try expression(rhs)
            let foldable = l.constant != nil && r.constant != nil
            if let c = r.constant {
                let lt = l.thunk
                return fold(foldable) { ctx throws(ExpressionError) in
                    let a = try lt(ctx)
                    return try locate(range, source) { () throws(ExpressionError) in try Arithmetic.apply(op, a, c) }
                }
            }
            let lt = l.thunk, rt = r.thunk
            return fold(foldable) { ctx throws(ExpressionError) in
                let a = try lt(ctx)
                let b = try rt(ctx)
                return try locate(range, source) { () throws(ExpressionError) in try Arithmetic.apply(op, a, b) }
            }

        case .negate(let operand):
            let o = try expression(operand)
            let t = o.thunk
            return fold(o.constant != nil) { ctx throws(ExpressionError) in
                let v = try t(ctx)
                return try locate(range, source) { () throws(ExpressionError) in try Arithmetic.negate(v) }
            }

        case .function(let selector, let arguments):
            guard let function = BuiltinFunction.bySelector(selector) else {
                throw compileError(.unknownFunction, "unknown function '\(selector)'", range)
            }
            guard function.arity == arguments.count else {
                throw compileError(
                    .unknownFunction,
                    "\(function.formatName) takes \(function.arity) argument\(function.arity == 1 ? "" : "s"), not \(arguments.count)",
                    range)
            }
            let nodes = try arguments.map { e throws(ExpressionError) in try expression(e) }
            let thunks = nodes.map(\.thunk)
            let body = function.body
            let foldable = function.isPure && nodes.allSatisfy { $0.constant != nil }
            return fold(foldable) { ctx throws(ExpressionError) in
                var values: [Value] = []
                values.reserveCapacity(thunks.count)
                for t in thunks { values.append(try t(ctx)) }
                return try locate(range, source) { () throws(ExpressionError) in try body(values) }
            }

        case .index(let base, let specifier):
            let b = try expression(base)
            let bt = b.thunk
            var indexNode: Node? = nil
            if case .expression(let i) = specifier { indexNode = try expression(i) }
            let it = indexNode?.thunk
            let foldable = b.constant != nil && (indexNode == nil || indexNode?.constant != nil)
            return fold(foldable) { ctx throws(ExpressionError) in
                let collection = try bt(ctx)
                let index = try it?(ctx)
                return try locate(range, source) { () throws(ExpressionError) in
                    try Builder.subscripted(collection, specifier, index)
                }
            }

        case .functionCall(let target, let selectorExpression, let arguments):
            return try functionCall(target, selectorExpression, arguments, range)

        case .cast(let value, let type):
            let v = try expression(value)
            let t = try expression(type)
            guard case .string(let typeName)? = t.constant else {
                let vt = v.thunk, tt = t.thunk
                return .dynamic { ctx throws(ExpressionError) in
                    let value = try vt(ctx)
                    let type = try tt(ctx)
                    return try locate(range, source) { () throws(ExpressionError) in
                        try BuiltinFunction.bySelector("castObject:toType:")!.body([value, type])
                    }
                }
            }
            guard let convert = Cast.converter(to: typeName) else {
                throw Cast.unknownType(typeName).located(type.range, in: source)
            }
            let vt = v.thunk
            return fold(v.constant != nil) { ctx throws(ExpressionError) in
                let value = try vt(ctx)
                return try locate(range, source) { () throws(ExpressionError) in try convert(value) }
            }

        case .ternary(let condition, let whenTrue, let whenFalse):
            let c = try predicate(condition)
            let a = try expression(whenTrue)
            let b = try expression(whenFalse)
            if let decided = c.constant { return decided ? a : b }
            let ct = c.test, at = a.thunk, bt = b.thunk
            return .dynamic { ctx throws(ExpressionError) in try ct(ctx) ? at(ctx) : bt(ctx) }

        case .subquery(let collection, let variable, let condition):
            let c = try expression(collection).thunk
            let slot = layout.slot(for: variable)
            let test = try predicate(condition).test
            return .dynamic { ctx throws(ExpressionError) in
                let value = try c(ctx)
                if value.isNull { return .null }
                guard let elements = value.collectionElements else {
                    throw ExpressionError(
                        .type, "SUBQUERY needs a collection, not \(Arithmetic.describe(value))",
                        source: source, range: collection.range ?? range)
                }
                let saved = ctx.value(slot: slot)
                defer { ctx.set(slot: slot, saved) }
                var kept: [Value] = []
                for element in elements {
                    ctx.set(slot: slot, element)
                    if try test(ctx) { kept.append(element) }
                }
                return .array(kept)
            }

        case .fetch(let request, let context, let countOnly):
            let rt = try expression(request).thunk
            let ct = try expression(context).thunk
            let nt = try expression(countOnly).thunk
            return .dynamic { ctx throws(ExpressionError) in
                let requestValue = try rt(ctx)
                let contextValue = try ct(ctx)
                let countValue = try nt(ctx)
                return try locate(range, source) { () throws(ExpressionError) in
                    guard case .object(let reference) = contextValue, let executor = reference.object as? FetchExecuting
                    else {
                        throw ExpressionError(
                            .type,
                            "FETCH needs a managed object context as its second argument (such as $manager.sourceContext), not \(Arithmetic.describe(contextValue))"
                        )
                    }
                    guard countValue.isNumber else {
                        throw ExpressionError(
                            .type, "FETCH needs YES or NO as its third argument, not \(Arithmetic.describe(countValue))"
                        )
                    }
                    do {
                        return try executor.executeFetch(requestValue, countOnly: (countValue.doubleValue ?? 0) != 0)
                    } catch let error as ExpressionError {
                        throw error
                    } catch {
                        throw ExpressionError(.host, "FETCH failed: \(error)")
                    }
                }
            }

        case .assignment(let variable, let value):
            let slot = layout.slot(for: variable)
            let vt = try expression(value).thunk
            return .dynamic { ctx throws(ExpressionError) in
                let v = try vt(ctx)
                ctx.set(slot: slot, v)
                return v
            }

        case .anyKey:
            return .dynamic { _ throws(ExpressionError) in
                throw ExpressionError(
                    .unsupported, "ANYKEY (Spotlight) is not supported on this platform",
                    source: source, range: range)
            }
        }
    }

    static func unbound(_ name: String, _ range: SourceRange?, _ source: String?) -> ExpressionError {
        ExpressionError(
            .unboundVariable, "$\(name) has no value; bind it before evaluating", source: source, range: range)
    }

    func keyPath(_ operand: FormatExpression?, _ path: [String], _ range: SourceRange?) throws(ExpressionError) -> Node
    {
        let source = self.source
        let base = try operand.map { e throws(ExpressionError) in try expression(e) }
        let foldable = base?.constant.map { !$0.containsObjects } ?? false
        // One plain key read from a variable or SELF is the hot case (`$source.price`):
        // read the slot and the dictionary directly, without an intermediate closure.
        if path.count == 1, !path[0].hasPrefix("@") {
            let key = path[0]
            if let operand, case .variable(let name) = operand.kind {
                let slot = layout.slot(for: name)
                let variableRange = operand.range
                return .dynamic { ctx throws(ExpressionError) in
                    guard let value = ctx.value(slot: slot) else { throw Builder.unbound(name, variableRange, source) }
                    if case .dictionary(let d) = value, let v = d[key] { return v }
                    return try locate(range, source) { () throws(ExpressionError) in
                        try KeyValue.value(forKey: key, of: value)
                    }
                }
            }
            if let base {
                let bt = base.thunk
                return fold(foldable) { ctx throws(ExpressionError) in
                    let value = try bt(ctx)
                    return try locate(range, source) { () throws(ExpressionError) in
                        try KeyValue.value(forKey: key, of: value)
                    }
                }
            }
            return .dynamic { ctx throws(ExpressionError) in
                if case .dictionary(let d) = ctx.object, let v = d[key] { return v }
                return try locate(range, source) { () throws(ExpressionError) in
                    try KeyValue.value(forKey: key, of: ctx.object)
                }
            }
        }
        let components = path[...]
        if let base {
            let bt = base.thunk
            return fold(foldable) { ctx throws(ExpressionError) in
                let value = try bt(ctx)
                return try locate(range, source) { () throws(ExpressionError) in
                    try KeyValue.value(forPath: components, of: value)
                }
            }
        }
        return .dynamic { ctx throws(ExpressionError) in
            try locate(range, source) { () throws(ExpressionError) in
                try KeyValue.value(forPath: components, of: ctx.object)
            }
        }
    }

    func functionCall(
        _ target: FormatExpression, _ selectorExpression: FormatExpression, _ arguments: [FormatExpression],
        _ range: SourceRange?
    ) throws(ExpressionError) -> Node {
        let source = self.source
        let t = try expression(target)
        let s = try expression(selectorExpression)
        let argumentThunks = try arguments.map { e throws(ExpressionError) in try expression(e).thunk }
        let tt = t.thunk
        func evaluateArguments(_ ctx: EvaluationContext) throws(ExpressionError) -> [Value] {
            var values: [Value] = []
            values.reserveCapacity(argumentThunks.count)
            for a in argumentThunks { values.append(try a(ctx)) }
            return values
        }
        guard case .string(let selector)? = s.constant else {
            // The selector is only known at evaluation; resolve it then, in the same registry.
            let st = s.thunk
            return .dynamic { ctx throws(ExpressionError) in
                let targetValue = try tt(ctx)
                let selectorValue = try st(ctx)
                let values = try evaluateArguments(ctx)
                return try locate(range, source) { () throws(ExpressionError) in
                    guard case .string(let selector) = selectorValue else {
                        throw ExpressionError(
                            .type, "FUNCTION needs a selector string, not \(Arithmetic.describe(selectorValue))")
                    }
                    let candidates = ctx.functions.implementations(of: selector)
                    guard !candidates.isEmpty else { throw Builder.unknownSelector(selector) }
                    guard FunctionRegistry.arity(of: selector) == values.count else {
                        throw Builder.arityMismatch(selector, values.count)
                    }
                    return try FunctionRegistry.call(selector, on: targetValue, arguments: values, among: candidates)
                }
            }
        }
        let candidates = functions.implementations(of: selector)
        guard !candidates.isEmpty else {
            throw Builder.unknownSelector(selector).located(selectorExpression.range, in: source)
        }
        guard FunctionRegistry.arity(of: selector) == arguments.count else {
            throw Builder.arityMismatch(selector, arguments.count).located(selectorExpression.range, in: source)
        }
        if let constantTarget = t.constant, !constantTarget.isNull,
            !candidates.contains(where: { $0.target.accepts(constantTarget) })
        {
            throw ExpressionError(
                .unknownSelector,
                "'\(selector)' is not registered for \(Arithmetic.describe(constantTarget)); it is registered for "
                    + candidates.map(\.target.description).joined(separator: ", "),
                source: source, range: selectorExpression.range)
        }
        return .dynamic { ctx throws(ExpressionError) in
            let targetValue = try tt(ctx)
            let values = try evaluateArguments(ctx)
            return try locate(range, source) { () throws(ExpressionError) in
                try FunctionRegistry.call(selector, on: targetValue, arguments: values, among: candidates)
            }
        }
    }

    static func unknownSelector(_ selector: String) -> ExpressionError {
        ExpressionError(
            .unknownSelector,
            "unknown selector '\(selector)'; FUNCTION calls only registered selectors (docs/functions.md lists them; embedders register more)"
        )
    }

    static func arityMismatch(_ selector: String, _ count: Int) -> ExpressionError {
        let arity = FunctionRegistry.arity(of: selector)
        return ExpressionError(
            .unknownSelector,
            "'\(selector)' takes \(arity) argument\(arity == 1 ? "" : "s") (one per colon), not \(count)")
    }

    /// `x[FIRST]`, `x[LAST]`, `x[SIZE]`, `x[i]`, `d[key]`.
    static func subscripted(
        _ base: Value, _ specifier: FormatExpression.IndexSpecifier, _ index: Value?
    ) throws(ExpressionError) -> Value {
        switch base {
        case .null:
            return .null
        case .array, .set:
            let elements = base.collectionElements!
            switch specifier {
            case .first: return elements.first ?? .null
            case .last: return elements.last ?? .null
            case .size: return .integer(Int64(elements.count))
            case .expression:
                guard case .array = base else {
                    throw ExpressionError(.type, "a set has no order; use [FIRST], [LAST] or [SIZE], not an index")
                }
                guard let i = index?.integerValue else {
                    throw ExpressionError(
                        .type, "an array index must be an integer, not \(Arithmetic.describe(index ?? .null))")
                }
                guard i >= 0, i < elements.count else {
                    throw ExpressionError(.range, "index \(i) is out of range for an array of \(elements.count)")
                }
                return elements[Int(i)]
            }
        case .dictionary(let d):
            switch specifier {
            case .size: return .integer(Int64(d.count))
            case .expression:
                guard case .string(let key)? = index else {
                    throw ExpressionError(
                        .type, "a dictionary key must be a string, not \(Arithmetic.describe(index ?? .null))")
                }
                return d[key] ?? .null
            case .first, .last:
                throw ExpressionError(.type, "a dictionary has no order; use [SIZE] or a key")
            }
        default:
            throw ExpressionError(
                .type,
                "cannot subscript \(Arithmetic.describe(base)); subscripts apply to arrays, sets and dictionaries")
        }
    }
}

extension Value {
    /// Whether the value is or holds an object, whose answers may change (not foldable).
    var containsObjects: Bool {
        switch self {
        case .object: return true
        case .array(let a): return a.contains { $0.containsObjects }
        case .set(let s): return s.contains { $0.containsObjects }
        case .dictionary(let d): return d.values.contains { $0.containsObjects }
        default: return false
        }
    }
}
