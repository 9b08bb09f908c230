import ExpressionLanguage
import ObjectGraph

// Associations: which destination objects each source object became, recorded by the
// mappings and policies and asked by stage 2 (the manager's lookup functions).
extension MigrationManager {
    /// Records that `destination` was made from `source` by `mapping`.
    public func associate(
        sourceInstance source: ManagedObject, withDestinationInstance destination: ManagedObject,
        for mapping: EntityMapping
    ) throws(MigrationError) {
        let runner = try runner(for: mapping)
        guard let s = sourceEntityIndex[source.entity.name], let d = destinationEntityIndex[destination.entity.name]
        else {
            throw MigrationError(
                .policy,
                "associate needs a source object (\(source.objectID)) and a destination object (\(destination.objectID))",
                entityMapping: mapping.name)
        }
        associations[runner.index].associate(
            source: (s, source.objectID.primaryKey), destination: (d, destination.objectID.primaryKey))
        runner.report.destinationInstances += 1
    }

    /// Records an association for a destination written as a row (the default policy's
    /// fast path), by its ID.
    func associate(_ source: ManagedObject, _ destination: ObjectID, runner: EntityMappingRunner) {
        guard let s = sourceEntityIndex[source.entity.name], let d = destinationEntityIndex[destination.entityName]
        else { return }
        associations[runner.index].associate(
            source: (s, source.objectID.primaryKey), destination: (d, destination.primaryKey))
        runner.report.destinationInstances += 1
    }

    /// The indexes of a source and a destination entity in the association tables.
    func associationEntities(source: String, destination: String) -> (source: UInt16, destination: UInt16)? {
        guard let s = sourceEntityIndex[source], let d = destinationEntityIndex[destination] else { return nil }
        return (s, d)
    }

    /// Records `count` associations at once, for the row-copy path: sources with keys
    /// from `source.key` on made destinations with keys from `destination.key` on.
    func associate(
        source: (entity: UInt16, key: Int64), destination: (entity: UInt16, key: Int64), count: Int,
        runner: EntityMappingRunner
    ) {
        associations[runner.index].associate(source: source, destination: destination, count: count)
        runner.report.destinationInstances += count
    }

    /// Forgets the associations `runner` recorded: its stage 1 starts again.
    func forgetAssociations(of runner: EntityMappingRunner) {
        runner.report.destinationInstances -= associations[runner.index].count
        associations[runner.index].removeAll()
    }

    /// `body`'s lookup in the associations, whose scratch database (where a large table
    /// keeps most of its runs) may fail to be read.
    func lookUp<T>(_ body: () throws(SQLiteError) -> T) throws(MigrationError) -> T {
        do {
            return try body()
        } catch {
            throw MigrationError(
                .destinationStore, "cannot read the associations' scratch database: \(error)", underlying: error)
        }
    }

    /// How many more rows a row inserter may write before ``saveIfNeeded()`` saves, if
    /// nothing else changes in the destination context meanwhile.
    func rowsBeforeSave() -> Int {
        let context = destinationContext
        if context.pendingValueBytes >= options.chunkBytes { return 0 }
        return max(0, options.chunkSize - context.pendingObjectCount - context.rowsWritten)
    }

    /// The destination instances made from `sourceInstances` by the entity mapping named
    /// `name` (every mapping when nil), in order, without duplicates.
    public func destinationInstances(forEntityMappingNamed name: String?, sourceInstances: [ManagedObject]) throws
        -> [ManagedObject]
    {
        let tables = try associationTables(named: name)
        var seen = Set<ObjectID>()
        var result: [ManagedObject] = []
        for object in sourceInstances {
            guard let entity = sourceEntityIndex[object.entity.name] else { continue }
            for t in tables {
                for d in try lookUp({ () throws(SQLiteError) in
                    try associations[t].destinations(ofSource: entity, key: object.objectID.primaryKey)
                }) {
                    let id = try destinationContext.objectID(
                        entityName: destinationModel.entities[Int(d.entity)].name, primaryKey: d.key)
                    if seen.insert(id).inserted { result.append(try destinationContext.object(with: id)) }
                }
            }
        }
        return result
    }

