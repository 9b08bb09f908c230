import ExpressionLanguage
import ObjectGraph

// Relationships a renaming step links through a chain of its source's relationships
// (docs/engine.md, "Steps run as one"): Xcode's mapping models write such a link where a
// version adds a shortcut (objc.io's Moody 3 adds a mood's `continent`, linked as
// `$source.country.continent`, and a continent's `moods`). Before a step that reads
// nothing of them, the pass need not write them: what it must give is the step's count
// of them, and its errors, which a key on the way that names no row would make.
extension Relabeling {
    /// A relationship of a C entity the step links by a lookup through a chain of B
    /// relationships (``init(_:computingWith:)``).
    struct ComputedLink: Hashable {
        /// The B entity whose mapping links it, and the C relationship.
        let entity: String, relationship: String
        /// The B relationships the chain follows from `entity`, in order.
        let path: [String]
        let isToMany: Bool
    }

    /// The link of `property`, a relationship mapping of the copy of `from` (a B entity)
    /// to `to` (a C entity), where it looks up a chain of B relationships
    /// (``SQLLink/chainedLookup(_:)``) in an entity mapping of the step, and the C
    /// relationship it fills has no rule any value could break: a to-one that is
    /// optional, a to-many that may be empty and has no maximum; unordered, and with an
    /// inverse. Nil for any other. What the chain reads and which mapping it looks up in
    /// are checked once the step's mappings are all read (``checkComputedLinks(_:)``).
    static func computedLink(
        _ property: PropertyMapping, from: EntityDescription, to: EntityDescription, in new: ObjectModel
    ) -> (link: ComputedLink, mapping: String)? {
        guard let text = property.valueExpression, let parsed = try? FormatExpression(parsing: text),
            let (mapping, chain) = SQLLink.chainedLookup(parsed),
            let relationship = new.allRelationships(of: to).first(where: { $0.name == property.name }),
            !relationship.isTransient, !relationship.isOrdered, relationship.inverse != nil
        else { return nil }
        if relationship.isToMany {
            guard passesItsRulesEmpty(relationship), relationship.maxCount == 0, chain.count == 3,
                chain[1] == "@distinctUnionOfSets"
            else { return nil }
        } else {
            guard relationship.isOptional, !chain.contains(where: { $0.hasPrefix("@") }) else { return nil }
        }
        let path = chain.filter { !$0.hasPrefix("@") }
        return (
            ComputedLink(
                entity: from.name, relationship: relationship.name, path: path, isToMany: relationship.isToMany),
            mapping
        )
    }

    /// Checks the links the step computes, its mappings all read (`mappings`: each
    /// link's, and the one it looks up in): each chain follows one-to-manys (each key held
    /// by a row of the `from` side, as a to-one column) to entities without sub-entities,
    /// and ends at the entity the looked-up mapping copies, which makes the C
    /// relationship's targets; a to-one's chain follows to-ones, every instance counted as
    /// the interpreter counts a to-one it sets. A to-many's chain (`$source.a.@distinctUnionOfSets.b`)
    /// must be the chain of its inverse, a to-one the step links earlier, read backwards:
    /// both then link the same pairs (a to-many's members are the rows whose key names
    /// their owner, so the two chains read the same keys), and the to-many, linked
    /// second, finds every member there already and counts none, as the interpreter.
    mutating func checkComputedLinks(_ links: [(link: ComputedLink, mapping: String, name: String)]) throws(Refusal) {
        let (middle, new) = (step.source, step.destination)
        for (link, mapping, name) in links {
            let described =
                "entity mapping \(name) links \(entities[link.entity]!).\(link.relationship) through $source"
            guard let target = step.mapping.entityMappings.first(where: { $0.name == mapping }),
                target.type == .copy || target.type == .transform, let made = target.sourceEntity,
                let relationship = new.allRelationships(of: new.entity(named: entities[link.entity]!)!).first(where: {
                    $0.name == link.relationship
                }), relationship.destination == entities[made]
            else { throw Refusal("\(described), not in the entity mapping that makes its targets") }
            // (One within an entity is counted object by object, from both sides.)
            guard made != link.entity else { throw Refusal("\(described), to its own entity") }
            guard let hops = hops(of: link),
                hops.allSatisfy({ hop in
                    let (step, inverse) = (hop.relationship, middle.inverse(of: hop.relationship))
                    return !step.isTransient && step.isToMany == link.isToMany && inverse?.isToMany == !step.isToMany
                        && !step.isOrdered && inverse?.isOrdered == false
                        && middle.entity(named: step.destination).map { middle.subentities(of: $0).isEmpty } == true
                })
            else { throw Refusal("\(described), a chain of other than one-to-manys") }
            guard hops.last?.relationship.destination == made else {
                throw Refusal("\(described), to other than what \(mapping) copies")
            }
            guard link.isToMany else { continue }
            // (The inverse's chain, read backwards: each relationship's inverse.)
            let back = hops.reversed().map { $0.relationship.inverse! }
            guard
                computedLinks.contains(
                    ComputedLink(entity: made, relationship: relationship.inverse!, path: back, isToMany: false)),
                let first = places[made], let second = places[link.entity], first < second
            else {
                throw Refusal("\(described), not its inverse's chain read backwards after it")
            }
        }
    }

    /// Whether every key the chains of the links the step computes follow names a row of
    /// its relationship's entity, in `database` (laid out as `layout`, `locate` finding
    /// the step's names there, as for ``report(in:layout:written:locate:)``): the
    /// interpreter reads each row on the way, and a key that names no row, or a row of
    /// another entity of a shared table, is an error it reports. A to-many's chain reads
    /// the keys its inverse's does.
    func linksResolve(
        in database: Database, layout: StoreLayout,
        locate: (_ entity: String, _ property: String?) -> (entity: String, property: String?)
    ) throws(SQLiteError) -> Bool {
        for link in computedLinks where !link.isToMany {
            guard let hops = hops(of: link) else { return false }
            for hop in hops {
                let (holder, key) = locate(hop.holder, hop.relationship.name)
                guard let rows = layout.entities[holder], let column = key.flatMap({ rows.toOneColumns[$0] }),
                    let targets = layout.entities[locate(hop.relationship.destination, nil).entity]
                else { return false }
                let statement = try database.prepare(
                    "SELECT 1 FROM \(rows.table) AS s WHERE s.Z_ENT = \(rows.number) AND s.\(column.key) IS NOT NULL "
                        + "AND NOT EXISTS (SELECT 1 FROM \(targets.table) AS t WHERE t.Z_PK = s.\(column.key) "
                        + "AND t.Z_ENT = \(targets.number)) LIMIT 1")
                if try statement.step() { return false }
            }
        }
        return true
    }

    /// The relationships `link`'s chain follows in the step's source (B), each with the
    /// entity that holds it; nil where a name is no relationship of the entity before it.
    func hops(of link: ComputedLink) -> [(holder: String, relationship: RelationshipDescription)]? {
        let middle = step.source
        var hops: [(holder: String, relationship: RelationshipDescription)] = []
        var holder = link.entity
        for name in link.path {
            guard let entity = middle.entity(named: holder),
                let relationship = middle.allRelationships(of: entity).first(where: { $0.name == name })
            else { return nil }
            hops.append((holder, relationship))
            holder = relationship.destination
        }
        return hops
    }
}
