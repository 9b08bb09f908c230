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

    public init(models: [ObjectModel], mappings: [MappingModel], policies: PolicyRegistry = PolicyRegistry(),
                options: MigrationOptions = MigrationOptions()) {
        self.models = models
        self.mappings = mappings
        self.policies = policies
        self.options = options
    }

    /// One step of a plan.
    public struct Step: Sendable {
        public let source: ObjectModel
        public let destination: ObjectModel
        public let mapping: MappingModel
    }

    /// The model version of the store at `path`: by the version hashes of stores written
    /// here, by schema for stores written by Apple's Core Data.
    public func version(ofStoreAt path: String) throws(MigrationError) -> ObjectModel {
        guard FileManager.default.fileExists(atPath: path) else {
            throw MigrationError(.sourceStore, "no such store: \(path)")
        }
        do {
            return try StoreMatcher.identify(storeAt: path, among: models)
        } catch {
            throw MigrationError(.sourceStore, error.description)
        }
    }

    /// The steps from `from` (default: the store's version) to `to` (default: the newest).
    public func plan(storeAt path: String, from: String? = nil, to: String? = nil) throws(MigrationError) -> [Step] {
        let start: ObjectModel
        if let from { start = try model(named: from) } else { start = try version(ofStoreAt: path) }
        return try plan(from: start.version, to: to ?? models.last!.version)
    }

    /// The steps from version `from` to version `to`.
    public func plan(from: String, to: String) throws(MigrationError) -> [Step] {
        let start = try index(of: from), end = try index(of: to)
        guard start <= end else {
            throw MigrationError(.invalidMapping, "cannot migrate backwards from \(from) to \(to); versions run \(models.map(\.version).joined(separator: " → "))")
        }
        var steps: [Step] = []
        for i in stride(from: start, to: end, by: 1) {
            let source = models[i], destination = models[i + 1]
            guard let mapping = mappings.first(where: { $0.sourceModel == source.version && $0.destinationModel == destination.version }) else {
                throw MigrationError(.invalidMapping,
                    "no mapping file maps \(source.version) → \(destination.version); write one with \"sourceModel\": \"\(source.version)\" and \"destinationModel\": \"\(destination.version)\" in the mappings folder")
            }
            steps.append(Step(source: source, destination: destination, mapping: mapping))
        }
        return steps
    }

    private func index(of version: String) throws(MigrationError) -> Int {
        guard let i = models.firstIndex(where: { $0.version == version }) else {
            throw MigrationError(.invalidMapping, "no model version '\(version)'; the versions are \(models.map(\.version).joined(separator: ", "))")
        }
        return i
    }

    private func model(named version: String) throws(MigrationError) -> ObjectModel {
        models[try index(of: version)]
    }

    /// Every problem of every mapping against its models and the policies.
    public func check() -> [MappingError] {
        var errors: [MappingError] = []
        for mapping in mappings {
            guard let source = models.first(where: { $0.version == mapping.sourceModel }) else {
                errors.append(MappingError(file: mapping.file, path: "sourceModel", message:
                    "no model version '\(mapping.sourceModel)'; the versions are \(models.map(\.version).joined(separator: ", "))"))
                continue
            }
            guard let destination = models.first(where: { $0.version == mapping.destinationModel }) else {
                errors.append(MappingError(file: mapping.file, path: "destinationModel", message:
                    "no model version '\(mapping.destinationModel)'; the versions are \(models.map(\.version).joined(separator: ", "))"))
                continue
            }
            errors += MigrationManager.check(mapping, source: source, destination: destination, policies: policies)
        }
        return errors
    }

    /// What happened in one step.
    public struct StepReport: Sendable {
        public let source: String
        public let destination: String
        public let report: MigrationReport
    }

    /// Runs the steps from the store's version (or `from`) to `to` (default: the newest).
    /// Each step writes a new file beside the store and, once it is complete, puts it in
    /// the store's place; a failure leaves the store at the last completed version.
    public func migrate(storeAt path: String, from: String? = nil, to: String? = nil,
                        progress: ((Step, MigrationProgress) -> Void)? = nil) throws(MigrationError) -> [StepReport] {
        let steps = try plan(storeAt: path, from: from, to: to)
        var reports: [StepReport] = []
        for step in steps {
            let manager: MigrationManager
            do {
                manager = try MigrationManager(mapping: step.mapping, source: step.source, destination: step.destination,
                                               policies: policies, options: options)
            } catch {
                throw MigrationError(.invalidMapping, "the mapping \(step.source.version) → \(step.destination.version) has problems:\n\(error.description)")
            }
            let report = try StoreFiles.replace(storeAt: path, backupSuffix: keepsBackup ? ".\(step.source.version).bak" : nil) {
                (temporary: String) throws(MigrationError) in
                try manager.migrateStore(from: path, to: temporary) { progress?(step, $0) }
            }
            reports.append(StepReport(source: step.source.version, destination: step.destination.version, report: report))
        }
        return reports
    }
}
