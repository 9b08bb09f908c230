import ExpressionLanguage
import Foundation
import ObjectGraph

extension StoreMigrator {
    /// A migrator for the model versions at `models` and the mapping files in `mappings`,
    /// as `mapping-migrate --models PATH --mappings DIR` finds them.
    ///
    ///     let migrator = try StoreMigrator(models: URL(fileURLWithPath: "Notes.xcdatamodeld"))
    ///     try migrator.migrate(storeAt: "Notes.sqlite")
    ///
    /// - Parameters:
    ///   - models: an `.xcdatamodeld` folder, a folder of `*.model.json` files (ordered by
    ///     `versions.json` when there is one), or one model file.
    ///   - mappings: the folder of `*.mapping.json` files; by default the models folder, or
    ///     the folder that holds the `.xcdatamodeld` or the model file
    ///     (``defaultMappingsFolder(forModels:)``).
    /// - Throws: ``ModelErrors`` for models that do not load, ``MappingErrors`` for mapping
    ///   files that do not (every problem of every file, each with its file and place).
    public init(
        models: URL, mappings: URL? = nil, policies: PolicyRegistry = PolicyRegistry(),
        options: MigrationOptions = MigrationOptions()
    ) throws {
        let versions = try ObjectModel.loadVersions(at: models)
        self.init(
            models: versions,
            mappings: try MappingModel.loadAll(
                in: mappings ?? Self.defaultMappingsFolder(forModels: models), models: versions),
            policies: policies, options: options)
    }

    /// Where the mapping files of the models at `models` are by default: the folder itself
    /// for a folder of model files; the folder that holds it for an `.xcdatamodeld`, an
    /// `.xcdatamodel` or a model file.
    public static func defaultMappingsFolder(forModels models: URL) -> URL {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: models.path, isDirectory: &isDirectory)
        let isModelBundle = ["xcdatamodeld", "xcdatamodel", "momd"].contains(models.pathExtension)
        return exists && isDirectory.boolValue && !isModelBundle ? models : models.deletingLastPathComponent()
    }

    /// The version a run goes to when none is named: for an `.xcdatamodeld` folder, its
    /// current version (`.xccurrentversion`, the one an app built from it loads); for a
    /// compiled `.momd`, the one its `VersionInfo.plist` names; `nil` (the newest version)
    /// for anything else, or when the folder names no current version.
    public static func currentVersion(ofModelsAt models: URL) -> String? {
        if models.pathExtension == "momd" {
            return (try? CompiledModelReader.versionInfo(ofModelAt: models))??.currentVersion
        }
        guard models.pathExtension == "xcdatamodeld",
            let data = FileManager.default.contents(atPath: models.appendingPathComponent(".xccurrentversion").path),
            let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
            let name = plist["_XCCurrentVersionName"] as? String
        else { return nil }
        return (name as NSString).deletingPathExtension
    }

    /// Migrates the store at `store` to `version` in one call: loads the models and the
    /// mapping files, plans the steps (a mapping file where there is one, the inferred
    /// mapping otherwise), and runs them, each replacing the store only once it is
    /// complete (docs/engine.md, "Steps and safety").
    ///
    ///     var policies = PolicyRegistry()
    ///     policies.register("BookToBookPolicy") { BookToBookPolicy() }
    ///     let steps = try StoreMigrator.migrateStore(
    ///         at: URL(fileURLWithPath: "Books.sqlite"), models: URL(fileURLWithPath: "Model.xcdatamodeld"),
    ///         to: "Model3", policies: policies) { step, progress in
    ///         print(step.destination.version, progress.entityMapping, progress.fraction)
    ///     }
    ///
    /// - Parameters:
    ///   - store: the store; it is migrated in place, and the store before each step is
    ///     kept as `<store>.<version>.bak` unless `keepsBackup` is false.
    ///   - models, mappings: as for ``init(models:mappings:policies:options:)``.
    ///   - version: the version to migrate to; by default the `.xcdatamodeld`'s current
    ///     version, or the newest.
    ///   - progress: called as the steps run, a few times a second and at the end of every
    ///     stage of every entity mapping.
    /// - Returns: what each step did; empty when the store is already at `version`.
    /// - Throws: ``ModelErrors`` or ``MappingErrors`` when the models or the mapping files
    ///   do not load; ``MigrationError`` when a step cannot be planned or fails (the store
    ///   is then at the last version reached).
    @discardableResult
    public static func migrateStore(
        at store: URL, models: URL, mappings: URL? = nil, to version: String? = nil,
        policies: PolicyRegistry = PolicyRegistry(), options: MigrationOptions = MigrationOptions(),
        keepsBackup: Bool = true,
        progress: ((Step, MigrationProgress) -> Void)? = nil
    ) throws -> [StepReport] {
        var migrator = try StoreMigrator(models: models, mappings: mappings, policies: policies, options: options)
        migrator.keepsBackup = keepsBackup
        return try migrator.migrate(
            storeAt: store.path, to: version ?? currentVersion(ofModelsAt: models), progress: progress)
    }

    /// The managers of `steps`, run in order, each told whether it reads a store the run
    /// wrote (``readsAStoreTheRunWrote(_:at:)``).
    func managers(for steps: [Step]) throws(MigrationError) -> [MigrationManager] {
        var managers: [MigrationManager] = []
        for (index, step) in steps.enumerated() {
            let manager = try manager(for: step)
            manager.sourceIsWellTyped = Self.readsAStoreTheRunWrote(steps, at: index)
            managers.append(manager)
        }
        return managers
    }

    /// Whether the step at `index` of `steps`, run one after the other, reads a store the
    /// run wrote and validated, whose values its SQL reads as they are (docs/pushdown.md,
    /// "A store the run wrote"): every step after the first, when the model that store was
    /// written with passes its checks (a model made in code is not checked as it loads: a
    /// default that does not fit its attribute would be written as it is).
    public static func readsAStoreTheRunWrote(_ steps: [Step], at index: Int) -> Bool {
        index > 0 && steps[index].source.validationErrors().isEmpty
    }

    /// A checked and compiled manager for `step`; a mapping that cannot run is an
    /// ``MigrationError/Kind/invalidMapping`` error that says which step and why.
    func manager(for step: Step) throws(MigrationError) -> MigrationManager {
        do {
            return try MigrationManager(
                mapping: step.mapping, source: step.source, destination: step.destination,
                policies: policies, options: options)
        } catch {
            let name = "\(step.source.version) → \(step.destination.version)"
            if step.isInferred {
                throw MigrationError(
                    .invalidMapping,
                    "the mapping inferred for \(name) (no mapping file maps it) cannot run:\n"
                        + error.errors.map {
                            Self.inInferred($0, step.source.version, step.destination.version).description
                        }.joined(separator: "\n")
                        + "\nwrite a mapping file for the step; `mapping-migrate infer --models <models> --from \(step.source.version) --to \(step.destination.version)` starts one"
                )
            }
            throw MigrationError(
                .invalidMapping, "the mapping \(name) has problems:\n\(error.description)", underlying: error)
        }
    }
}
