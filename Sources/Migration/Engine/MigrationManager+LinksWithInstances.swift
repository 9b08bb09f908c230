import ExpressionLanguage
import ObjectGraph

// Relationships set in stage 1 (docs/engine.md, "Relationships with the instances"): an
// interpreted mapping whose links stage 2 would set object by object sets them as it makes
// each instance, when nothing can tell the difference. Its rows are then written once:
// setting a key in stage 2 rewrites the row whole, and a row with a large value (an image)
// costs its whole size again.
extension MigrationManager {
    /// Marks the entity mappings whose stage 1 sets their relationship mappings
    /// (``EntityMappingRunner/setLinksWithInstances()``): every entity mapping of the step
    /// uses the default policy (no hook can see an instance between the stages); the
    /// mapping's stage 1 is interpreted and its stage 2 would be too; and each of its
    /// relationship mappings
    ///
    /// - sets a to-one, whose inverse (if any) is not ordered and is mapped by no entity
    ///   mapping (the inverse's link would run in stage 2 and count what it finds), or is
    ///   a to-one that the mapping this one looks up links back to the object made from
    ///   the same source (an entity split in two, each side a lookup of `$source`);
    /// - is a lookup of the objects made from `$source` or from a to-one of it:
    ///   `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:",
    ///   "M", $source.r)`, or the inferred mappings'
    ///   `destinationInstancesForSourceRelationshipNamed:sourceInstances:`;
    /// - looks up only mappings whose stage 1 runs before this one's: their associations
    ///   are complete when it runs, so the lookup finds what it would find in stage 2.
    ///
    /// What the lookup gives, the order the objects are linked in and the count of
    /// relationships set are then those of stage 2; the lookup cannot fail.
    func planLinksWithInstances() {
        guard setsLinksWithInstances, runners.allSatisfy({ $0.policy.isDefault }) else { return }
        let chosen = Self.linksWithInstances(
            prepared.entityMappings, interpretedBothStages: { self.runners[$0].planOfLinks == nil },
            stage1Order: stage1Order, source: sourceModel, destination: destinationModel)
        for index in chosen {
            runners[index].setLinksWithInstances()
            runners[index].execution.interpretedAs = runners[index].interpretedAs
            runners[index].execution.relationshipsWithInstances = true
        }
    }

    /// The entity mappings of a step, every one with the default policy, that set their
    /// relationships with their instances (see ``planLinksWithInstances()``): the run's
    /// choice, and the plan's (whose stage 1 order is the file's, as the run's is whenever
    /// a mapping links in the interpreter).
    static func linksWithInstances(
        _ mappings: [PreparedEntityMapping], interpretedBothStages: (Int) -> Bool, stage1Order: [Int],
        source: ObjectModel, destination: ObjectModel
    ) -> Set<Int> {
        var chosen: Set<Int> = []
        for mapping in mappings
        where interpretedBothStages(mapping.index) && !mapping.relationships.isEmpty && mapping.destinationEntity != nil
        {
            guard let position = stage1Order.firstIndex(of: mapping.index) else { continue }
            let before = Set(stage1Order[..<position])
            if mapping.relationships.allSatisfy({
                canLink($0, of: mapping, after: before, among: mappings, source: source, destination: destination)
            }) {
                chosen.insert(mapping.index)
            }
        }
        return chosen
    }

    /// Whether `property`, a relationship mapping of `mapping`, can be set in stage 1,
    /// once the mappings `before` have run theirs (see ``planLinksWithInstances()``).
    private static func canLink(
        _ property: PreparedProperty, of mapping: PreparedEntityMapping, after before: Set<Int>,
        among mappings: [PreparedEntityMapping], source sourceModel: ObjectModel,
        destination destinationModel: ObjectModel
    ) -> Bool {
        guard let relationship = property.relationship, !relationship.isToMany, !relationship.isTransient,
            let target = destinationModel.entity(named: relationship.destination)
        else { return false }
        if let inverse = destinationModel.inverse(of: relationship) {
            let name = inverse.name
            let holders = Set(destinationModel.descendants(of: target).map(\.name))
            let links = mappings.flatMap { other -> [(PreparedEntityMapping, PreparedProperty)] in
                guard let entity = other.destinationEntity, holders.contains(entity.name) else { return [] }
                return other.relationships.filter { $0.mapping.name == name }.map { (other, $0) }
            }
            // A mapped inverse is linked in stage 2 and counts what it finds; unless it is a
            // to-one too, linking the object made from the same source as this one does
            // (an entity split in two, each side looking the other up by `$source`): it
            // then finds the link made, changes nothing and counts its instances, as it
            // would have.
            let sameSource = links.allSatisfy { other, link in
                !inverse.isToMany && SQLLink.lookupOfItsSource(link.expression.expression) == mapping.mapping.name
                    && SQLLink.lookupOfItsSource(property.expression.expression) == other.mapping.name
                    && other.sourceEntity?.name == mapping.sourceEntity?.name
            }
            if inverse.isOrdered || !sameSource { return false }
        }
        guard let (lookup, argument, read) = SQLLink.lookup(property.expression.expression),
            let sourceEntity = mapping.sourceEntity
        else { return false }
        // The objects looked up: `$source`, or what a to-one of it points to.
        let sources: EntityDescription?
        if let read {
            guard let toOne = sourceModel.allRelationships(of: sourceEntity).first(where: { $0.name == read }),
                !toOne.isToMany, !toOne.isTransient
            else { return false }
            sources = sourceModel.entity(named: toOne.destination)
        } else {
            sources = sourceEntity
        }
        let targets: [PreparedEntityMapping]
        switch lookup {
        case SQLLink.mappingLookup:
            targets = mappings.filter { $0.mapping.name == argument }
        case MappingInference.relationshipLookup:
            // The mappings from the source relationship's entities to the destination
            // relationship's, as the lookup finds them.
            guard read == argument, let sources else { return false }
            targets = SQLLink.mappings(
                from: sources, to: target, among: mappings, sourceModel: sourceModel, destinationModel: destinationModel
            )
        default:
            return false
        }
        return targets.count == 1 && before.contains(targets[0].index)
    }

}
