import ExpressionLanguage

// Inserting objects and writing rows outside objects: keys, their counters, and the
// transaction rows written by row inserters join.
extension ObjectContext {
    /// A new object of `entityName` with its attributes' default values.
    public func insert(_ entityName: String) throws(ContextError) -> ManagedObject {
        let binding: EntityBinding
        if let last = lastInserted, last.entity.name == entityName {
            binding = last
        } else {
            binding = try self.binding(entityName)
            guard !binding.entity.isAbstract else {
                throw ContextError(.unknownEntity, "'\(entityName)' is abstract; insert one of its sub-entities")
            }
            lastInserted = binding
        }
        let counter: KeyCounter
        if let known = binding.keyCounter {
            counter = known
        } else {
            counter = try keyCounter(table: binding.layout.table)
            binding.keyCounter = counter
        }
        let key = try counter.allocate()
        let id = ObjectID(entityName: binding.entity.name, primaryKey: key, table: binding.layout.table)
        let object = ManagedObject(
            objectID: id, binding: binding, values: SlotValues(copying: binding.defaultValues),
            toOne: binding.noDestinations, version: 0)
        object.isInserted = true
        // Pending holds it until it is saved; it joins the registry then, if anyone still
        // has it (a weak reference costs every object a side table).
        pending.append(inserted: object)
        return object
    }

    /// Allocates a key for a row a ``RowInserter`` writes now, opening the transaction
    /// that the next save commits.
    func beginRow(_ counter: KeyCounter) throws(ContextError) -> Int64 {
        let key = try counter.allocate()
        try openRowTransaction()
        counter.highestRow = key
        rowsWritten += 1
        return key
    }

    /// Opens the transaction that rows written outside objects join, unless it is open.
    func openRowTransaction() throws(ContextError) {
        if rowsWritten == 0, !database.isInTransaction {
            do {
                try database.execute("BEGIN IMMEDIATE")
            } catch {
                throw ContextError(error)
            }
        }
    }

    /// Counts `count` rows written outside objects with keys from `first` on: the next
    /// save commits them and raises the table's Z_MAX to the last.
    func didWriteRows(_ counter: KeyCounter, first: Int64, count: Int) {
        guard count > 0 else { return }
        counter.next = max(counter.next, first + Int64(count))
        counter.highestRow = max(counter.highestRow, first + Int64(count) - 1)
        rowsWritten += count
    }

    /// Commits the rows written by row inserters since the last save.
    func commitRows() throws(ContextError) {
        guard rowsWritten > 0 else { return }
        do {
            for (table, counter) in keyCounters where counter.highestRow > 0 {
                try updatePrimaryKeyCounter(table: table, to: counter.highestRow)
                counter.highestRow = 0
            }
        } catch {
            throw ContextError(error)
        }
        // The files the rows name are on disk before the rows are committed.
        if store.externalData.syncsEachSave { try store.externalData.syncPending() }
        do {
            try database.execute("COMMIT")
        } catch {
            throw ContextError(error)
        }
        if store.externalData.syncsEachSave { store.externalData.forgetWritten() }
        rowsWritten = 0
    }

    /// Raises the key counter (`Z_MAX`) of the entities stored in `table` to at least `key`.
    func updatePrimaryKeyCounter(table: String, to key: Int64) throws(SQLiteError) {
        let roots = bindings.values.filter { $0.layout.table == table && $0.entity.parent == nil }
        for root in roots {
            let statement = try self.cachedStatement("UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, ?) WHERE Z_ENT = ?")
            try statement.bind(key, at: 1)
            try statement.bind(Int64(root.layout.number), at: 2)
            try statement.run()
        }
    }

    /// The next primary key of each table, found once from the table and Z_PRIMARYKEY.
    final class KeyCounter {
        /// The next key; the last key Int64 holds is never handed out (a store whose
        /// table has it, or whose Z_MAX is it, takes no new row: Core Data's would not).
        @exclusivity(unchecked) var next: Int64
        /// The highest key written by row inserters since the last save.
        @exclusivity(unchecked) var highestRow: Int64 = 0
        let table: String
        init(next: Int64, table: String) {
            self.next = next
            self.table = table
        }

        /// The next key, counted.
        func allocate() throws(ContextError) -> Int64 {
            try checkKeysLeft()
            defer { next += 1 }
            return next
        }

        /// Throws when no key is left for a new row.
        func checkKeysLeft() throws(ContextError) {
            guard next < .max else {
                throw ContextError(
                    .sqlite,
                    "\(table) has no key left for a new row: its highest key (or its Z_PRIMARYKEY.Z_MAX) is \(Int64.max - 1) or more"
                )
            }
        }
    }

    func keyCounter(table: String) throws(ContextError) -> KeyCounter {
        if let counter = keyCounters[table] { return counter }
        let numbers = bindings.values.filter { $0.layout.table == table }.map { String($0.layout.number) }
        do {
            let fromTable = try database.scalar("SELECT max(Z_PK) FROM \(table)")
            let fromCounter = try database.scalar(
                "SELECT max(Z_MAX) FROM Z_PRIMARYKEY WHERE Z_ENT IN (\(numbers.joined(separator: ",")))")
            var highest: Int64 = 0
            for value in [fromTable, fromCounter] { if case .integer(let i)? = value { highest = max(highest, i) } }
            let counter = KeyCounter(next: highest == .max ? .max : highest + 1, table: table)
            keyCounters[table] = counter
            return counter
        } catch {
            throw ContextError(error)
        }
    }
}
