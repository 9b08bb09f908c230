import ExpressionLanguage

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
    private var values: [Value]
    private let statement: Statement
    private let keys: ObjectContext.KeyCounter

    init(context: ObjectContext, binding: EntityBinding) throws(ContextError) {
        self.context = context
        self.binding = binding
        entityName = binding.entity.name
        values = binding.defaultValues.map { $0 ?? .null }
        do {
            statement = try context.database.prepare(binding.insertSQL)
        } catch {
            throw ContextError(error)
        }
        keys = try context.keyCounter(table: binding.layout.table)
    }

    /// Sets an attribute of the next row, coerced to its type.
    public func set(_ value: Value, for key: AttributeKey) throws(ContextError) {
        guard key.binding === binding else {
            throw ContextError(.unknownKey, "the key '\(key.name)' is not of \(entityName)", key: key.name)
        }
        values[key.slot] = try AttributeCoercion.coerce(value, to: binding.attributeTypes[key.slot], name: key.name)
    }

    /// Writes the row and returns its ID; the next row starts from the defaults again.
    @discardableResult
    public func insert() throws(ContextError) -> ObjectID {
        let key = try context.beginRow(keys)
        statement.reset()
        do {
            try statement.bind(key, at: 1)
            try statement.bind(Int64(binding.layout.number), at: 2)
            try statement.bind(Int64(1), at: 3)
            var index: Int32 = 4
            for (slot, type) in binding.attributeTypes.enumerated() {
                try EntityBinding.bind(values[slot], as: type, to: statement, at: index)
                index += 1
            }
            while index <= statement.parameterCount {
                try statement.bindNull(at: index)
                index += 1
            }
            try statement.run()
        } catch {
            throw ContextError(error)
        }
        for (slot, value) in binding.defaultValues.enumerated() { values[slot] = value ?? .null }
        return ObjectID(entityName: entityName, primaryKey: key, table: binding.layout.table)
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
