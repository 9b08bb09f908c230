import ExpressionLanguage

/// A fetch request prepared against a context: the SQL that reads candidate rows, and the
/// compiled predicate that decides. SQL narrows by entity and by what it can translate of
/// the predicate (``PredicateTranslator``); the predicate, evaluated with the expression
/// language's semantics on each object SQL returns, is what decides, so every fetch
/// answers exactly as evaluating the predicate on each object would.
struct FetchPlan {
    let entityName: String
    let table: String
    let numbers: Set<Int>
    let reader: TableColumns
    /// What SQL knows of the predicate (``SQLNarrowing/always`` without one).
    let narrowing: SQLNarrowing
    /// The values of the narrowing's `?1`, `?2`, ….
    let parameters: [SQLiteValue]
    /// The candidate rows, in primary-key order, prepared with their parameters bound.
    let rows: Statement
    let predicate: CompiledPredicate?
    let evaluation: EvaluationContext?
    let sortKeys: [(CompiledExpression, Bool)]

    init(_ request: FetchRequest, context: ObjectContext) throws(ContextError) {
        let binding = try context.binding(request.entityName)
        entityName = request.entityName
        table = binding.layout.table
        let numbers = request.includesSubentities ? binding.layout.numbers : [binding.layout.number]
        self.numbers = Set(numbers)
        reader = context.tableColumns[table]!
        let entityTest = "t0.Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))"
        self.entityTest = entityTest
        let compiler = ExpressionCompiler(functions: context.functions)
        if let p = request.predicate {
            do {
                let compiled = try compiler.compile(p, source: request.predicateSource)
                predicate = compiled
                evaluation = compiled.makeContext()
            } catch {
                throw ContextError(
                    .predicate, "the fetch predicate does not compile: \(error.description)", underlying: error)
            }
        } else {
            predicate = nil
            evaluation = nil
        }
        var keys: [(CompiledExpression, Bool)] = []
        for descriptor in request.sortDescriptors {
            do {
                keys.append((try compiler.compileExpression(descriptor.keyPath), descriptor.ascending))
            } catch {
                throw ContextError(
                    .predicate, "the sort key '\(descriptor.keyPath)' does not compile: \(error.description)",
                    underlying: error)
            }
        }
        sortKeys = keys

        var narrowing = SQLNarrowing.always
        var parameters: [SQLiteValue] = []
        if let p = request.predicate {
            var translator = PredicateTranslator(
                bindings: context.bindings, unsavedTables: context.tablesWithUnsavedChanges)
            narrowing = translator.translate(p, on: binding)
            parameters = translator.parameters
        }
        let (selectList, table) = (reader.selectList, table)
        let select = { (condition: String) in
            "SELECT \(selectList) FROM \(table) t0 WHERE \(SQL.all([entityTest, condition])) ORDER BY t0.Z_PK"
        }
        do {
            rows = try Self.prepare(select(narrowing.whenTrue), parameters, in: context.database)
        } catch {
            // SQLite refuses statements nested too deeply or with too many parameters;
            // narrowing by entity alone still gives the right answer.
            (narrowing, parameters) = (.unknown, [])
            do {
                rows = try context.database.prepare(select("1"))
            } catch {
                throw ContextError(error)
            }
        }
        self.narrowing = narrowing
        self.parameters = parameters
    }

    /// `t0.Z_ENT IN (…)`: rows of the fetched entities.
    private let entityTest: String

    /// The condition SQL adds to the entity test, nil when it narrows by entity alone:
    /// `t0.ZPRICE > ?1 OR typeof(t0.ZPRICE) NOT IN ('real', 'null')`.
    var sqlWhere: String? { narrowing.whenTrue == "1" ? nil : narrowing.whenTrue }

    /// Statements that split a count: the rows SQL knows the predicate accepts (counted
    /// by SQLite), and the rows it cannot decide (for the predicate). Nil when SQL knows
    /// nothing, or SQLite refuses them.
    func countStatements(in database: Database) -> (decided: Statement, undecided: Statement)? {
        guard narrowing.whenFalse != "1" else { return nil }
        // An exact narrowing's rows are decided by `whenTrue` alone. (Testing `whenFalse` too
        // would cost a read of its columns on every row: SQLite loads a blob to say that
        // `ZIMAGE IS NULL` inside coalesce(…) is false.)
        let notRejected =
            narrowing.whenFalse == "0" || narrowing.isExact ? "1" : "coalesce(\(narrowing.whenFalse), 0) = 0"
        let undecidedRows = narrowing.isExact ? "0" : narrowing.whenFalse
        let decided = "SELECT count(*) FROM \(table) t0 WHERE \(SQL.all([entityTest, narrowing.whenTrue, notRejected]))"
        let undecided =
            "SELECT \(reader.selectList) FROM \(table) t0 "
            + "WHERE \(SQL.all([entityTest, narrowing.whenTrue, undecidedRows])) ORDER BY t0.Z_PK"
        guard let a = try? Self.prepare(decided, parameters, in: database),
            let b = try? Self.prepare(undecided, parameters, in: database)
        else { return nil }
        return (a, b)
    }

