import ExpressionLanguage
import Foundation
import ObjectGraph

/// Brings a store from the version it is at to a later one, one step per pair of
/// consecutive model versions, each step a separate migration that replaces the store only
/// when it has completed (docs/engine.md, "Steps and safety").
///
///     let migrator = StoreMigrator(models: try ObjectModel.loadVersions(at: modelsURL),
///                                  mappings: try MappingModel.loadAll(in: mappingsURL),
///                                  policies: .bookMigration)
///     let reports = try migrator.migrate(storeAt: "Books.sqlite", to: "Model3")
public struct StoreMigrator {
    /// The model versions, oldest first.
    public var models: [ObjectModel]
    public var mappings: [MappingModel]
    public var policies: PolicyRegistry
    public var options: MigrationOptions
    /// Keep the store as it was before each step, as `<store>.<version>.bak`.
    public var keepsBackup = true
    /// Whether a store with damaged rows (``damage(ofStoreAt:at:limit:)``) is refused before
    /// anything is written; by default such rows are read as every command reads them
    /// (converted, or not read), and the caller warns.
    public var refusesDamagedRows = false
    /// Whether a step that only renames (inferred, or by a mapping file that only copies)
    /// runs in one pass with the step beside it
    /// (``StepReport/isFused``; docs/engine.md, "Steps run as one").
    public var fusesSteps = true
    /// Stops ``migrate(storeAt:from:to:progress:)`` from any thread; copies of the
    /// migrator share it.
    public var cancellation = MigrationCancellation()
    /// Called at each moment of each step at which the files beside the store change
    /// (tests stop there to check what a crash would leave).
    var stepObserver: ((Step, StoreFiles.Moment) -> Void)?

    public init(
        models: [ObjectModel], mappings: [MappingModel], policies: PolicyRegistry = PolicyRegistry(),
        options: MigrationOptions = MigrationOptions()
    ) {
        self.models = models
        self.mappings = mappings
        self.policies = policies
        self.options = options
    }

    /// One step of a plan.
    public struct Step: Sendable {
        public let source: ObjectModel
        public let destination: ObjectModel
        /// The step's mapping file, or the mapping inferred when there is none.
        public let mapping: MappingModel
        /// Whether ``mapping`` was inferred (no mapping file maps the step).
        public let isInferred: Bool
        /// For an inferred mapping: the required properties it can leave without a value.
        public let warnings: [InferenceWarning]

        public init(
            source: ObjectModel, destination: ObjectModel, mapping: MappingModel, isInferred: Bool = false,
            warnings: [InferenceWarning] = []
        ) {
            self.source = source
            self.destination = destination
            self.mapping = mapping
            self.isInferred = isInferred
            self.warnings = warnings
        }
    }

    /// The model version of the store at `path`, told as Core Data tells it: by the entity
    /// version hashes in its metadata; by schema when they match no version
    /// (``StoreMatcher``).
    public func version(ofStoreAt path: String) throws(MigrationError) -> ObjectModel {
        try identification(ofStoreAt: path).model
    }

    /// The model version of the store at `path`, and how it was told. The files are not
    /// changed: a store with a WAL or a journal beside it is read from a copy with them
    /// folded in (``StoreSnapshot``).
    public func identification(ofStoreAt path: String) throws(MigrationError) -> StoreIdentification {
        let snapshot = try self.snapshot(ofStoreAt: path)
        defer { snapshot.remove() }
        return try identification(of: snapshot)
    }

    /// The damaged rows of the store at `path`, read as `version` (up to `limit`):
    /// ``StoreValidator/damage(limit:)`` on a snapshot of it.
    public func damage(ofStoreAt path: String, at version: String, limit: Int = 10) throws(MigrationError)
        -> [ContextError]
    {
        try damageCheck(ofStoreAt: path, at: version).damage(limit: limit)
    }

