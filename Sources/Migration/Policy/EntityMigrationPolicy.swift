import ExpressionLanguage
import ObjectGraph

/// The hooks of a migration, per entity mapping: Core Data's `NSEntityMigrationPolicy`.
///
/// Every hook has a default that does what Core Data's default policy does, so a policy
/// implements only what it changes. A policy that replaces
/// ``createDestinationInstances(forSource:in:manager:)`` and still wants the attribute
/// mappings evaluated calls ``defaultCreateDestinationInstances(forSource:in:manager:)``
/// (Core Data's `super`); one that creates objects itself must associate them with
/// ``MigrationManager/associate(sourceInstance:withDestinationInstance:for:)``.
///
///     final class UserToUserPolicy: EntityMigrationPolicy {
///         func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping,
///                                         manager: MigrationManager) throws {
///             let user = try defaultCreateDestinationInstances(forSource: source, in: mapping, manager: manager)
///             try user[0].setValue(.string("imported"), forKey: "origin")
///         }
///     }
///
/// The engine makes one policy object per entity mapping and run, and calls it from one
/// thread. Policies are also the target of `FUNCTION($entityPolicy, "selector:", …)`
/// for the functions registered with ``PolicyRegistry/registerFunction(_:for:_:)``.
public protocol EntityMigrationPolicy: KeyValueCoding {
    /// Stage 1, before any instance of the mapping is created.
    func begin(_ mapping: EntityMapping, manager: MigrationManager) throws
    /// Stage 1, once per source instance: create and associate destination instances.
    func createDestinationInstances(
        forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) throws
    /// Stage 1, after the mapping's last source instance.
    func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws
    /// Stage 2, once per destination instance associated with the mapping.
    func createRelationships(
        forDestination destination: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) throws
    /// Stage 2, after the mapping's last destination instance.
    func endRelationshipCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws
    /// Stage 3, after the destination store passed validation.
    func performCustomValidation(forMapping mapping: EntityMapping, manager: MigrationManager) throws
    /// Stage 3, last.
    func end(_ mapping: EntityMapping, manager: MigrationManager) throws
}

extension EntityMigrationPolicy {
    public func begin(_ mapping: EntityMapping, manager: MigrationManager) throws {}

    public func createDestinationInstances(
        forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        _ = try defaultCreateDestinationInstances(forSource: source, in: mapping, manager: manager)
    }

    public func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {}

    public func createRelationships(
        forDestination destination: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        try defaultCreateRelationships(forDestination: destination, in: mapping, manager: manager)
    }

    public func endRelationshipCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {}
    public func performCustomValidation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {}
    public func end(_ mapping: EntityMapping, manager: MigrationManager) throws {}

    /// Core Data's default stage-1 behaviour: inserts an instance of the destination
    /// entity, sets every attribute mapping's value (evaluated with `$source`,
    /// `$destination`, `$manager`, `$entityMapping`, `$propertyMapping` and
    /// `$entityPolicy` bound), and associates it with `source`. Returns the new instance
    /// (none for a mapping without a destination entity).
    @discardableResult
    public func defaultCreateDestinationInstances(
        forSource source: ManagedObject, in mapping: EntityMapping,
        manager: MigrationManager
    ) throws -> [ManagedObject] {
        try manager.runner(for: mapping).createDestination(for: source)
    }

    /// Core Data's default stage-2 behaviour: finds the one source instance associated
    /// with `destination`, evaluates every relationship mapping and sets the result,
    /// coerced to the relationship's kind (a to-one takes a single object or a collection
    /// of at most one; a to-many takes the union with what it holds).
    public func defaultCreateRelationships(
        forDestination destination: ManagedObject, in mapping: EntityMapping,
        manager: MigrationManager
    ) throws {
        try manager.runner(for: mapping).createRelationships(for: destination)
    }

    // Key-value coding: a policy has no keys of its own unless it says so.
    public func value(forKey key: String) throws -> Value {
        throw ExpressionError(.unknownKey, "the policy \(kindName) has no key '\(key)'")
    }
}

/// The policy of entity mappings that name none: Core Data's defaults.
public final class DefaultMigrationPolicy: EntityMigrationPolicy {
    public init() {}
    public var kindName: String { "NSEntityMigrationPolicy" }
}
