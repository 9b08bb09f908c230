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
        for runner in runners
        where runner.sqlPlan == nil && runner.linksAfterInterpreted == nil && !runner.prepared.relationships.isEmpty
            && runner.prepared.destinationEntity != nil
        {
            guard let position = stage1Order.firstIndex(of: runner.index) else { continue }
            let before = Set(stage1Order[..<position])
            if runner.prepared.relationships.allSatisfy({ canLink($0, of: runner, after: before) }) {
                runner.setLinksWithInstances()
                runner.execution.interpretedAs = runner.interpretedAs
            }
        }
    }

    /// Whether `property`, a relationship mapping of `runner`, can be set in stage 1, once
    /// the mappings `before` have run theirs (see ``planLinksWithInstances()``).
    private func canLink(_ property: PreparedProperty, of runner: EntityMappingRunner, after before: Set<Int>) -> Bool {
        guard let relationship = property.relationship, !relationship.isToMany, !relationship.isTransient,
            let target = destinationModel.entity(named: relationship.destination)
        else { return false }
        if let name = relationship.inverse,
            let inverse = destinationModel.allRelationships(of: target).first(where: { $0.name == name })
        {
            let holders = Set(destinationModel.descendants(of: target).map(\.name))
            let links = runners.flatMap { other -> [(EntityMappingRunner, PreparedProperty)] in
                guard let entity = other.prepared.destinationEntity, holders.contains(entity.name) else { return [] }
                return other.prepared.relationships.filter { $0.mapping.name == name }.map { (other, $0) }
            }
            // A mapped inverse is linked in stage 2 and counts what it finds; unless it is a
            // to-one too, linking the object made from the same source as this one does
            // (an entity split in two, each side looking the other up by `$source`): it
            // then finds the link made, changes nothing and counts its instances, as it
            // would have.
            let sameSource = links.allSatisfy { other, link in
                !inverse.isToMany && SQLLink.lookupOfItsSource(link.expression.expression) == runner.mapping.name
                    && SQLLink.lookupOfItsSource(property.expression.expression) == other.mapping.name
                    && other.prepared.sourceEntity?.name == runner.prepared.sourceEntity?.name
            }
            if inverse.isOrdered || !sameSource { return false }
        }
        guard case .functionCall(let manager, let selector, let arguments) = property.expression.expression.kind,
            case .variable("manager") = manager.kind, arguments.count == 2,
            let lookup = selector.constantString, let argument = arguments[0].constantString,
            let sourceEntity = runner.prepared.sourceEntity
        else { return false }
        // The objects looked up: `$source`, or what a to-one of it points to.
        let sources: EntityDescription?
        if case .variable("source") = arguments[1].kind {
            sources = sourceEntity
        } else if let name = EntityMappingRunner.copiedAttribute(arguments[1]),
            let toOne = sourceModel.allRelationships(of: sourceEntity).first(where: { $0.name == name }),
            !toOne.isToMany, !toOne.isTransient
        {
            sources = sourceModel.entity(named: toOne.destination)
        } else {
            return false
        }
        let targets: [EntityMappingRunner]
        switch lookup {
        case "destinationInstancesForEntityMappingNamed:sourceInstances:":
            targets = runners.filter { $0.mapping.name == argument }
        case MappingInference.relationshipLookup:
            // The mappings from the source relationship's entities to the destination
            // relationship's, as the lookup finds them.
            guard EntityMappingRunner.copiedAttribute(arguments[1]) == argument, let sources else { return false }
            let sourceKinds = Set(sourceModel.descendants(of: sources).map(\.name))
            let destinationKinds = Set(destinationModel.descendants(of: target).map(\.name))
            targets = runners.filter {
                guard let s = $0.prepared.sourceEntity, let d = $0.prepared.destinationEntity else { return false }
                return sourceKinds.contains(s.name) && destinationKinds.contains(d.name)
            }
        default:
            return false
        }
        return targets.count == 1 && before.contains(targets[0].index)
    }

}
