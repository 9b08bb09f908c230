import ExpressionLanguage
import ObjectGraph

/// The two stages of an entity mapping as SQL over the source attached to the new store as
/// `src` (docs/pushdown.md). Each falls back to the interpreter, which then does exactly
/// what it would have done, when a row meets one of the plan's guards.
extension EntityMappingRunner {
    /// Stage 1 as SQL: one `INSERT … SELECT` per chunk of source keys, in key order, each
    /// row's guards checked as it is read (`remodel_guard_<n>` stops the statement on the
    /// first row that meets one). Destinations are numbered from the table's next key in
    /// source key order, as the interpreter numbers them: by an offset when the source keys
    /// are contiguous, else by `remodel_key_<n>`, which counts and records each pair. The
    /// association goes to the manager's table, and to `temp.remodel_keys_<n>` (a view
    /// when the keys are contiguous) for the links of stage 2. False, with what was
    /// written removed, when a source row meets a guard.
    func createInstancesAsSQL(_ plan: SQLMappingPlan, progress: (Int, Int?, Double) -> Void) throws(MigrationError)
        -> Bool
    {
        let context = manager.destinationContext
        let database = context.store.database
        guard
            let entities = manager.associationEntities(
                source: prepared.sourceEntity!.name, destination: plan.destinationEntity)
        else {
            execution.instancesReason = "its entities are not in the models' association tables"
            return false
        }
        let pairs = KeyPairs()
        // (The pairs go to the association as each chunk is written: the key pairs stay
        // as small as a chunk, and the association keeps most of a large table on disk.)
        pairs.record = { [unowned self] run in
            run.forEachStretch { source, destination, count in
                manager.associate(
                    source: (entities.source, source), destination: (entities.destination, destination),
                    count: count, runner: self)
            }
        }
        let written: Range<Int64>
        // Keys of links to mappings whose key tables exist by now.
        let prelinks = (manager.prelinks[index] ?? []).filter { manager.runner(at: $0.keysOf).hasKeysTable }
        do {
            for link in prelinks where manager.runner(at: link.keysOf).keyOffset == nil {
                try manager.runner(at: link.keysOf).writeKeysTableIfNeeded()
            }
            try registerFunctions(plan, in: database)
            // The guards of both statements, numbered on: those of the one that reads the
            // columns as they are after the plan's.
            let guards = plan.guards + (plan.asItIs?.plan.guards ?? [])
            try database.registerFunction("remodel_guard_\(index)", arity: 2) { arguments in
                pairs.guarded = (arguments.int64(at: 0), guards[Int(arguments.int64(at: 1))].reason)
                throw SQLTranslator.Refusal("a guarded row")
            }
            try database.registerFunction("remodel_key_\(index)", arity: 1) { arguments in
                pairs.counter.key(for: arguments.int64(at: 0)).map { .integer($0) } ?? .null
            }
            attributesValidated = false
            try database.registerFunction("remodel_invalid_\(index)", arity: 1) { _ in
                pairs.invalid = true
                return .integer(1)
            }
            // The source table's keys: their range, and whether they have no gaps. (Counting
            // the whole table needs no read of its rows; should rows of entities the model
            // does not know be there, fewer rows are written than counted, and the rows are
            // written again with counted keys.)
            // (Three queries: together, SQLite scans the table for them; apart, the count
            // reads the pages' cell counts and the ends are one descent each.)
            let table = "src.\(plan.sourceTable)"
            let range = try database.prepare(
                "SELECT (SELECT count(*) FROM \(table)), (SELECT min(Z_PK) FROM \(table)), (SELECT max(Z_PK) FROM \(table))"
            )
            _ = try range.step()
            let (count, low, high) = (
                Int(range.int64(at: 0)), range.int64(at: 1), max(range.int64(at: 1), range.int64(at: 2))
            )
            // (Done with: SQLite replaces no function while a statement is active.)
            range.reset()
            // (The keys from any Int64 to any other, without overflowing.)
            let span = high.subtractingReportingOverflow(low)
            let contiguous =
                plan.filter == "1" && !plan.sourceTableIsShared && count > 0 && !span.overflow
                && span.partialValue == Int64(count) - 1
            written = try context.insertRows(of: plan.destinationEntity) { database, first in
                try writeRows(
                    plan, first: first, keys: (count, low, high), contiguous: contiguous, pairs: pairs,
                    prelinks: prelinks,
                    progress: progress)
            }
        } catch let error as MigrationError {
            throw error
        } catch {
            throw evaluationFailure
                ?? MigrationError(
                    .destinationStore, "cannot write the \(plan.destinationEntity) rows with SQL: \(error)",
                    underlying: error)
        }
        if pairs.guarded != nil || pairs.sqlFailure != nil {
            // The interpreter runs the mapping, and associates its instances itself.
            manager.forgetAssociations(of: self)
        }
        if let guarded = pairs.guarded {
            execution.instancesAsSQL = false
            execution.evaluations = 0
            execution.chunksCheckedAhead = 0
            execution.instancesReason = "source row \(plan.sourceTable) \(guarded.key): \(guarded.reason)"
            return false
        }
        if let failure = pairs.sqlFailure {
            execution.instancesAsSQL = false
            execution.evaluations = 0
            execution.chunksCheckedAhead = 0
            execution.instancesReason = "SQLite refused the statement (\(failure))"
            return false
        }
        pairs.recordRuns()
        report.sourceInstances += written.count
        writtenKeys = written
        attributesValidated = pairs.validated && !pairs.invalid
        execution.instancesAsSQL = true
        execution.instancesReason = nil
        manager.prelinked.formUnion(prelinks)
        return true
    }

