import CSQLite
import ExpressionLanguage
import Foundation

/// Writes new rows of one entity without making objects: for loops that create many
/// instances and keep none, such as a migration's default policy.
///
///     let inserter = try context.makeRowInserter(for: "Product")
///     let price = try context.attributeKey("price", of: "Product")
///     for row in rows {
///         try inserter.set(.double(row.price), for: price)
///         let id = try inserter.insert()
///     }
///     try context.save()   // commits the rows with everything else
///
/// Rows are written at once, inside a transaction the context keeps open until its next
/// ``ObjectContext/save()``; fetches through the context see them, as the database does.
/// Unset attributes take their defaults and to-one relationships are empty; set
/// relationships afterwards through ``ObjectContext/object(with:)``. Nothing is validated
/// (see ``StoreValidator``). A failed save or a context released without saving leaves
/// the rows uncommitted: SQLite rolls them back.
public final class RowInserter {
    public let entityName: String
    let binding: EntityBinding
    unowned let context: ObjectContext
    private let statement: Statement
    private let keys: ObjectContext.KeyCounter
    /// Values are bound as they are set (SQLite keeps bindings from row to row); the slots
    /// set for the next row, whose defaults ``insertRow()`` does not bind. Memory of its
    /// own rather than an array: a hot loop writes it, and an array stored in a class
    /// costs an exclusivity check on every access.
    private let isSet: UnsafeMutableBufferPointer<Bool>
    /// What binding a set value failed with: thrown by ``insertRow()``, as when values
    /// were bound there.
    private var bindFailure: ContextError?

    init(context: ObjectContext, binding: EntityBinding) throws(ContextError) {
        self.context = context
        self.binding = binding
        entityName = binding.entity.name
        do {
            statement = try context.database.prepare(binding.insertSQL)
            // Bound once: the same for every row. The to-one columns after the attributes
            // are never bound, so NULL.
            try statement.bind(Int64(binding.layout.number), at: 2)
            try statement.bind(Int64(1), at: 3)
        } catch {
            throw ContextError(error)
        }
        keys = try context.keyCounter(table: binding.layout.table)
        isSet = .allocate(capacity: binding.attributeTypes.count)
        isSet.initialize(repeating: false)
    }

    deinit {
        isSet.deallocate()
    }

    /// Sets an attribute of the next row, coerced to its type.
    public func set(_ value: Value, for key: AttributeKey) throws(ContextError) {
        guard key.binding === binding else {
            throw ContextError(.unknownKey, "the key '\(key.name)' is not of \(entityName)", key: key.name)
        }
        let type = binding.attributeTypes[key.slot]
        // A double for a double attribute, the common result of arithmetic, needs neither.
        if case .double(let d) = value, type == .double,
            sqlite3_bind_double(statement.handle, Int32(4 + key.slot), d) == SQLITE_OK
        {
            isSet[key.slot] = true
            return
        }
        bind(try AttributeCoercion.coerce(value, to: type, name: key.name), as: type, slot: key.slot)
    }

    private func bind(_ value: Value, as type: AttributeType, slot: Int) {
        if let error = bindStored(value, as: type, slot: slot) { bindFailure = bindFailure ?? error }
        isSet[slot] = true
    }

    /// Binds what the column holds for `value` (a large value of an external-storage
    /// attribute written to a file); the error, if any.
    private func bindStored(_ value: Value, as type: AttributeType, slot: Int) -> ContextError? {
        do {
            let stored = try binding.stored(value, slot: slot, object: entityName)
            do {
                try EntityBinding.bind(stored, as: type, to: statement, at: Int32(4 + slot))
            } catch {
                return ContextError(error)
            }
        } catch {
            return error
        }
        return nil
    }

