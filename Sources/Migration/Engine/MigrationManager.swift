import ExpressionLanguage
import Foundation
import ObjectGraph
import Synchronization

/// Runs one migration step, from a store at a source model version to a new store at the
/// destination version, through Core Data's three stages (docs/engine.md).
///
///     var policies = PolicyRegistry()
///     policies.register("BookToBookPolicy") { BookToBookPolicy() }
///     let manager = try MigrationManager(mapping: mapping, source: model1, destination: model2, policies: policies)
///     let report = try manager.migrateStore(from: "Books.sqlite", to: "Books-2.sqlite") { progress in
///         print(progress.entityMapping, progress.fraction)
///     }
///
/// The source is opened read-only and never changed; the destination must not exist yet
/// and is removed again if the run fails. Source rows are read through cursors, new rows
/// are written in chunks of ``MigrationOptions/chunkSize``, and what stays in memory is
/// the association table (runs of consecutive keys: a few bytes per gap in the keys, at
/// most 28 bytes per destination instance).
///
/// Expressions and policies see the manager as `$manager`: `sourceContext`,
/// `destinationContext`, `userInfo`, `currentEntityMapping`, `migrationProgress`, and
/// the functions of docs/engine.md.
public final class MigrationManager: KeyValueCoding {
    public let mappingModel: MappingModel
    public let sourceModel: ObjectModel
    public let destinationModel: ObjectModel
    public let policies: PolicyRegistry
    public var options: MigrationOptions
    /// Values policies share during a run (lookup tables); expressions read them as
    /// `$manager.userInfo.key`.
    public var userInfo: [String: Value] = [:]

    /// The source store's context, during a run.
    public var sourceContext: ObjectContext { contexts!.source }
    /// The destination store's context, during a run.
    public var destinationContext: ObjectContext { contexts!.destination }
    /// The entity mapping being run.
    public internal(set) var currentEntityMapping: EntityMapping?
    /// Of the run so far, 0…1.
    public internal(set) var migrationProgress = 0.0

    let prepared: PreparedMapping
    var contexts: (source: ObjectContext, destination: ObjectContext)?
    var runners: [EntityMappingRunner] = []
    var runnersByName: [String: EntityMappingRunner] = [:]
    var associations: [AssociationTable] = []
    /// What the links of stage 2 run as SQL have written since the last interpreted
    /// stage 2 that linked objects (``SQLLink/key``).
    var sqlLinksWritten: Set<SQLLink.Key> = []
    /// Whether a mapping's relationships were set by the interpreter in this run (which
    /// may have written key columns that links by SQL find set).
    var interpretedLinks = false
    /// The keys SQL may write in stage 1, by the entity mapping whose rows hold them
    /// (``SQLLink/Key``).
    var prelinks: [Int: [SQLLink.Key]] = [:]
    /// The keys stage 1 wrote, which their links in stage 2 need not write again.
    var prelinked: Set<SQLLink.Key> = []
    /// Those of ``prelinked`` whose relationship's first link has run: the interpreter
    /// would find them set from then on, whatever runs later.
    var prelinksLinked: Set<SQLLink.Key> = []

    /// Whether stage 1 wrote `key` and no link of its relationship has run yet: the
    /// interpreter would still find it unset.
    func isUnlinkedPrelink(_ key: SQLLink.Key) -> Bool {
        prelinked.contains(key) && !prelinksLinked.contains(key)
    }
    /// The order stage 1 runs the entity mappings in: the mapping model's, but for a
    /// mapping run before the mappings holding keys to its objects (``planSQL(source:destination:)``).
    var stage1Order: [Int] = []
    /// Whether ``stage1Order`` runs a mapping ahead of one that could fail before it: should
    /// the run fail, it runs again in the file's order (``migrateStore(from:to:externalData:progress:)``),
    /// and reports the error that order gives.
    var reorderedOnTrial = false
    /// Whether stage 1 keeps the file's order: the run again after a failure that a
    /// mapping run ahead on trial may have put before the file's first.
    var keepsFileOrder = false
    /// Whether the run's stage 1 is done: a failure after it is the same in any order of
    /// stage 1, which writes the same rows (each mapping run ahead writes a table of its
    /// own), and needs no second run.
    var stage1Done = false
    /// Whether stage 1 may set relationships (``planLinksWithInstances()``); off only to
    /// compare with the run that sets them in stage 2.
    var setsLinksWithInstances = true
    /// Whether the source is a store an earlier step of the same run wrote and validated
    /// (``StoreMigrator`` sets it for a chain's later steps): SQL then reads its columns
    /// as they are, without the conversions and checks a store from elsewhere needs
    /// (docs/pushdown.md, "A store the run wrote").
    var sourceIsWellTyped = false
    let sourceEntityIndex: [String: UInt16]
    let destinationEntityIndex: [String: UInt16]
    let cancellation = Mutex<MigrationError?>(nil)
    let isCancelled = Atomic<Bool>(false)
    /// The connection a run's SQL runs on (the destination's, the source attached), held
    /// while the run has it open: ``cancel(_:)`` interrupts the statement it is running.
    let running = Mutex<Database.Interrupter?>(nil)
    var progressHandler: ((MigrationProgress) -> Void)?
    var lastProgress = ContinuousClock.now