    /// The source instances the entity mapping named `name` (every mapping when nil) made
    /// `destinationInstances` from, in order, without duplicates.
    public func sourceInstances(forEntityMappingNamed name: String?, destinationInstances: [ManagedObject]) throws
        -> [ManagedObject]
    {
        let tables = try associationTables(named: name)
        var seen = Set<ObjectID>()
        var result: [ManagedObject] = []
        for object in destinationInstances {
            guard let entity = destinationEntityIndex[object.entity.name] else { continue }
            for t in tables {
                for s in try lookUp({ () throws(SQLiteError) in
                    try associations[t].sources(ofDestination: entity, key: object.objectID.primaryKey)
                }) {
                    let id = try sourceContext.objectID(
                        entityName: sourceModel.entities[Int(s.entity)].name, primaryKey: s.key)
                    if seen.insert(id).inserted { result.append(try sourceContext.object(with: id)) }
                }
            }
        }
        return result
    }

    /// For the relationship mapping being evaluated: the destinations of `sourceInstances`
    /// (objects of the source relationship `name`'s destination) made by every entity
    /// mapping from that entity (or a sub-entity) to the destination relationship's entity
    /// (or a sub-entity) — what inferred mappings use.
    public func destinationInstances(forSourceRelationshipNamed name: String, sourceInstances: [ManagedObject]) throws
        -> [ManagedObject]
    {
        guard let runner = runners.first(where: { $0.mapping.name == currentEntityMapping?.name }),
            let sourceEntity = runner.prepared.sourceEntity, let destinationEntity = runner.prepared.destinationEntity,
            let propertyName = runner.currentProperty?.name
        else {
            throw MigrationError(
                .policy,
                "destinationInstancesForSourceRelationshipNamed:sourceInstances: is only available in relationship mappings"
            )
        }
        guard let sourceRelationship = sourceModel.allRelationships(of: sourceEntity).first(where: { $0.name == name }),
            let sourceTarget = sourceModel.entity(named: sourceRelationship.destination)
        else {
            throw MigrationError(
                .policy, "\(sourceEntity.name) has no relationship '\(name)' in \(sourceModel.version)")
        }
        guard
            let destinationRelationship = destinationModel.allRelationships(of: destinationEntity).first(where: {
                $0.name == propertyName
            }),
            let destinationTarget = destinationModel.entity(named: destinationRelationship.destination)
        else {
            throw MigrationError(
                .policy,
                "\(destinationEntity.name) has no relationship '\(propertyName)' in \(destinationModel.version)")
        }
        let sourceKinds = Set(sourceModel.descendants(of: sourceTarget).map(\.name))
        let destinationKinds = Set(destinationModel.descendants(of: destinationTarget).map(\.name))
        var result: [ManagedObject] = []
        var seen = Set<ObjectID>()
        for candidate in runners {
            guard let s = candidate.prepared.sourceEntity, let d = candidate.prepared.destinationEntity,
                sourceKinds.contains(s.name), destinationKinds.contains(d.name)
            else { continue }
            for object in try destinationInstances(
                forEntityMappingNamed: candidate.mapping.name, sourceInstances: sourceInstances)
            where seen.insert(object.objectID).inserted {
                result.append(object)
            }
        }
        return result
    }

    func associationTables(named name: String?) throws(MigrationError) -> [Int] {
        guard let name else { return runners.map(\.index) }
        guard let runner = runnersByName[name] else {
            let hint = Suggestion.closest(to: name, among: runnersByName.keys).map { "; did you mean '\($0)'?" } ?? ""
            throw MigrationError(.invalidMapping, "no entity mapping is named '\(name)'\(hint)")
        }
        return [runner.index]
    }

    /// A fetch request for `entityName`'s instances in the source (sub-entities excluded,
    /// as Core Data's is) that `predicateString` accepts.
    public func fetchRequest(
        forSourceEntityNamed entityName: String, predicateString: String,
        includesSubentities: Bool = false
    ) throws -> FetchRequest {
        guard sourceModel.entity(named: entityName) != nil else {
            throw MigrationError(
                .invalidMapping, "Can't find entity named \(entityName) in source model \(sourceModel.version)")
        }
        var request = try FetchRequest(entityName: entityName, predicate: predicateString)
        request.includesSubentities = includesSubentities
        return request
    }
}
