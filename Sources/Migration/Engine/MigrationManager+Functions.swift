import ExpressionLanguage
import ObjectGraph

extension MigrationManager {
    /// The standard functions plus the migration manager's selectors (docs/engine.md):
    /// what ``PolicyRegistry`` starts from.
    public static let standardFunctions: FunctionRegistry = {
        var r = FunctionRegistry.standard
        r.register("sourceContext", for: MigrationManager.self) { m, _ in .object(ObjectReference(m.sourceContext)) }
        r.register("destinationContext", for: MigrationManager.self) { m, _ in
            .object(ObjectReference(m.destinationContext))
        }
        r.register("fetchRequestForSourceEntityNamed:predicateString:", for: MigrationManager.self) { m, a in
            .object(
                ObjectReference(
                    FetchRequestObject(
                        try m.fetchRequest(
                            forSourceEntityNamed: try string(a[0], "an entity name"),
                            predicateString: try string(a[1], "a predicate")))))
        }
        r.register("fetchRequestForSourceEntityNamed:predicateString:includesSubentities:", for: MigrationManager.self)
        { m, a in
            .object(
                ObjectReference(
                    FetchRequestObject(
                        try m.fetchRequest(
                            forSourceEntityNamed: try string(a[0], "an entity name"),
                            predicateString: try string(a[1], "a predicate"),
                            includesSubentities: a[2].doubleValue.map { $0 != 0 } ?? false))))
        }
        r.register("destinationInstancesForEntityMappingNamed:sourceInstances:", for: MigrationManager.self) { m, a in
            objects(
                try m.destinationInstances(
                    forEntityMappingNamed: try optionalString(a[0]), sourceInstances: try managedObjects(a[1])))
        }
        r.register("sourceInstancesForEntityMappingNamed:destinationInstances:", for: MigrationManager.self) { m, a in
            objects(
                try m.sourceInstances(
                    forEntityMappingNamed: try optionalString(a[0]), destinationInstances: try managedObjects(a[1])))
        }
        r.register("destinationInstancesForSourceRelationshipNamed:sourceInstances:", for: MigrationManager.self) {
            m, a in
            objects(
                try m.destinationInstances(
                    forSourceRelationshipNamed: try string(a[0], "a relationship name"),
                    sourceInstances: try managedObjects(a[1])))
        }
        // Inferred mappings' form: the source value of the property renamed to the
        // destination attribute, or the destination attribute's default when it is nil.
        r.register("_nonNilValueOrDefaultValueForAttribute:source:destination:", on: .any) { _, a in
            let name = try string(a[0], "an attribute name")
            guard case .object(let s) = a[1], let source = s.object as? ManagedObject,
                case .object(let d) = a[2], let destination = d.object as? ManagedObject
            else {
                throw ExpressionError(
                    .type,
                    "_nonNilValueOrDefaultValueForAttribute:source:destination: needs the source and destination objects"
                )
            }
            // Paired as inferred mappings pair them: by renaming identifier (the name when
            // there is none) on both sides, inherited attributes included.
            let destinationAttributes =
                destination.managedObjectContext.map { $0.store.model.allAttributes(of: destination.entity) }
                ?? destination.entity.attributes
            let sourceAttributes =
                source.managedObjectContext.map { $0.store.model.allAttributes(of: source.entity) }
                ?? source.entity.attributes
            let attribute = destinationAttributes.first { $0.name == name }
            let id = attribute?.renamingIdentifier ?? name
            let sourceName =
                sourceAttributes.first { ($0.renamingIdentifier ?? $0.name) == id }?.name
                ?? (sourceAttributes.contains { $0.name == id } ? id : name)
            let value = (try? source.value(forKey: sourceName)) ?? .null
            if !value.isNull { return value }
            return attribute?.defaultValue ?? .null
        }
        return r
    }()

    private static func string(_ value: Value, _ what: String) throws -> String {
        guard case .string(let s) = value else {
            throw ExpressionError(.type, "expected \(what) (a string), not \(value.kind.rawValue)")
        }
        return s
    }

    private static func optionalString(_ value: Value) throws -> String? {
        if value.isNull { return nil }
        return try string(value, "an entity mapping name")
    }

    /// A single object, a collection of objects, or nil, as the lookups accept them.
    private static func managedObjects(_ value: Value) throws -> [ManagedObject] {
        if value.isNull { return [] }
        let elements = value.collectionElements ?? [value]
        return try elements.compactMap { element -> ManagedObject? in
            if element.isNull { return nil }
            guard case .object(let reference) = element, let object = reference.object as? ManagedObject else {
                throw ExpressionError(.type, "expected store objects, not \(element.kind.rawValue)")
            }
            return object
        }
    }

    private static func objects(_ list: [ManagedObject]) -> Value {
        .array(list.map { .object(ObjectReference($0)) })
    }
}

/// An entity mapping as expressions see it (`$entityMapping.name`, `.userInfo.key`).
final class EntityMappingObject: KeyValueCoding {
    let mapping: EntityMapping

    init(_ mapping: EntityMapping) { self.mapping = mapping }

    func value(forKey key: String) throws -> Value {
        switch key {
        case "name": .string(mapping.name)
        case "mappingType": .string(mapping.type.rawValue)
        case "sourceEntityName": mapping.sourceEntity.map(Value.string) ?? .null
        case "destinationEntityName": mapping.destinationEntity.map(Value.string) ?? .null
        case "sourceExpression": mapping.sourceExpression.map(Value.string) ?? .null
        case "entityMigrationPolicyClassName": mapping.policy.map(Value.string) ?? .null
        case "userInfo": .dictionary(mapping.userInfo)
        default: throw ExpressionError(.unknownKey, "an entity mapping has no key '\(key)'")
        }
    }

    var kindName: String { "NSEntityMapping" }
    var objectDescription: String { "entity mapping \(mapping.name)" }
}

/// A property mapping as expressions see it (`$propertyMapping.name`, `.userInfo.key`).
final class PropertyMappingObject: KeyValueCoding {
    let mapping: PropertyMapping

    init(_ mapping: PropertyMapping) { self.mapping = mapping }

    func value(forKey key: String) throws -> Value {
        switch key {
        case "name": .string(mapping.name)
        case "valueExpression": mapping.valueExpression.map(Value.string) ?? .null
        case "userInfo": .dictionary(mapping.userInfo)
        default: throw ExpressionError(.unknownKey, "a property mapping has no key '\(key)'")
        }
    }

    var kindName: String { "NSPropertyMapping" }
    var objectDescription: String { "property mapping \(mapping.name)" }
}
