import ExpressionLanguage

// The identity registry (one object per row) and making objects from rows.
extension ObjectContext {
    func register(_ object: ManagedObject) {
        registry[object.objectID] = Unmanaged.passUnretained(object)
        object.isRegistered = true
    }

    /// Takes `object` out of the registry as it goes (its deinit calls this): the entry
    /// for its ID, if it is still this object's.
    func forget(_ object: ManagedObject) {
        guard let entry = registry[object.objectID], entry.toOpaque() == Unmanaged.passUnretained(object).toOpaque()
        else { return }
        registry[object.objectID] = nil
    }

    /// Entries in the registry (for tests that it holds only live objects).
    var registeredObjectCount: Int { registry.count }

    func registered(_ id: ObjectID) -> ManagedObject? {
        pending.object(id) ?? registry[id]?.takeUnretainedValue()
    }

    /// The object with `id`, from the context or read from the store.
    public func object(with id: ObjectID) throws(ContextError) -> ManagedObject {
        if let object = registered(id) {
            if object.isDeleted { throw ContextError(.noSuchObject, "the object was deleted", object: id.description) }
            return object
        }
        guard let reader = tableColumns[id.table] else {
            throw ContextError(.noSuchObject, "no such table", object: id.description)
        }
        let statement: Statement
        let found: Bool
        do throws(SQLiteError) {
            statement = try reader.lookupStatement(in: database)
            try statement.bind(id.primaryKey, at: 1)
            found = try statement.step()
        } catch {
            throw ContextError(error)
        }
        guard found else {
            statement.reset()
            throw ContextError(.noSuchObject, "no such object in the store", object: id.description)
        }
        let object = try makeObject(statement, reader)
        statement.reset()
        register(object)
        return object
    }

    /// An object for the current row of `statement` (reading `reader.selectList`). A
    /// `spare` of the row's entity, an object the caller made earlier and knows nobody
    /// else holds, is filled in place of making a new one (see ``FetchCursor``). `onRow`
    /// leaves the attribute values in the row, where the object reads them while the
    /// statement stays on it: the caller must ``ManagedObject/detachFromRow()`` the
    /// object before the statement moves if anyone else may still hold it.
    func makeObject(
        _ statement: Statement, _ reader: TableColumns, reusing spare: ManagedObject? = nil,
        onRow: Bool = false
    ) throws(ContextError) -> ManagedObject {
        let key = statement.int64(at: 0)
        let number = statement.int64(at: 1)
        guard let binding = binding(number: number) else {
            throw ContextError(.noSuchObject, "row \(key) of \(reader.table) has the unknown entity number \(number)")
        }
        // Where each attribute is in the row (-1: read when first asked for), worked
        // out once per entity: its rows always come from its table's reader.
        if binding.rowReads.count != binding.attributeTypes.count {
            var reads: [(column: Int32, type: AttributeType)] = []
            for slot in binding.attributeColumns.indices {
                var column: Int32 = -1
                if !binding.lazySlots.contains(slot) {
                    // A row whose Z_ENT names an entity of another table: the store's entity
                    // numbers are not the model's.
                    guard let index = reader.index[binding.attributeColumns[slot]] else {
                        throw ContextError(
                            .noSuchObject,
                            "row \(key) of \(reader.table) has the entity number \(number) (\(binding.entity.name)), "
                                + "whose column \(binding.attributeColumns[slot]) is not in \(reader.table); the store's entity numbers (Z_PRIMARYKEY) do not match the model's"
                        )
                    }
                    column = index
                }
                reads.append((column: column, type: binding.attributeTypes[slot]))
            }
            binding.rowReads = reads
        }
        let object: ManagedObject
        if let spare, spare.binding === binding {
            object = spare
            object.objectID.primaryKey = key  // same entity and table: no new ID to make
            if onRow {
                // Mostly empty already: values read from the row are not kept. (Z_OPT is
                // read from the row too, when asked for.)
                for slot in object.values.indices {
                    if case .some = object.values[slot] { object.values[slot] = Value?.none }
                }
            } else {
                object.version = statement.int64(at: EntityBinding.versionColumn)
            }
        } else {
            // `.none`, not `nil`: Value is ExpressibleByNilLiteral, and a `nil` here would
            // be `.null`, a value read as null rather than one not read yet.
            object = ManagedObject(
                objectID: ObjectID(entityName: binding.entity.name, primaryKey: key, table: reader.table),
                binding: binding,
                values: SlotValues(unread: binding.rowReads.count),
                toOne: [ObjectID?](repeating: nil, count: binding.toOnes.count),
                version: onRow ? 0 : statement.int64(at: EntityBinding.versionColumn))
        }
        if onRow {
            // The values (and Z_OPT) stay in the row until asked for, or until the cursor
            // moves on.
            object.row = Unmanaged.passUnretained(statement)
        } else {
            object.row = nil
            for slot in object.values.indices { object.values[slot] = binding.rowValue(statement, slot: slot) }
        }
        for slot in binding.toOnes.indices { object.toOne[slot] = toOneDestination(statement, reader, binding, slot) }
        return object
    }

    /// The destination of the to-one relationship in `slot` in the current row.
    func toOneDestination(_ statement: Statement, _ reader: TableColumns, _ binding: EntityBinding, _ slot: Int)
        -> ObjectID?
    {
        let columns = binding.toOneColumns[slot]
        let index = reader.index[columns.key]!
        if statement.isNull(index) { return nil }
        var destination = binding.toOnes[slot].destination
        if let entityColumn = columns.entity, let e = reader.index[entityColumn], !statement.isNull(e),
            let concrete = self.binding(number: statement.int64(at: e))
        {
            destination = concrete.entity.name
        }
        let table = bindings[destination]!.layout.table
        return ObjectID(entityName: destination, primaryKey: statement.int64(at: index), table: table)
    }
}
