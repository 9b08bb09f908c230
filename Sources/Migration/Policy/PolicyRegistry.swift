import ExpressionLanguage
import ObjectGraph

/// The policies mapping files can name, and the functions expressions can call on them.
///
/// Mapping files name policies (`"policy": "BookToBookPolicy"`); the registry turns each
/// name into a new policy object for a run. Functions are registered, not looked up
/// dynamically: `FUNCTION($entityPolicy, "authorsForBook:", $source)` calls only what was
/// registered for that policy type.
///
///     var policies = PolicyRegistry()
///     policies.register("BookToBookPolicy") { BookToBookPolicy() }
///     policies.registerFunction("convertIsSynced:", for: BookToBookPolicy.self) { policy, arguments in
///         policy.convert(arguments[0])
///     }
public struct PolicyRegistry: Sendable {
    private var factories: [String: @Sendable () -> any EntityMigrationPolicy] = [:]
    /// The registry the engine compiles expressions with: the standard functions, the
    /// migration manager's, and the policies'.
    public private(set) var functions: FunctionRegistry

    public init() {
        functions = MigrationManager.standardFunctions
    }

    /// Registers a policy under the name mapping files use for it.
    public mutating func register(_ name: String, _ factory: @escaping @Sendable () -> any EntityMigrationPolicy) {
        factories[name] = factory
    }

    /// Registers `selector` for `FUNCTION($entityPolicy, …)` on policies of type `P`.
    public mutating func registerFunction<P: EntityMigrationPolicy>(
        _ selector: String, for type: P.Type, _ body: @escaping @Sendable (P, [Value]) throws -> Value
    ) {
        functions.register(selector, for: type, body)
    }

    /// Registers `selector` for other targets (strings, numbers, any value).
    public mutating func registerFunction(
        _ selector: String, on target: FunctionRegistry.Target,
        _ body: @escaping @Sendable (Value, [Value]) throws -> Value
    ) {
        functions.register(selector, on: target, body)
    }

    /// The registered policy names, sorted.
    public var names: [String] { factories.keys.sorted() }

    /// Whether `name` is registered (by itself, or without its module: see ``registeredName(for:)``).
    public func contains(_ name: String) -> Bool { registeredName(for: name) != nil }

    /// A new policy for `name`; nil when it is not registered.
    public func makePolicy(_ name: String) -> (any EntityMigrationPolicy)? {
        registeredName(for: name).flatMap { factories[$0]?() }
    }

    /// A new policy for `mapping`: the one it names, or the default one.
    func makePolicy(for mapping: EntityMapping) -> any EntityMigrationPolicy {
        mapping.policy.flatMap { makePolicy($0) } ?? DefaultMigrationPolicy()
    }

    /// The registered name that `name` resolves to: `name` itself, or, for a class name
    /// qualified by its Swift module as Xcode's mapping models write them
    /// (`App.BookToBookPolicy`), the name without the module (`BookToBookPolicy`).
    public func registeredName(for name: String) -> String? {
        if factories[name] != nil { return name }
        guard let dot = name.lastIndex(of: "."), name.index(after: dot) < name.endIndex else { return nil }
        let unqualified = String(name[name.index(after: dot)...])
        return factories[unqualified] != nil ? unqualified : nil
    }
}
