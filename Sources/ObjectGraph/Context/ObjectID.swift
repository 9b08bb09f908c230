/// The identity of an object in a store: its entity and primary key (`Z_PK`). Two IDs are
/// equal when they name the same row (primary keys are unique per root entity's table).
public struct ObjectID: Hashable, Sendable, CustomStringConvertible {
    /// The object's own entity (a sub-entity's name for a sub-entity's object).
    public let entityName: String
    public internal(set) var primaryKey: Int64
    let table: String

    init(entityName: String, primaryKey: Int64, table: String) {
        self.entityName = entityName
        self.primaryKey = primaryKey
        self.table = table
    }

    public static func == (lhs: ObjectID, rhs: ObjectID) -> Bool {
        lhs.primaryKey == rhs.primaryKey && lhs.table == rhs.table
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(primaryKey)
        hasher.combine(table)
    }

    /// `Book/9`, as `{"$object": "Book/9"}` shows it.
    public var description: String { "\(entityName)/\(primaryKey)" }
}
