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
            if let (key, reason) = try firstGuardedRow(plan, in: context.store.database) {
                execution.instancesAsSQL = false
                execution.instancesReason = "source row \(plan.sourceTable) \(key): \(reason)"
                return false
            }
        } catch {
            throw MigrationError(.sourceStore, "cannot check the source rows for SQL: \(error)")
        }
        let started = ContinuousClock.now
        let keys = SQLLink.keysTable(index)
        let parameters = plan.parameters
        let n = Int32(parameters.count)
        let insertSQL = "INSERT INTO main.\(plan.destinationTable) (Z_PK, Z_ENT, Z_OPT\(plan.columns.map { ", " + $0 }.joined())) "
            + "SELECT k.destination, \(plan.destinationEntityNumber), 1\(plan.values.map { ", " + $0 }.joined()) "
            + "FROM \(keys) AS k JOIN src.\(plan.sourceTable) AS s ON s.Z_PK = k.source "
            + "WHERE k.source > ?\(n + 1) AND k.source <= ?\(n + 2) ORDER BY k.source"
        let written: Range<Int64>
        do {
            written = try context.insertRows(of: plan.destinationEntity) { database, first in
                try database.execute("CREATE TEMP TABLE remodel_keys_\(index) (source INTEGER PRIMARY KEY, destination INTEGER NOT NULL)")
                let fill = try database.prepare(
                    "INSERT INTO \(keys) (source, destination) SELECT Z_PK, ?1 + row_number() OVER (ORDER BY Z_PK) - 1 "
                        + "FROM src.\(plan.sourceTable) WHERE Z_ENT = \(plan.sourceEntityNumber) ORDER BY Z_PK")
                try fill.bind(first, at: 1)
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
            throw MigrationError(.destinationStore, "cannot write the \(plan.destinationEntity) rows with SQL: \(error)")
        }
        report.sourceInstances += written.count
        execution.instancesAsSQL = true
        execution.instancesReason = nil
        return true
    }

    /// The first source row (key and reason) that a guard of `plan` holds on, if any.
    private func firstGuardedRow(_ plan: SQLMappingPlan, in database: Database) throws(SQLiteError) -> (Int64, String)? {
        guard !plan.guards.isEmpty else { return nil }
        let which = plan.guards.enumerated().map { "WHEN \($1.condition) THEN \($0)" }.joined(separator: " ")
        let any = plan.guards.map { "(\($0.condition))" }.joined(separator: " OR ")
        let statement = try database.prepare(
            "SELECT s.Z_PK, CASE \(which) END FROM src.\(plan.sourceTable) AS s "
                + "WHERE s.Z_ENT = \(plan.sourceEntityNumber) AND (\(any)) ORDER BY s.Z_PK LIMIT 1")
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