    /// Checks `mapping` against the models and the policies and compiles it.
    /// Throws every problem found (see ``check(_:source:destination:policies:)``).
    public init(
        mapping: MappingModel, source: ObjectModel, destination: ObjectModel,
        policies: PolicyRegistry = PolicyRegistry(), options: MigrationOptions = MigrationOptions()
    ) throws(MappingErrors) {
        var compiler = MappingCompiler(mapping, source: source, destination: destination, policies: policies)
        let prepared = compiler.prepare()
        if !compiler.errors.isEmpty { throw MappingErrors(compiler.errors) }
        self.prepared = prepared
        self.mappingModel = mapping
        self.sourceModel = source
        self.destinationModel = destination
        self.policies = policies
        self.options = options
        sourceEntityIndex = Dictionary(uniqueKeysWithValues: source.entities.enumerated().map { ($1.name, UInt16($0)) })
        destinationEntityIndex = Dictionary(
            uniqueKeysWithValues: destination.entities.enumerated().map { ($1.name, UInt16($0)) })
    }

    /// The entity mappings of `mapping` as a run applies them: a copy or transform mapping
    /// with the property mappings it implies (same-named attributes copied, relationships
    /// re-linked) added (``PropertyMapping/isImplicit``), and every problem found.
    public static func effectiveEntityMappings(
        _ mapping: MappingModel, source: ObjectModel, destination: ObjectModel,
        policies: PolicyRegistry = PolicyRegistry()
    ) -> (entityMappings: [EntityMapping], errors: [MappingError]) {
        var compiler = MappingCompiler(mapping, source: source, destination: destination, policies: policies)
        let prepared = compiler.prepare()
        return (prepared.entityMappings.map(\.mapping), compiler.errors)
    }

    /// How a run would run each entity mapping of `mapping` (docs/pushdown.md): as SQL or
    /// interpreted, and why, before any row is seen. A run can still interpret a mapping
    /// planned as SQL, when a source row meets one of its checks.
    ///
    /// `sourceIsWellTyped` is true for a step that reads the store an earlier step of the
    /// same run writes (a chain's later steps): SQL reads that store's columns as they
    /// are, so it checks fewer rows.
    public static func plannedExecutions(
        _ mapping: MappingModel, source: ObjectModel, destination: ObjectModel,
        policies: PolicyRegistry = PolicyRegistry(),
        options: MigrationOptions = MigrationOptions(), sourceIsWellTyped: Bool = false
    ) -> [(entityMapping: String, execution: MappingExecution)] {
        var compiler = MappingCompiler(mapping, source: source, destination: destination, policies: policies)
        let prepared = compiler.prepare().entityMappings
        // (By index: a mapping that does not compile has none.)
        let usesDefaultPolicy = Dictionary(
            prepared.map { ($0.index, policies.makePolicy(for: $0.mapping).isDefault) }, uniquingKeysWith: { a, _ in a }
        )
        let (plans, linksAfterInterpreted) =
            options.pushdown
            ? SQLMappingPlan.plans(
                prepared, usesDefaultPolicy: { usesDefaultPolicy[$0.index] == true }, functions: policies.functions,
                source: StoreLayout(model: source), sourceIsWellTyped: sourceIsWellTyped,
                destination: StoreLayout(model: destination))
            : ([:], [:])
        let byName = Dictionary(prepared.map { ($0.mapping.name, $0) }, uniquingKeysWith: { a, _ in a })
        // As the run chooses them: its stage 1 order is the file's whenever one links in
        // the interpreter.
        let withInstances =
            usesDefaultPolicy.values.allSatisfy { $0 }
            ? linksWithInstances(
                prepared,
                interpretedBothStages: { i in
                    if case .success? = plans[i] { return false }
                    if let links = linksAfterInterpreted[i], case .success = links.links { return false }
                    return true
                }, stage1Order: prepared.map(\.index), source: source, destination: destination) : []
        return mapping.entityMappings.map { m in
            guard let p = byName[m.name] else {
                let problem = compiler.errors.first { $0.path.contains("\"\(m.name)\"") }?.message ?? "see `check`"
                var execution = MappingExecution(instancesAsSQL: false, relationshipsAsSQL: false)
                execution.problem = problem
                return (m.name, execution)
            }
            var execution = execution(of: plans[p.index], linksAfterInterpreted: linksAfterInterpreted[p.index])
            execution.relationshipsWithInstances = withInstances.contains(p.index)
            return (m.name, execution)
        }
    }

