/// An expression compiled to closures: variables resolved to slots, functions, selectors,
/// CAST types, LIKE and MATCHES patterns resolved once, constants folded.
///
///     let price = try ExpressionCompiler().compileExpression("$source.price * 1.03")
///     try price.evaluate(variables: ["source": ["price": 100]])   // .double(103.0)
///
/// For hot loops, make a context once and rebind it: no allocation per evaluation.
///
///     let context = price.makeContext()
///     for row in rows {
///         context[variable: "source"] = row
///         let value = try price.evaluate(in: context)
///     }
public struct CompiledExpression {
    /// The tree this was compiled from.
    public let expression: FormatExpression
    /// The text the tree was parsed from, when known; errors quote it.
    public let source: String?
    public let layout: VariableLayout
    let functions: FunctionRegistry
    let thunk: Thunk

    /// The value of a constant expression, when compiling folded it to one.
    public let constantValue: Value?

    /// A context for this expression's variables, with `object` as SELF.
    public func makeContext(object: Value = .null) -> EvaluationContext {
        EvaluationContext(layout: layout, object: object, functions: functions)
    }

    /// Evaluates against `object` (SELF) with `variables` bound.
    public func evaluate(with object: Value = .null, variables: [String: Value] = [:]) throws(ExpressionError) -> Value
    {
        let context = makeContext(object: object)
        context.bind(variables)
        return try thunk(context)
    }

    /// Evaluates in a context made by ``makeContext(object:)`` or from the same layout.
    @inline(__always)
    public func evaluate(in context: EvaluationContext) throws(ExpressionError) -> Value {
        try thunk(context)
    }
}

/// A predicate compiled to closures; see ``CompiledExpression``.
public struct CompiledPredicate {
    public let predicate: FormatPredicate
    public let source: String?
    public let layout: VariableLayout
    let functions: FunctionRegistry
    let test: Test

    /// The value of a constant predicate, when compiling folded it to one.
    public let constantValue: Bool?

    public func makeContext(object: Value = .null) -> EvaluationContext {
        EvaluationContext(layout: layout, object: object, functions: functions)
    }

    /// Evaluates against `object` (SELF) with `variables` bound.
    public func evaluate(with object: Value = .null, variables: [String: Value] = [:]) throws(ExpressionError) -> Bool {
        let context = makeContext(object: object)
        context.bind(variables)
        return try test(context)
    }

    @inline(__always)
    public func evaluate(in context: EvaluationContext) throws(ExpressionError) -> Bool {
        try test(context)
    }
}

typealias Thunk = (EvaluationContext) throws(ExpressionError) -> Value
typealias Test = (EvaluationContext) throws(ExpressionError) -> Bool

/// Places an error thrown by `body` at `range` unless it already has a place.
@inline(__always)
func locate<T>(_ range: SourceRange?, _ source: String?, _ body: () throws(ExpressionError) -> T)
    throws(ExpressionError) -> T
{
    do {
        return try body()
    } catch {
        throw error.located(range, in: source)
    }
}
