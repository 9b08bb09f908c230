import CSQLite
import ExpressionLanguage
import Foundation

/// Reads the saved rows of one entity in primary-key order without making objects: for
/// loops that read every instance once and keep none, such as a migration that copies
/// rows (see ``RowInserter/copy(_:of:to:)``).
///
///     let reader = try context.makeRowReader(for: "Product", attributes: ["name", "price"])
///     let price = try context.attributeKey("price", of: "Product")
///     while try reader.next() {
///         total += reader.value(for: price).doubleValue ?? 0
///     }
///
/// Values read as a fetched object's would. The reader sees the store as saved, not the
/// context's unsaved changes (a cursor, ``ObjectContext/makeCursor(_:)``, sees those), and
/// only rows of the entity itself, not of its sub-entities. It is also the current row as
/// an object for expressions (`$source.price` reads `price`): bound as a variable, it
/// answers attribute keys of whatever row it is on, so it is not an object to keep.
public final class RowReader: KeyValueCoding {
    public let entityName: String
    let binding: EntityBinding
    unowned let context: ObjectContext
    let statement: Statement
    /// Each attribute's column in the row and type by slot; column -1 for an attribute not
    /// selected (read on its own when asked for). One array, so that a value costs one
    /// bounds check and one load before SQLite is asked.
    private let reads: [(column: Int32, type: AttributeType)]
    private let countSQL: String
    /// The current row's primary key, while ``next()`` last answered true.
    public var primaryKey: Int64 { statement.int64(at: 0) }

    init(context: ObjectContext, binding: EntityBinding, attributes: [String]?) throws(ContextError) {
        self.context = context
        self.binding = binding
        entityName = binding.entity.name
        var selected: [Int] = []
        for name in attributes ?? binding.attributeNames {
            guard let slot = binding.slot(ofAttribute: name) else {
                throw ContextError(.unknownKey, "\(entityName) has no stored attribute '\(name)'", key: name)
            }
            if !selected.contains(slot) { selected.append(slot) }
        }
        var columns = [Int32](repeating: -1, count: binding.attributeNames.count)
        for (i, slot) in selected.enumerated() { columns[slot] = Int32(i + 1) }
        reads = zip(columns, binding.attributeTypes).map { (column: $0, type: $1) }
        let table = binding.layout.table
        // Only the entity's own rows: not its sub-entities', and not a damaged row whose
        // Z_ENT is no entity (StoreValidator.damage reports those), as fetches read them.
        let condition = " WHERE Z_ENT = \(binding.layout.number)"
        let selectList = (["Z_PK"] + selected.map { binding.attributeColumns[$0] }).joined(separator: ", ")
        do {
            statement = try context.database.prepare("SELECT \(selectList) FROM \(table)\(condition) ORDER BY Z_PK")
        } catch {
            throw ContextError(error)
        }
        countSQL = "SELECT count(*) FROM \(table)\(condition)"
    }

    /// Moves to the next row: false when there are no more.
    public func next() throws(ContextError) -> Bool {
        do {
            return try statement.step()
        } catch {
            throw ContextError(error)
        }
    }

    /// How many rows the reader reads in all (whatever row it is on).
    public func count() throws(ContextError) -> Int {
        do {
            if case .integer(let n)? = try context.database.scalar(countSQL) { return Int(n) }
            return 0
        } catch {
            throw ContextError(error)
        }
    }

    /// The current row's ID.
    public var objectID: ObjectID {
        ObjectID(entityName: entityName, primaryKey: primaryKey, table: binding.layout.table)
    }

    /// The attribute's value in the current row, as a fetched object has it (see
    /// ``AttributeKey``).
    public func value(for key: AttributeKey) throws(ContextError) -> Value {
        guard key.binding === binding else { return try attribute(named: key.name) }
        return try value(slot: key.slot)
    }

    @inline(__always)
    func value(slot: Int) throws(ContextError) -> Value {
        let read = reads[slot]
        if read.column >= 0 {
            return try binding.decoded(
                EntityBinding.read(statement, read.column, as: read.type), slot: slot,
                primaryKey: primaryKey, storePath: context.store.path)
        }
        // Not selected: read on its own, as an object reads a lazy attribute.
        return try context.savedValue(of: binding, slot: slot, primaryKey: primaryKey)
    }

    /// The column of the attribute in `slot` in the current row, -1 when not selected.
    func column(ofSlot slot: Int) -> Int32 { reads[slot].column }

    private func attribute(named name: String) throws(ContextError) -> Value {
        guard let slot = binding.slot(ofAttribute: name) else {
            throw ContextError(
                .unknownKey, "\(entityName) has no stored attribute '\(name)'", object: objectID.description, key: name)
        }
        return try value(slot: slot)
    }

    // MARK: Key-value coding

    /// The current row's value of the attribute `key`. Relationships are not read: a
    /// reader is for expressions that read attributes.
    public func value(forKey key: String) throws -> Value {
        if let slot = binding.slot(ofAttribute: key) { return try value(slot: slot) }
        let model = context.store.model
        if model.allRelationships(of: binding.entity).contains(where: { $0.name == key }) {
            throw ExpressionError(
                .unknownKey, "\(objectID) is read as a row, which has attributes only; '\(key)' is a relationship")
        }
        let keys =
            (model.allAttributes(of: binding.entity).map(\.name)
            + model.allRelationships(of: binding.entity).map(\.name)).sorted()
        throw ExpressionError(
            .unknownKey,
            "\(objectID) has no attribute or relationship '\(key)'; \(entityName) has \(keys.joined(separator: ", "))")
    }

    public var objectDescription: String { objectID.description }
    public var kindName: String { entityName }
}

extension ObjectContext {
    /// A reader of the saved rows of `entityName` (see ``RowReader``), selecting the
    /// attributes named (every stored attribute when nil); others are read one by one
    /// when asked for.
    public func makeRowReader(for entityName: String, attributes: [String]? = nil) throws(ContextError) -> RowReader {
        try RowReader(context: self, binding: binding(entityName), attributes: attributes)
    }
}
