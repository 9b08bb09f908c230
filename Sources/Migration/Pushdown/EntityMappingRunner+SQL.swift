import ExpressionLanguage
import ObjectGraph

/// The two stages of an entity mapping as SQL over the source attached to the new store as
/// `src` (docs/pushdown.md). Each falls back to the interpreter, which then does exactly
/// what it would have done, when a row meets one of the plan's guards.
extension EntityMappingRunner {
    /// Source rows per `INSERT … SELECT`: between two, progress is reported and
    /// cancellation checked.
    static let sqlChunkRows = 50_000

    /// Stage 1 as SQL: the association of source and destination keys into
    /// `temp.remodel_keys_<n>` (destinations numbered from the table's next key in source
    /// key order, as the interpreter numbers them), then the rows in chunks, then the
    /// association into the manager's table. False, having written nothing, when a source
    /// row meets a guard.
    func createInstancesAsSQL(_ plan: SQLMappingPlan, progress: (Int, Int?, Double) -> Void) throws(MigrationError) -> Bool {
        let context = manager.destinationContext
        do {
            try registerFunctions(plan, in: context.store.database)
            if let (key, reason) = try firstGuardedRow(plan, in: context.store.database) {
                execution.instancesAsSQL = false
                execution.instancesReason = "source row \(plan.sourceTable) \(key): \(reason)"
                return false
            }
        } catch {
            throw evaluationFailure ?? MigrationError(.sourceStore, "cannot check the source rows for SQL: \(error)")
        }
        let started = ContinuousClock.now
        let keys = SQLLink.keysTable(index)
        let parameters = plan.parameters
        let n = Int32(parameters.count)
        let insertSQL = "INSERT INTO main.\(plan.destinationTable) (Z_PK, Z_ENT, Z_OPT\(plan.columns.map { ", " + $0 }.joined())) "
            + "SELECT k.destination, \(plan.destinationEntityNumber), 1\(plan.values.map { ", " + $0 }.joined()) "
            + "FROM \(keys) AS k JOIN src.\(plan.sourceTable) AS t0 ON t0.Z_PK = k.source "
            + "WHERE k.source > ?\(n + 1) AND k.source <= ?\(n + 2) ORDER BY k.source"
        let written: Range<Int64>
        do {
            written = try context.insertRows(of: plan.destinationEntity) { database, first in
                try database.execute("CREATE TEMP TABLE remodel_keys_\(index) (source INTEGER PRIMARY KEY, destination INTEGER NOT NULL)")
                let fill = try database.prepare(
                    "INSERT INTO \(keys) (source, destination) SELECT t0.Z_PK, ?\(n + 1) + row_number() OVER (ORDER BY t0.Z_PK) - 1 "
                        + "FROM src.\(plan.sourceTable) AS t0 WHERE t0.Z_ENT = \(plan.sourceEntityNumber) AND \(plan.filter) ORDER BY t0.Z_PK")
                for (i, value) in parameters.enumerated() { try fill.bind(value, at: Int32(i + 1)) }
                try fill.bind(first, at: n + 1)
                try fill.run()
                let total = database.changes
                let insert = try database.prepare(insertSQL)
                for (i, value) in parameters.enumerated() { try insert.bind(value, at: Int32(i + 1)) }
                let boundary = try database.prepare("SELECT source FROM \(keys) WHERE source > ?1 ORDER BY source LIMIT 1 OFFSET ?2")
                var done = 0
                var after = Int64.min
                while done < total {
                    try boundary.bind(after, at: 1)
                    try boundary.bind(Int64(Self.sqlChunkRows - 1), at: 2)
                    let last = try boundary.step() ? boundary.int64(at: 0) : Int64.max
                    boundary.reset()
                    try insert.bind(after, at: n + 1)
                    try insert.bind(last, at: n + 2)
                    try insert.run()
                    done += database.changes
                    after = last
                    try manager.checkCancelled()
                    progress(done, total, Double(done) / max(1e-9, (ContinuousClock.now - started).seconds))
                    if last == .max { break }
                }
                guard done == total else {
                    throw MigrationError(.destinationStore, "wrote \(done) \(plan.destinationEntity) rows of \(total)")
                }
                return total
            }
            try recordAssociations(plan, written: written)
        } catch let error as MigrationError {
            throw error
        } catch {
            throw evaluationFailure ?? MigrationError(.destinationStore, "cannot write the \(plan.destinationEntity) rows with SQL: \(error)")
        }
        report.sourceInstances += written.count
        execution.instancesAsSQL = true
        execution.instancesReason = nil
        return true
    }