    private static func prepare(_ sql: String, _ parameters: [SQLiteValue], in database: Database) throws(SQLiteError)
        -> Statement
    {
        let statement = try database.prepare(sql)
        try statement.bind(upTo: parameters)
        return statement
    }

    /// Whether the predicate accepts the saved object of a row this plan's SQL selected:
    /// SQL's answer when it is exact, the predicate's otherwise.
    func acceptsSelected(_ object: ManagedObject) throws(ContextError) -> Bool {
        if narrowing.isExact { return true }
        return try accepts(object)
    }

    /// Whether the predicate accepts `object`.
    func accepts(_ object: ManagedObject) throws(ContextError) -> Bool {
        guard let predicate, let evaluation else { return true }
        evaluation.object = .object(ObjectReference(object))
        // Let go of the object afterwards: a cursor reuses objects only it holds.
        defer { evaluation.object = .null }
        do {
            return try predicate.evaluate(in: evaluation)
        } catch {
            throw ContextError(
                .predicate, "the fetch predicate failed on \(object.objectID): \(error.description)",
                object: object.objectID.description, underlying: error)
        }
    }
}

/// Objects of a fetch, read row by row as they are asked for (see
/// ``ObjectContext/makeCursor(_:)``).
///
///     let cursor = try context.makeCursor(FetchRequest(entityName: "Item"))
///     while let item = try cursor.next() { … }
///
/// When nobody kept the object the cursor handed out last (not the caller, not the
/// context because it was changed), the cursor fills that object with the next row
/// instead of making a new one: a loop that reads each object once allocates one object,
/// not one per row. Nothing can tell the difference, since nobody holds the old object.
/// Attribute values stay in SQLite's row until they are asked for; an object still held
/// when the cursor moves on (or goes) gets them copied in first, so it keeps them.
public final class FetchCursor {
    private let plan: FetchPlan
    private let context: ObjectContext
    private var statement: Statement { plan.rows }
    // A cursor is used from one thread, so its state skips the runtime's exclusivity
    // checks, which showed in profiles of its loop.
    @exclusivity(unchecked) private var pendingTail: [ManagedObject]? = nil
    @exclusivity(unchecked) private var finished = false
    /// The last object read from a row, kept to be refilled if nobody else holds it.
    @exclusivity(unchecked) private var spare: ManagedObject? = nil

    init(plan: FetchPlan, context: ObjectContext) {
        self.plan = plan
        self.context = context
    }

    deinit {
        // The statement goes with the cursor: an object someone still holds keeps its values.
        if !isKnownUniquelyReferenced(&spare) { spare?.detachFromRow() }
    }

    /// The next object, or nil when there are no more.
    public func next() throws(ContextError) -> ManagedObject? {
        while !finished && pendingTail == nil {
            // Only the cursor's reference left: no one can see the object change, so it is
            // refilled. Otherwise it keeps its values, copied out before the row goes.
            let reusable: ManagedObject?
            if isKnownUniquelyReferenced(&spare) {
                reusable = spare
            } else {
                spare?.detachFromRow()
                reusable = nil
            }
            let hasRow: Bool
            do {
                hasRow = try statement.step()
            } catch {
                throw ContextError(error)
            }
            guard hasRow else {
                pendingTail = try context.pendingMatches(plan).reversed()
                break
            }
            var made = false
            let object = try context.nextScanned(
                statement, plan, register: false, reusing: reusable, onRow: true, made: &made)
            if made, let object { spare = object }
            if let object { return object }
        }
        guard let last = pendingTail?.popLast() else {
            finished = true
            return nil
        }
        return last
    }

    /// Up to `count` next objects; fewer only at the end.
    public func next(batch count: Int) throws(ContextError) -> [ManagedObject] {
        var batch: [ManagedObject] = []
        batch.reserveCapacity(count)
        while batch.count < count, let object = try next() { batch.append(object) }
        return batch
    }
}
