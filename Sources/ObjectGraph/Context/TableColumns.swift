/// The columns of one table that a fetch reads, and where each lands in a row.
struct TableColumns {
    let table: String
    let selectList: String
    let index: [String: Int32]
    /// The statement that reads one row by key (``ObjectContext/object(with:)``), prepared
    /// when first needed: stage 2 of a migration looks objects up one by one, and making
    /// its SQL text and finding it in the statement cache each time showed in profiles.
    private let lookup = Lookup()

    private final class Lookup {
        var statement: Statement?
    }

    init(table: StoreLayout.Table, lazyColumns: Set<String>) {
        self.table = table.name
        let columns = table.columns.map(\.name).filter { !lazyColumns.contains($0) }
        selectList = columns.joined(separator: ", ")
        index = Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($1, Int32($0)) })
    }

    /// The prepared `SELECT … WHERE Z_PK = ?` of the table, reset.
    func lookupStatement(in database: Database) throws(SQLiteError) -> Statement {
        if let statement = lookup.statement {
            statement.reset()
            return statement
        }
        let statement = try database.prepare("SELECT \(selectList) FROM \(table) WHERE Z_PK = ?")
        lookup.statement = statement
        return statement
    }
}