    /// Stage 1's rows from the key `first` on (see ``createInstancesAsSQL(_:progress:)``):
    /// how many, 0 when a guard stopped it (nothing written then).
    private func writeRows(
        _ plan: SQLMappingPlan, first: Int64, keys: (count: Int, low: Int64, high: Int64), contiguous: Bool,
        pairs: KeyPairs, prelinks: [SQLLink.Key], progress: (Int, Int?, Double) -> Void
    ) throws -> Int {
        let database = manager.destinationContext.store.database
        let (count, low, high) = keys
        var finished = false
        // Keys by an offset that every key can take without overflowing.
        let offset = first.subtractingReportingOverflow(low)
        var counted =
            !contiguous || offset.overflow
            || high.addingReportingOverflow(offset.partialValue).overflow
        /// The statements that write the rows with keys `key`: the one that reads the
        /// columns as they are where a row meets its check, and what writes the others
        /// (docs/pushdown.md, "Rows checked once"). With keys by an offset, rows may be
        /// written in any order, and the chunk's others follow it; with counted keys, the
        /// first writes the chunk's rows up to the first that fails, and the second the
        /// rest of the chunk from that row on, read as the interpreter reads them.
        func statements(key: String, offset: Int64?) throws -> (ChunkStatement, Repair?, Ahead?) {
            let inOrder = offset == nil
            guard let asItIs = plan.asItIs?.plan else {
                // (Every row of each chunk, in key order.)
                let insert = try ChunkStatement(plan, key: key, appendingBy: offset) {
                    try insertStatement(plan, key: $0, prelinks: prelinks)
                }
                return (insert, nil, nil)
            }
            var checked = asItIs.rowChecks.map { (column: $0.column, expectation: $0.expectation) }
            // With keys by an offset, every key of the range is a row, and a row of another
            // entity fails the check: the statement that writes the others skips it, and
            // the rows are written again with counted keys. (The chunk is then so many rows
            // from its first key, and no bound is tested on each.) With counted keys, a row
            // of another entity must not stop the check.
            if !inOrder {
                let entity = Int64(plan.sourceEntityNumber)
                checked.append(("t0.Z_ENT", ColumnExpectation(.integer(entity...entity), allowsNull: false)))
            }
            // The columns stored last first: SQLite reads the row's header once, on the
            // first, and finds the others from it.
            let places = try database.columnPlaces(of: plan.sourceTable, in: "src")
            // (The source table's columns, `t0.<column>`.)
            func place(_ column: String) -> Int {
                let name = column.uppercased()
                return name.hasPrefix("T0.") ? places[String(name.dropFirst(3)), default: -1] : -1
            }
            checked.sort { place($0.column) > place($1.column) }
            let check = RowCheck(checked.map(\.expectation), stopsAtFirstFailure: inOrder)
            try database.register(check, as: "remodel_row_\(index)")
            // (The key first, where the check stops at the first row that fails.)
            let columns = (inOrder ? ["t0.Z_PK"] : []) + checked.map(\.column)
            // (Every row of the chunk, in key order, where every row meets the check.)
            let insert = try ChunkStatement(asItIs, key: key, appendingBy: offset, keyOffset: offset) {
                try insertStatement(
                    asItIs, key: $0, prelinks: prelinks, rows: .meetingCheck(columns, keysByOffset: !inOrder),
                    guardOffset: plan.guards.count)
            }
            let others = try ChunkStatement(
                plan, insertStatement(plan, key: key, prelinks: prelinks, rows: inOrder ? .all : .failingCheck(columns))
            )
            // From the second chunk on, the check ahead of the statements (the first is
            // written while it starts); started last: nothing after it throws, and the
            // caller stops it.
            var ahead: Ahead?
            if !high.isAmong(chunkRows, from: low), checksAhead {
                // (Every row of each chunk, in key order.)
                let statement = try ChunkStatement(asItIs, key: key, appendingBy: offset, keyOffset: offset) {
                    try insertStatement(
                        asItIs, key: $0, prelinks: prelinks, rows: .checkedAhead(keysByOffset: !inOrder),
                        guardOffset: plan.guards.count)
                }
                if let check = try checkAhead(
                    plan, checked, entity: inOrder ? plan.sourceEntityNumber : nil,
                    keys: (low + Int64(chunkRows))...high)
                {
                    ahead = Ahead(check: check, statement: statement)
                }
            }
            return (insert, Repair(others, check: check), ahead)
        }
        var repair: Repair?
        if !counted {
            // (An integer in the SQL is exact; none where the keys stay as they are.)
            let (insert, checks, ahead) = try statements(
                key: offset.partialValue == 0 ? "t0.Z_PK" : "t0.Z_PK + \(offset.partialValue)",
                offset: offset.partialValue)
            repair = checks
            defer { ahead?.check.stop() }
            finished = try insertChunks(
                insert, repairing: repair, ahead: ahead, keys: low...high, total: count, pairs: pairs,
                table: plan.sourceTable, into: plan.destinationTable, progress: progress)
            if finished, pairs.count != count {
                // Rows of other entities in the table: numbered by counting after all.
                try database.execute("DELETE FROM main.\(plan.destinationTable) WHERE Z_PK >= \(first)")
                counted = true
            }
        }
        if counted {
            pairs.reset(next: first)
            // Where the table's next rowid is the first key, SQLite numbers the rows as
            // they are written in key order, exactly as counting does, and appends each
            // without a search for its key: `remodel_key_<n>` then records the pair and
            // leaves the key to SQLite (a NULL). (A search per row is most of what
            // numbering the rows costs.)
            pairs.counter.keysBySQLite = try nextRowID(of: plan.destinationTable) == first
            execution.chunksCheckedAhead = 0
            let (insert, checks, ahead) = try statements(key: "remodel_key_\(index)(t0.Z_PK)", offset: nil)
            repair = checks
            defer { ahead?.check.stop() }
            finished = try insertChunks(
                insert, repairing: repair, ahead: ahead, keys: low...high, total: nil, pairs: pairs,
                table: plan.sourceTable, into: plan.destinationTable, progress: progress)
        }
        if finished, pairs.counter.keysBySQLite {
            let last = try nextRowID(of: plan.destinationTable) - 1
            guard last == first + Int64(pairs.count) - 1 else {
                throw MigrationError(
                    .destinationStore,
                    "SQLite numbered the \(plan.destinationEntity) rows up to \(last), not \(first) + \(pairs.count) - 1 as counted"
                )
            }
        }
        guard finished else {
            // Back to where the mapping started: the interpreter runs it.
            try database.execute("DELETE FROM main.\(plan.destinationTable) WHERE Z_PK >= \(first)")
            return 0
        }
        // The rules were checked as the rows were written where each statement that wrote
        // one checks them.
        pairs.validated =
            repair.map { (plan.asItIs?.plan.validatesAttributes ?? false) && (!$0.ran || plan.validatesAttributes) }
            ?? plan.validatesAttributes
        keyOffset = !counted && count > 0 ? (low, high, offset.partialValue) : nil
        if !counted {
            pairs.runs = count > 0 ? [KeyRun(source: low, destination: first, count: count)] : []
            try database.execute(
                "CREATE TEMP VIEW remodel_keys_\(index) AS SELECT Z_PK AS source, Z_PK + \(offset.partialValue) AS destination "
                    + "FROM src.\(plan.sourceTable) WHERE Z_ENT = \(plan.sourceEntityNumber)")
        } else {
            keysTableUnwritten = true
        }
        return pairs.count
    }

