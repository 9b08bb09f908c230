import ExpressionLanguage

/// The state of a `mapping-eval` session and the execution of one input: an expression,
/// a predicate, or a `:command`. Pure: it reads files for `:load` but prints nothing;
/// ``execute(_:)`` returns what to print.
///
///     let session = EvalSession()
///     session.execute(":example")
///     session.execute("books.@sum.price").output        // "42.25  (double)\n"
///     session.execute("$total := books.@count")
///     session.execute("$total * 2").output              // "6  (integer)\n"
public final class EvalSession {
    /// What `SELF` and bare key paths read; null until bound.
    public private(set) var object: Value = .null
    /// The bound `$variables`, by name without `$`.
    public private(set) var variables: [String: Value] = [:]
    /// The format arguments that `%@`, `%K`, `%d`… take, in order.
    public private(set) var arguments: [Value] = []
    /// The compiler inputs are compiled with; its layout collects the session's variables.
    public private(set) var compiler: ExpressionCompiler
    /// The registry FUNCTION calls resolve in.
    public let functions: FunctionRegistry
    /// How long `:time` keeps evaluating.
    public var timingDuration: Duration = .milliseconds(500)

    public init(functions: FunctionRegistry = .standard) {
        self.functions = functions
        self.compiler = ExpressionCompiler(functions: functions)
    }

    // MARK: - Bindings

    /// Binds `SELF` (null unbinds it).
    public func bindObject(_ value: Value) {
        object = value
    }

    /// Binds `$name` (without the `$`).
    public func bind(_ name: String, to value: Value) {
        variables[name] = value
    }

    /// Removes the binding of `$name`; false when it was not bound.
    @discardableResult
    public func unbind(_ name: String) -> Bool {
        variables.removeValue(forKey: name) != nil
    }

    /// Sets the format arguments.
    public func setArguments(_ values: [Value]) {
        arguments = values
    }

    /// Forgets SELF, the variables and the format arguments.
    public func reset() {
        object = .null
        variables = [:]
        arguments = []
        compiler = ExpressionCompiler(functions: functions)
    }

    // MARK: - Evaluating

    /// Evaluates an expression or a predicate (see ``InputEvaluator/Mode``) against the
    /// session's bindings, and keeps the variables it assigns with `:=`.
    public func evaluate(_ source: String, mode: InputEvaluator.Mode = .automatic) throws(InputEvaluator.Failure) -> InputEvaluator.Evaluation {
        let evaluation = try InputEvaluator.evaluate(
            source, mode: mode, object: object, variables: variables, arguments: arguments, compiler: compiler)
        for (name, value) in evaluation.assignments { variables[name] = value }
        return evaluation
    }

    /// Executes one complete input (see ``InputAccumulator`` for joining lines) and
    /// returns what to print. Blank input prints nothing.
    public func execute(_ input: String) -> EvalOutput {
        let text = input.trimmingWhitespace
        if text.isEmpty { return EvalOutput() }
        if text.hasPrefix(":") { return executeCommand(text) }
        return show(text) { evaluation in [EvalFormat.valueAndType(evaluation.value)] }
    }

    /// Evaluates `source` and prints what `describe` makes of it, after any warnings.
    func show(_ source: String, _ describe: (InputEvaluator.Evaluation) -> [String]) -> EvalOutput {
        var output = EvalOutput()
        do {
            let evaluation = try evaluate(source)
            for warning in evaluation.parsed.warnings { output.fail(EvalFormat.warning(warning), status: 0) }
            for line in describe(evaluation) { output.print(line) }
        } catch {
            for warning in error.warnings { output.fail(EvalFormat.warning(warning), status: 0) }
            output.fail(EvalFormat.error(error.error), status: EvalFormat.status(error))
        }
        return output
    }
}