    /// Sets an attribute of the next row to `source`'s value in the reader's current row:
    /// what `set(try reader.value(for: source), for: key)` does, but a stored value that
    /// needs no conversion (text, numbers in range, dates, data between attributes of the
    /// same kind) goes from column to parameter without being decoded. The reader must
    /// stay on its row until ``insert()``: the row's text and data are not copied. Loops
    /// over many rows resolve the keys once with a ``RowCopier``.
    public func copy(_ source: AttributeKey, of reader: RowReader, to key: AttributeKey) throws(ContextError) {
        guard key.binding === binding else {
            throw ContextError(.unknownKey, "the key '\(key.name)' is not of \(entityName)", key: key.name)
        }
        if source.binding === reader.binding, case let column = reader.column(ofSlot: source.slot), column >= 0,
            let copy = storedCopy(from: reader.binding, slot: source.slot, to: key.slot),
            copyStored(column, of: reader.statement.handle, copy)
        {
            return
        }
        try set(try reader.value(for: source), for: key)
    }

    /// How the column of the attribute in `sourceSlot` of `source` goes straight to the
    /// parameter of `slot` when reading, coercing and binding it would bind the same thing;
    /// nil when it would not. Blobs go as they are only between attributes that store them
    /// alike: both with external storage (marker and reference kept), or both without.
    func storedCopy(from source: EntityBinding, slot sourceSlot: Int, to slot: Int) -> StoredCopy? {
        let kind: StoredCopy.Kind
        switch (source.attributeTypes[sourceSlot], binding.attributeTypes[slot]) {
        case (.string, .string), (.string, .uri), (.uri, .string), (.uri, .uri):
            kind = .text
        case (.int16, .int16), (.int16, .int32), (.int16, .int64), (.int32, .int16), (.int32, .int32), (.int32, .int64),
            (.int64, .int16), (.int64, .int32), (.int64, .int64):
            kind = .integer(binding.attributeTypes[slot].integerRange!)
        case (.boolean, .boolean):
            kind = .boolean
        case (.double, .double), (.float, .double), (.double, .float), (.float, .float), (.date, .date):
            kind = binding.attributeTypes[slot] == .float ? .float : .real
        case (.binary, .binary), (.binary, .transformable), (.transformable, .binary), (.transformable, .transformable):
            guard source.externalSlots[sourceSlot] == binding.externalSlots[slot] else { return nil }
            if source.externalSlots[sourceSlot] {
                // A file reference is copied once its file is seen where the new row's
                // store reads its external data.
                guard binding.externalData != nil else { return nil }
                kind = .externalBlob
            } else {
                kind = .blob
            }
        default:
            return nil
        }
        return StoredCopy(kind: kind, slot: slot)
    }

