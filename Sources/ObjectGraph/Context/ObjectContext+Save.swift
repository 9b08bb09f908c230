import ExpressionLanguage

// Saving: the SQL that writes every pending change in one transaction.
extension ObjectContext {
    /// Writes every change in one transaction. On failure nothing is written and the
    /// changes stay in the context. Saved objects that nobody else holds are released.
    public func save() throws(ContextError) {
        try commitRows()
        guard hasChanges else { return }
        if validatesOnSave { try validatePending() }
        if hasOrderedRelationships { try assignAppendedPositions() }
        // Files written for values of a save that fails are removed: nothing refers to them.
        let filesBefore = store.externalData.written.count
        do {
            try database.transaction {
                // Saved objects first, deletions freeing rows before anything is written,
                // then the new rows in the order they were inserted (key order per table).
                for object in pending.changedInKeyOrder() {
                    if object.isDeleted {
                        try writeDelete(object)
                    } else if !object.changedSlots.isEmpty {
                        try writeUpdate(object)
                    }
                }
                var highest: [String: Int64] = [:]
                var table = ""
                var highestInTable: Int64 = 0
                for object in pending.inserted where !object.isDeleted {
                    try writeInsert(object)
                    if object.objectID.table != table {
                        if !table.isEmpty { highest[table] = max(highest[table] ?? 0, highestInTable) }
                        table = object.objectID.table
                        highestInTable = 0
                    }
                    highestInTable = max(highestInTable, object.objectID.primaryKey)
                }
                if !table.isEmpty { highest[table] = max(highest[table] ?? 0, highestInTable) }
                for (row, insert) in joinChanges {
                    let sql =
                        insert
                        ? "INSERT OR IGNORE INTO \(row.table) (\(row.firstColumn), \(row.secondColumn)) VALUES (?, ?)"
                        : "DELETE FROM \(row.table) WHERE \(row.firstColumn) = ? AND \(row.secondColumn) = ?"
                    let statement = try self.statement(sql)
                    try statement.bind(row.first, at: 1)
                    try statement.bind(row.second, at: 2)
                    try statement.run()
                }
                try writeJoinPositions()
                for (table, key) in highest { try updatePrimaryKeyCounter(table: table, to: key) }
                // The files the rows name are on disk before the rows are committed.
                if store.externalData.syncsEachSave { try store.externalData.syncPending() }
            }
        } catch {
            store.externalData.removeWritten(from: filesBefore)
            switch error {
            case let error as SQLiteError: throw ContextError(error)
            case let error as ContextError: throw error
            default: throw ContextError(.sqlite, "\(error)", underlying: error)
            }
        }
        // Committed and synced, the files are the store's: no later failure removes them.
        if store.externalData.syncsEachSave { store.externalData.forgetWritten() }
        // The array holds the context's only reference to each saved object, so that a new
        // object nobody else holds can be let go instead of registered.
        var saved = pending.takeAll()
        // (No local for the object: it would be a second reference.)
        for i in saved.indices {
            if saved[i].isDeleted {
                registry[saved[i].objectID] = nil
                continue
            }
            let wasInserted = saved[i].isInserted
            saved[i].version += wasInserted ? 1 : (saved[i].changedSlots.isEmpty || !versionsUpdates ? 0 : 1)
            saved[i].isInserted = false
            saved[i].changedSlots.removeAll()
            saved[i].positions.removeAll()  // written: the saved Z_FOK_ values say the same
            if wasInserted, !isKnownUniquelyReferenced(&saved[i]) { register(saved[i]) }
        }
        pendingValueBytes = 0
        joinChanges.removeAll()
        joinPositions.removeAll()
    }

    /// Required attributes and to-one relationships must have values before saving, and
    /// to-many relationships their number of destinations (``validateRelationshipCounts()``).
    func validatePending() throws(ContextError) {
        for object in pending.all where !object.isDeleted {
            let binding = object.binding
            for slot in binding.requiredAttributeSlots {
                if (object.isInserted || object.changedSlots.contains(attribute: slot)), object.values.isNull(slot) {
                    let name = binding.attributeNames[slot]
                    throw ContextError(
                        .validation, "'\(name)' is required", object: object.objectID.description, key: name)
                }
            }
            for slot in binding.requiredToOneSlots {
                if (object.isInserted || object.changedSlots.contains(toOne: slot)), object.toOne[slot] == nil {
                    let name = binding.toOnes[slot].name
                    throw ContextError(
                        .validation, "'\(name)' is required", object: object.objectID.description, key: name)
                }
            }
        }
        try validateRelationshipCounts()
    }

