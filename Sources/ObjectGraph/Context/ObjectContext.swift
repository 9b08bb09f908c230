import ExpressionLanguage
import Foundation
import OrderedCollections

/// A scratch pad of objects over one store: insert, fetch, change, delete, then save.
///
///     let context = ObjectContext(store: store)
///     let book = try context.insert("Book")
///     try book.setValue("The Trial", forKey: "title")
///     try context.save()
///     let kafka = try context.fetch(FetchRequest(entityName: "Book", predicate: "title BEGINSWITH 'The'"))
///
/// Fetches see objects inserted or changed in the context and not saved yet, as Core
/// Data's do. Predicates are evaluated with the expression language's semantics; objects
/// that are not changed are held weakly, so memory follows what the caller keeps.
/// A context is used from one thread at a time.
public final class ObjectContext {
    public let store: Store
    /// The registry FUNCTION calls in fetch predicates resolve in.
    public let functions: FunctionRegistry

    let bindings: [String: EntityBinding]
    /// Bindings by entity number (`Z_ENT`), which are small: an array, not a dictionary,
    /// because every row read looks one up.
    let bindingsByNumber: [EntityBinding?]
    /// The binding `insert(_:)` used last: imports insert one entity many times over.
    @exclusivity(unchecked) var lastInserted: EntityBinding?
    /// Whether any relationship is ordered (positions to assign at save).
    let hasOrderedRelationships: Bool
    /// What a fetch reads of each table, by table name.
    let tableColumns: [String: TableColumns]

    // The registry and the pending objects are asked about on every row a cursor reads,
    // and the pending objects and their byte count change on every insert and set; a
    // context is used from one thread, so they skip the runtime's exclusivity checks.
    /// The objects someone holds, by ID, so that a lookup gives the object they hold.
    /// Unowned: an object leaves the registry in its deinit (``forget(_:)``). Weak
    /// references did the same job, but they give every object a side table, whose
    /// allocation and slow-path reference counting were a tenth of a migration's stage 2.
    @exclusivity(unchecked) var registry: [ObjectID: Unmanaged<ManagedObject>] = [:]
    /// Inserted, changed and deleted objects, held until saved.
    @exclusivity(unchecked) var pending = PendingObjects()
    var keyCounters: [String: KeyCounter] = [:]
    /// Join-table rows to insert (true) or delete (false) at the next save.
    @exclusivity(unchecked) var joinChanges: [JoinRow: Bool] = [:]
    /// Positions to write into join rows' `Z_FOK_` columns at the next save, by row and
    /// column: the order of ordered many-to-many relationships.
    @exclusivity(unchecked) var joinPositions: [JoinRow: [String: Int64]] = [:]
    private var statements: [String: Statement] = [:]

    public init(store: Store, functions: FunctionRegistry = .standard) {
        self.store = store
        self.functions = functions
        var bindings: [String: EntityBinding] = [:]
        for entity in store.model.entities {
            bindings[entity.name] = EntityBinding(
                entity: entity, model: store.model, layout: store.layout, externalData: store.externalData)
        }
        self.bindings = bindings
        var byNumber: [EntityBinding?] = Array(
            repeating: nil, count: (bindings.values.map(\.layout.number).max() ?? 0) + 1)
        for binding in bindings.values { byNumber[binding.layout.number] = binding }
        self.bindingsByNumber = byNumber
        hasOrderedRelationships = store.model.entities.contains { $0.relationships.contains(where: \.isOrdered) }
        var tableColumns: [String: TableColumns] = [:]
        for table in store.layout.tables.values {
            let lazy = Set(
                bindings.values.filter { $0.layout.table == table.name }
                    .flatMap { b in b.lazySlots.map { b.attributeColumns[$0] } })
            tableColumns[table.name] = TableColumns(table: table, lazyColumns: lazy)
        }
        self.tableColumns = tableColumns
        for binding in bindings.values { binding.context = self }
    }

    deinit {
        // Objects reach their context through their binding (see ManagedObject.context),
        // and keep their binding: it must not keep the connection open either.
        for binding in bindings.values {
            binding.context = nil
            binding.insertStatement = nil
            binding.updateStatements = [:]
        }
    }

    /// The binding of entity number `number`, if the model has one.
    func binding(number: Int64) -> EntityBinding? {
        number >= 0 && number < bindingsByNumber.count ? bindingsByNumber[Int(number)] : nil
    }

    public var database: Database { store.database }

    /// Whether anything is waiting to be saved.
    public var hasChanges: Bool { !pending.isEmpty || !joinChanges.isEmpty || !joinPositions.isEmpty }

    /// How many objects are inserted, changed or deleted and not saved yet: what a
    /// caller saving in chunks watches.
    public var pendingObjectCount: Int { pending.count }

    /// Rows written by row inserters and not committed yet (see ``RowInserter``).
    @exclusivity(unchecked) public internal(set) var rowsWritten = 0

    /// About how many bytes of strings and data were set since the last save: with
    /// ``pendingObjectCount``, what a caller saving in chunks of bounded memory watches.
    @exclusivity(unchecked) public internal(set) var pendingValueBytes = 0

    /// Whether ``save()`` checks required values first. A migration turns this off while
    /// it builds objects in several passes and validates the store at the end, as Core
    /// Data's migration manager does.
    public var validatesOnSave = true

    /// Whether ``save()`` raises the version (`Z_OPT`) of a row it updates. A migration
    /// turns this off: every row of its new store is new, written by one migration as
    /// Core Data's migration manager writes it with one save, so each stays at 1 however
    /// many chunked saves touched it (and whichever way, objects or SQL, it was written).
    public var versionsUpdates = true {
        didSet { for binding in bindings.values { binding.updateStatements = [:] } }
    }

    func binding(_ entityName: String) throws(ContextError) -> EntityBinding {
        guard let binding = bindings[entityName] else {
            throw ContextError(
                .unknownEntity,
                "unknown entity '\(entityName)'; model \(store.model.version) has \(bindings.keys.sorted().joined(separator: ", "))"
            )
        }
        return binding
    }

    /// The statement for `sql`, prepared once per context and reset for reuse.
    func statement(_ sql: String) throws(ContextError) -> Statement {
        do {
            return try cachedStatement(sql)
        } catch {
            throw ContextError(error)
        }
    }

    /// ``statement(_:)`` for callers that handle SQLite's errors themselves.
    func cachedStatement(_ sql: String) throws(SQLiteError) -> Statement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        let statement = try database.prepare(sql)
        statements[sql] = statement
        return statement
    }
}