    /// The rowid SQLite gives the next row written to `table` of the new store with no key
    /// of its own: one after the largest there, 1 in an empty table.
    private func nextRowID(of table: String) throws -> Int64 {
        let statement = try manager.destinationContext.store.database.prepare(
            "SELECT coalesce(max(Z_PK), 0) + 1 FROM main.\(table)")
        _ = try statement.step()
        return statement.int64(at: 0)
    }

    /// Whether the options and the machine allow a check ahead (``CheckAhead``), and the
    /// source cannot change beside this connection's read of it.
    private var checksAhead: Bool {
        manager.options.checkAhead.checks && CheckAhead.staysAsItIs(manager.sourceContext.store.database)
    }

    /// The check ahead, started, of the rows of `plan`'s source table with keys in `keys`,
    /// of the entity `entity` where it is given.
    private func checkAhead(
        _ plan: SQLMappingPlan, _ checked: [(column: String, expectation: ColumnExpectation)], entity: Int?,
        keys: ClosedRange<Int64>
    ) throws -> CheckAhead? {
        // This connection's read of the source first, held to the end of its transaction:
        // no writer commits to it before the check has read it too.
        _ = try manager.destinationContext.store.database.prepare("SELECT Z_PK FROM src.\(plan.sourceTable) LIMIT 1")
            .step()
        return CheckAhead(
            source: manager.sourceContext.store.database.path, table: plan.sourceTable,
            columns: checked.map(\.column), expectations: checked.map(\.expectation), entity: entity, keys: keys,
            chunkRows: chunkRows)
    }

    /// Source keys per `INSERT … SELECT`: between two, progress is reported and
    /// cancellation checked.
    private var chunkRows: Int { manager.options.sqlChunkRows }

    /// An `INSERT … SELECT` of a plan, over a chunk of source keys: its parameters after
    /// the plan's are the first key and the last, or, for a statement that writes keys by
    /// an offset and counts its rows, the first key and how many rows to write.
    private struct ChunkStatement {
        let statement: Statement
        let firstKey: Int32
        /// The destination keys' offset from the source keys, for a statement that counts
        /// its rows: the last it wrote tells how far it read.
        let keyOffset: Int64?
        /// For a statement that writes every row of a chunk in key order (or, one that
        /// checks its rows, every row where each meets the check), with keys by an
        /// offset: the offset, and the same statement with SQLite giving each row the next
        /// key (a NULL), which is the same key where the table's next rowid is the chunk's
        /// first key. SQLite then appends each row without a search for its key: most of
        /// what a key of the statement's own costs.
        let appending: (offset: Int64, statement: Statement)?

        init(
            _ plan: SQLMappingPlan, _ statement: Statement, keyOffset: Int64? = nil,
            appending: (offset: Int64, statement: Statement)? = nil
        ) {
            self.statement = statement
            firstKey = Int32(plan.parameters.count + 1)
            self.keyOffset = keyOffset
            self.appending = appending
        }

        /// The statement `make` makes with `key` for the destination key, and, for one
        /// that writes every row of a chunk in key order with keys by the offset
        /// `appendingBy`, its twin with SQLite's keys (`make` with a NULL key: ``appending``).
        init(
            _ plan: SQLMappingPlan, key: String, appendingBy offset: Int64?, keyOffset: Int64? = nil,
            _ make: (String) throws -> Statement
        ) throws {
            self.init(plan, try make(key), keyOffset: keyOffset, appending: try offset.map { ($0, try make("NULL")) })
        }

        /// The statement that writes the chunk from the source key `from` where the next
        /// rowid of the table is `next`: the appending one where its keys are SQLite's
        /// (and `appends`), with the first key it writes.
        func writing(from: Int64, appends: Bool = true, next: () throws -> Int64) throws -> (
            Statement, appendsFrom: Int64?
        ) {
            guard appends, let appending, try next() == from &+ appending.offset else { return (statement, nil) }
            return (appending.statement, from &+ appending.offset)
        }

        func bind(_ keys: ClosedRange<Int64>) throws {
            for statement in [statement] + (appending.map { [$0.statement] } ?? []) {
                try statement.bind(keys.lowerBound, at: firstKey)
                try statement.bind(keys.upperBound, at: firstKey + 1)
            }
        }

