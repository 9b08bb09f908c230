import ExpressionLanguage
import ObjectGraph

// What a renaming step adds, read by the step after it (docs/engine.md, "Steps run as
// one"): in the version in between, an entity no mapping of the renaming makes has no
// row, and a relationship it does not carry is empty, so the step after's mappings of
// them make nothing and its lookups through them find nothing, which the pass says
// without reading them.
extension Relabeling {
    /// `mapping`, an entity mapping of the step after from a B entity this step does not
    /// make (it adds it: no row of it is written), as an `add` mapping that makes nothing:
    /// as the mapping does, fetching no row. Nil where its source fetch could read rows of
    /// another entity (one in a hierarchy) or is not the standard one.
    func makesNothing(_ mapping: EntityMapping) -> EntityMapping? {
        let middle = step.destination
        guard let name = mapping.sourceEntity, let entity = middle.entity(named: name), entity.parent == nil,
            middle.subentities(of: entity).isEmpty, Self.fetchesEveryInstance(mapping.sourceExpression, of: name)
        else { return nil }
        var added = mapping
        added.type = .add
        added.sourceEntity = nil
        added.sourceExpression = nil
        added.attributeMappings = []
        added.relationshipMappings = []
        return added
    }

    /// `mapping`, an entity mapping of the step after (`among` its mappings, at `index`)
    /// from the B entity `entity` to `to` (of `destination`), with each relationship it
    /// fills with the targets of a relationship this step adds, looked up (by an entity
    /// mapping of the step after, or as that relationship's:
    /// ``looksUpWhatItAdds(_:of:among:)``), left without an expression; and how many of
    /// those are to-ones. The step leaves that relationship empty in every row (its
    /// inverse is one it adds too: one it carried would carry this one), so the lookup
    /// gives no object. A to-many given none is left as it is and counted as no link
    /// (`EntityMappingRunner`'s `setRelationship`, which SQL's links match): as with no
    /// expression. A to-one is set to nil and counted, object by object: as with no
    /// expression where nothing links its inverse before it (`linked`: the first mapping
    /// that does, after this one, finds every to-one still nil), but for the count, which
    /// the pass adds (``StoreMigrator/FusedRun/unsetToOnes``).
    func withoutLookupsOfWhatItAdds(
        _ mapping: EntityMapping, of entity: String, to: EntityDescription, in destination: ObjectModel,
        among mappings: MappingModel, at index: Int, linked: [RelationshipKey: Int]
    ) -> (mapping: EntityMapping, unsetToOnes: Int) {
        var result = mapping
        var unset = 0
        for i in result.relationshipMappings.indices {
            guard looksUpWhatItAdds(result.relationshipMappings[i].valueExpression, of: entity, among: mappings),
                let relationship = destination.allRelationships(of: to).first(where: {
                    $0.name == result.relationshipMappings[i].name
                })
            else { continue }
            if !relationship.isToMany {
                guard let inverse = destination.inverse(of: relationship),
                    (linked[RelationshipKey(entity: relationship.destination, name: inverse.name)].map { $0 > index }
                        ?? true)
                else { continue }
                unset += 1
            }
            result.relationshipMappings[i].valueExpression = nil
        }
        return (result, unset)
    }

    /// A relationship of an entity of the step after's destination, by the entity that
    /// declares it or inherits it.
    struct RelationshipKey: Hashable {
        let entity: String, name: String
    }

    /// The relationships of `destination` that the step after (`mapping`) links from
    /// anything but a relationship this step adds (``looksUpWhatItAdds(_:of:among:)``):
    /// each under its entity and the entities above it, with the index of the first of
    /// its entity mappings that does.
    func linkedRelationships(of mapping: MappingModel, destination: ObjectModel, compiler: MappingCompiler)
        -> [RelationshipKey: Int]
    {
        let middle = step.destination
        var linked: [RelationshipKey: Int] = [:]
        for (index, original) in mapping.entityMappings.enumerated()
        where original.type == .copy || original.type == .transform {
            guard let to = original.destinationEntity.flatMap(destination.entity(named:)) else { continue }
            let from = original.sourceEntity.flatMap(middle.entity(named:))
            // (What makes nothing links nothing.)
            if let from, namesBefore.entities[from.name] == nil, makesNothing(original) != nil { continue }
            let written = compiler.withImplicitMappings(original, from, to)
            for property in written.relationshipMappings where property.valueExpression != nil {
                if let from, looksUpWhatItAdds(property.valueExpression, of: from.name, among: mapping) { continue }
                for entity in [to] + destination.ancestors(of: to) {
                    let key = RelationshipKey(entity: entity.name, name: property.name)
                    if linked[key] == nil { linked[key] = index }
                }
            }
        }
        return linked
    }

    /// Whether `expression`, of a mapping of the step after from the B entity `entity`,
    /// looks up the targets of a relationship this step adds (which it leaves empty): by
    /// an entity mapping of the step after (`among` its mappings) or as that
    /// relationship's, the mapping or relationship found as the lookup finds it, so that
    /// it would not fail either.
    func looksUpWhatItAdds(_ expression: String?, of entity: String, among mappings: MappingModel) -> Bool {
        guard let expression, let from = step.destination.entity(named: entity),
            let parsed = try? FormatExpression(parsing: expression), let lookup = SQLLink.lookup(parsed),
            let read = lookup.relationship, namesBefore.properties[entity]?[read] == nil,
            !computedLinks.contains(where: { entities[$0.entity] == entity && $0.relationship == read })
        else { return false }
        let relationships = step.destination.allRelationships(of: from)
        guard relationships.contains(where: { $0.name == read && !$0.isTransient }) else { return false }
        return lookup.lookup == SQLLink.mappingLookup
            ? mappings.entityMappings.contains { $0.name == lookup.argument }
            : relationships.contains { $0.name == lookup.argument }
    }
}