    /// ``damage(ofStoreAt:at:limit:)`` in two halves: the store's snapshot taken and opened
    /// now, its rows read by ``DamageCheck/damage(limit:)`` later, on any one thread, while
    /// a run of the store goes on (`mapping-migrate run` does so): nothing the run does to
    /// the store's files (folding its WAL, putting a new file in its place) changes what
    /// the check reads.
    public func damageCheck(ofStoreAt path: String, at version: String) throws(MigrationError) -> DamageCheck {
        let snapshot = try self.snapshot(ofStoreAt: path)
        do {
            return DamageCheck(
                snapshot: snapshot,
                store: try Store.open(at: snapshot.path, model: try model(named: version), mode: .readOnly))
        } catch {
            snapshot.remove()
            throw DamageCheck.failure(error, snapshot)
        }
    }

    /// A store opened to be checked for damaged rows (``damageCheck(ofStoreAt:at:)``).
    public final class DamageCheck: @unchecked Sendable {
        private let snapshot: StoreSnapshot
        private var store: Store?
        /// The store's connection, open until the check is released (``interrupt()``).
        private let database: Database

        init(snapshot: StoreSnapshot, store: Store) {
            self.snapshot = snapshot
            self.store = store
            database = store.database
        }

        /// Stops ``damage(limit:)`` where it is, from any thread: it then throws.
        public func interrupt() {
            database.interrupt()
        }

        /// Up to `limit` damaged rows (``StoreValidator/damage(limit:)``); the store is then
        /// closed and its snapshot removed.
        public func damage(limit: Int = 10) throws(MigrationError) -> [ContextError] {
            defer {
                store = nil
                snapshot.remove()
            }
            guard let store else { return [] }
            do {
                return try StoreValidator(store: store).damage(limit: limit)
            } catch {
                throw Self.failure(error, snapshot)
            }
        }

        static func failure(_ error: any Error, _ snapshot: StoreSnapshot) -> MigrationError {
            if let error = error as? MigrationError { return error }
            return MigrationError(
                .sourceStore,
                "cannot check the store for damaged rows: \(error)".replacingOccurrences(
                    of: snapshot.path, with: snapshot.store),
                underlying: error)
        }
    }

    /// The tables of the store at `path`, read as `version`, that no version's layout has
    /// (``Store/tablesOutsideTheModel()``): a migration does not carry them.
    public func tablesOutsideTheModel(ofStoreAt path: String, at version: String) throws(MigrationError) -> [(
        table: String, rows: Int
    )] {
        let snapshot = try self.snapshot(ofStoreAt: path)
        defer { snapshot.remove() }
        do {
            return try Store.open(at: snapshot.path, model: try model(named: version), mode: .readOnly)
                .tablesOutsideTheModel()
        } catch let error as MigrationError {
            throw error
        } catch {
            throw MigrationError(
                .sourceStore, "\(error)".replacingOccurrences(of: snapshot.path, with: path), underlying: error)
        }
    }

    /// What to say of tables a migration does not carry; nil when there are none.
    public static func tablesNote(_ tables: [(table: String, rows: Int)]) -> String? {
        guard !tables.isEmpty else { return nil }
        let list = tables.map { "\($0.table) (\($0.rows) row\($0.rows == 1 ? "" : "s"))" }.joined(separator: ", ")
        let history =
            tables.contains { ["ATRANSACTION", "ACHANGE", "ATRANSACTIONSTRING"].contains($0.table) }
            ? " (Core Data's persistent history)" : ""
        return
            "the store has tables its model does not describe: \(list)\(history); a migration writes a new store without them"
    }

    /// Throws when ``refusesDamagedRows`` and the store has damaged rows, naming them.
    func refuseDamage(ofStoreAt path: String, at version: String) throws(MigrationError) {
        guard refusesDamagedRows else { return }
        let damage = try damage(ofStoreAt: path, at: version)
        guard !damage.isEmpty else { return }
        throw MigrationError(
            .sourceStore,
            "\(path) has damaged rows, and damaged rows are refused:\n"
                + damage.map { "  \($0)" }.joined(separator: "\n")
                + "\nrepair them or run without refusing them (they are then read converted, or not read). Nothing was changed"
        )
    }