        func bind(from key: Int64, rows: Int) throws {
            for statement in [statement] + (appending.map { [$0.statement] } ?? []) {
                try statement.bind(key, at: firstKey)
                try statement.bind(Int64(rows), at: firstKey + 1)
            }
        }
    }

    /// What writes the rows a statement skipped for failing `check`: those rows, or, for
    /// a check that stops at the first failure, every row of the chunk from that one on.
    private final class Repair {
        let statement: ChunkStatement
        let check: RowCheck
        /// Whether it wrote a row.
        var ran = false

        init(_ statement: ChunkStatement, check: RowCheck) {
            self.statement = statement
            self.check = check
        }
    }

    /// What writes a chunk whose rows the check ahead found meet the check, instead of the
    /// statement that checks them.
    private struct Ahead {
        let check: CheckAhead
        let statement: ChunkStatement
    }

    /// Which rows of a chunk an `INSERT … SELECT` writes.
    enum Rows {
        /// Every row its plan selects.
        case all
        /// Those whose columns (these) meet the check `remodel_row_<n>`, by the plan that
        /// reads them as they are (``SQLMappingPlan/asItIs``). With keys by an offset, the
        /// check tests the row's entity, and the statement writes so many rows from the
        /// first key (``ChunkStatement``).
        case meetingCheck([String], keysByOffset: Bool)
        /// The others, by the plan that reads them as the interpreter does.
        case failingCheck([String])
        /// Every row its plan selects, by the plan that reads them as they are, over a
        /// chunk in which the check ahead found that every row meets the check
        /// (``CheckAhead``); with keys by an offset, so many rows from the first key, as
        /// ``meetingCheck(_:keysByOffset:)`` writes.
        case checkedAhead(keysByOffset: Bool)
    }

    /// The `INSERT … SELECT` of `plan` over a range of source keys (``ChunkStatement``),
    /// each row's destination key `key`, the keys of `prelinks` written, its guards
    /// (numbered from `guardOffset`) checked, with the plan's parameters bound.
    private func insertStatement(
        _ plan: SQLMappingPlan, key: String, prelinks: [SQLLink.Key], rows: Rows = .all, guardOffset: Int = 0
    ) throws -> Statement {
        let n = plan.parameters.count
        var checks = plan.guards.enumerated().map {
            "WHEN \($1.condition) THEN remodel_guard_\(index)(t0.Z_PK, \($0 + guardOffset))"
        }
        // The rules of the attributes, after the guards: a row that breaks one is written,
        // and the validation checks the table.
        if plan.validatesAttributes, !plan.validation.isEmpty {
            checks.append(
                "WHEN \(plan.validation.joined(separator: " OR ")) THEN remodel_invalid_\(index)(t0.Z_PK)")
        }
        var columns = plan.columns, values = plan.values
        // The check first, the filter only where it holds (a filter that reads the columns
        // as they are decides only such rows): the filter and the guards then run once on
        // each row, in the statement that writes it.
        let selected =
            switch rows {
            case .all, .checkedAhead: plan.filter
            case .meetingCheck(let read, _) where plan.filter == "1":
                "remodel_row_\(index)(\(read.joined(separator: ", ")))"
            case .meetingCheck(let read, _):
                "CASE WHEN remodel_row_\(index)(\(read.joined(separator: ", "))) THEN \(plan.filter) ELSE 0 END"
            case .failingCheck(let read): "NOT remodel_row_\(index)(\(read.joined(separator: ", "))) AND \(plan.filter)"
            }
        let byOffset =
            switch rows {
            case .meetingCheck(_, let byOffset), .checkedAhead(let byOffset): byOffset
            case .all, .failingCheck: false
            }
        for link in prelinks {
            let keys = manager.runner(at: link.keysOf).keyOffset
            columns.append(link.column)
            values.append(keys.map { link.value(offset: $0) } ?? link.value)
            if let entity = link.entity {
                columns.append(entity)
                values.append(keys.map { link.entityValue(offset: $0) } ?? link.entityValue)
            }
        }
        // In the table's order, SQLite makes the record of the values as the row gives
        // them, with no copy of each; where the interpreter is asked for values, they stay
        // in the mapping's order, in which it evaluates them and reports the first error.
        if plan.evaluated.isEmpty, plan.stringChains.isEmpty,
            let table = manager.destinationContext.store.layout.tables[plan.destinationTable]
        {
            let position = Dictionary(table.columns.enumerated().map { ($1.name, $0) }) { first, _ in first }
            let ordered = zip(columns, values).enumerated().sorted {
                (position[$0.element.0] ?? Int.max, $0.offset) < (position[$1.element.0] ?? Int.max, $1.offset)
            }
            (columns, values) = (ordered.map(\.element.0), ordered.map(\.element.1))
        }
        let insert = try manager.destinationContext.store.database.prepare(
            "INSERT INTO main.\(plan.destinationTable) (Z_PK, Z_ENT, Z_OPT\(columns.map { ", " + $0 }.joined())) "
                + "SELECT \(key), \(plan.destinationEntityNumber), 1\(values.map { ", " + $0 }.joined()) "
                + "FROM src.\(plan.sourceTable) AS t0 \(plan.joins.map { $0 + " " }.joined())"
                + (byOffset
                    ? "WHERE t0.Z_PK >= ?\(n + 1) AND \(selected)"
                    : "WHERE t0.Z_ENT = \(plan.sourceEntityNumber) AND t0.Z_PK BETWEEN ?\(n + 1) AND ?\(n + 2) AND \(selected)")
                + (checks.isEmpty ? "" : " AND CASE \(checks.joined(separator: " ")) ELSE 1 END") + " ORDER BY t0.Z_PK"
                + (byOffset ? " LIMIT ?\(n + 2)" : ""))
        for (i, value) in plan.parameters.enumerated() { try insert.bind(value, at: Int32(i + 1)) }
        return insert
    }