    /// Registers what the plan's SQL asks the interpreter for: `remodel_eval_<n>(i, key,
    /// attributes…)`, the value of the `i`th evaluated attribute mapping with `$source`
    /// the row, coerced and encoded for its column; and `remodel_accept_<n>(key,
    /// attributes…)`, whether the fetch's predicate accepts the row. Each does what the
    /// interpreter does for the row, errors included: a failure fails the statement and
    /// is kept, with its row, for ``evaluationFailure``.
    private func registerFunctions(_ plan: SQLMappingPlan, in database: Database) throws {
        guard let sourceEntity = prepared.sourceEntity else { return }
        let model = manager.sourceModel
        evaluationFailure = nil
        if !plan.evaluated.isEmpty {
            let rows = plan.evaluated.map { SQLFunctionRow(entity: sourceEntity, model: model, attributes: $0.reads)! }
            try database.registerFunction(SQLMappingPlan.evaluateFunction(index), arity: -1) { [unowned self] arguments in
                let item = plan.evaluated[Int(arguments.int64(at: 0))]
                let row = rows[Int(arguments.int64(at: 0))]
                let property = prepared.attributes[item.property]
                row.load(arguments, from: 2, primaryKey: arguments.int64(at: 1))
                evaluation[slot: sourceSlot] = .object(ObjectReference(row))
                evaluation[slot: propertySlot] = attributeObjects[item.property]
                defer { evaluation[slot: sourceSlot] = nil }
                let value: Value
                do {
                    value = try property.expression.evaluate(in: evaluation)
                } catch {
                    throw keep(failure(.expression, (error as? ExpressionError)?.description ?? "\(error)", property), row)
                }
                let written: SQLiteValue
                do {
                    written = try item.attribute.columnValue(value)
                } catch {
                    throw keep(failure(.value, (error as? ContextError)?.message ?? "\(error)", property), row)
                }
                // Cancelled (by a function the expression called, say): the run stops at
                // this row, as the interpreter's does.
                do throws(MigrationError) {
                    try manager.checkCancelled()
                } catch {
                    throw keep(error, row)
                }
                return written
            }
        }
        if let reads = plan.predicateAttributes, case .fetch(let request) = prepared.source, let predicate = request.predicate {
            let row = SQLFunctionRow(entity: sourceEntity, model: model, attributes: reads)!
            let compiled = try ExpressionCompiler(functions: manager.sourceContext.functions).compile(predicate, source: request.predicateSource)
            let context = compiled.makeContext()
            let sourceExpression = mapping.sourceExpression
            try database.registerFunction(SQLMappingPlan.acceptFunction(index), arity: -1) { [unowned self] arguments in
                row.load(arguments, from: 1, primaryKey: arguments.int64(at: 0))
                context.object = .object(ObjectReference(row))
                defer { context.object = .null }
                do {
                    return .integer(try compiled.evaluate(in: context) ? 1 : 0)
                } catch {
                    // What a fetch reports (FetchPlan.accepts), as a cursor's error.
                    let failure = ContextError(.predicate, "the fetch predicate failed on \(row.objectDescription): \((error as? ExpressionError)?.description ?? "\(error)")",
                                               object: row.objectDescription)
                    evaluationFailure = MigrationError(.sourceStore, "cannot read the source instances: \(failure)", expression: sourceExpression)
                    currentSource = nil
                    throw failure
                }
            }
        }
    }

