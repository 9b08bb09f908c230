import ExpressionLanguage

/// An object of a store, read and changed through its ``ObjectContext``.
///
/// Attributes and relationships are read by key (`try book.value(forKey: "title")`) and,
/// because objects conform to ``KeyValueCoding``, by key paths in expressions:
/// `$source.user.userId`, `$source.books.@count`, `ANY authors.name LIKE 'Franz*'`.
/// To-one relationships read as `.object`, to-many ones as `.set` (`.array` when ordered).
/// An object is valid while its context lives.
public final class ManagedObject: KeyValueCoding {
    /// The object's identity (a cursor may reuse an object nobody else holds for its next
    /// row, so this changes only when no one can see it change).
    @exclusivity(unchecked) public internal(set) var objectID: ObjectID
    let binding: EntityBinding
    /// The context, through the binding it made: a context clears its bindings' reference
    /// when it goes, so this is nil afterwards, as a weak reference would be, without a
    /// weak reference's cost on every object.
    var context: ObjectContext? { binding.context }

    /// Attribute values by slot; nil for a value not read yet (binary data is read when
    /// first asked for). Objects are used from one thread (their context's), so this and
    /// the other state that changes skip the runtime's exclusivity bookkeeping, which
    /// profiles of reads and inserts showed on every value and every save.
    let values: SlotValues
    /// The statement whose current row holds the attribute values not in `values` yet,
    /// while a cursor is on that row (see ``FetchCursor``); nil otherwise. The cursor
    /// copies them out (``detachFromRow()``) before it moves on if anyone else holds the
    /// object, so the row is never read after it has gone. Unmanaged: the cursor owns the
    /// statement and detaches its object before it lets the statement go, so the
    /// reference never outlives it, and reading a value costs no reference counting.
    @exclusivity(unchecked) var row: Unmanaged<Statement>? = nil
    /// To-one destinations by slot.
    @exclusivity(unchecked) var toOne: [ObjectID?]
    /// `Z_OPT` as read (0 for a new object), from the cursor's row while it is on one.
    var version: Int64 {
        get { row.map { $0._withUnsafeGuaranteedRef { $0.int64(at: EntityBinding.versionColumn) } } ?? readVersion }
        set {
            detachFromRow()  // the row's Z_OPT would hide the new one
            readVersion = newValue
        }
    }
    @exclusivity(unchecked) private var readVersion: Int64
    /// Whether the context's registry lists the object (which it leaves in ``deinit``).
    @exclusivity(unchecked) var isRegistered = false
    @exclusivity(unchecked) var isInserted = false
    @exclusivity(unchecked) var isDeleted = false
    /// Slots changed since the last save.
    @exclusivity(unchecked) var changedSlots = ChangedSlots()
    /// Unsaved positions in ordered to-many relationships, by to-one slot: where this object
    /// stands among its destination's (the `Z_FOK_` column of that slot).
    @exclusivity(unchecked) var positions: [Int: Int64] = [:]

    init(objectID: ObjectID, binding: EntityBinding, values: consuming SlotValues, toOne: [ObjectID?], version: Int64) {
        self.objectID = objectID
        self.binding = binding
        self.values = values
        self.toOne = toOne
        self.readVersion = version
    }

    deinit {
        // The registry holds the object unowned; it must not outlive the object.
        if isRegistered { binding.withContext { $0.forget(self) } }
    }

    /// The attribute in `slot` as read or set, from the cursor's row if it is still
    /// there; nil for a value not read yet.
    @inline(__always)
    func storedValue(_ slot: Int) -> Value? {
        if let value = values[slot] { return value }
        guard let row else { return Value?.none }
        return row._withUnsafeGuaranteedRef { binding.rowValue($0, slot: slot) }
    }

    /// Copies the values still in the cursor's row into the object, which no longer reads
    /// the row.
    func detachFromRow() {
        guard let row else { return }
        row._withUnsafeGuaranteedRef { row in
            for slot in values.indices {
                if case .none = values[slot] { values[slot] = binding.rowValue(row, slot: slot) }
            }
            readVersion = row.int64(at: EntityBinding.versionColumn)
        }
        self.row = nil
    }

    /// The object's entity.
    public var entity: EntityDescription { binding.entity }

    /// The context the object belongs to; nil once that context is released.
    public var managedObjectContext: ObjectContext? { context }

    /// Whether the object has changes not saved yet.
    public var hasChanges: Bool { isInserted || isDeleted || !changedSlots.isEmpty }

    // MARK: Key-value coding

    /// The value of an attribute or relationship. A key the entity does not have is an
    /// ``ExpressionError`` of kind `unknownKey` that lists the keys it has, so that key paths
    /// in expressions (`$source.titel`) say what to write instead.
    public func value(forKey key: String) throws -> Value {
        // An attribute already read needs nothing of the context.
        if let slot = binding.slot(ofAttribute: key), let value = storedValue(slot), context != nil { return value }
        let context = try attachedContext()
        let failure: ContextError
        do {
            return try context.value(of: self, forKey: key)
        } catch {
            failure = error
        }
        if failure.kind == .unknownKey {
            let model = context.store.model
            let keys = (model.allAttributes(of: entity).map(\.name) + model.allRelationships(of: entity).map(\.name))
                .sorted()
            throw ExpressionError(
                .unknownKey,
                "\(objectID) has no attribute or relationship '\(key)'; \(entity.name) has \(keys.joined(separator: ", "))"
            )
        }
        throw failure
    }

    /// Sets an attribute or relationship; relationships keep their inverses in step.
    public func setValue(_ value: Value, forKey key: String) throws {
        // Attributes of a live object go straight to their slot.
        if let slot = binding.slot(ofAttribute: key), !isDeleted,
            try binding.withContext({ context in try context.setAttribute(value, of: self, slot: slot) }) != nil
        {
            return
        }
        try attachedContext().setValue(value, of: self, forKey: key)
    }

    /// Reads a key; an unknown key gives nil (use ``value(forKey:)`` for the error).
    /// Reading an object whose context is gone is a programming error: keep the context
    /// while you use its objects.
    public subscript(key: String) -> Value {
        precondition(
            context != nil,
            "\(objectID) was read after its ObjectContext was released; keep the context while using its objects")
        return (try? value(forKey: key)) ?? .null
    }

    public var objectDescription: String { objectID.description }
    public var kindName: String { entity.name }

    public func isEqual(to other: any KeyValueCoding) -> Bool {
        guard let other = other as? ManagedObject else { return false }
        return other.objectID == objectID
    }

    public func hashIdentity(into hasher: inout Hasher) {
        hasher.combine(objectID)
    }

    func attachedContext() throws(ContextError) -> ObjectContext {
        guard let context else {
            throw ContextError(.noSuchObject, "the object's context is gone", object: objectID.description)
        }
        return context
    }
}