    /// What a plan says before the run: SQL, or interpreted and why (with its links as SQL
    /// when `linksAfterInterpreted` has them).
    static func execution(
        of plan: Result<SQLMappingPlan, SQLTranslator.Refusal>?, linksAfterInterpreted: SQLMappingPlan? = nil
    ) -> MappingExecution {
        switch plan {
        case .success(let plan)?: return plan.plannedExecution
        case .failure(let refusal)?:
            var execution = MappingExecution(
                instancesAsSQL: false, instancesReason: refusal.reason, relationshipsAsSQL: false)
            if case .success? = linksAfterInterpreted?.links { execution.relationshipsAsSQL = true }
            return execution
        case nil:
            return MappingExecution(instancesAsSQL: false, instancesReason: "--no-pushdown", relationshipsAsSQL: false)
        }
    }

    /// Every problem of `mapping` against the models and policies; empty when it can run.
    public static func check(
        _ mapping: MappingModel, source: ObjectModel, destination: ObjectModel,
        policies: PolicyRegistry = PolicyRegistry()
    ) -> [MappingError] {
        var compiler = MappingCompiler(mapping, source: source, destination: destination, policies: policies)
        _ = compiler.prepare()
        return compiler.errors
    }

    // MARK: - Running

    /// Migrates the store at `sourcePath` into a new store at `destinationPath`.
    /// On failure the destination is removed and the source is as it was.
    ///
    /// `externalData` says where the new store's external binary data goes (by default,
    /// its own support folder) and where references are also looked up, for the source
    /// too: a step writes into the folder of the store it will replace. The files written
    /// are synced before this returns, and removed on failure.
    @discardableResult
    public func migrateStore(
        from sourcePath: String, to destinationPath: String, externalData: ExternalDataFiles? = nil,
        progress: ((MigrationProgress) -> Void)? = nil
    ) throws(MigrationError) -> MigrationReport {
        let started = ContinuousClock.now
        progressHandler = progress
        var succeeded = false
        defer {
            progressHandler = nil
            if !(succeeded && options.keepsResults) { releaseResults() }
            currentEntityMapping = nil
            keepsFileOrder = false
        }
        var report: MigrationReport
        (reorderedOnTrial, stage1Done) = (false, false)
        do {
            report = try migrateStoreOnce(from: sourcePath, to: destinationPath, externalData: externalData)
        } catch  where reorderedOnTrial && !stage1Done && error.kind != .cancelled {
            // (A mapping ran ahead of one that could fail before it: the file's order
            // tells which error comes first.)
            keepsFileOrder = true
            report = try migrateStoreOnce(from: sourcePath, to: destinationPath, externalData: externalData)
        }
        report.seconds = (ContinuousClock.now - started).seconds
        succeeded = true
        return report
    }