    func writeInsert(_ object: ManagedObject) throws {
        let binding = object.binding
        let statement: Statement
        if let cached = binding.insertStatement {
            statement = cached  // reset by its last run
        } else {
            statement = try self.statement(binding.insertSQL)
            binding.insertStatement = statement
        }
        try statement.bind(object.objectID.primaryKey, at: 1)
        try statement.bind(Int64(binding.layout.number), at: 2)
        try statement.bind(Int64(1), at: 3)
        var index: Int32 = 4
        for (slot, type) in binding.attributeTypes.enumerated() {
            try EntityBinding.bind(
                binding.stored(object.values[slot] ?? .null, slot: slot, object: object.objectID.description), as: type,
                to: statement, at: index)
            index += 1
        }
        try bindToOnes(object, statement, &index, onlyChanged: false)
        try statement.run()
    }

    func bindToOnes(_ object: ManagedObject, _ statement: Statement, _ index: inout Int32, onlyChanged: Bool) throws {
        for (slot, c) in object.binding.toOneColumns.enumerated() {
            if onlyChanged && !object.changedSlots.contains(toOne: slot) { continue }
            if let id = object.toOne[slot] {
                try statement.bind(id.primaryKey, at: index)
            } else {
                try statement.bindNull(at: index)
            }
            index += 1
            if c.entity != nil {
                if let id = object.toOne[slot], let b = bindings[id.entityName] {
                    try statement.bind(Int64(b.layout.number), at: index)
                } else {
                    try statement.bindNull(at: index)
                }
                index += 1
            }
            if c.order != nil {
                if object.toOne[slot] != nil, let position = object.positions[slot] {
                    try statement.bind(position, at: index)
                } else {
                    try statement.bindNull(at: index)
                }
                index += 1
            }
        }
    }

    func writeUpdate(_ object: ManagedObject) throws {
        let binding = object.binding
        let attributeSlots = binding.attributes.indices.filter { object.changedSlots.contains(attribute: $0) }
        // The UPDATE of these columns, prepared once per set of changed slots (as a bit
        // mask when they fit in one): stage 2 of a migration updates every destination it
        // links, the same columns each time.
        let mask = object.changedSlots.mask
        let statement: Statement
        if let mask, let cached = binding.updateStatements[mask] {
            statement = cached  // reset by its last run
        } else {
            var assignments = attributeSlots.map { "\(binding.attributeColumns[$0]) = ?" }
            for (slot, c) in binding.toOneColumns.enumerated() where object.changedSlots.contains(toOne: slot) {
                assignments.append("\(c.key) = ?")
                if let e = c.entity { assignments.append("\(e) = ?") }
                if let o = c.order { assignments.append("\(o) = ?") }
            }
            let version = versionsUpdates ? ", Z_OPT = Z_OPT + 1" : ""
            statement = try self.statement(
                "UPDATE \(binding.layout.table) SET \(assignments.joined(separator: ", "))\(version) WHERE Z_PK = ?")
            if let mask { binding.updateStatements[mask] = statement }
        }
        var index: Int32 = 1
        for slot in attributeSlots {
            try EntityBinding.bind(
                binding.stored(object.values[slot] ?? .null, slot: slot, object: object.objectID.description),
                as: binding.attributes[slot].type,
                to: statement, at: index)
            index += 1
        }
        try bindToOnes(object, statement, &index, onlyChanged: true)
        try statement.bind(object.objectID.primaryKey, at: index)
        try statement.run()
    }

    func writeDelete(_ object: ManagedObject) throws {
        let statement = try self.statement("DELETE FROM \(object.binding.layout.table) WHERE Z_PK = ?")
        try statement.bind(object.objectID.primaryKey, at: 1)
        try statement.run()
    }
}
