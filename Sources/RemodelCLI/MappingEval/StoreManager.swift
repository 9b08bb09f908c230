import ExpressionLanguage
import ObjectGraph

/// `$manager` in `mapping-eval` with a store open: the read-only half of the migration
/// manager a mapping's expressions use, answering from the open store as the source, so
/// that a mapping's source expression can be tried as it is written:
///
///     FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Book", "title BEGINSWITH 'The'"),
///           $manager.sourceContext, NO).@count
///
/// What needs a running migration (the destination context, the lookups between source
/// and destination instances) is an error that says so.
final class StoreManager: KeyValueCoding {
    let store: OpenedStore

    init(_ store: OpenedStore) { self.store = store }

    func value(forKey key: String) throws -> Value {
        switch key {
        case "sourceContext": return .object(ObjectReference(store.context))
        case "sourceModel": return .string(store.model.version)
        case "destinationContext", "destinationModel", "currentEntityMapping", "migrationProgress", "userInfo":
            throw Self.needsMigration("$manager.\(key)")
        default:
            throw ExpressionError(.unknownKey, "the migration manager has no key '\(key)'; with a store open it has sourceContext and sourceModel")
        }
    }

    var objectDescription: String { "the migration manager, reading \(store.path) as its source" }
    var kindName: String { "NSMigrationManager" }

    static func needsMigration(_ what: String) -> ExpressionError {
        ExpressionError(.host, "\(what) exists only while a mapping runs: here $manager reads the open store as the source "
            + "(sourceContext, fetchRequestForSourceEntityNamed:predicateString:); try the mapping with mapping-migrate run --dry-run")
    }

    /// Registers the manager's read-only selectors (and, for the others, the error that
    /// says they need a running migration) into `registry`.
    static func register(into registry: inout FunctionRegistry) {
        registry.register("fetchRequestForSourceEntityNamed:predicateString:", for: StoreManager.self) { manager, arguments in
            try manager.request(arguments, subentities: false)
        }
        registry.register("fetchRequestForSourceEntityNamed:predicateString:includesSubentities:", for: StoreManager.self) { manager, arguments in
            try manager.request(arguments, subentities: arguments[2].doubleValue.map { $0 != 0 } ?? false)
        }
        for selector in ["destinationInstancesForEntityMappingNamed:sourceInstances:", "sourceInstancesForEntityMappingNamed:destinationInstances:",
                         "destinationInstancesForSourceRelationshipNamed:sourceInstances:"] {
            registry.register(selector, for: StoreManager.self) { _, _ in throw needsMigration(selector) }
        }
    }

    /// `fetchRequestForSourceEntityNamed:predicateString:`: a request for FETCH.
    private func request(_ arguments: [Value], subentities: Bool) throws -> Value {
        guard case .string(let entity) = arguments[0], case .string(let predicate) = arguments[1] else {
            throw ExpressionError(.type, "fetchRequestForSourceEntityNamed:predicateString: takes an entity name and a predicate, both strings")
        }
        guard store.model.entity(named: entity) != nil else {
            throw ExpressionError(.host, "Can't find entity named \(entity) in source model \(store.model.version)")
        }
        var fetch = try FetchRequest(entityName: entity, predicate: predicate)
        fetch.includesSubentities = subentities
        return .object(ObjectReference(FetchRequestObject(fetch)))
    }
}