    /// One run of ``migrateStore(from:to:externalData:progress:)``: the destination
    /// written, or removed with what it wrote.
    private func migrateStoreOnce(
        from sourcePath: String, to destinationPath: String, externalData: ExternalDataFiles?
    ) throws(MigrationError) -> MigrationReport {
        let source: Store
        do {
            source = try Store.open(at: sourcePath, model: sourceModel, mode: .readOnly)
            if let externalData {
                source.externalData = ExternalDataFiles(
                    folder: ExternalBinaryData.folder(ofStoreAt: sourcePath), alsoReading: externalData.readFolders)
            }
            try source.beginReadSnapshot()
        } catch {
            throw MigrationError(.sourceStore, "cannot open the source store: \(error)", underlying: error)
        }
        let destination: Store
        do {
            // Its indexes once stage 1 has written the rows (``run(source:destination:)``).
            destination = try Store.create(at: destinationPath, model: destinationModel, deferringIndexes: true)
            if let externalData { destination.externalData = externalData }
        } catch {
            throw MigrationError(.destinationStore, "cannot create the destination store: \(error)", underlying: error)
        }
        running.withLock { $0 = destination.database.interrupter }
        defer { running.withLock { $0 = nil } }
        do {
            // The destination is a new file that is thrown away on failure.
            try destination.beginScratchWrites()
            try run(source: source, destination: destination)
            // What Core Data writes for the new version, and what the source store kept:
            // its UUID and its other entries (an app's own keys).
            try destination.setMetadata(StoreMetadata(model: destinationModel, carrying: source.metadata))
            try destination.endScratchWrites()
            try destination.externalData.syncWritten()
        } catch {
            releaseResults()
            Self.removeStoreFiles(at: destinationPath)
            destination.externalData.removeWritten()
            // A statement a cancellation interrupted failed because of it: the error is
            // the cancellation, where the statement ran.
            if isCancelled.load(ordering: .acquiring), let cancelled = cancellation.withLock({ $0 }) {
                guard var placed = error as? MigrationError else { throw cancelled }
                if placed.kind != .cancelled {
                    placed.kind = .cancelled
                    placed.message = cancelled.message
                    placed.underlying = nil
                }
                throw placed
            }
            if let error = error as? MigrationError { throw error }
            throw MigrationError(.destinationStore, "\(error)", underlying: error)
        }
        return MigrationReport(
            entityMappings: runners.map {
                var r = $0.report; r.execution = $0.execution; return r
            },
            seconds: 0)
    }

    /// Releases what a run kept for its lookups (``MigrationOptions/keepsResults``): the
    /// contexts, closing both stores, the associations and the entity mappings' runners.
    /// The runners' expressions hold the manager as `$manager`, so a manager that kept
    /// them is freed only once they are released.
    public func releaseResults() {
        runners = []
        runnersByName = [:]
        contexts = nil
        associations = []
    }

    /// Asks a run to stop: it stops at the next hook, removes the destination and throws
    /// a ``MigrationError/Kind/cancelled`` error. Callable from any thread.
    public func cancel(_ reason: String = "the migration was cancelled") {
        cancellation.withLock { $0 = $0 ?? MigrationError(.cancelled, reason) }
        isCancelled.store(true, ordering: .releasing)
        // A statement that runs long (a chunk, a link, an index, the validation) stops
        // where it is, and fails with SQLITE_INTERRUPT, which the run reports as the
        // cancellation. (The connection is held under the lock: it stays open.)
        running.withLock { $0?.interrupt() }
    }

    func checkCancelled() throws(MigrationError) {
        // Checked for every instance: an atomic load, and the lock only once cancelled.
        guard isCancelled.load(ordering: .acquiring) else { return }
        if let error = cancellation.withLock({ $0 }) { throw error }
    }

