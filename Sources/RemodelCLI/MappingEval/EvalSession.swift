import ExpressionLanguage
import Migration
import ObjectGraph

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
    /// The store `:open` (or `--store`) opened, whose objects `:source`, `:self` and
    /// `{"$object": "Book/9"}` in JSON input name.
    public private(set) var store: OpenedStore?
    /// The mapping `:mapping` loaded against the open store's models, for `:map`.
    public internal(set) var mapping: LoadedMapping?
    /// The policies a loaded mapping's check and dry run use (a custom `mapping-eval`
    /// registers its own, as a custom `mapping-migrate` does).
    public var policies = PolicyRegistry()

    /// `$manager` with a store open: reading it as a migration's source, and answering
    /// lookups from the loaded mapping's dry run.
    var storeManager: Value? {
        store.map { .object(ObjectReference(StoreManager($0, dryRun: mapping?.dryRun))) }
    }

    /// - Parameter functions: the registry FUNCTION calls resolve in; the read-only
    ///   selectors of `$manager` (``StoreManager``) are added to it.
    public init(functions: FunctionRegistry = .standard) {
        var functions = functions
        StoreManager.register(into: &functions)
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

    /// Opens a store read-only (see ``OpenedStore/open(_:models:version:)``) in place of
    /// the one open before. Bindings that hold objects of the previous store are removed;
    /// their names are returned.
    @discardableResult
    public func open(_ path: String, models: String, version: String? = nil) throws(InputError) -> [String] {
        let opened = try OpenedStore.open(path, models: models, version: version)
        var dropped: [String] = []
        if let previous = store {
            if Self.holdsObject(of: previous.context, object) {
                object = .null
                dropped.append("SELF")
            }
            for name in variables.keys.sorted() where Self.holdsObject(of: previous.context, variables[name]!) {
                variables[name] = nil
                dropped.append("$" + name)
            }
            if arguments.contains(where: { Self.holdsObject(of: previous.context, $0) }) {
                arguments = []
                dropped.append("arguments")
            }
        }
        store = opened
        mapping = nil
        return dropped
    }

    /// Whether `value` is or contains an object of `context`.
    private static func holdsObject(of context: ObjectContext, _ value: Value) -> Bool {
        switch value {
        case .object(let reference): return (reference.object as? ManagedObject)?.managedObjectContext === context
        case .array(let elements): return elements.contains { holdsObject(of: context, $0) }
        case .set(let elements): return elements.contains { holdsObject(of: context, $0) }
        case .dictionary(let members): return members.values.contains { holdsObject(of: context, $0) }
        default: return false
        }
    }

    /// The object of the open store that `reference` names: `Book/9` or `Book 9`.
    public func storeObject(_ reference: String) throws(InputError) -> Value {
        guard let store else {
            throw InputError("no store is open to find \(reference) in; open one with :open STORE --models PATH")
        }
        return try store.object(reference)
    }

    /// Resolves `{"$object": "Book/9"}` in JSON input against the open store.
    var resolveObject: (String) throws -> Value {
        { [weak self] reference in
            guard let store = self?.store else {
                throw ExpressionError(
                    .host,
                    "no store is open to find \(reference) in; open one with :open STORE --models PATH (or --store)")
            }
            return try store.resolve(reference)
        }
    }

    /// The value of JSON text typed or given by the user, resolving `{"$object": …}`.
    func jsonValue(_ text: String) throws(InputError) -> Value {
        try JSONInput.value(from: text, resolveObject: resolveObject)
    }

    /// The value of a JSON file, resolving `{"$object": …}`.
    func jsonValue(fromFile path: String) throws(InputError) -> Value {
        try JSONInput.value(fromFile: path, resolveObject: resolveObject)
    }

    /// Forgets SELF, the variables and the format arguments (an open store stays open).
    public func reset() {
        object = .null
        variables = [:]
        arguments = []
        compiler = ExpressionCompiler(functions: functions)
    }

    // MARK: - Evaluating

    /// Evaluates an expression or a predicate (see ``InputEvaluator/Mode``) against the
    /// session's bindings, and keeps the variables it assigns with `:=`.
    public func evaluate(_ source: String, mode: InputEvaluator.Mode = .automatic) throws(InputEvaluator.Failure)
        -> InputEvaluator.Evaluation
    {
        var variables = self.variables
        // With a store open, $manager reads it as a migration's source does (unless bound).
        if let manager = storeManager, variables["manager"] == nil { variables["manager"] = manager }
        let evaluation = try InputEvaluator.evaluate(
            source, mode: mode, object: object, variables: variables, arguments: arguments, compiler: compiler)
        for (name, value) in evaluation.assignments { self.variables[name] = value }
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
            for warning in evaluation.parsed.warnings { output.warn(EvalFormat.warning(warning)) }
            for line in describe(evaluation) { output.print(line) }
        } catch {
            for warning in error.warnings { output.warn(EvalFormat.warning(warning)) }
            var failure = error.error
            if failure.kind == .unboundVariable, store == nil, failure.message.hasPrefix("$manager ") {
                failure.message +=
                    "; with a store open (:open STORE --models PATH), $manager reads it as a migration's source"
            }
            output.fail(EvalFormat.error(failure), status: EvalFormat.status(error))
        }
        return output
    }
}
