import ExpressionLanguage

// Fetching, counting and cursors: rows read by SQL, predicates decided by SQL or
// evaluated, unsaved objects merged in.
extension ObjectContext {
    /// The objects `request` selects.
    public func fetch(_ request: FetchRequest) throws(ContextError) -> [ManagedObject] {
        var results: [ManagedObject] = []
        let plan = try FetchPlan(request, context: self)
        try scan(plan, plan.rows, register: true) {
            results.append($0); return true
        }
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
                if case .integer(let n)? = try database.scalar(
                    "SELECT count(*) FROM \(plan.table) WHERE Z_ENT IN (\(numbers))")
                {
                    count = Int(n)
                }
            } catch {
                throw ContextError(error)
            }
            for object in pending.all where plan.numbers.contains(object.binding.layout.number) {
                if object.isInserted && !object.isDeleted { count += 1 }
                if object.isDeleted && !object.isInserted { count -= 1 }
            }
        } else if !tablesWithUnsavedChanges.contains(plan.table),
            let (decided, undecided) = plan.countStatements(in: database)
        {
            // SQLite counts the rows whose answer it knows; the predicate decides the others.
            do {
                if try decided.step() { count = Int(decided.int64(at: 0)) }
            } catch {
                throw ContextError(error)
            }
            try scan(plan, undecided, register: false) { _ in
                count += 1; return true
            }
        } else {
            try scan(plan, plan.rows, register: false) { _ in
                count += 1; return true
            }
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
    func scan(
        _ plan: FetchPlan, _ statement: Statement, register: Bool, _ visit: (ManagedObject) throws(ContextError) -> Bool
    ) throws(ContextError) {
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
    func nextScanned(
        _ statement: Statement, _ plan: FetchPlan, register: Bool,
        reusing spare: ManagedObject? = nil, onRow: Bool = false, made: inout Bool
    ) throws(ContextError) -> ManagedObject? {
        // Cursors over a context that holds nothing (a migration's source) skip the lookups.
        let known =
            pending.changed.isEmpty && registry.isEmpty
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

    func sort(_ objects: inout [ManagedObject], by keys: [(CompiledExpression, Bool)]) throws(ContextError) {
        var failure: ContextError?
        let decorated = objects.map { object in
            (
                object,
                keys.map { key in
                    (try? key.0.evaluate(with: .object(ObjectReference(object)))) ?? .null
                }
            )
        }
        let sorted = decorated.sorted { (a: (ManagedObject, [Value]), b: (ManagedObject, [Value])) -> Bool in
            for (i, key) in keys.enumerated() {
                do throws(ExpressionError) {
                    let order = try Value.sortOrder(a.1[i], b.1[i])
                    if order != .orderedSame { return key.1 ? order == .orderedAscending : order == .orderedDescending }
                } catch {
                    failure = failure ?? ContextError(.predicate, "cannot sort: \(error.message)", underlying: error)
                }
            }
            return a.0.objectID.primaryKey < b.0.objectID.primaryKey
        }
        if let failure { throw failure }
        objects = sorted.map { $0.0 }
    }
}
