import ExpressionLanguage
import Foundation
import Migration
import ObjectGraph

/// `$manager` in `mapping-eval` with a store open: the read-only half of the migration
/// manager a mapping's expressions use, answering from the open store as the source, so
/// that a mapping's source expression can be tried as it is written:
///
///     FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Book", "title BEGINSWITH 'The'"),
///           $manager.sourceContext, NO).@count
///
/// With a mapping loaded (`:mapping`), the lookups between source and destination
/// instances answer from a dry run of that mapping, run when first asked; without one they
/// say to load one. The destination context is an error that says so.
final class StoreManager: KeyValueCoding {
    let store: OpenedStore
    /// The loaded mapping's dry run, if a mapping is loaded.
    let dryRun: MappingDryRun?

    init(_ store: OpenedStore, dryRun: MappingDryRun? = nil) {
        self.store = store
        self.dryRun = dryRun
    }

    func value(forKey key: String) throws -> Value {
        switch key {
        case "sourceContext": return .object(ObjectReference(store.context))
        case "sourceModel": return .string(store.model.version)
        case "destinationContext", "destinationModel", "currentEntityMapping", "migrationProgress", "userInfo":
            throw Self.needsMigration("$manager.\(key)")
        default:
            throw ExpressionError(
                .unknownKey,
                "the migration manager has no key '\(key)'; with a store open it has sourceContext and sourceModel")
        }
    }

    var objectDescription: String { "the migration manager, reading \(store.path) as its source" }
    var kindName: String { "NSMigrationManager" }

    static func needsMigration(_ what: String) -> ExpressionError {
        ExpressionError(
            .host,
            "\(what) exists only while a mapping runs: here $manager reads the open store as the source "
                + "(sourceContext, fetchRequestForSourceEntityNamed:predicateString:); try the mapping with mapping-migrate run --dry-run"
        )
    }

    /// Registers the manager's read-only selectors (and, for the others, the error that
    /// says they need a running migration) into `registry`.
    static func register(into registry: inout FunctionRegistry) {
        registry.register("fetchRequestForSourceEntityNamed:predicateString:", for: StoreManager.self) {
            manager, arguments in
            try manager.request(arguments, subentities: false)
        }
        registry.register(
            "fetchRequestForSourceEntityNamed:predicateString:includesSubentities:", for: StoreManager.self
        ) { manager, arguments in
            try manager.request(arguments, subentities: arguments[2].doubleValue.map { $0 != 0 } ?? false)
        }
        for selector in [
            "destinationInstancesForEntityMappingNamed:sourceInstances:",
            "sourceInstancesForEntityMappingNamed:destinationInstances:",
            "destinationInstancesForSourceRelationshipNamed:sourceInstances:"
        ] {
            registry.register(selector, for: StoreManager.self) { manager, arguments in
                guard let dryRun = manager.dryRun else {
                    throw ExpressionError(
                        .host,
                        "\(selector) answers from a mapping: load one with :mapping FILE (it answers from a dry run of it)"
                    )
                }
                let migration = try dryRun.manager()
                return try MigrationManager.standardFunctions.call(
                    selector, on: .object(ObjectReference(migration)), arguments: arguments)
            }
        }
    }

    /// `fetchRequestForSourceEntityNamed:predicateString:`: a request for FETCH.
    private func request(_ arguments: [Value], subentities: Bool) throws -> Value {
        guard case .string(let entity) = arguments[0], case .string(let predicate) = arguments[1] else {
            throw ExpressionError(
                .type,
                "fetchRequestForSourceEntityNamed:predicateString: takes an entity name and a predicate, both strings")
        }
        guard store.model.entity(named: entity) != nil else {
            throw ExpressionError(.host, "Can't find entity named \(entity) in source model \(store.model.version)")
        }
        var fetch = try FetchRequest(entityName: entity, predicate: predicate)
        fetch.includesSubentities = subentities
        return .object(ObjectReference(FetchRequestObject(fetch)))
    }
}

/// A dry run of a loaded mapping (`:mapping`), for the lookups `:map` and `$manager` make:
/// the mapping run on the open store into a new store in a temporary folder, once, when a
/// lookup first needs it, with the session's registered policies. The store is never
/// changed; the folder goes with the session's mapping.
final class MappingDryRun {
    private let run: (String) throws -> MigrationManager
    private let folder: URL
    private var result: Result<MigrationManager, ExpressionError>?

    init(_ run: @escaping (_ destination: String) throws -> MigrationManager) {
        self.run = run
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapping-eval-dry-run-\(UUID())")
    }

    /// The manager of the completed run, whose lookups answer from its associations.
    func manager() throws(ExpressionError) -> MigrationManager {
        if result == nil {
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                result = .success(try run(folder.appendingPathComponent("dry-run.sqlite").path))
            } catch {
                result = .failure(
                    ExpressionError(.host, "the lookups answer from a dry run of the mapping, which failed: \(error)"))
            }
        }
        return try result!.get()
    }

    deinit {
        // The run's stores closed first (and the manager freed), then their files removed.
        if case .success(let manager)? = result { manager.releaseResults() }
        try? FileManager.default.removeItem(at: folder)
    }
}