    /// Keeps `error`, made for `row`, as the failure to report for the statement it fails.
    private func keep(_ error: MigrationError, _ row: SQLFunctionRow) -> MigrationError {
        currentSource = try? manager.sourceContext.objectID(entityName: row.entityName, primaryKey: row.primaryKey)
        evaluationFailure = error
        return error
    }

    /// The first source row (key and reason) that a guard of `plan` holds on, if any.
    private func firstGuardedRow(_ plan: SQLMappingPlan, in database: Database) throws(SQLiteError) -> (Int64, String)? {
        guard !plan.guards.isEmpty else { return nil }
        let which = plan.guards.enumerated().map { "WHEN \($1.condition) THEN \($0)" }.joined(separator: " ")
        let any = plan.guards.map { "(\($0.condition))" }.joined(separator: " OR ")
        let statement = try database.prepare(
            "SELECT t0.Z_PK, CASE \(which) END FROM src.\(plan.sourceTable) AS t0 "
                + "WHERE t0.Z_ENT = \(plan.sourceEntityNumber) AND \(plan.filter) AND (\(any)) ORDER BY t0.Z_PK LIMIT 1")
        // Bound up to the highest it uses (binding past that is an error).
        for (i, value) in plan.parameters.enumerated() where i < statement.parameterCount { try statement.bind(value, at: Int32(i + 1)) }
        guard try statement.step() else { return nil }
        return (statement.int64(at: 0), plan.guards[Int(statement.int64(at: 1))].reason)
    }

    /// Hands the keys table to the manager's association table, in runs of consecutive keys.
    private func recordAssociations(_ plan: SQLMappingPlan, written: Range<Int64>) throws {
        let database = manager.destinationContext.store.database
        guard let entities = manager.associationEntities(source: prepared.sourceEntity!.name, destination: plan.destinationEntity) else { return }
        let rows = try database.prepare("SELECT source, destination FROM \(SQLLink.keysTable(index)) ORDER BY source")
        var run = (source: Int64(0), destination: Int64(0), count: 0)
        func flush() {
            guard run.count > 0 else { return }
            manager.associate(source: (entities.source, run.source), destination: (entities.destination, run.destination), count: run.count, runner: self)
        }
        while try rows.step() {
            let source = rows.int64(at: 0), destination = rows.int64(at: 1)
            if run.count > 0, source == run.source + Int64(run.count), destination == run.destination + Int64(run.count) {
                run.count += 1
            } else {
                flush()
                run = (source, destination, 1)
            }
        }
        flush()
    }

    /// Stage 2 as SQL, when every relationship mapping is a link and every link's target
    /// ran stage 1 as SQL; false (nothing written) otherwise, or when a source row meets a
    /// link's guard.
    func createRelationshipsAsSQL() throws(MigrationError) -> Bool {
        guard execution.instancesAsSQL, let plan = sqlPlan else { return false }
        let links: [SQLLink]
        switch plan.links {
        case .success(let l): links = l
        case .failure(let refusal):
            execution.relationshipsReason = refusal.reason
            return false
        }
        if let link = links.first(where: { !manager.runner(at: $0.target).execution.instancesAsSQL }) {
            execution.relationshipsReason = "'\(link.relationship)': \(manager.runner(at: link.target).mapping.name) ran interpreted"
            return false
        }
        try manager.save()
        let context = manager.destinationContext
        do {
            for link in links {
                guard let sql = link.guardSQL else { continue }
                let statement = try context.store.database.prepare(sql)
                if try statement.step() {
                    execution.relationshipsReason = "'\(link.relationship)': source row \(plan.sourceTable) \(statement.int64(at: 0)) points to no row"
                    return false
                }
            }
            try context.executeOnSavedRows { database throws(SQLiteError) in
                for link in links {
                    let count = try database.prepare(link.countSQL)
                    if try count.step() { report.relationshipsSet += Int(count.int64(at: 0)) }
                    try database.execute(link.sql)
                }
            }
        } catch {
            throw MigrationError(.destinationStore, "cannot link the \(plan.destinationEntity) rows with SQL: \(error)")
        }
        execution.relationshipsAsSQL = true
        execution.relationshipsReason = nil
        try manager.checkCancelled()
        return true
    }
}
