/// The names of the variables a set of compiled expressions uses, each with a slot.
///
/// Compiling resolves `$name` to a slot once; evaluating reads the slot, with no name
/// lookup. Expressions compiled by one ``ExpressionCompiler`` share its layout, so one
/// context serves them all (the migration engine binds `$source` once per row for every
/// attribute mapping of an entity mapping).
public final class VariableLayout: @unchecked Sendable {
    // `@unchecked`: slots are only added while compiling, which callers do before they
    // share compiled expressions; see ExpressionCompiler.
    public private(set) var names: [String] = []
    private var slots: [String: Int] = [:]

    public init(_ names: [String] = []) {
        for name in names { _ = slot(for: name) }
    }

    /// The slot of `name`, adding one if needed.
    func slot(for name: String) -> Int {
        if let slot = slots[name] { return slot }
        slots[name] = names.count
        names.append(name)
        return names.count - 1
    }

    /// The slot of `name`, if any expression uses it.
    public func existingSlot(for name: String) -> Int? { slots[name] }
}

/// The state one evaluation runs in: the object (`SELF`) and the variables' values.
///
/// Create one with ``CompiledExpression/makeContext(object:)`` (or from a compiler's
/// layout), bind variables, and reuse it across evaluations: evaluating does not allocate
/// a context. `$x := value` and `SUBQUERY` write into it. A context is not thread-safe.
///
/// In a loop, resolve a variable's slot once and bind by slot; binding by name hashes the
/// name every time:
///
///     let source = context.layout.existingSlot(for: "source")!
///     for row in rows {
///         context[slot: source] = row
///         let value = try compiled.evaluate(in: context)
///     }
public final class EvaluationContext {
    // The storage is only ever accessed for an instant (a read or a write, never across a
    // call that could reach the same storage), so the dynamic exclusivity checks Swift
    // would make on every evaluation are unchecked: they were a quarter of the cost of
    // evaluating `$source.price * 1.03` (docs/performance.md).

    /// What `SELF` and bare key paths read.
    @exclusivity(unchecked) public var object: Value
    public let layout: VariableLayout
    @exclusivity(unchecked) var slots: [Value?]
    /// The registry FUNCTION resolved its selectors in; kept for selectors that are only
    /// known at evaluation.
    let functions: FunctionRegistry

    public init(layout: VariableLayout, object: Value = .null, functions: FunctionRegistry = .standard) {
        self.layout = layout
        self.object = object
        self.slots = Array(repeating: nil, count: layout.names.count)
        self.functions = functions
    }

    /// The value bound to `$name`; setting nil unbinds it. Names that no compiled
    /// expression uses are ignored.
    public subscript(variable name: String) -> Value? {
        get {
            guard let slot = layout.existingSlot(for: name), slot < slots.count else { return nil }
            return slots[slot]
        }
        set {
            guard let slot = layout.existingSlot(for: name) else { return }
            set(slot: slot, newValue)
        }
    }

    /// The value in `slot` (``VariableLayout/existingSlot(for:)``); setting nil unbinds it.
    public subscript(slot slot: Int) -> Value? {
        get { value(slot: slot) }
        set { set(slot: slot, newValue) }
    }

    /// Binds every variable of `variables` that the layout knows.
    public func bind(_ variables: [String: Value]) {
        for (name, value) in variables { self[variable: name] = value }
    }

    /// Unbinds every variable.
    public func reset() {
        for i in slots.indices { slots[i] = nil }
    }

    @inline(__always)
    func value(slot: Int) -> Value? {
        slot < slots.count ? slots[slot] : nil
    }

    @inline(__always)
    func set(slot: Int, _ value: Value?) {
        if slot >= slots.count {
            slots.append(contentsOf: repeatElement(nil, count: slot - slots.count + 1))
        }
        slots[slot] = value
    }
}

/// A context in which a FETCH expression runs: `FETCH(request, context, countOnly)` sends
/// the request to the value of `context`, which must be an object conforming to this
/// protocol (the migration manager's `sourceContext`, for instance).
public protocol FetchExecuting: KeyValueCoding {
    /// The objects the request selects, as an array, or their number when `countOnly`.
    func executeFetch(_ request: Value, countOnly: Bool) throws -> Value
}