    /// Does `copy` from the column (see ``storedCopy(from:to:)``); false when the value
    /// in this row needs decoding after all (nothing is bound then).
    ///
    /// Each case reads the column with the function ``EntityBinding/read(_:_:as:)`` uses
    /// for the attribute's type (so SQLite converts whatever it stores the same way), and
    /// asks for the storage class only when the answer could be a NULL: a zero, or no text.
    @inline(__always)
    func copyStored(_ column: Int32, of row: OpaquePointer, _ copy: StoredCopy) -> Bool {
        let to = statement.handle, parameter = Int32(4 + copy.slot)
        func isNull() -> Bool { sqlite3_column_type(row, column) == SQLITE_NULL }
        let rc: Int32
        switch copy.kind {
        case .text:
            let value = sqlite3_column_value(row, column)
            guard let text = sqlite3_value_text(value) else {
                guard isNull() else { return false }
                rc = sqlite3_bind_null(to, parameter)
                break
            }
            let count = sqlite3_value_bytes(value)
            // Reading decodes the bytes as UTF-8, repairing ill-formed ones; well-formed
            // text comes out as the same bytes, so only that is copied as it is.
            guard UTF8Sequence.isWellFormed(UnsafeBufferPointer(start: text, count: Int(count))) else { return false }
            // SQLITE_STATIC (nil): not copied.
            rc = sqlite3_bind_text(
                to, parameter, UnsafeRawPointer(text).assumingMemoryBound(to: CChar.self), count, nil)
        case .integer(let range):
            let i = sqlite3_column_int64(row, column)
            if i == 0, isNull() {
                rc = sqlite3_bind_null(to, parameter)
            } else {
                guard range.contains(i) else { return false }  // coercion's error
                rc = sqlite3_bind_int64(to, parameter, i)
            }
        case .boolean:
            let i = sqlite3_column_int64(row, column)
            rc =
                i == 0 && isNull()
                ? sqlite3_bind_null(to, parameter) : sqlite3_bind_int64(to, parameter, i == 0 ? 0 : 1)
        case .real, .float:
            let d = sqlite3_column_double(row, column)
            rc =
                d == 0 && isNull()
                ? sqlite3_bind_null(to, parameter)
                : sqlite3_bind_double(to, parameter, copy.kind == .float ? Double(Float(d)) : d)
        case .blob, .externalBlob:
            switch sqlite3_column_type(row, column) {
            case SQLITE_NULL:
                rc = sqlite3_bind_null(to, parameter)
            case SQLITE_BLOB:
                let bytes = sqlite3_column_blob(row, column)
                let count = sqlite3_column_bytes(row, column)
                if copy.kind == .externalBlob, count > 1, let bytes,
                    bytes.load(as: UInt8.self) == ExternalBinaryData.reference
                {
                    let name = String(
                        decoding: UnsafeRawBufferPointer(start: bytes + 1, count: Int(count) - 1).prefix { $0 != 0 },
                        as: UTF8.self)
                    // Missing: decoded on the ordinary path, which says so.
                    guard binding.externalData?.hasFile(named: name) == true else { return false }
                }
                // A NULL pointer would bind NULL: an empty blob is still a blob. SQLITE_STATIC
                // (nil): not copied.
                rc = sqlite3_bind_blob(to, parameter, bytes ?? UnsafeRawPointer(Statement.emptyText), count, nil)
            default:
                return false
            }
        }
        if rc != SQLITE_OK { return false }  // set() binds it again and keeps the error for insert()
        isSet[copy.slot] = true
        return true
    }

    /// Writes the row and returns its ID; the next row starts from the defaults again.
    @discardableResult
    public func insert() throws(ContextError) -> ObjectID {
        let key = try insertRow()
        return ObjectID(entityName: entityName, primaryKey: key, table: binding.layout.table)
    }

    /// Writes the row and returns its primary key: ``insert()`` without making the ID.
    @discardableResult
    public func insertRow() throws(ContextError) -> Int64 {
        let key = try context.beginRow(keys)
        for slot in isSet.indices {
            if isSet[slot] {
                isSet[slot] = false
            } else if bindFailure == nil {
                let type = binding.attributeTypes[slot]
                bindFailure = bindStored(binding.defaultValues[slot] ?? .null, as: type, slot: slot)
            }
        }
        if let failure = bindFailure {
            bindFailure = nil
            throw failure
        }
        do {
            try statement.bind(key, at: 1)
            try statement.run()
        } catch {
            throw ContextError(error)
        }
        return key
    }
}

extension ObjectContext {
    /// A writer of new `entityName` rows (see ``RowInserter``).
    public func makeRowInserter(for entityName: String) throws(ContextError) -> RowInserter {
        let binding = try binding(entityName)
        guard !binding.entity.isAbstract else {
            throw ContextError(.unknownEntity, "'\(entityName)' is abstract; insert one of its sub-entities")
        }
        return try RowInserter(context: self, binding: binding)
    }
}

/// A copy from a source column to a ``RowInserter``'s parameter that needs no decoding
/// (see ``RowInserter/storedCopy(from:to:)``), worked out once for a loop.
struct StoredCopy {
    enum Kind: Equatable {
        /// Text or NULL; ASCII text only (other text is decoded, as reading repairs it).
        case text
        /// An integer within the destination type's range, or NULL.
        case integer(ClosedRange<Int64>)
        case boolean
        case real
        /// A double narrowed to a float, as the destination stores it.
        case float
        case blob
        /// Core Data's encoding of an external-storage attribute, between two such
        /// attributes: inline bytes, or a reference to a file, which the new row's store must
        /// find where it reads its external data.
        case externalBlob
    }

    let kind: Kind
    /// The destination attribute's slot.
    let slot: Int
}