    /// A snapshot of the store at `path` to read it without changing it; remove it when done.
    public func snapshot(ofStoreAt path: String) throws(MigrationError) -> StoreSnapshot {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw MigrationError(.sourceStore, "no such store: \(path)")
        }
        guard !isDirectory.boolValue else {
            throw MigrationError(.sourceStore, "\(path) is a folder, not a store file; give the .sqlite file inside it")
        }
        do {
            return try StoreSnapshot(of: path)
        } catch {
            throw MigrationError(.sourceStore, error.description, underlying: error)
        }
    }

    /// The version of the store `snapshot` reads, with messages about the store itself.
    public func identification(of snapshot: StoreSnapshot) throws(MigrationError) -> StoreIdentification {
        do {
            return try StoreMatcher.identification(storeAt: snapshot.path, among: models)
        } catch {
            throw MigrationError(.sourceStore, snapshot.explaining(error.description), underlying: error)
        }
    }

    /// Removes what a run that was killed left beside a store that needs no step (its new
    /// file, its lock file), unless another run holds the lock: what ``migrate(storeAt:from:to:progress:)``
    /// does when there is nothing to migrate, for callers that stop at the plan.
    public func removeLeftovers(ofStoreAt path: String) {
        StoreFiles.removeLeftovers(of: StoreFiles.followingLink(path))
    }

    /// The steps from `from` (default: the store's version) to `to` (default: the newest).
    public func plan(storeAt path: String, from: String? = nil, to: String? = nil) throws(MigrationError) -> [Step] {
        let start: ObjectModel
        if let from { start = try model(named: from) } else { start = try version(ofStoreAt: path) }
        return try plan(from: start.version, to: to ?? models.last!.version)
    }

    /// The steps from version `from` to version `to`. A step that no mapping file maps
    /// gets the mapping Core Data would infer (``MappingInference``); one that cannot be
    /// inferred is an error naming the entity, the property and why.
    public func plan(from: String, to: String) throws(MigrationError) -> [Step] {
        // A mapping file no step would use is an error, never a silent skip: the run would
        // infer its step instead, and what the file says would not happen.
        let misplaced = placementProblems()
        guard misplaced.isEmpty else {
            throw MigrationError(
                .invalidMapping,
                "\(misplaced.count == 1 ? "a mapping file maps no step" : "\(misplaced.count) mapping files map no step") of the chain, so it would not be used:\n"
                    + misplaced.map { "  " + $0.description }.joined(separator: "\n"))
        }
        let start = try index(of: from), end = try index(of: to)
        guard start <= end else {
            throw MigrationError(
                .invalidMapping,
                "cannot migrate backwards from \(from) to \(to); versions run \(models.map(\.version).joined(separator: " → "))"
            )
        }
        var steps: [Step] = []
        for i in stride(from: start, to: end, by: 1) {
            let source = models[i], destination = models[i + 1]
            if let mapping = mappings.first(where: {
                $0.sourceModel == source.version && $0.destinationModel == destination.version
            }) {
                steps.append(Step(source: source, destination: destination, mapping: mapping))
                continue
            }
            let inference = MappingInference(from: source, to: destination)
            guard inference.errors.isEmpty else {
                throw MigrationError(
                    .invalidMapping, Self.cannotInfer(source.version, destination.version, inference.errors))
            }
            steps.append(
                Step(
                    source: source, destination: destination, mapping: inference.mapping, isInferred: true,
                    warnings: inference.warnings))
        }
        return steps
    }

    /// Why the step `from` → `to` has no mapping, and how to write one.
    static func cannotInfer(_ from: String, _ to: String, _ errors: [InferenceError]) -> String {
        "no mapping file maps \(from) → \(to), and a mapping cannot be inferred:\n"
            + errors.map { "  \($0)\n" }.joined()
            + "write a mapping file for the step (\"sourceModel\": \"\(from)\", \"destinationModel\": \"\(to)\") in the mappings folder; "
            + "`mapping-migrate infer --models <models> --from \(from) --to \(to) --draft` starts one with what can be inferred"
    }

    private func index(of version: String) throws(MigrationError) -> Int {
        guard let i = models.firstIndex(where: { $0.version == version }) else {
            throw MigrationError(
                .invalidMapping,
                "no model version '\(version)'; the versions are \(models.map(\.version).joined(separator: ", "))")
        }
        return i
    }

    private func model(named version: String) throws(MigrationError) -> ObjectModel {
        models[try index(of: version)]
    }

    /// Every problem of every mapping against its models and the policies, and of every
    /// step between consecutive versions that no mapping file maps and that cannot be
    /// inferred.
    public func check() -> [MappingError] {
        var errors: [MappingError] = []
        for (source, destination) in zip(models, models.dropFirst())
        where !mappings.contains(where: {
            $0.sourceModel == source.version && $0.destinationModel == destination.version
        }) {
            let inference = MappingInference(from: source, to: destination)
            if !inference.errors.isEmpty {
                errors.append(
                    MappingError(
                        .step, file: nil, path: "",
                        message: Self.cannotInfer(source.version, destination.version, inference.errors)))
            } else {
                errors += MigrationManager.check(
                    inference.mapping, source: source, destination: destination, policies: policies
                )
                .map { Self.inInferred($0, source.version, destination.version) }
            }
        }
        let misplaced = placementProblems()
        errors += misplaced
        for mapping in mappings where !misplaced.contains(where: { $0.file == mapping.file }) {
            guard let source = models.first(where: { $0.version == mapping.sourceModel }),
                let destination = models.first(where: { $0.version == mapping.destinationModel })
            else { continue }
            errors += MigrationManager.check(mapping, source: source, destination: destination, policies: policies)
        }
        return errors
    }

    /// The mapping files no step of the chain would use: a version that does not exist,
    /// or two versions that are not consecutive.
    func placementProblems() -> [MappingError] {
        let versions = models.map(\.version)
        let list = versions.joined(separator: ", ")
        var errors: [MappingError] = []
        for mapping in mappings {
            let source = versions.firstIndex(of: mapping.sourceModel),
                destination = versions.firstIndex(of: mapping.destinationModel)
            if source == nil {
                let hint =
                    Suggestion.closest(to: mapping.sourceModel, among: versions).map { "did you mean '\($0)'? " } ?? ""
                errors.append(
                    MappingError(
                        .step, file: mapping.file, path: "sourceModel",
                        message:
                            "no model version '\(mapping.sourceModel)'; \(hint)the versions are \(list)"))
            }
            if destination == nil {
                let hint =
                    Suggestion.closest(to: mapping.destinationModel, among: versions).map { "did you mean '\($0)'? " }
                    ?? ""
                errors.append(
                    MappingError(
                        file: mapping.file, path: "destinationModel",
                        message:
                            "no model version '\(mapping.destinationModel)'; \(hint)the versions are \(list)"))
            }
            if let source, let destination, destination != source + 1 {
                let why =
                    destination <= source
                    ? "it goes backwards"
                    : "versions between them (\(versions[(source + 1)..<destination].joined(separator: ", "))) would be skipped"
                errors.append(
                    MappingError(
                        file: mapping.file, path: "",
                        message:
                            "maps \(mapping.sourceModel) → \(mapping.destinationModel), which is not a step of the chain (\(versions.joined(separator: " → "))): \(why); a mapping file maps one version to the next"
                    ))
            }
        }
        return errors
    }

    /// A problem of a mapping inferred for `from` → `to`, placed in it.
    static func inInferred(_ error: MappingError, _ from: String, _ to: String) -> MappingError {
        var placed = error
        placed.file = "inferred \(from) → \(to)"
        return placed
    }

    /// What happened in one step.
    public struct StepReport: Sendable {
        public let source: String
        public let destination: String
        public let report: MigrationReport
        /// Whether the step was not run on its own but renamed what a step beside it read
        /// or wrote, in that step's pass (docs/engine.md, "Steps run as one"): its report
        /// is counted from the rows, and it took no time of its own.
        public var isFused = false
        /// The pass the step ran in, from 0: steps run as one share it. The store is kept
        /// as it was before each pass (`<store>.<first step's source>.bak`), and a crash
        /// leaves it at the version before or after a pass.
        public var pass = 0

        init(source: String, destination: String, report: MigrationReport, isFused: Bool = false, pass: Int = 0) {
            self.source = source
            self.destination = destination
            self.report = report
            self.isFused = isFused
            self.pass = pass
        }
    }

    /// Runs the steps from the store's version (or `from`) to `to` (default: the newest).
    /// Each step writes a new file beside the store and, once it is complete, puts it in
    /// the store's place; a failure, a cancellation (``cancellation``) or a crash leaves
    /// the store at the last completed version, and running again continues from there
    /// (docs/engine.md, "Steps and safety").
    ///
    /// Every step's mapping is checked and compiled before the store is touched, and one
    /// migration of a store runs at a time (`<store>.remodel-lock`).
    @discardableResult
    public func migrate(
        storeAt path: String, from: String? = nil, to: String? = nil,
        progress: ((Step, MigrationProgress) -> Void)? = nil
    ) throws(MigrationError) -> [StepReport] {
        // A link is followed: the file it names is migrated, and the link kept.
        let path = StoreFiles.followingLink(path)
        guard try !plan(storeAt: path, from: from, to: to).isEmpty else {
            StoreFiles.removeLeftovers(of: path)
            return []
        }
        try StoreFiles.checkWritable(folderOf: path)
        let lock = try StoreFiles.Lock(storeAt: path)
        defer { lock.release() }
        // Planned again under the lock: another run may have moved the store on.
        let steps = try plan(storeAt: path, from: from, to: to)
        try refuseDamage(ofStoreAt: path, at: steps[0].source.version)
        let managers = try managers(for: steps)
        var reports: [StepReport] = []
        var index = 0
        var pass = 0
        while index < steps.count {
            let step = steps[index]
            var running = "\(step.source.version) → \(step.destination.version)"
            do {
                // Renaming steps in one pass with the steps beside them; without the
                // renamings before (when the source holds what they would convert); should
                // the pass fail, the steps run one by one, and their own errors are reported.
                var attempt = fusesSteps && options.pushdown ? fusedRun(from: index, of: steps, leading: true) : nil
                while let run = attempt {
                    running = "\(step.source.version) → \(run.steps.last!.destination.version)"
                    if let ran = try self.run(run, pass: pass, storeAt: path, progress: progress) {
                        reports += ran
                        break
                    }
                    running = "\(step.source.version) → \(step.destination.version)"
                    attempt = run.leading.isEmpty ? nil : fusedRun(from: index, of: steps, leading: false)
                }
                if reports.count > index {
                    index = reports.count
                    pass += 1
                    continue
                }
                let report = try self.run(step, managers[index], storeAt: path, progress: progress)
                reports.append(
                    StepReport(
                        source: step.source.version, destination: step.destination.version, report: report, pass: pass))
                index += 1
                pass += 1
            } catch  where error.kind == .cancelled {
                let done =
                    reports.isEmpty
                    ? "" : " (" + reports.map { "\($0.source) → \($0.destination)" }.joined(separator: ", ") + " done)"
                throw MigrationError(
                    .cancelled,
                    "\(cancellation.reason ?? error.message): \(running) was stopped and its new file removed; "
                        + "\(path) is at \(step.source.version)\(done). Run again to continue")
            }
        }
        return reports
    }

    /// Runs `step` with `manager` into a new file that then takes the store's place;
    /// `reading` reads the store before the step does, `written` the new file before it
    /// takes the store's place.
    func run(
        _ step: Step, _ manager: MigrationManager, storeAt path: String,
        progress: ((Step, MigrationProgress) -> Void)?,
        reading: () throws(MigrationError) -> Void = {},
        written: (String) throws(MigrationError) -> Void = { _ in }
    ) throws(MigrationError) -> MigrationReport {
        try checkCancelled()
        cancellation.run(manager)
        defer { cancellation.run(nil) }
        let backupSuffix = keepsBackup ? ".\(step.source.version).bak" : nil
        let external = ExternalDataStep(storeAt: path, step: step, backup: backupSuffix.map { path + $0 })
        return try StoreFiles.replace(
            storeAt: path, backupSuffix: backupSuffix,
            observe: stepObserver.map { observe in { observe(step, $0) } },
            beforeCommit: checkCancelled, discard: external.discard, afterCommit: external.removeUnused
        ) { (temporary: String) throws(MigrationError) in
            try external.prepare()
            try reading()
            let report = try manager.migrateStore(from: path, to: temporary, externalData: external.files) {
                progress?(step, $0)
            }
            try written(temporary)
            return report
        }
    }

    private func checkCancelled() throws(MigrationError) {
        if let reason = cancellation.reason { throw MigrationError(.cancelled, reason) }
    }
}