    /// Runs `insert` over the source keys in chunks, reporting progress and checking
    /// cancellation between two, and after each chunk where a row failed the check of
    /// `checks`, `checks` over the same keys; a chunk that `ahead` found meets the check
    /// is written by its statement instead. Counts the rows in `pairs`. False when a guard
    /// stopped it.
    private func insertChunks(
        _ insert: ChunkStatement, repairing checks: Repair? = nil, ahead: Ahead?, keys: ClosedRange<Int64>,
        total: Int?, pairs: KeyPairs, table: String, into destination: String,
        progress: (Int, Int?, Double) -> Void
    ) throws -> Bool {
        let database = manager.destinationContext.store.database
        let started = ContinuousClock.now
        // A chunk after one starts at the next key there is: keys far apart (any two
        // Int64s) make no empty chunks in between.
        let next = try database.prepare("SELECT min(Z_PK) FROM src.\(table) WHERE Z_PK > ?1")
        var from = keys.lowerBound, done = 0
        // Whether a chunk whose rows are checked as they are written may be appended: until
        // a row fails the check (a store that holds such rows holds them here and there).
        var appends = true
        while from <= keys.upperBound {
            // The last chunk ends at the last key.
            var to = keys.chunkEnd(from: from, count: chunkRows)
            // A chunk the check ahead found meets the check is written without it.
            let checkedAhead =
                ahead.map { $0.check.covers(from...to, waiting: manager.options.checkAhead == .waiting) } ?? false
            let (insert, repair) = checkedAhead ? (ahead!.statement, nil) : (insert, checks)
            if checkedAhead { execution.chunksCheckedAhead += 1 }
            if insert.keyOffset != nil {
                try insert.bind(from: from, rows: chunkRows)
            } else {
                try insert.bind(from...to)
            }
            do {
                let (statement, appended) = try insert.writing(from: from, appends: appends) {
                    try nextRowID(of: destination)
                }
                try statement.run()
                if let first = appended, let repair, repair.check.failed {
                    // A row failed the check and was left for the repair: those after it
                    // took keys one too low. The chunk is written again with its own keys.
                    try database.execute("DELETE FROM main.\(destination) WHERE Z_PK >= \(first)")
                    repair.check.clear()
                    appends = false
                    try insert.statement.run()
                }
                if let offset = insert.keyOffset {
                    // It read up to the last row it wrote, or to the end of the keys.
                    to =
                        database.changes == chunkRows
                        ? database.lastInsertedRowID &- offset : keys.upperBound
                }
                if let repair, repair.check.failed {
                    // The chunk's rows whose columns do not hold what their types write.
                    done += database.changes
                    try repair.statement.bind((repair.check.firstFailure ?? from)...to)
                    repair.check.clear()
                    try repair.statement.statement.run()
                    repair.ran = repair.ran || database.changes > 0
                }
            } catch {
                if pairs.guarded != nil { return false }
                if let failure = evaluationFailure {
                    // With keys by an offset, the chunk's rows that failed the check are
                    // written after it: one before this row may fail first, as the
                    // interpreter reports. It runs the mapping, and says which. (A
                    // cancellation stops the run where it is.)
                    if failure.kind != .cancelled, let repair, !repair.check.stopsAtFirstFailure, repair.check.failed {
                        pairs.guarded = (from, "an evaluation failed after a row read as the interpreter reads it")
                        evaluationFailure = nil
                        return false
                    }
                    throw error
                }
                // SQLite refused a row (a constraint, a trigger): the interpreter runs the
                // mapping instead, and its error names the row (or it succeeds, and the
                // plan says why the mapping did not run as SQL).
                pairs.sqlFailure = error
                return false
            }
            done += database.changes
            pairs.recordRuns()
            try manager.checkCancelled()
            progress(done, total, Double(done) / max(1e-9, (ContinuousClock.now - started).seconds))
            if to >= keys.upperBound { break }
            try next.bind(to, at: 1)
            guard try next.step(), !next.isNull(0) else { break }
            from = next.int64(at: 0)
            next.reset()
        }
        pairs.count = done
        return true
    }

    /// Source keys associated with consecutive destination keys: `count` sources with
    /// consecutive keys from `source` where `mask` is 0; else the keys of a window of 64
    /// from `source`, a bit for each (bit i: `source + i`), in order. So a filter that keeps a
    /// scattered half of the rows records a run for each 64 keys, not for each row kept.
    struct KeyRun {
        var source: Int64
        var destination: Int64
        var count: Int
        var mask: UInt64 = 0

        /// Calls `body` with each stretch of consecutive source keys, and their destinations.
        func forEachStretch<E: Error>(_ body: (_ source: Int64, _ destination: Int64, _ count: Int) throws(E) -> Void)
            throws(E)
        {
            try KeyWindow.forEachStretch(count: count, mask: mask) { distance, offset, n throws(E) in
                try body(source + Int64(distance), destination + Int64(offset), n)
            }
        }
    }

    /// An association of source keys with destination keys (a stage 1 as SQL, or the
    /// interpreter's for a key table), in runs of consecutive destination keys
    /// (``KeyRun``).
    final class KeyPairs {
        /// The pairs, in a value of its own: recording one, once per row written, is one
        /// access to the class's storage, not one per field. (Only the statement that
        /// writes the rows touches it, one call at a time, on its thread: no access
        /// overlaps another, and none is checked as the row is written.)
        @exclusivity(unchecked) var counter = Counter()
        /// The row that met a guard, and the guard's reason.
        var guarded: (key: Int64, reason: String)?
        /// What SQLite said when it refused the statement (not a guard, not an evaluation).
        var sqlFailure: (any Error)?
        /// Whether a row written breaks a rule of its attributes (``SQLMappingPlan/validation``).
        var invalid = false
        /// Whether the statements that wrote the rows checked the rules of their
        /// attributes (``SQLMappingPlan/validatesAttributes``).
        var validated = false
        /// Where ``recordRuns()`` hands the runs recorded so far.
        var record: ((KeyRun) -> Void)?

