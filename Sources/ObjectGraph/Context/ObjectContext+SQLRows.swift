import ExpressionLanguage

/// Rows written by one SQL statement instead of one object or ``RowInserter`` row at a
/// time: a migration's SQL path (docs/pushdown.md). The rows join the transaction that
/// row inserters use, and the next ``ObjectContext/save()`` commits them with everything
/// else and raises the table's `Z_MAX`.
extension ObjectContext {
    /// Writes new rows of `entityName`'s table with `body`, which is given the database
    /// and the first free primary key, must number its rows from that key on without
    /// gaps, and returns how many it wrote. Nothing may be inserted into the table in
    /// between: call it between other inserts, not during them. Throws what `body` throws
    /// and ``ContextError``.
    public func insertRows(of entityName: String, _ body: (_ database: Database, _ firstKey: Int64) throws -> Int)
        throws -> Range<Int64>
    {
        let binding = try binding(entityName)
        guard !binding.entity.isAbstract else {
            throw ContextError(.unknownEntity, "'\(entityName)' is abstract; insert one of its sub-entities")
        }
        let counter = try keyCounter(table: binding.layout.table)
        try counter.checkKeysLeft()
        let opens = rowsWritten == 0 && !database.isInTransaction
        try openRowTransaction()
        let first = counter.next
        let count: Int
        do {
            count = try body(database, first)
        } catch {
            if opens { try? database.execute("ROLLBACK") }
            throw error
        }
        didWriteRows(counter, first: first, count: count)
        // No rows: no save would commit what the body did in the transaction opened here.
        if count == 0, opens {
            do {
                try database.execute("COMMIT")
            } catch {
                throw ContextError(error)
            }
        }
        return first..<(first + Int64(count))
    }

    /// Runs SQL that changes saved rows (a migration's relationship links): in the
    /// transaction of rows written since the last save when there is one (the next save
    /// commits it), else on its own. Nothing the context holds unsaved may concern those
    /// rows: save first.
    public func executeOnSavedRows(_ body: (_ database: Database) throws(SQLiteError) -> Void) throws(ContextError) {
        guard !hasChanges else {
            throw ContextError(.unsavedChanges, "the context has unsaved changes; save before changing rows with SQL")
        }
        do {
            try body(database)
        } catch {
            throw ContextError(error)
        }
    }
}

extension AttributeDescription {
    /// Whether the column holds Core Data's external-storage encoding (``ExternalBinaryData``)
    /// rather than the value itself.
    public var storesExternalEncoding: Bool {
        allowsExternalBinaryDataStorage && (type == .binary || type == .transformable)
    }

    /// What this attribute's column holds for `value`, as a ``RowInserter`` writes it:
    /// coerced to the attribute's type, encoded for external storage, converted to the
    /// column's storage. Throws the coercion's type error.
    public func columnValue(_ value: Value) throws(ContextError) -> SQLiteValue {
        let coerced = try AttributeCoercion.coerce(value, to: self)
        return EntityBinding.sqliteValue(
            storesExternalEncoding ? ExternalBinaryData.encode(coerced) : coerced, as: type)
    }

    /// What the column of a new row holds when nothing sets the attribute: its default
    /// value as a ``RowInserter`` writes it (not coerced: the model's default as it is).
    public var defaultColumnValue: SQLiteValue {
        let value = defaultValue ?? .null
        return EntityBinding.sqliteValue(storesExternalEncoding ? ExternalBinaryData.encode(value) : value, as: type)
    }
}
