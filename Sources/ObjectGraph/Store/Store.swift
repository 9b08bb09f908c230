import Foundation

/// A store in Core Data's SQLite layout, bound to one model version.
///
///     let store = try Store.create(at: "Books.sqlite", model: model)
///     let existing = try Store.open(at: "Books.sqlite", model: model, mode: .readOnly)
///
/// Opening never changes the file: nothing is written until something is saved, and the
/// journal mode is left as the file has it.
public final class Store {
    public let path: String
    public let database: Database
    public let model: ObjectModel
    public let layout: StoreLayout
    public private(set) var metadata: StoreMetadata
    /// Where the store's external binary data is written and read: its own support
    /// folder unless set otherwise, before a context is made (a migration step's new store
    /// writes into the folder of the store it replaces).
    public var externalData: ExternalDataFiles
    /// The indexes ``create(at:model:journalMode:deferringIndexes:)`` left for
    /// ``createDeferredIndexes()``.
    private var deferredIndexes: [String] = []

    private init(
        path: String, database: Database, model: ObjectModel, metadata: StoreMetadata, layout: StoreLayout? = nil
    ) {
        self.path = path
        self.database = database
        self.model = model
        self.layout = layout ?? StoreLayout(model: model)
        self.metadata = metadata
        externalData = ExternalDataFiles(storeAt: path)
    }

    /// Creates a new, empty store for `model` (`:memory:` for an in-memory store) with the
    /// journal mode `journalMode` (Core Data's default for new stores is WAL). The file must
    /// not exist yet. With `deferringIndexes`, the tables' indexes are made only by
    /// ``createDeferredIndexes()``: a bulk load writes its rows first, and SQLite builds
    /// each index once, sorted, rather than entry by entry in random order.
    public static func create(
        at path: String, model: ObjectModel, journalMode: JournalMode = .delete, deferringIndexes: Bool = false
    ) throws(StoreError) -> Store {
        if path != ":memory:", FileManager.default.fileExists(atPath: path) {
            throw StoreError(.cannotOpen, "a file already exists here; a new store needs a new file", path: path)
        }
        try checkModel(model, path: path)
        return try storeErrors(path: path, otherwise: .metadata) {
            let database = try Database(path: path, mode: .create)
            if path != ":memory:" { try database.setJournalMode(journalMode) }
            let metadata = StoreMetadata(model: model)
            let store = Store(path: path, database: database, model: model, metadata: metadata)
            if deferringIndexes { store.deferredIndexes = store.layout.indexStatements }
            try database.transaction {
                for statement in store.layout.createStatements where !store.deferredIndexes.contains(statement) {
                    try database.execute(statement)
                }
                let insert = try database.prepare(
                    "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)")
                for entity in store.layout.entities.values.sorted(by: { $0.number < $1.number }) {
                    try insert.bind(Int64(entity.number), at: 1)
                    try insert.bind(entity.name, at: 2)
                    try insert.bind(Int64(entity.superNumber), at: 3)
                    try insert.run()
                }
                let meta = try database.prepare("INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)")
                try meta.bind(metadata.uuid, at: 1)
                try meta.bind(try metadata.propertyList(), at: 2)
                try meta.run()
            }
            return store
        }
    }

    /// Creates the indexes ``create(at:model:journalMode:deferringIndexes:)`` deferred, if
    /// any are left: the store is then in Core Data's layout.
    ///
    /// SQLite's sorter sizes the runs it sorts in memory by the page cache's size: with
    /// the cache at 2 MiB while the indexes are built, a million-row index took 0.77–0.79 s
    /// where 16 MiB took 0.95–0.98 s and 16 MiB more memory (docs/performance.md). The
    /// connection's cache size is restored afterwards.
    public func createDeferredIndexes() throws(StoreError) {
        guard !deferredIndexes.isEmpty else { return }
        let statements = deferredIndexes
        deferredIndexes = []
        try Self.storeErrors(path: path, otherwise: .sqlite) {
            let size = try database.prepare("PRAGMA cache_size")
            _ = try size.step()
            let cacheSize = size.int64(at: 0)
            try database.execute("PRAGMA cache_size = -2048")
            defer { try? database.execute("PRAGMA cache_size = \(cacheSize)") }
            for statement in statements { try database.execute(statement) }
        }
    }