    func run(source: Store, destination: Store) throws(MigrationError) {
        stage1Done = false
        let sourceContext = ObjectContext(store: source, functions: policies.functions)
        let destinationContext = ObjectContext(store: destination, functions: policies.functions)
        destinationContext.validatesOnSave = false
        destinationContext.versionsUpdates = false
        contexts = (sourceContext, destinationContext)
        let sourceTables = sourceModel.entities.map { tableIndex(source.layout, $0.name) }
        let destinationTables = destinationModel.entities.map { tableIndex(destination.layout, $0.name) }
        let runsInMemory = max(1, options.associationRunsInMemory / max(1, 2 * prepared.entityMappings.count))
        associations = prepared.entityMappings.map { _ in
            AssociationTable(
                sourceTables: sourceTables, destinationTables: destinationTables, spillsAfter: runsInMemory)
        }
        sqlLinksWritten = []
        interpretedLinks = false
        prelinked = []
        prelinksLinked = []
        runners = []
        for p in prepared.entityMappings {
            let policy = policies.makePolicy(for: p.mapping)
            let runner = EntityMappingRunner(p, policy: policy, manager: self)
            runners.append(runner)
            runnersByName[p.mapping.name] = runner
        }
        try planSQL(source: source, destination: destination)
        planLinksWithInstances()
        defer { detachSource(from: destination) }
        let steps = Double(max(1, runners.count * 3))
        var done = 0.0
        // Stage 1: create destination instances.
        for runner in stage1Order.map({ runners[$0] }) {
            currentEntityMapping = runner.mapping
            try runner.stage { () throws(MigrationError) in
                try runner.createInstances { rows, total, rate in
                    self.report(.createInstances, runner, (done + fraction(rows, total)) / steps, rows, total, rate)
                }
            }
            if !runner.execution.instancesAsSQL,
                runners.contains(where: { $0.planOfLinks?.linksTo(runner.index) == true })
                    || runner.linksAfterInterpreted != nil
            {
                try writeKeys(of: runner, in: destination.database)
            }
            done += 1
            migrationProgress = done / steps
            report(
                .createInstances, runner, migrationProgress, runner.report.sourceInstances,
                runner.report.sourceInstances, 0, force: true)
        }
        stage1Done = true
        // The indexes, built once from the rows (stage 1 only inserts: its fetches of the
        // destination, should a policy make any, are slower without them, not different),
        // before stage 2's links, counts and fetches read them.
        do {
            try destination.createDeferredIndexes()
        } catch {
            throw MigrationError(
                .destinationStore, "cannot create the destination's indexes: \(error)", underlying: error)
        }
        // Stage 2: relationships.
        for runner in runners {
            currentEntityMapping = runner.mapping
            try runner.stage { () throws(MigrationError) in
                try runner.createAllRelationships(
                    associations: associationCount(runner),
                    destination: { position throws(MigrationError) in
                        let d = try self.lookUp { () throws(SQLiteError) in
                            try self.associations[runner.index].destinations.object(at: position)
                        }
                        return (self.destinationModel.entities[Int(d.entity)].name, d.key)
                    }
                ) { rows, total, rate in
                    self.report(.createRelationships, runner, (done + fraction(rows, total)) / steps, rows, total, rate)
                }
            }
            done += 1
            migrationProgress = done / steps
            report(
                .createRelationships, runner, migrationProgress, runner.report.destinationInstances,
                runner.report.destinationInstances, 0, force: true)
        }
        // Stage 3: the store against the destination model's rules, then the policies.
        do {
            try destinationContext.save()
        } catch {
            throw MigrationError(.destinationStore, "cannot save the new store: \(error)", underlying: error)
        }
        let failures: [ContextError]
        do {
            failures = try StoreValidator(store: destination).failures(
                limit: 10, attributesChecked: attributesCheckedAsWritten())
        } catch {
            throw MigrationError(.destinationStore, "cannot validate the new store: \(error)", underlying: error)
        }
        if let first = failures.first {
            let more =
                failures.count > 1
                ? " (and \(failures.count - 1) more: " + failures.dropFirst().map(\.description).joined(separator: "; ")
                    + ")" : ""
            throw MigrationError(
                .validation, "the new store fails validation: \(first.description)\(more)",
                entityMapping: entityMapping(producing: first.object))
        }
        for runner in runners {
            currentEntityMapping = runner.mapping
            try runner.stage { () throws(MigrationError) in
                try runner.hook("performCustomValidation(forMapping:manager:)") {
                    try runner.policy.performCustomValidation(forMapping: runner.mapping, manager: self)
                }
                try runner.hook("end(_:manager:)") { try runner.policy.end(runner.mapping, manager: self) }
                try self.save()
            }
            done += 1
            migrationProgress = done / steps
            report(.validate, runner, migrationProgress, 0, nil, 0, force: true)
        }
    }

