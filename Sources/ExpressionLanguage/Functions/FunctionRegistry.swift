/// The selectors that `FUNCTION(target, 'selector', …)` may call.
///
/// FUNCTION is not arbitrary dispatch: arbitrary selectors in NSExpression are a known
/// injection vector, so only registered selectors run. ``standard`` holds the Foundation
/// methods of docs/functions.md; embedders copy it and register their own:
///
///     var functions = FunctionRegistry.standard
///     functions.register("convertPrice:", for: PricePolicy.self) { policy, arguments in
///         try policy.convert(arguments[0])
///     }
///     let compiled = try ExpressionCompiler(functions: functions).compile(expression)
public struct FunctionRegistry: Sendable {
    /// What kind of target value a selector implementation accepts.
    public enum Target: Sendable, CustomStringConvertible {
        case string, number, date, data, array, set, dictionary
        /// Any object whose type passes the test (registered with `for: T.self`).
        case object(typeName: String, test: @Sendable (any KeyValueCoding) -> Bool)
        /// Any value (including nil).
        case any

        func accepts(_ value: Value) -> Bool {
            switch (self, value) {
            case (.any, _): true
            case (.string, .string), (.date, .date), (.data, .data), (.array, .array), (.set, .set),
                (.dictionary, .dictionary):
                true
            case (.number, .integer), (.number, .double), (.number, .bool), (.number, .decimal): true
            case (.object(_, let test), .object(let reference)): test(reference.object)
            default: false
            }
        }

        public var description: String {
            switch self {
            case .string: "string"
            case .number: "number"
            case .date: "date"
            case .data: "data"
            case .array: "array"
            case .set: "set"
            case .dictionary: "dictionary"
            case .object(let name, _): name
            case .any: "any value"
            }
        }
    }

    /// One implementation of a selector for one kind of target.
    public struct Implementation: Sendable {
        public let selector: String
        public let target: Target
        let body: @Sendable (Value, [Value]) throws -> Value
        /// One of ``FunctionRegistry/standard``'s, which SQL may stand in for.
        fileprivate(set) var isStandard = false
    }

    private(set) var implementations: [String: [Implementation]] = [:]

    public init() {}

    /// Registers `body` as `selector` for targets of `target`'s kind. Later registrations
    /// of the same selector and kind are tried first, so embedders can override.
    public mutating func register(
        _ selector: String, on target: Target, _ body: @escaping @Sendable (Value, [Value]) throws -> Value
    ) {
        implementations[selector, default: []].insert(
            Implementation(selector: selector, target: target, body: body), at: 0)
    }

    /// Registers `body` as `selector` for objects of type `T` (and its subclasses).
    public mutating func register<T: KeyValueCoding>(
        _ selector: String, for type: T.Type, _ body: @escaping @Sendable (T, [Value]) throws -> Value
    ) {
        register(selector, on: .object(typeName: String(describing: type), test: { $0 is T })) { target, arguments in
            guard case .object(let reference) = target, let object = reference.object as? T else {
                throw ExpressionError(.type, "\(selector) needs a \(T.self) target")
            }
            return try body(object, arguments)
        }
    }

    /// Every implementation of `selector`, most recent first; empty when unknown.
    public func implementations(of selector: String) -> [Implementation] {
        implementations[selector] ?? []
    }

    /// Whether `FUNCTION(target, 'selector', …)` runs the standard implementation (not
    /// one an embedder registered over it): what SQL that stands in for it needs. For a
    /// nil target no implementation accepts, the standard behaviour is the message to nil
    /// (``call(_:on:arguments:)``), which gives nil.
    public func isStandard(_ selector: String, on target: Value) -> Bool {
        guard let implementation = implementations(of: selector).first(where: { $0.target.accepts(target) }) else {
            return target.isNull
        }
        return implementation.isStandard
    }

    /// Whether every implementation of `selector` is one of ``standard``'s (none an
    /// embedder registered, which may keep state across calls); false for one unknown.
    public func isStandard(_ selector: String) -> Bool {
        let all = implementations(of: selector)
        return !all.isEmpty && all.allSatisfy(\.isStandard)
    }

    /// Marks every implementation registered so far as standard.
    mutating func markStandard() {
        for key in implementations.keys {
            for i in implementations[key]!.indices { implementations[key]![i].isStandard = true }
        }
    }

    /// All registered selectors, sorted.
    public var selectors: [String] { implementations.keys.sorted() }

    /// Calls `selector` on `target` as `FUNCTION(target, 'selector', arguments…)` does.
    public func call(_ selector: String, on target: Value, arguments: [Value]) throws(ExpressionError) -> Value {
        try Self.call(selector, on: target, arguments: arguments, among: implementations(of: selector))
    }

    /// The number of arguments a selector takes: one per colon.
    public static func arity(of selector: String) -> Int { selector.reduce(0) { $0 + ($1 == ":" ? 1 : 0) } }

    /// Calls `selector` on `target` with the first implementation that accepts it.
    ///
    /// A nil target that no implementation accepts gives nil, as a message to nil does in
    /// Objective-C: `FUNCTION($source.nickname, 'uppercaseString')` is nil when the
    /// nickname is. Implementations registered for ``Target/any`` still see nil.
    static func call(
        _ selector: String, on target: Value, arguments: [Value], among candidates: [Implementation]
    ) throws(ExpressionError) -> Value {
        guard let implementation = candidates.first(where: { $0.target.accepts(target) }) else {
            if target.isNull { return .null }
            let kinds = candidates.map(\.target.description)
            throw ExpressionError(
                .unknownSelector,
                "'\(selector)' is not registered for \(Arithmetic.describe(target)); it is registered for "
                    + kinds.joined(separator: ", "))
        }
        do {
            return try implementation.body(target, arguments)
        } catch let error as ExpressionError {
            throw error
        } catch {
            throw ExpressionError(.host, "'\(selector)' failed: \(error)")
        }
    }
}