    /// Opens an existing store as `model`, checking that its tables and columns are those
    /// the model needs.
    public static func open(at path: String, model: ObjectModel, mode: Database.Mode = .readWrite) throws(StoreError)
        -> Store
    {
        guard path == ":memory:" || FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.cannotOpen, "no such file", path: path)
        }
        try checkModel(model, path: path)
        return try storeErrors(path: path, otherwise: .cannotOpen) {
            let database = try Database(path: path, mode: mode == .create ? .readWrite : mode)
            let metadata = try readMetadata(database, path: path)
            let schema = try StoreSchema(database: database)
            // Join tables are read under the names the store has them.
            let store = Store(
                path: path, database: database, model: model, metadata: metadata,
                layout: StoreLayout(model: model).matchingJoinTables(of: schema.tables))
            let mismatches = StoreMatcher.mismatches(schema, store.layout)
            if !mismatches.isEmpty {
                throw StoreError(
                    .modelMismatch,
                    "the store does not have the layout of model \(model.version): "
                        + mismatches.prefix(5).joined(separator: "; "),
                    path: path)
            }
            return store
        }
    }

    /// The tables of the file that its model does not lay out, with their row counts:
    /// Core Data's persistent history (`ATRANSACTION`, `ACHANGE`, `ATRANSACTIONSTRING`)
    /// or tables of another program. A migration writes a new store of its destination
    /// model only, so they are not carried.
    public func tablesOutsideTheModel() throws(StoreError) -> [(table: String, rows: Int)] {
        try Self.storeErrors(path: path, otherwise: .cannotOpen) {
            let known = Set(layout.tables.keys).union(layout.joinTables.map(\.name)).union([
                "Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"
            ])
            var found: [(table: String, rows: Int)] = []
            for table in try StoreSchema(database: database).tables.keys.sorted()
            where !known.contains(table) && !table.hasPrefix("SQLITE_")
                && !layout.joinTables.contains(where: { $0.name == table })
            {
                // Core Data may name a join table after the other side (see StoreMatcher).
                let columns = try StoreSchema(database: database).tables[table] ?? []
                if layout.joinTables.contains(where: { $0.isHeld(by: columns) }) { continue }
                let count = try database.scalar(
                    "SELECT count(*) FROM \"\(table.replacingOccurrences(of: "\"", with: "\"\""))\"")
                if case .integer(let n)? = count { found.append((table, Int(n))) }
            }
            return found
        }
    }

    /// Replaces the store's metadata (`Z_METADATA`): what a migration does once the new
    /// store is complete, to carry the source store's UUID and other entries.
    public func setMetadata(_ metadata: StoreMetadata) throws(StoreError) {
        try Self.storeErrors(path: path, otherwise: .metadata) {
            let update = try database.prepare("UPDATE Z_METADATA SET Z_UUID = ?, Z_PLIST = ?")
            try update.bind(metadata.uuid, at: 1)
            try update.bind(try metadata.propertyList(), at: 2)
            try update.run()
        }
        self.metadata = metadata
    }

    /// The metadata of the store at `path`, read without opening it for writing.
    public static func metadata(at path: String) throws(StoreError) -> StoreMetadata {
        try storeErrors(path: path, otherwise: .cannotOpen) {
            try readMetadata(Database(path: path, mode: .readOnly), path: path)
        }
    }

    /// A store is laid out from a valid model only: one built in code is checked here, as
    /// a loaded one was when it loaded.
    private static func checkModel(_ model: ObjectModel, path: String) throws(StoreError) {
        do throws(ModelErrors) {
            try model.validate()
        } catch {
            throw StoreError(.cannotOpen, "the model \(model.version) is not valid: \(error)", path: path)
        }
    }

    /// Runs `body`, reporting any error as a ``StoreError`` about `path`: SQLite's with its
    /// code and SQL, others as `otherwise`.
    static func storeErrors<T>(path: String, otherwise: StoreError.Kind, _ body: () throws -> T) throws(StoreError) -> T
    {
        do {
            return try body()
        } catch let error as SQLiteError where error.code == 26 {  // SQLITE_NOTADB
            throw StoreError(
                .notAStore, "not a Core Data store: it is not a SQLite database file", path: path, underlying: error)
        } catch let error as SQLiteError where error.code & 0xFF == 11 {  // SQLITE_CORRUPT
            throw StoreError(
                .notAStore,
                "the file is damaged or truncated: SQLite cannot read it (database disk image is malformed)",
                path: path,
                underlying: error)
        } catch let error as SQLiteError {
            throw StoreError(error, path: path)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(otherwise, "\(error)", path: path)
        }
    }

    static func readMetadata(_ database: Database, path: String) throws -> StoreMetadata {
        let tables = try StoreSchema(database: database).tables
        guard tables["Z_METADATA"] != nil, tables["Z_PRIMARYKEY"] != nil else {
            throw StoreError(
                .notAStore, "not a Core Data store: it has no Z_METADATA and Z_PRIMARYKEY tables", path: path)
        }
        let statement = try database.prepare("SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1")
        guard try statement.step(), let plist = statement.data(at: 1) else {
            throw StoreError(.metadata, "the store's Z_METADATA table is empty", path: path)
        }
        do {
            return try StoreMetadata(propertyList: plist, uuid: statement.string(at: 0))
        } catch {
            throw StoreError(error.kind, error.message, path: path)
        }
    }
}
