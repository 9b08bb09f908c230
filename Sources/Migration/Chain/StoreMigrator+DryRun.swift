import ExpressionLanguage
import Foundation
import ObjectGraph

extension StoreMigrator {
    /// What one step of a dry run did, and what the store looked like after it.
    public struct DryRunStep: Sendable {
        /// The step, as ``plan(storeAt:from:to:)`` gives it.
        public let step: Step
        /// What the step's entity mappings did (rows read, objects created, relationships set).
        public let report: MigrationReport
        /// The store after the step: each entity of the destination model (sub-entities
        /// counted apart), in name order, with its number of objects and the first few of
        /// them by `Z_PK`.
        public let entities: [EntitySummary]
    }

    /// An entity of a store after a step: how many objects it has, and a few of them.
    public struct EntitySummary: Sendable, Hashable {
        /// The entity's name.
        public let entity: String
        /// Its objects, sub-entities' not counted.
        public let count: Int
        /// Its first objects, in `Z_PK` order.
        public let samples: [ObjectSample]
    }

    /// Runs the steps from the store's version (or `from`) to `to` (default: the newest)
    /// without changing the store: each step migrates into a temporary file (in
    /// `directory`, or a new folder of the temporary directory, removed at the end), the
    /// first reading the store read-only, each later one reading the file of the step
    /// before it.
    ///
    ///     for step in try migrator.dryRun(storeAt: "Notes.sqlite") {
    ///         print(step.step.destination.version, step.report.entityMappings.map(\.destinationInstances))
    ///         for entity in step.entities { print(entity.entity, entity.count, entity.samples.first ?? "") }
    ///     }
    ///
    /// Every step's mapping is checked and compiled before the first runs. A failure is
    /// thrown as ``migrate(storeAt:from:to:progress:)`` throws it, and ``cancellation``
    /// stops a dry run as it stops a run; the store is as it was either way.
    ///
    /// - Parameter samples: the objects of each entity to summarise after each step (0: none).
    public func dryRun(
        storeAt path: String, from: String? = nil, to: String? = nil, samples: Int = 3,
        in directory: URL? = nil,
        progress: ((Step, MigrationProgress) -> Void)? = nil
    ) throws(MigrationError) -> [DryRunStep] {
        let steps = try plan(storeAt: path, from: from, to: to)
        guard !steps.isEmpty else { return [] }
        try refuseDamage(ofStoreAt: path, at: steps[0].source.version)
        let folder = (directory ?? FileManager.default.temporaryDirectory)
            .appendingPathComponent("remodel-dry-run-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw MigrationError(
                .destinationStore,
                "cannot make a folder for the dry run at \(folder.path): \(error.localizedDescription)")
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        // The store is read as it is, side files folded in a copy, never changed.
        let snapshot = try self.snapshot(ofStoreAt: path)
        defer { snapshot.remove() }
        var current = snapshot.path
        var results: [DryRunStep] = []
        let managers = try managers(for: steps)
        // New external data files go into the dry run's folder; references copied as they
        // are name files of the store's own folder, read where they are.
        let external = ExternalDataFiles(
            folder: folder.appendingPathComponent("external"), alsoReading: [ExternalBinaryData.folder(ofStoreAt: path)]
        )
        for (index, (step, manager)) in zip(steps, managers).enumerated() {
            if let reason = cancellation.reason { throw MigrationError(.cancelled, reason) }
            let next = folder.appendingPathComponent("\(index + 1)-\(step.destination.version).sqlite").path
            cancellation.run(manager)
            defer { cancellation.run(nil) }
            let report = try manager.migrateStore(from: current, to: next, externalData: external) {
                progress?(step, $0)
            }
            // Only files of the dry run are removed, never the store itself.
            if current != snapshot.path { MigrationManager.removeStoreFiles(at: current) }
            current = next
            results.append(
                DryRunStep(
                    step: step, report: report,
                    entities: try Self.summarize(
                        storeAt: next, model: step.destination, samples: samples, externalData: external)))
        }
        return results
    }

    /// Each entity of the store at `path`: its count and its first `samples` objects.
    static func summarize(
        storeAt path: String, model: ObjectModel, samples: Int, externalData: ExternalDataFiles? = nil
    ) throws(MigrationError) -> [EntitySummary] {
        do {
            let store = try Store.open(at: path, model: model, mode: .readOnly)
            if let externalData { store.externalData = externalData }
            let context = ObjectContext(store: store)
            return try model.entities.sorted(by: { $0.name < $1.name }).map { entity in
                var request = FetchRequest(entityName: entity.name)
                request.includesSubentities = false
                let count = try context.count(request)
                // Fetches without sort descriptors are in Z_PK order.
                request.fetchLimit = samples
                let objects = samples > 0 && count > 0 ? try context.fetch(request) : []
                return EntitySummary(entity: entity.name, count: count, samples: try objects.map(ObjectSample.init))
            }
        } catch {
            throw MigrationError(
                .destinationStore, "cannot read back the store of the dry run: \(error)", underlying: error)
        }
    }
}