        /// Hands the runs recorded so far to ``record``, and forgets them.
        func recordRuns() {
            guard let record else { return }
            for run in counter.runs { record(run) }
            counter.runs.removeAll(keepingCapacity: true)
        }

        var runs: [KeyRun] {
            get { counter.runs }
            set { counter.runs = newValue }
        }

        var count: Int {
            get { counter.count }
            set { counter.count = newValue }
        }

        func reset(next: Int64) {
            counter = Counter(next: next)
            invalid = false
        }

        /// Records that `source` made `destination`.
        func append(source: Int64, destination: Int64) {
            counter.append(source: source, destination: destination)
        }

        struct Counter {
            var runs: [KeyRun] = []
            var count = 0
            /// The next destination key.
            var next: Int64 = 0
            /// Whether SQLite gives each row the next key (as the rows are written in key
            /// order), not the statement.
            var keysBySQLite = false

            /// The destination key of `source`, the next one, recorded; nil where SQLite
            /// gives it.
            mutating func key(for source: Int64) -> Int64? {
                let key = next
                next += 1
                append(source: source, destination: key)
                return keysBySQLite ? nil : key
            }

            /// Records that `source` made `destination`.
            mutating func append(source: Int64, destination: Int64) {
                count += 1
                if let last = runs.last, destination.follows(last.destination, by: last.count) {
                    if last.mask == 0, source.follows(last.source, by: last.count) {
                        runs[runs.count - 1].count += 1
                        return
                    }
                    if let mask = KeyWindow.adding(source, to: last.source, count: last.count, mask: last.mask) {
                        runs[runs.count - 1].mask = mask
                        runs[runs.count - 1].count += 1
                        return
                    }
                }
                runs.append(KeyRun(source: source, destination: destination, count: 1))
            }
        }
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
        // (Those of the plan that reads the columns as they are, numbered after the plan's.)
        let evaluated = plan.evaluated + (plan.asItIs?.plan.evaluated ?? [])
        if !evaluated.isEmpty {
            let rows = evaluated.map { SQLFunctionRow(entity: sourceEntity, model: model, attributes: $0.reads)! }
            try database.registerFunction(SQLMappingPlan.evaluateFunction(index), arity: -1) {
                [unowned self] arguments in
                let item = evaluated[Int(arguments.int64(at: 0))]
                let row = rows[Int(arguments.int64(at: 0))]
                let property = prepared.attributes[item.property]
                execution.evaluations += 1
                row.load(arguments, from: 2, primaryKey: arguments.int64(at: 1))
                evaluation[slot: sourceSlot] = .object(
                    ObjectReference(item.onObject ? try sourceObject(sourceEntity, row.primaryKey) : row))
                evaluation[slot: propertySlot] = attributeObjects[item.property]
                defer { evaluation[slot: sourceSlot] = nil }
                let value: Value
                do {
                    value = try property.expression.evaluate(in: evaluation)
                } catch {
                    throw keep(
                        failure(
                            .expression, (error as? ExpressionError)?.description ?? "\(error)", property,
                            underlying: error), row)
                }
                let written: SQLiteValue
                do {
                    written = try item.attribute.columnValue(value)
                } catch {
                    throw keep(
                        failure(.value, (error as? ContextError)?.message ?? "\(error)", property, underlying: error),
                        row)
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
        if !plan.stringChains.isEmpty {
            // What FUNCTION does with each method of the chain, on the value the
            // interpreter reads; an error (or a value of another kind) stops the
            // statement, and the interpreter runs the mapping and reports it.
            let functions = manager.sourceContext.functions
            try database.registerFunction(SQLMappingPlan.stringFunction(index), arity: 2) { arguments in
                var value = arguments.value(at: 1, as: .string) ?? .null
                for call in plan.stringChains[Int(arguments.int64(at: 0))] {
                    value = try functions.call(call.selector, on: value, arguments: call.arguments)
                }
                switch value {
                case .null: return .null
                case .string(let s): return .text(s)
                case .integer(let i): return .integer(i)
                default: throw SQLTranslator.Refusal("a string method gave a \(value.kind.rawValue)")
                }
            }
        }
        if let reads = plan.predicateAttributes, case .fetch(let request) = prepared.source,
            let predicate = request.predicate
        {
            let row = SQLFunctionRow(entity: sourceEntity, model: model, attributes: reads)!
            let compiled = try ExpressionCompiler(functions: manager.sourceContext.functions).compile(
                predicate, source: request.predicateSource)
            let context = compiled.makeContext()
            let sourceExpression = mapping.sourceExpression
            let readsObjects = plan.predicateReadsObjects
            try database.registerFunction(SQLMappingPlan.acceptFunction(index), arity: -1) { [unowned self] arguments in
                execution.evaluations += 1
                let key = arguments.int64(at: 0)
                // The row's attributes, or (a predicate that reads more) the source object.
                let object: any KeyValueCoding
                if readsObjects {
                    object = try sourceObject(sourceEntity, key)
                } else {
                    row.load(arguments, from: 1, primaryKey: key)
                    object = row
                }
                context.object = .object(ObjectReference(object))
                defer { context.object = .null }
                do {
                    return .integer(try compiled.evaluate(in: context) ? 1 : 0)
                } catch {
                    // What a fetch reports (FetchPlan.accepts), as a cursor's error.
                    let failure = ContextError(
                        .predicate,
                        "the fetch predicate failed on \(object.objectDescription): \((error as? ExpressionError)?.description ?? "\(error)")",
                        object: object.objectDescription)
                    evaluationFailure = MigrationError(
                        .sourceStore, "cannot read the source instances: \(failure)", expression: sourceExpression)
                    currentSource = nil
                    throw failure
                }
            }
        }
    }

    /// Before the interpreter links this mapping's objects: the keys stage 1 wrote for
    /// links that have not run yet are unset again, as the interpreter expects them: in
    /// this mapping's rows (a to-one), and in the rows of the mapping that holds them (a
    /// to-many whose members' rows hold the key), so that the interpreter counts what it
    /// would count had no link run.
    private func unlinkWrittenKeys(_ links: [SQLLink]) throws {
        for link in links
        where manager.isUnlinkedPrelink(link.key) {
            let holder = manager.runner(at: link.key.holder)
            guard let rows = holder.writtenKeys, let table = holder.sqlPlan?.destinationTable else { continue }
            let entity = link.key.entity.map { ", \($0) = NULL" } ?? ""
            try manager.destinationContext.store.database.execute(
                "UPDATE main.\(table) SET \(link.key.column) = NULL\(entity) "
                    + "WHERE Z_PK BETWEEN \(rows.lowerBound) AND \(rows.upperBound - 1)")
            manager.prelinked.remove(link.key)
        }
    }

    /// Writes its keys table from its associations, if it has not been written.
    func writeKeysTableIfNeeded() throws(SQLiteError) {
        guard keysTableUnwritten else { return }
        keysTableUnwritten = false
        let table = manager.associations[index]
        try SQLLink.createKeysTable(index, in: manager.destinationContext.store.database) { write throws(SQLiteError) in
            try table.forEachStretch { source, destination, count throws(SQLiteError) in
                try write(source.key, destination.key, count)
            }
        }
    }

    /// The keys tables a link's statements join: this mapping's and its target's.
    private func writeKeysTables(of link: SQLLink) throws(SQLiteError) {
        try writeKeysTables(of: manager.runner(at: link.target))
    }

    /// This mapping's keys table and `target`'s.
    private func writeKeysTables(of target: EntityMappingRunner) throws(SQLiteError) {
        try writeKeysTableIfNeeded()
        try target.writeKeysTableIfNeeded()
    }

    /// The source object of `entity` whose row has `key`, read from the source context (for
    /// what a statement asks the interpreter about more than the row's attributes). A row
    /// that is gone is an error the statement reports.
    private func sourceObject(_ entity: EntityDescription, _ key: Int64) throws -> ManagedObject {
        try manager.sourceContext.object(
            with: manager.sourceContext.objectID(entityName: entity.name, primaryKey: key))
    }

    /// Keeps `error`, made for `row`, as the failure to report for the statement it fails.
    private func keep(_ error: MigrationError, _ row: SQLFunctionRow) -> MigrationError {
        currentSource = try? manager.sourceContext.objectID(entityName: row.entityName, primaryKey: row.primaryKey)
        evaluationFailure = error
        return error
    }

    /// Stage 2 as SQL, when every relationship mapping is a link and every link's target
    /// ran stage 1 as SQL; false (nothing written) otherwise, or when a source row meets a
    /// link's guard.
    func createRelationshipsAsSQL() throws(MigrationError) -> Bool {
        // As planned until it has run: the interpreter links the objects unless it does.
        execution.relationshipsAsSQL = false
        let plan: SQLMappingPlan
        if execution.instancesAsSQL, let sqlPlan {
            plan = sqlPlan
        } else if let linksAfterInterpreted {
            // Stage 1 interpreted: its keys table was written from the associations.
            guard case .success? = keysFromAssociations else {
                if case .failure(let refusal)? = keysFromAssociations { execution.relationshipsReason = refusal.reason }
                return false
            }
            plan = linksAfterInterpreted
        } else {
            return false
        }
        let links: [SQLLink]
        switch plan.links {
        case .success(let l): links = l
        case .failure(let refusal):
            execution.relationshipsReason = refusal.reason
            return false
        }
        if let link = links.first(where: { !manager.runner(at: $0.target).hasKeysTable }) {
            let target = manager.runner(at: link.target)
            var because = ""
            if case .failure(let refusal)? = target.keysFromAssociations { because = " and \(refusal.reason)" }
            execution.relationshipsReason = "'\(link.relationship)': \(target.mapping.name) ran interpreted\(because)"
            return false
        }
        try manager.save()
        let context = manager.destinationContext
        // Links that find what a link of theirs in the interpreter already set, and would
        // change nothing: counted as second links, nothing written.
        var unchanged: Set<SQLLink.Key> = []
        // To-ones whose column another link wrote: set by ``SQLLink/rewriteSQL``.
        var rewrites: Set<SQLLink.Key> = []
        do {
            func finds(_ sql: String) throws -> Bool {
                try context.store.database.prepare(sql).step()
            }
            for link in links {
                // A to-one not written in stage 1 nor by its inverse's link, whose key
                // column another link wrote already (the other side's, read from another
                // relationship or through a chain, by SQL or by the interpreter): where a
                // row's key is not what this link gives, the link sets every row, unset
                // ones too, as the interpreter's does. A chain, which cannot, is left to
                // the interpreter when such a link may have run (the interpreter's, or one
                // by SQL not through a chain: the inverse chain writes the same keys).
                // (Checked only then: where no other link wrote the column, every key in
                // it is unset.)
                func otherWriter(_ chainsToo: Bool) -> Bool {
                    manager.interpretedLinks
                        || manager.sqlLinksWritten.contains(where: {
                            $0.holder == link.key.holder && $0.column == link.key.column && $0 != link.key
                                && (chainsToo || !$0.isChained)
                        })
                }
                if link.countsEveryInstance, link.key.holder == index, !manager.isUnlinkedPrelink(link.key),
                    !manager.sqlLinksWritten.contains(link.key)
                {
                    if let check = link.conflictCheck, otherWriter(true) {
                        try writeKeysTables(of: link)
                        if try finds(check) { rewrites.insert(link.key) }
                    } else if link.key.isChained, otherWriter(false), let rows = writtenKeys,
                        try finds(
                            "SELECT 1 FROM main.\(plan.destinationTable) WHERE \(link.key.column) IS NOT NULL "
                                + "AND Z_PK BETWEEN \(rows.lowerBound) AND \(rows.upperBound - 1) LIMIT 1")
                    {
                        execution.relationshipsReason = "'\(link.relationship)': another link wrote its key column"
                        try unlinkWrittenKeys(links)
                        return false
                    }
                }
                // An ordered relationship's first link writes the positions it gives, a
                // one-to-one's both keys; what another link already wrote the interpreter
                // merges with. A one-to-one whose other side wrote its keys checks them.
                let written = manager.sqlLinksWritten.contains(link.key)
                if written {
                    guard link.key.isOneToOne, let check = link.unchangedCheck else { continue }
                    try writeKeysTables(of: link)
                    if try finds(check) {
                        execution.relationshipsReason =
                            "'\(link.relationship)': its keys are not those the other side's link wrote (the interpreter changes them)"
                        try unlinkWrittenKeys(links)
                        return false
                    }
                } else if let first = link.firstLinkCheck {
                    try writeKeysTables(of: link)
                    guard try finds(first.sql) else { continue }
                    if let check = link.unchangedCheck, try !finds(check) {
                        unchanged.insert(link.key)
                        continue
                    }
                    execution.relationshipsReason = first.reason
                    try unlinkWrittenKeys(links)
                    return false
                }
            }
            // (A store the run wrote has no key that names no row.)
            for link in links where !manager.sourceIsWellTyped {
                guard let dangling = link.dangling else { continue }
                // Every row of the source entity rather than the keys table: a superset of
                // the rows migrated when the table is not written yet, and the same rows
                // when the keys are an offset (a view whose join would look each row up).
                let everyRow = (keysTableUnwritten || keyOffset != nil) && dangling.canCheckEveryRow
                if !everyRow { try writeKeysTableIfNeeded() }
                let statement = try context.store.database.prepare(
                    dangling.sql(
                        targetKeys: manager.runner(at: link.target).keyOffset,
                        everyRowOf: everyRow ? plan.sourceEntityNumber : nil))
                if try statement.step() {
                    execution.relationshipsReason =
                        "'\(link.relationship)': source row \(plan.sourceTable) \(statement.int64(at: 0)) points to no row"
                    try unlinkWrittenKeys(links)
                    return false
                }
            }
            try context.executeOnSavedRows { database throws(SQLiteError) in
                for link in links {
                    // A key written in stage 1: as the interpreter finds it, unset until
                    // the first link of the relationship sets it.
                    let prelinked = manager.isUnlinkedPrelink(link.key)
                    if let group = link.countGroup {
                        // Members from several mappings: the owners that gain one, once.
                        let pairs = group.map { part in
                            manager.isUnlinkedPrelink(part.key)
                                ? part.pairs : "\(part.pairs) WHERE \(part.changed)"
                        }
                        for part in group {
                            try writeKeysTables(of: manager.runner(at: part.key.holder))
                            try writeKeysTables(of: manager.runner(at: part.key.keysOf))
                        }
                        let count = try database.prepare(
                            "SELECT count(DISTINCT owner) FROM (\(pairs.joined(separator: " UNION ALL ")))")
                        if try count.step() { report.relationshipsSet += Int(count.int64(at: 0)) }
                    }
                    let first = manager.sqlLinksWritten.insert(link.key).inserted && !unchanged.contains(link.key)
                    if let sql = link.interleavedCount {
                        // Both sides by this mapping: as the interpreter counts them.
                        try writeKeysTables(of: link)
                        let count = try database.prepare(sql)
                        if try count.step() { report.relationshipsSet += Int(count.int64(at: 0)) }
                    } else if link.countGroup != nil || link.countedWithGroup {
                        // (Counted above, with the first part of the group.)
                    } else if !first, link.countWrittenSQL != nil {
                        // A to-many whose keys a link of it wrote (in stage 1 or by its
                        // `UPDATE`), with no interpreted link run since: no instance gains
                        // a member.
                        continue
                    } else if link.countsEveryInstance, let rows = writtenKeys {
                        // A to-one: every instance, the rows stage 1 wrote.
                        report.relationshipsSet += rows.count
                    } else {
                        try writeKeysTables(of: link)
                        let count: Statement
                        if prelinked, first, let sql = link.countWrittenSQL,
                            let rows = manager.runner(at: link.key.holder).writtenKeys
                        {
                            count = try database.prepare(sql)
                            try count.bind(rows.lowerBound, at: 1)
                            try count.bind(rows.upperBound - 1, at: 2)
                        } else {
                            count = try database.prepare(
                                prelinked && first ? link.countBeforeAnyLinkSQL : link.countSQL)
                        }
                        if try count.step() { report.relationshipsSet += Int(count.int64(at: 0)) }
                    }
                    // Unless written in stage 1, or by the inverse's link from the other side.
                    if first, !prelinked {
                        try writeKeysTables(of: link)
                        try database.execute(rewrites.contains(link.key) ? link.rewriteSQL ?? link.sql : link.sql)
                        if let inverse = link.alsoWrites { manager.sqlLinksWritten.insert(inverse) }
                    }
                    // Its first link has run: the keys stage 1 wrote are now what the
                    // interpreter would find set, also once an interpreted link has run.
                    if first, prelinked { manager.prelinksLinked.insert(link.key) }
                }
            }
        } catch {
            throw MigrationError(
                .destinationStore, "cannot link the \(plan.destinationEntity) rows with SQL: \(error)",
                underlying: error)
        }
        execution.relationshipsAsSQL = true
        execution.relationshipsReason = nil
        try manager.checkCancelled()
        return true
    }
}