    func runner(at index: Int) -> EntityMappingRunner { runners[index] }

    /// The destination entities whose every instance SQL wrote with its attributes'
    /// rules checked and kept (``EntityMappingRunner/attributesValidated``), when nothing
    /// could change an attribute after (every policy is the default one): the validation
    /// need not check those rules again.
    func attributesCheckedAsWritten() -> Set<String> {
        guard runners.allSatisfy({ $0.policy.isDefault }) else { return [] }
        var checked: [String: Bool] = [:]
        for runner in runners {
            guard let entity = runner.prepared.destinationEntity?.name else { continue }
            checked[entity] = (checked[entity] ?? true) && runner.execution.instancesAsSQL && runner.attributesValidated
        }
        return Set(checked.filter(\.value).keys)
    }

    func fraction(_ rows: Int, _ total: Int?) -> Double {
        guard let total, total > 0 else { return 0 }
        return min(1, Double(rows) / Double(total))
    }

    func tableIndex(_ layout: StoreLayout, _ entity: String) -> UInt16 {
        let tables = layout.tables.keys.sorted()
        return UInt16(tables.firstIndex(of: layout.entities[entity]!.table)!)
    }

    func associationCount(_ runner: EntityMappingRunner) -> Int { associations[runner.index].count }

    /// The entity mapping that created the destination object described as `Entity/pk`.
    func entityMapping(producing object: String?) -> String? {
        guard let object, let slash = object.firstIndex(of: "/"),
            let key = Int64(object[object.index(after: slash)...]),
            let entity = destinationEntityIndex[String(object[..<slash])]
        else { return nil }
        for runner in runners
        where (try? associations[runner.index].sources(ofDestination: entity, key: key).isEmpty) == false {
            return runner.mapping.name
        }
        return nil
    }

    func report(
        _ stage: MigrationProgress.Stage, _ runner: EntityMappingRunner, _ fraction: Double,
        _ rows: Int, _ total: Int?, _ rate: Double, force: Bool = false
    ) {
        migrationProgress = fraction
        guard let progressHandler else { return }
        let now = ContinuousClock.now
        guard force || now - lastProgress > .milliseconds(100) else { return }
        lastProgress = now
        progressHandler(
            MigrationProgress(
                fraction: fraction, stage: stage, entityMapping: runner.mapping.name,
                rows: rows, totalRows: total, rowsPerSecond: rate))
    }

    /// Saves the destination context if a chunk's worth of objects is waiting.
    func saveIfNeeded() throws(MigrationError) {
        let context = destinationContext
        if context.pendingObjectCount + context.rowsWritten >= options.chunkSize
            || context.pendingValueBytes >= options.chunkBytes
        {
            try save()
        }
    }

    func save() throws(MigrationError) {
        do {
            try destinationContext.save()
        } catch {
            throw MigrationError(.destinationStore, "cannot write to the new store: \(error)", underlying: error)
        }
    }

    func runner(for mapping: EntityMapping) throws(MigrationError) -> EntityMappingRunner {
        guard let runner = runnersByName[mapping.name] else {
            throw MigrationError(.invalidMapping, "no entity mapping named '\(mapping.name)' is running")
        }
        return runner
    }

    /// Removes a store file and its side files (journal, WAL, shared memory).
    public static func removeStoreFiles(at path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }

    // MARK: - Key-value coding

    public func value(forKey key: String) throws -> Value {
        switch key {
        case "sourceContext": return .object(ObjectReference(sourceContext))
        case "destinationContext": return .object(ObjectReference(destinationContext))
        case "userInfo": return .dictionary(userInfo)
        case "currentEntityMapping":
            return currentEntityMapping.map { .object(ObjectReference(EntityMappingObject($0))) } ?? .null
        case "migrationProgress": return .double(migrationProgress)
        case "sourceModel": return .string(sourceModel.version)
        case "destinationModel": return .string(destinationModel.version)
        default: throw ExpressionError(.unknownKey, "the migration manager has no key '\(key)'")
        }
    }

    public var kindName: String { "NSMigrationManager" }
    public var objectDescription: String { "migration manager \(sourceModel.version) → \(destinationModel.version)" }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
