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
    private let bindingsByNumber: [EntityBinding?]
    /// The binding `insert(_:)` used last: imports insert one entity many times over.
    @exclusivity(unchecked) private var lastInserted: EntityBinding?
    /// Whether any relationship is ordered (positions to assign at save).
    private let hasOrderedRelationships: Bool
    /// What a fetch reads of each table, by table name.
    let readers: [String: TableReader]

    // The registry and the pending objects are asked about on every row a cursor reads,
    // and the pending objects and their byte count change on every insert and set; a
    // context is used from one thread, so they skip the runtime's exclusivity checks.
    /// The objects someone holds, by ID, so that a lookup gives the object they hold.
    /// Unowned: an object leaves the registry in its deinit (``forget(_:)``). Weak
    /// references did the same job, but they give every object a side table, whose
    /// allocation and slow-path reference counting were a tenth of a migration's stage 2.
    @exclusivity(unchecked) private var registry: [ObjectID: Unmanaged<ManagedObject>] = [:]
    /// Inserted, changed and deleted objects, held until saved.
    @exclusivity(unchecked) var pending = PendingObjects()
    private var keyCounters: [String: KeyCounter] = [:]
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
            bindings[entity.name] = EntityBinding(entity: entity, model: store.model, layout: store.layout)
        }
        self.bindings = bindings
        var byNumber: [EntityBinding?] = Array(repeating: nil, count: (bindings.values.map(\.layout.number).max() ?? 0) + 1)
        for binding in bindings.values { byNumber[binding.layout.number] = binding }
        self.bindingsByNumber = byNumber
        hasOrderedRelationships = store.model.entities.contains { $0.relationships.contains(where: \.isOrdered) }
        var readers: [String: TableReader] = [:]
        for table in store.layout.tables.values {
            let lazy = Set(bindings.values.filter { $0.layout.table == table.name }
                .flatMap { b in b.lazySlots.map { b.attributeColumns[$0] } })
            readers[table.name] = TableReader(table: table, lazyColumns: lazy)
        }
        self.readers = readers
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
    @exclusivity(unchecked) public private(set) var rowsWritten = 0

    /// About how many bytes of strings and data were set since the last save: with
    /// ``pendingObjectCount``, what a caller saving in chunks of bounded memory watches.
    @exclusivity(unchecked) public private(set) var pendingValueBytes = 0

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
            throw ContextError(.unknownEntity,
                "unknown entity '\(entityName)'; model \(store.model.version) has \(bindings.keys.sorted().joined(separator: ", "))")
        }
        return binding
    }

    func statement(_ sql: String) throws(ContextError) -> Statement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        do {
            let statement = try database.prepare(sql)
            statements[sql] = statement
            return statement
        } catch {
            throw ContextError(error)
        }
    }

    // MARK: - Inserting

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
        let key = counter.next
        counter.next += 1
        let id = ObjectID(entityName: binding.entity.name, primaryKey: key, table: binding.layout.table)
        let object = ManagedObject(objectID: id, binding: binding, values: SlotValues(copying: binding.defaultValues),
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
        try openRowTransaction()
        let key = counter.next
        counter.next += 1
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
    private func commitRows() throws(ContextError) {
        guard rowsWritten > 0 else { return }
        do {
            for (table, counter) in keyCounters where counter.highestRow > 0 {
                try updatePrimaryKeyCounter(table: table, to: counter.highestRow)
                counter.highestRow = 0
            }
            try database.execute("COMMIT")
        } catch {
            throw ContextError(error)
        }
        rowsWritten = 0
    }

    private func updatePrimaryKeyCounter(table: String, to key: Int64) throws(SQLiteError) {
        let roots = bindings.values.filter { $0.layout.table == table && $0.entity.parent == nil }
        for root in roots {
            let statement = try self.rawStatement("UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, ?) WHERE Z_ENT = ?")
            try statement.bind(key, at: 1)
            try statement.bind(Int64(root.layout.number), at: 2)
            try statement.run()
        }
    }

    private func rawStatement(_ sql: String) throws(SQLiteError) -> Statement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        let statement = try database.prepare(sql)
        statements[sql] = statement
        return statement
    }

    /// The next primary key of each table, found once from the table and Z_PRIMARYKEY.
    final class KeyCounter {
        @exclusivity(unchecked) var next: Int64
        /// The highest key written by row inserters since the last save.
        @exclusivity(unchecked) var highestRow: Int64 = 0
        init(next: Int64) { self.next = next }
    }

    func keyCounter(table: String) throws(ContextError) -> KeyCounter {
        if let counter = keyCounters[table] { return counter }
        let numbers = bindings.values.filter { $0.layout.table == table }.map { String($0.layout.number) }
        do {
            let fromTable = try database.scalar("SELECT max(Z_PK) FROM \(table)")
            let fromCounter = try database.scalar("SELECT max(Z_MAX) FROM Z_PRIMARYKEY WHERE Z_ENT IN (\(numbers.joined(separator: ",")))")
            var highest: Int64 = 0
            for value in [fromTable, fromCounter] { if case .integer(let i)? = value { highest = max(highest, i) } }
            let counter = KeyCounter(next: highest + 1)
            keyCounters[table] = counter
            return counter
        } catch {
            throw ContextError(error)
        }
    }

    // MARK: - Registering and loading

    private func register(_ object: ManagedObject) {
        registry[object.objectID] = Unmanaged.passUnretained(object)
        object.isRegistered = true
    }

    /// Takes `object` out of the registry as it goes (its deinit calls this): the entry
    /// for its ID, if it is still this object's.
    func forget(_ object: ManagedObject) {
        guard let entry = registry[object.objectID], entry.toOpaque() == Unmanaged.passUnretained(object).toOpaque() else { return }
        registry[object.objectID] = nil
    }

    /// Entries in the registry (for tests that it holds only live objects).
    var registeredObjectCount: Int { registry.count }

    func registered(_ id: ObjectID) -> ManagedObject? {
        pending.object(id) ?? registry[id]?.takeUnretainedValue()
    }

    /// The object with `id`, from the context or read from the store.
    public func object(with id: ObjectID) throws(ContextError) -> ManagedObject {
        if let object = registered(id) {
            if object.isDeleted { throw ContextError(.noSuchObject, "the object was deleted", object: id.description) }
            return object
        }
        guard let reader = readers[id.table] else { throw ContextError(.noSuchObject, "no such table", object: id.description) }
        let statement: Statement
        let found: Bool
        do throws(SQLiteError) {
            statement = try reader.lookupStatement(in: database)
            try statement.bind(id.primaryKey, at: 1)
            found = try statement.step()
        } catch {
            throw ContextError(error)
        }
        guard found else {
            statement.reset()
            throw ContextError(.noSuchObject, "no such object in the store", object: id.description)
        }
        let object = try makeObject(statement, reader)
        statement.reset()
        register(object)
        return object
    }

    /// An object for the current row of `statement` (reading `reader.selectList`). A
    /// `spare` of the row's entity, an object the caller made earlier and knows nobody
    /// else holds, is filled in place of making a new one (see ``FetchCursor``). `onRow`
    /// leaves the attribute values in the row, where the object reads them while the
    /// statement stays on it: the caller must ``ManagedObject/detachFromRow()`` the
    /// object before the statement moves if anyone else may still hold it.
    private func makeObject(_ statement: Statement, _ reader: TableReader, reusing spare: ManagedObject? = nil,
                            onRow: Bool = false) throws(ContextError) -> ManagedObject {
        let key = statement.int64(at: 0)
        let number = statement.int64(at: 1)
        guard let binding = binding(number: number) else {
            throw ContextError(.noSuchObject, "row \(key) of \(reader.table) has the unknown entity number \(number)")
        }
        // Where each attribute is in the row (-1: read when first asked for), worked
        // out once per entity: its rows always come from its table's reader.
        if binding.rowReads.count != binding.attributeTypes.count {
            var reads: [(column: Int32, type: AttributeType)] = []
            for slot in binding.attributeColumns.indices {
                var column: Int32 = -1
                if !binding.lazySlots.contains(slot) {
                    // A row whose Z_ENT names an entity of another table: the store's entity
                    // numbers are not the model's.
                    guard let index = reader.index[binding.attributeColumns[slot]] else {
                        throw ContextError(.noSuchObject, "row \(key) of \(reader.table) has the entity number \(number) (\(binding.entity.name)), "
                            + "whose column \(binding.attributeColumns[slot]) is not in \(reader.table); the store's entity numbers (Z_PRIMARYKEY) do not match the model's")
                    }
                    column = index
                }
                reads.append((column: column, type: binding.attributeTypes[slot]))
            }
            binding.rowReads = reads
        }
        let object: ManagedObject
        if let spare, spare.binding === binding {
            object = spare
            object.objectID.primaryKey = key  // same entity and table: no new ID to make
            if onRow {
                // Mostly empty already: values read from the row are not kept. (Z_OPT is
                // read from the row too, when asked for.)
                for slot in object.values.indices {
                    if case .some = object.values[slot] { object.values[slot] = Value?.none }
                }
            } else {
                object.version = statement.int64(at: EntityBinding.versionColumn)
            }
        } else {
            // `.none`, not `nil`: Value is ExpressibleByNilLiteral, and a `nil` here would
            // be `.null`, a value read as null rather than one not read yet.
            object = ManagedObject(objectID: ObjectID(entityName: binding.entity.name, primaryKey: key, table: reader.table), binding: binding,
                                   values: SlotValues(unread: binding.rowReads.count),
                                   toOne: [ObjectID?](repeating: nil, count: binding.toOnes.count),
                                   version: onRow ? 0 : statement.int64(at: EntityBinding.versionColumn))
        }
        if onRow {
            // The values (and Z_OPT) stay in the row until asked for, or until the cursor
            // moves on.
            object.row = Unmanaged.passUnretained(statement)
        } else {
            object.row = nil
            for slot in object.values.indices { object.values[slot] = binding.rowValue(statement, slot: slot) }
        }
        for slot in binding.toOnes.indices { object.toOne[slot] = toOneDestination(statement, reader, binding, slot) }
        return object
    }

    /// The destination of the to-one relationship in `slot` in the current row.
    private func toOneDestination(_ statement: Statement, _ reader: TableReader, _ binding: EntityBinding, _ slot: Int) -> ObjectID? {
        let columns = binding.toOneColumns[slot]
        let index = reader.index[columns.key]!
        if statement.isNull(index) { return nil }
        var destination = binding.toOnes[slot].destination
        if let entityColumn = columns.entity, let e = reader.index[entityColumn], !statement.isNull(e),
            let concrete = self.binding(number: statement.int64(at: e))
        {
            destination = concrete.entity.name
        }
        let table = bindings[destination]!.layout.table
        return ObjectID(entityName: destination, primaryKey: statement.int64(at: index), table: table)
    }

    // MARK: - Fetching

    /// The objects `request` selects.
    public func fetch(_ request: FetchRequest) throws(ContextError) -> [ManagedObject] {
        var results: [ManagedObject] = []
        let plan = try FetchPlan(request, context: self)
        try scan(plan, plan.rows, register: true) { results.append($0); return true }
        results += try pendingMatches(plan)
        if !request.sortDescriptors.isEmpty { try sort(&results, by: plan.sortKeys) }
        if let limit = request.fetchLimit, results.count > limit { results.removeLast(results.count - limit) }
        return results
    }

    /// How many objects `request` selects.
    public func count(_ request: FetchRequest) throws(ContextError) -> Int {
        let plan = try FetchPlan(request, context: self)
        var count = 0
        if plan.predicate == nil {
            // Without a predicate SQLite counts; pending objects adjust the count.
            let numbers = plan.numbers.map(String.init).joined(separator: ",")
            do {
                if case .integer(let n)? = try database.scalar("SELECT count(*) FROM \(plan.table) WHERE Z_ENT IN (\(numbers))") {
                    count = Int(n)
                }
            } catch {
                throw ContextError(error)
            }
            for object in pending.all where plan.numbers.contains(object.binding.layout.number) {
                if object.isInserted && !object.isDeleted { count += 1 }
                if object.isDeleted && !object.isInserted { count -= 1 }
            }
        } else if !tablesWithUnsavedChanges.contains(plan.table), let (decided, undecided) = plan.countStatements(in: database) {
            // SQLite counts the rows whose answer it knows; the predicate decides the others.
            do {
                if try decided.step() { count = Int(decided.int64(at: 0)) }
            } catch {
                throw ContextError(error)
            }
            try scan(plan, undecided, register: false) { _ in count += 1; return true }
        } else {
            try scan(plan, plan.rows, register: false) { _ in count += 1; return true }
            count += try pendingMatches(plan).count
        }
        if let limit = request.fetchLimit { count = min(count, limit) }
        return count
    }

    /// A cursor over the objects `request` selects, reading rows as it goes: memory stays
    /// flat however many rows there are, because objects the cursor hands out are not kept
    /// by the context (unless changed). Sort descriptors are not applied; objects come in
    /// primary-key order, then the unsaved objects that match.
    public func makeCursor(_ request: FetchRequest) throws(ContextError) -> FetchCursor {
        try FetchCursor(plan: FetchPlan(request, context: self), context: self)
    }

    /// Steps through `statement` (the plan's rows, or some of them) and hands `visit` each
    /// saved object the predicate accepts, skipping objects that have unsaved changes (see
    /// ``pendingMatches``).
    func scan(_ plan: FetchPlan, _ statement: Statement, register: Bool, _ visit: (ManagedObject) throws(ContextError) -> Bool) throws(ContextError) {
        while true {
            do {
                guard try statement.step() else { return }
            } catch {
                throw ContextError(error)
            }
            var made = false
            guard let object = try nextScanned(statement, plan, register: register, made: &made) else { continue }
            if !(try visit(object)) { return }
        }
    }

    /// The object of the current row of `statement` if the plan's predicate accepts it. A
    /// `spare` is refilled instead of making a new object (see ``makeObject``); `made` says
    /// whether the object was read from the row (rather than found in the context).
    func nextScanned(_ statement: Statement, _ plan: FetchPlan, register: Bool,
                     reusing spare: ManagedObject? = nil, onRow: Bool = false, made: inout Bool) throws(ContextError) -> ManagedObject? {
        // Cursors over a context that holds nothing (a migration's source) skip the lookups.
        let known = pending.changed.isEmpty && registry.isEmpty
            ? nil : ObjectID(entityName: plan.entityName, primaryKey: statement.int64(at: 0), table: plan.table)
        if let known, pending.hasChanges(savedRow: known) { return nil }
        let object: ManagedObject
        if let known, let existing = registry[known]?.takeUnretainedValue() {
            object = existing
            made = false
        } else {
            object = try makeObject(statement, plan.reader, reusing: spare, onRow: onRow)
            made = true
            if register { self.register(object) }
        }
        guard try plan.acceptsSelected(object) else { return nil }
        return object
    }

    /// Tables that unsaved changes touch (objects of their entities, rows of join tables):
    /// SQL reads them as they were saved, so fetches do not follow relationships into them
    /// in SQL.
    var tablesWithUnsavedChanges: Set<String> {
        pending.tables.union(joinChanges.keys.map(\.table))
    }

    /// Inserted and changed objects of the plan's entities that its predicate accepts.
    func pendingMatches(_ plan: FetchPlan) throws(ContextError) -> [ManagedObject] {
        var matches: [ManagedObject] = []
        for object in pending.all where !object.isDeleted && plan.numbers.contains(object.binding.layout.number) {
            if try plan.accepts(object) { matches.append(object) }
        }
        // Inserted objects of one table are in key order already.
        if !pending.changed.isEmpty { matches.sort { $0.objectID.primaryKey < $1.objectID.primaryKey } }
        return matches
    }

    private func sort(_ objects: inout [ManagedObject], by keys: [(CompiledExpression, Bool)]) throws(ContextError) {
        var failure: ContextError?
        let decorated = objects.map { object in
            (object, keys.map { key in
                (try? key.0.evaluate(with: .object(ObjectReference(object)))) ?? .null
            })
        }
        let sorted = decorated.sorted { (a: (ManagedObject, [Value]), b: (ManagedObject, [Value])) -> Bool in
            for (i, key) in keys.enumerated() {
                do throws(ExpressionError) {
                    let order = try Value.sortOrder(a.1[i], b.1[i])
                    if order != .orderedSame { return key.1 ? order == .orderedAscending : order == .orderedDescending }
                } catch {
                    failure = failure ?? ContextError(.predicate, "cannot sort: \(error.message)")
                }
            }
            return a.0.objectID.primaryKey < b.0.objectID.primaryKey
        }
        if let failure { throw failure }
        objects = sorted.map { $0.0 }
    }

    // MARK: - Reading and writing values

    func value(of object: ManagedObject, forKey key: String) throws(ContextError) -> Value {
        let binding = object.binding
        if let slot = binding.slot(ofAttribute: key) {
            if let value = object.storedValue(slot) { return value }
            let value = try loadLazy(object, slot)
            object.values[slot] = value
            return value
        }
        if let slot = binding.toOneSlots[key] {
            guard let id = object.toOne[slot] else { return .null }
            return .object(ObjectReference(try self.object(with: id)))
        }
        if let relationship = binding.toManys[key] {
            let objects = try destinations(of: object, relationship).map { id throws(ContextError) in
                Value.object(ObjectReference(try self.object(with: id)))
            }
            return relationship.isOrdered ? .array(objects) : .set(OrderedSet(objects))
        }
        throw ContextError(.unknownKey, "\(binding.entity.name) has no attribute or relationship '\(key)'",
                           object: object.objectID.description, key: key)
    }

    private func loadLazy(_ object: ManagedObject, _ slot: Int) throws(ContextError) -> Value {
        if object.isInserted { return .null }
        return try savedValue(of: object.binding, slot: slot, primaryKey: object.objectID.primaryKey)
    }

    /// The saved value of the attribute in `slot` of the row `primaryKey`, read on its own
    /// (an attribute not read with the row); null when there is no such row.
    func savedValue(of binding: EntityBinding, slot: Int, primaryKey: Int64) throws(ContextError) -> Value {
        let statement = try statement("SELECT \(binding.attributeColumns[slot]) FROM \(binding.layout.table) WHERE Z_PK = ?")
        defer { statement.reset() }
        do {
            try statement.bind(primaryKey, at: 1)
            guard try statement.step() else { return .null }
        } catch {
            throw ContextError(error)
        }
        return try binding.decoded(EntityBinding.read(statement, 0, as: binding.attributeTypes[slot]), slot: slot,
                                   primaryKey: primaryKey, storePath: store.path)
    }

    /// Sets the attribute in `slot` of a live object, coerced to its type.
    func setAttribute(_ value: Value, of object: ManagedObject, slot: Int) throws(ContextError) {
        let binding = object.binding
        do {
            let stored = try AttributeCoercion.coerce(value, to: binding.attributeTypes[slot], name: binding.attributes[slot].name)
            switch stored {
            case .data(let d): pendingValueBytes += d.count
            case .string(let s): pendingValueBytes += s.utf8.count
            default: break
            }
            object.values[slot] = consume stored  // counted first, so the value moves in without a copy
        } catch {
            var e = error
            e.object = object.objectID.description
            throw e
        }
        markChanged(object, slot)
    }

    func setValue(_ value: Value, of object: ManagedObject, forKey key: String) throws(ContextError) {
        let binding = object.binding
        guard !object.isDeleted else {
            throw ContextError(.noSuchObject, "the object was deleted", object: object.objectID.description, key: key)
        }
        if let slot = binding.slot(ofAttribute: key) {
            try setAttribute(value, of: object, slot: slot)
            return
        }
        if let slot = binding.toOneSlots[key] {
            let destination = try destinationObject(value, binding.toOnes[slot], object)
            try setToOne(object, slot, destination)
            return
        }
        if let relationship = binding.toManys[key] {
            let members = try destinationObjects(value, relationship, object)
            try setToMany(object, relationship, members)
            return
        }
        throw ContextError(.unknownKey, "\(binding.entity.name) has no attribute or relationship '\(key)'",
                           object: object.objectID.description, key: key)
    }

    private func markChanged(_ object: ManagedObject, _ slot: Int) {
        // An inserted object is pending already and is written whole.
        if object.isInserted { return }
        object.changedSlots.insert(slot)
        pending.add(changed: object)
    }

    private func destinationObject(_ value: Value, _ relationship: RelationshipDescription, _ owner: ManagedObject) throws(ContextError) -> ManagedObject? {
        switch value {
        case .null: return nil
        case .object(let reference):
            guard let object = reference.object as? ManagedObject, object.context === self else {
                throw ContextError(.type, "'\(relationship.name)' needs an object of this context, not \(reference.object.objectDescription)",
                                   object: owner.objectID.description, key: relationship.name)
            }
            let allowed = Set(store.model.descendants(of: store.model.entity(named: relationship.destination)!).map(\.name))
            guard allowed.contains(object.entity.name) else {
                throw ContextError(.type, "'\(relationship.name)' needs a \(relationship.destination), not a \(object.entity.name)",
                                   object: owner.objectID.description, key: relationship.name)
            }
            return object
        default:
            throw ContextError(.type, "'\(relationship.name)' needs an object or nil, not \(value.kind.rawValue)",
                               object: owner.objectID.description, key: relationship.name)
        }
    }

    private func destinationObjects(_ value: Value, _ relationship: RelationshipDescription, _ owner: ManagedObject) throws(ContextError) -> [ManagedObject] {
        if value.isNull { return [] }
        guard let elements = value.collectionElements else {
            throw ContextError(.type, "'\(relationship.name)' is to-many and needs a set or an array of objects, not \(value.kind.rawValue)",
                               object: owner.objectID.description, key: relationship.name)
        }
        var seen = Set<ObjectID>()
        var objects: [ManagedObject] = []
        for element in elements {
            guard let object = try destinationObject(element, relationship, owner) else { continue }
            if seen.insert(object.objectID).inserted { objects.append(object) }
        }
        return objects
    }

    /// The inverse of `relationship` as declared on its destination.
    private func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        guard let name = relationship.inverse, let destination = store.model.entity(named: relationship.destination) else { return nil }
        return store.model.allRelationships(of: destination).first { $0.name == name }
    }

    /// Sets a to-one relationship and keeps its inverse in step.
    private func setToOne(_ object: ManagedObject, _ slot: Int, _ destination: ManagedObject?) throws(ContextError) {
        let relationship = object.binding.toOnes[slot]
        let old = object.toOne[slot]
        if old == destination?.objectID { return }
        object.toOne[slot] = destination?.objectID
        // In an ordered inverse, an object that moves in goes last (see ObjectContext+Order).
        object.positions[slot] = nil
        markChanged(object, object.values.count + slot)
        if let destination { pending.note(object, pointsTo: destination.objectID) }
        // One-to-one: the new destination's inverse points back; the old partners let go.
        if let inverse = inverse(of: relationship), !inverse.isToMany {
            if let old, let oldObject = try? self.object(with: old), let s = oldObject.binding.toOneSlots[inverse.name],
                oldObject.toOne[s] == object.objectID
            {
                oldObject.toOne[s] = nil
                markChanged(oldObject, oldObject.values.count + s)
            }
            if let destination, let s = destination.binding.toOneSlots[inverse.name] {
                if let previous = destination.toOne[s], previous != object.objectID,
                    let previousObject = try? self.object(with: previous), let p = previousObject.binding.toOneSlots[relationship.name]
                {
                    previousObject.toOne[p] = nil
                    markChanged(previousObject, previousObject.values.count + p)
                }
                destination.toOne[s] = object.objectID
                markChanged(destination, destination.values.count + s)
                pending.note(destination, pointsTo: object.objectID)
            }
        }
        // One-to-many: the to-many side is read from this column, nothing else to do.
    }

    /// Replaces the members of a to-many relationship.
    private func setToMany(_ object: ManagedObject, _ relationship: RelationshipDescription, _ members: [ManagedObject]) throws(ContextError) {
        let current = try destinations(of: object, relationship)
        let wanted = Set(members.map(\.objectID))
        if let side = object.binding.layout.joinTables[relationship.name] {
            for id in current where !wanted.contains(id) { recordJoin(side, object.objectID, id, insert: false) }
            let existing = Set(current)
            for member in members where !existing.contains(member.objectID) {
                recordJoin(side, object.objectID, member.objectID, insert: true)
            }
            if let orderColumn = side.orderColumn {
                for (i, member) in members.enumerated() {
                    let row = JoinRow(side: side, source: object.objectID.primaryKey, destination: member.objectID.primaryKey)
                    joinPositions[row, default: [:]][orderColumn] = Int64(i + 1)
                }
            }
            pending.add(changed: object)
            return
        }
        // One-to-many: the members' inverse to-one columns hold the relationship (and, when
        // it is ordered, their Z_FOK_ columns the order).
        guard let inverse = inverse(of: relationship) else { return }
        for id in current where !wanted.contains(id) {
            let member = try self.object(with: id)
            if let s = member.binding.toOneSlots[inverse.name] { try setToOne(member, s, nil) }
        }
        for (i, member) in members.enumerated() {
            guard let s = member.binding.toOneSlots[inverse.name] else { continue }
            try setToOne(member, s, object)
            if member.binding.toOneColumns[s].order != nil {
                member.positions[s] = Int64(i + 1)
                markChanged(member, member.values.count + s)
            }
        }
    }

    private func recordJoin(_ side: StoreLayout.JoinTable.Side, _ source: ObjectID, _ destination: ObjectID, insert: Bool) {
        let row = JoinRow(side: side, source: source.primaryKey, destination: destination.primaryKey)
        if !insert { joinPositions[row] = nil }
        if let previous = joinChanges[row], previous != insert {
            joinChanges[row] = nil  // an insert and a delete of the same row cancel out
        } else {
            joinChanges[row] = insert
        }
    }

    /// The destinations of a to-many relationship: saved rows adjusted by unsaved changes.
    func destinations(of object: ManagedObject, _ relationship: RelationshipDescription) throws(ContextError) -> [ObjectID] {
        guard let destinationBinding = bindings[relationship.destination] else { return [] }
        let table = destinationBinding.layout.table
        var ids: [ObjectID] = []
        if let side = object.binding.layout.joinTables[relationship.name] {
            var keys: [Int64] = []
            var saved: [Int64: Int64] = [:]  // saved positions, when ordered
            if !object.isInserted {
                let sql = side.orderColumn.map {
                    "SELECT \(side.destinationColumn), \($0) FROM \(side.table) WHERE \(side.sourceColumn) = ? ORDER BY \($0), \(side.destinationColumn)"
                } ?? "SELECT \(side.destinationColumn) FROM \(side.table) WHERE \(side.sourceColumn) = ?"
                let statement = try statement(sql)
                defer { statement.reset() }
                do {
                    try statement.bind(object.objectID.primaryKey, at: 1)
                    while try statement.step() {
                        let key = statement.int64(at: 0)
                        keys.append(key)
                        if side.orderColumn != nil, !statement.isNull(1) { saved[key] = statement.int64(at: 1) }
                    }
                } catch {
                    throw ContextError(error)
                }
            }
            var keySet = Set(keys)
            var added: [Int64] = []
            for (row, insert) in joinChanges where row.table == side.table {
                guard let (source, destination) = row.pair(for: side), source == object.objectID.primaryKey else { continue }
                if insert, keySet.insert(destination).inserted { added.append(destination) }
                if !insert { keySet.remove(destination) }
            }
            keys = (keys + added.sorted()).filter { keySet.contains($0) }
            if let orderColumn = side.orderColumn {
                let source = object.objectID.primaryKey
                keys = Self.ordered(keys) { key in
                    self.joinPositions[JoinRow(side: side, source: source, destination: key)]?[orderColumn] ?? saved[key]
                }
            }
            for key in keys {
                ids.append(try identify(key, table: table, fallback: relationship.destination))
            }
        } else if let inverse = inverse(of: relationship), let column = destinationBinding.layout.toOneColumns[inverse.name] {
            var saved: [Int64: Int64] = [:]  // saved positions, when ordered
            if !object.isInserted {
                let numbers = destinationBinding.layout.numbers.map(String.init).joined(separator: ",")
                let order = column.order.map { ($0 + ", ", ", " + $0) } ?? ("", "")
                let statement = try statement(
                    "SELECT Z_PK, Z_ENT\(order.1) FROM \(table) WHERE \(column.key) = ? AND Z_ENT IN (\(numbers)) ORDER BY \(order.0)Z_PK")
                defer { statement.reset() }
                do {
                    try statement.bind(object.objectID.primaryKey, at: 1)
                    while try statement.step() {
                        let entity = binding(number: statement.int64(at: 1))?.entity.name ?? relationship.destination
                        let key = statement.int64(at: 0)
                        ids.append(ObjectID(entityName: entity, primaryKey: key, table: table))
                        if column.order != nil, !statement.isNull(2) { saved[key] = statement.int64(at: 2) }
                    }
                } catch {
                    throw ContextError(error)
                }
            }
            // Unsaved changes win: drop members whose column now points elsewhere, add new ones.
            ids.removeAll { id in
                guard let member = pending.object(id) else { return false }
                guard !member.isDeleted, let s = member.binding.toOneSlots[inverse.name] else { return true }
                return member.toOne[s] != object.objectID
            }
            var present = Set(ids)
            // The unsaved members, found first and then put in key order: sorting every
            // pending object for each call cost stage 2 of a migration a fifth of its time,
            // and walking them all (rather than those set to point here) a sixth.
            let unsaved = pending.objects(pointingTo: object.objectID).filter { member in
                guard !member.isDeleted, let s = member.binding.toOneSlots[inverse.name], member.toOne[s] == object.objectID else { return false }
                return destinationBinding.layout.numbers.contains(member.binding.layout.number) && present.insert(member.objectID).inserted
            }
            ids += unsaved.sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }.map(\.objectID)
            if column.order != nil {
                ids = Self.ordered(ids) { id in
                    if let member = self.pending.object(id), let s = member.binding.toOneSlots[inverse.name], let position = member.positions[s] {
                        return position
                    }
                    return saved[id.primaryKey]
                }
            }
        }
        return ids
    }

    private func identify(_ key: Int64, table: String, fallback: String) throws(ContextError) -> ObjectID {
        let probe = ObjectID(entityName: fallback, primaryKey: key, table: table)
        if let object = registered(probe) { return object.objectID }
        return try object(with: probe).objectID
    }

    // MARK: - Deleting

    /// Deletes `object`, applying its relationships' delete rules: nullify (the default)
    /// clears the inverse, cascade deletes the destinations, deny refuses while there are
    /// destinations, no action leaves them.
    public func delete(_ object: ManagedObject) throws(ContextError) {
        guard !object.isDeleted else { return }
        // Deny is checked before anything changes.
        for relationship in store.model.allRelationships(of: object.entity) where relationship.deleteRule == .deny {
            if try !related(object, relationship).isEmpty {
                throw ContextError(.deleteDenied,
                    "cannot delete: '\(relationship.name)' has the delete rule deny and is not empty",
                    object: object.objectID.description, key: relationship.name)
            }
        }
        var cascade: [ManagedObject] = []
        for relationship in store.model.allRelationships(of: object.entity) where !relationship.isTransient {
            let destinations = try related(object, relationship)
            if relationship.deleteRule == .cascade { cascade += destinations }
            if let side = object.binding.layout.joinTables[relationship.name] {
                for d in destinations { recordJoin(side, object.objectID, d.objectID, insert: false) }
            } else if relationship.deleteRule != .noAction, let inverse = inverse(of: relationship) {
                for d in destinations where !d.isDeleted {
                    if let s = d.binding.toOneSlots[inverse.name], d.toOne[s] == object.objectID {
                        d.toOne[s] = nil
                        markChanged(d, d.values.count + s)
                    }
                }
            }
        }
        object.isDeleted = true
        pending.add(changed: object)
        for d in cascade { try delete(d) }
    }

    private func related(_ object: ManagedObject, _ relationship: RelationshipDescription) throws(ContextError) -> [ManagedObject] {
        if relationship.isToMany {
            return try destinations(of: object, relationship).map { id throws(ContextError) in try self.object(with: id) }
        }
        guard let slot = object.binding.toOneSlots[relationship.name], let id = object.toOne[slot] else { return [] }
        return [try self.object(with: id)]
    }

    // MARK: - Saving

    /// Writes every change in one transaction. On failure nothing is written and the
    /// changes stay in the context. Saved objects that nobody else holds are released.
    public func save() throws(ContextError) {
        try commitRows()
        guard hasChanges else { return }
        if validatesOnSave { try validatePending() }
        if hasOrderedRelationships { try assignAppendedPositions() }
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
                    let sql = insert
                        ? "INSERT OR IGNORE INTO \(row.table) (\(row.firstColumn), \(row.secondColumn)) VALUES (?, ?)"
                        : "DELETE FROM \(row.table) WHERE \(row.firstColumn) = ? AND \(row.secondColumn) = ?"
                    let statement = try self.statement(sql)
                    try statement.bind(row.first, at: 1)
                    try statement.bind(row.second, at: 2)
                    try statement.run()
                }
                try writeJoinPositions()
                for (table, key) in highest {
                    let roots = bindings.values.filter { $0.layout.table == table && $0.entity.parent == nil }
                    for root in roots {
                        let statement = try self.statement("UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, ?) WHERE Z_ENT = ?")
                        try statement.bind(key, at: 1)
                        try statement.bind(Int64(root.layout.number), at: 2)
                        try statement.run()
                    }
                }
            }
        } catch let error as SQLiteError {
            throw ContextError(error)
        } catch let error as ContextError {
            throw error
        } catch {
            throw ContextError(.sqlite, "\(error)")
        }
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
    private func validatePending() throws(ContextError) {
        for object in pending.all where !object.isDeleted {
            let binding = object.binding
            for slot in binding.requiredAttributeSlots {
                if (object.isInserted || object.changedSlots.contains(slot)), object.values.isNull(slot) {
                    let name = binding.attributeNames[slot]
                    throw ContextError(.validation, "'\(name)' is required", object: object.objectID.description, key: name)
                }
            }
            for slot in binding.requiredToOneSlots {
                if (object.isInserted || object.changedSlots.contains(object.values.count + slot)), object.toOne[slot] == nil {
                    let name = binding.toOnes[slot].name
                    throw ContextError(.validation, "'\(name)' is required", object: object.objectID.description, key: name)
                }
            }
        }
        try validateRelationshipCounts()
    }

    private func writeInsert(_ object: ManagedObject) throws {
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
            try EntityBinding.bind(binding.stored(object.values[slot] ?? .null, slot: slot), as: type, to: statement, at: index)
            index += 1
        }
        try bindToOnes(object, statement, &index, onlyChanged: false)
        try statement.run()
    }

    private func bindToOnes(_ object: ManagedObject, _ statement: Statement, _ index: inout Int32, onlyChanged: Bool) throws {
        for (slot, c) in object.binding.toOneColumns.enumerated() {
            if onlyChanged && !object.changedSlots.contains(object.values.count + slot) { continue }
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

    private func writeUpdate(_ object: ManagedObject) throws {
        let binding = object.binding
        let attributeSlots = binding.attributes.indices.filter { object.changedSlots.contains($0) }
        // The UPDATE of these columns, prepared once per set of changed slots (as a bit
        // mask when they fit in one): stage 2 of a migration updates every destination it
        // links, the same columns each time.
        var mask: UInt64? = 0
        for slot in object.changedSlots { mask = slot < 64 ? mask.map { $0 | 1 << UInt64(slot) } : nil }
        let statement: Statement
        if let mask, let cached = binding.updateStatements[mask] {
            statement = cached  // reset by its last run
        } else {
            var assignments = attributeSlots.map { "\(binding.attributeColumns[$0]) = ?" }
            for (slot, c) in binding.toOneColumns.enumerated() where object.changedSlots.contains(object.values.count + slot) {
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
            try EntityBinding.bind(binding.stored(object.values[slot] ?? .null, slot: slot), as: binding.attributes[slot].type, to: statement, at: index)
            index += 1
        }
        try bindToOnes(object, statement, &index, onlyChanged: true)
        try statement.bind(object.objectID.primaryKey, at: index)
        try statement.run()
    }

    private func writeDelete(_ object: ManagedObject) throws {
        let statement = try self.statement("DELETE FROM \(object.binding.layout.table) WHERE Z_PK = ?")
        try statement.bind(object.objectID.primaryKey, at: 1)
        try statement.run()
    }
}

/// The columns of one table that a fetch reads, and where each lands in a row.
struct TableReader {
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

/// One row of a join table, stored with its columns in a fixed order so that both sides
/// of a relationship record the same row.
struct JoinRow: Hashable {
    let table: String
    let firstColumn: String
    let secondColumn: String
    let first: Int64
    let second: Int64

    init(side: StoreLayout.JoinTable.Side, source: Int64, destination: Int64) {
        table = side.table
        if side.sourceColumn < side.destinationColumn {
            (firstColumn, secondColumn, first, second) = (side.sourceColumn, side.destinationColumn, source, destination)
        } else {
            (firstColumn, secondColumn, first, second) = (side.destinationColumn, side.sourceColumn, destination, source)
        }
    }

    /// `(source, destination)` as `side` sees the row, when the row is of that side's table.
    func pair(for side: StoreLayout.JoinTable.Side) -> (Int64, Int64)? {
        guard table == side.table else { return nil }
        return side.sourceColumn == firstColumn ? (first, second) : (second, first)
    }
}
