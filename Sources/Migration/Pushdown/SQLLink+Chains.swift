import ExpressionLanguage
import ObjectGraph

// Links read through a chain of the source's relationships (docs/pushdown.md,
// "Relationships").
extension SQLLink {
    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "M", $source.a.b…)`:
    /// the mapping's name and the key path, of two names or more.
    static func chainedLookup(_ expression: FormatExpression) -> (mapping: String, path: [String])? {
        guard case .functionCall(let target, let selector, let arguments) = expression.kind, arguments.count == 2,
            case .variable("manager") = target.kind, selector.constantString == mappingLookup,
            let mapping = arguments[0].constantString,
            case .keyPath(let operand?, let path) = arguments[1].kind, path.count >= 2,
            case .variable("source") = operand.kind
        else { return nil }
        return (mapping, path)
    }

    /// The link of `r` from a chain of the source's relationships, through the keys of the
    /// entity mapping `mapping`, as the interpreter follows the chain row by row:
    ///
    /// - `$source.a.b…`, to-ones: the key in this mapping's rows is the target of the last
    ///   key of the chain, each row on the way joined (`h1`, `h2`, …); every instance
    ///   counted, as for any to-one. A key on the way that names no row, or a row of
    ///   another entity, is an error the interpreter reports (it reads the row): a check,
    ///   as for a key of the row itself.
    /// - `$source.a.@distinctUnionOfSets.b`, two to-manys whose inverses are to-ones (the
    ///   members' rows hold the keys), for a to-many whose inverse is a to-one: each member
    ///   row's key is the owner its two inverse keys lead back to (through rows of the
    ///   middle entity, as the interpreter reads the members among an entity's rows), as
    ///   the union of the owners' members gives them; the owners that gain one counted.
    ///
    /// Neither `r` nor its inverse may be ordered, one-to-one or many-to-many.
    static func chainedLink(
        _ name: String, _ r: RelationshipDescription, mapping: String, path: [String],
        prepared: PreparedEntityMapping, plan: SQLMappingPlan, all: [PreparedEntityMapping], source: StoreLayout,
        destination: StoreLayout
    ) throws(SQLTranslator.Refusal) -> SQLLink {
        typealias Refusal = SQLTranslator.Refusal
        let chain = "$source.\(path.joined(separator: "."))"
        let candidates = all.filter { $0.mapping.name == mapping }
        guard candidates.count == 1, let targetPlan = Target(candidates[0], source: source, destination: destination),
            let sourceEntity = prepared.sourceEntity
        else { throw Refusal("'\(name)': no single entity mapping makes its targets") }
        // A to-one whose inverse (if any) is an unordered to-many; a to-many whose inverse
        // is a to-one.
        let inverse = destination.model.inverse(of: r)
        guard !r.isOrdered,
            r.isToMany ? inverse.map({ !$0.isToMany }) == true : inverse.map({ $0.isToMany && !$0.isOrdered }) ?? true
        else { throw Refusal("'\(name)' is read through \(chain), and is ordered, one-to-one or many-to-many") }
        let target = candidates[0].index
        let me = keysTable(prepared.index), them = keysTable(target)
        /// The to-one `name` of `entity`, with the entity numbers of its destination's rows
        /// (a table may hold other entities).
        func toOne(_ name: String, of entity: EntityDescription) throws(Refusal) -> (
            SQLTranslator.ToOne, numbers: String
        ) {
            guard let toOne = SQLTranslator.ToOne(name, of: entity, in: source) else {
                throw Refusal("'\(name)' of \(chain) is not a to-one of \(entity.name)")
            }
            return (toOne, toOne.entityNumbers.map(String.init).joined(separator: ", "))
        }
        if r.isToMany {
            // The members' way back to their owner: the inverse of `b`, then of `a`.
            guard path.count == 3, path[1] == "@distinctUnionOfSets",
                let a = source.model.allRelationships(of: sourceEntity).first(where: { $0.name == path[0] }),
                a.isToMany, let aInverse = source.model.inverse(of: a), !aInverse.isToMany,
                let middle = source.model.entity(named: a.destination),
                let b = source.model.allRelationships(of: middle).first(where: { $0.name == path[2] }),
                b.isToMany, let bInverse = source.model.inverse(of: b), !bInverse.isToMany,
                let members = source.model.entity(named: b.destination),
                let rInverse = destination.entities[plan.destinationEntity]?.toManyInverses[r.name],
                let columns = destination.entities[targetPlan.destinationEntity]?.toOneColumns[rInverse]
            else { throw Refusal("'\(name)': \(chain) is not the union of two to-manys whose inverses are to-ones") }
            let (up, upNumbers) = try toOne(bInverse.name, of: members)
            let (owner, _) = try toOne(aInverse.name, of: up.destination)
            guard source.entities[members.name]?.table == targetPlan.sourceTable else {
                throw Refusal("'\(name)': \(mapping) reads another table than \(chain) leads to")
            }
            // (The interpreter reads an owner's members, and theirs, among the rows of
            // their entities.)
            let key = SourceKey(
                joins: " JOIN src.\(up.table) AS h1 ON h1.Z_PK = s.\(up.keyColumn) AND h1.Z_ENT IN (\(upNumbers))",
                key: "h1.\(owner.keyColumn)")
            let entity = columns.entity.map { ", \($0) = \(plan.destinationEntityNumber)" } ?? ""
            let count =
                "SELECT count(DISTINCT t.destination) FROM \(pairs(them, from: targetPlan.sourceTable, following: key, to: me)) "
                + "JOIN main.\(targetPlan.destinationTable) AS d ON d.Z_PK = k.destination WHERE d.\(columns.key) IS NOT t.destination"
            return SQLLink(
                relationship: name, target: target,
                sql: update(
                    targetPlan.destinationTable, set: columns.key, entity, rows: them, from: targetPlan.sourceTable,
                    following: key, to: me),
                countSQL: count, countsEveryInstance: false, dangling: nil,
                key: Key(
                    holder: target, keysOf: prepared.index, column: columns.key, entity: columns.entity,
                    entityNumber: plan.destinationEntityNumber, sourceColumn: chain, isChained: true),
                countBeforeAnyLinkSQL: count, countWrittenSQL: nil)
        }
        guard !path.contains(where: { $0.hasPrefix("@") }),
            let columns = destination.entities[plan.destinationEntity]?.toOneColumns[r.name]
        else { throw Refusal("'\(name)' is a to-one filled from \(chain)") }
        var (entity, holder, joins, key, table) = (sourceEntity, "s", "", "", "")
        var checks: [String] = []
        for (i, hop) in path.enumerated() {
            let (next, numbers) = try toOne(hop, of: entity)
            key = "\(holder).\(next.keyColumn)"
            // The interpreter reads the row: none, or one of another entity, is its error.
            checks.append(
                "SELECT s.Z_PK FROM \(me) AS k JOIN src.\(plan.sourceTable) AS s ON s.Z_PK = k.source\(joins) "
                    + "WHERE \(key) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM src.\(next.table) "
                    + "WHERE Z_PK = \(key) AND Z_ENT IN (\(numbers)))")
            if i < path.count - 1 {
                holder = "h\(i + 1)"
                joins += " JOIN src.\(next.table) AS \(holder) ON \(holder).Z_PK = \(key)"
            }
            (entity, table) = (next.destination, next.table)
        }
        guard table == targetPlan.sourceTable else {
            throw Refusal("'\(name)': \(mapping) reads another table than \(chain) leads to")
        }
        let assignment = columns.entity.map { ", \($0) = \(targetPlan.destinationEntityNumber)" } ?? ""
        return SQLLink(
            relationship: name, target: target,
            sql: update(
                plan.destinationTable, set: columns.key, assignment, rows: me, from: plan.sourceTable,
                following: SourceKey(joins: joins, key: key), to: them),
            countSQL: "SELECT count(*) FROM \(me)", countsEveryInstance: true,
            dangling: DanglingKeys(checking: checks.joined(separator: " UNION ALL ") + " LIMIT 1"),
            key: Key(
                holder: prepared.index, keysOf: target, column: columns.key, entity: columns.entity,
                entityNumber: targetPlan.destinationEntityNumber, sourceColumn: chain, isChained: true),
            countBeforeAnyLinkSQL: "SELECT count(*) FROM \(me)", countWrittenSQL: nil)
    }
}
