import ExpressionLanguage
import ObjectGraph

// Links whose targets several entity mappings make: sub-entities mapped apart, as an
// inferred mapping maps them (docs/pushdown.md, "Relationships").
extension SQLLink {
    /// The links of a many-to-many `r` (read from `s`) whose members several entity
    /// mappings make (`candidates`): one `INSERT OR IGNORE` into the join table per member
    /// mapping, of the pairs `s` holds whose member that mapping made, as the lookup finds
    /// the members by every mapping. The owners that gain a member are counted once, over
    /// the union of the parts' pairs not in the join table yet, before the first.
    static func joinMembersOfSeveralMappings(
        _ name: String, _ r: RelationshipDescription, _ s: RelationshipDescription,
        _ candidates: [PreparedEntityMapping], dSide: StoreLayout.JoinTable.Side, prepared: PreparedEntityMapping,
        plan: SQLMappingPlan, source: StoreLayout, destination: StoreLayout
    ) throws(SQLTranslator.Refusal) -> [SQLLink] {
        typealias Refusal = SQLTranslator.Refusal
        let several = "'\(name)': several entity mappings make its members"
        guard dSide.orderColumn == nil else { throw Refusal("\(several), and it is ordered") }
        guard let sourceEntity = prepared.sourceEntity, let sTargetLayout = source.entities[s.destination] else {
            throw Refusal("\(several), and its source has no table")
        }
        try requireDistinctSources(candidates, several)
        let me = keysTable(prepared.index)
        let (pairs, dangling) = try sourcePairs(
            name, s, of: sourceEntity, keysTable: me, plan: plan, targetTable: sTargetLayout.table, in: source)
        var links: [SQLLink] = []
        var parts: [CountPart] = []
        for candidate in candidates {
            guard let targetPlan = Target(candidate, source: source, destination: destination),
                targetPlan.sourceTable == sTargetLayout.table
            else { throw Refusal("\(several), and \(candidate.mapping.name) reads another table") }
            let them = keysTable(candidate.index)
            let joined =
                "\(pairs.from) JOIN \(me) AS k ON k.source = \(pairs.owner) JOIN \(them) AS t ON t.source = \(pairs.member)"
            let key = Key(
                holder: prepared.index, keysOf: candidate.index, column: "\(dSide.table).\(dSide.sourceColumn)",
                entity: nil, entityNumber: 0, sourceColumn: pairs.ownerColumn, isJoin: true)
            parts.append(
                CountPart(
                    key: key, pairs: "SELECT k.destination AS owner FROM \(joined)", changed: absentPair(dSide)))
            links.append(
                SQLLink(
                    partOf: name, target: candidate.index,
                    sql: joinInsert(
                        dSide, order: pairs.order, inverse: inverseOrderColumn(r, in: destination),
                        from: "\(joined) WHERE \(absentPair(dSide))"),
                    key: key, dangling: links.isEmpty ? dangling : nil))
        }
        return counted(links, together: parts)
    }

    /// The links of a to-many `r` (read from `s`) whose members several entity mappings
    /// make (`candidates`: sub-entities each mapped on their own, as inferred mappings do):
    /// one ``update(_:set:_:rows:from:following:to:)`` per member mapping of the key in its
    /// rows, the inverse to-one, as the lookup finds the members by every mapping. Only
    /// where each member mapping reads its own source entity from the table `s` points to,
    /// and the key is the members' (not a join table), unordered.
    static func membersOfSeveralMappings(
        _ name: String, _ r: RelationshipDescription, _ s: RelationshipDescription,
        _ candidates: [PreparedEntityMapping], prepared: PreparedEntityMapping, plan: SQLMappingPlan,
        source: StoreLayout, destination: StoreLayout
    ) throws(SQLTranslator.Refusal) -> [SQLLink] {
        typealias Refusal = SQLTranslator.Refusal
        let several = "'\(name)': several entity mappings make its members"
        guard let sourceEntity = prepared.sourceEntity, s.isToMany,
            let sInverse = source.entities[sourceEntity.name]?.toManyInverses[s.name],
            let sTargetLayout = source.entities[s.destination],
            let rInverse = destination.entities[plan.destinationEntity]?.toManyInverses[r.name]
        else { throw Refusal("\(several), and it uses a join table") }
        try requireDistinctSources(candidates, several)
        let me = keysTable(prepared.index)
        var links: [SQLLink] = []
        var parts: [CountPart] = []
        for candidate in candidates {
            guard let targetPlan = Target(candidate, source: source, destination: destination),
                targetPlan.sourceTable == sTargetLayout.table,
                let sInverseColumn = source.entities[candidate.sourceEntity!.name]?.toOneColumns[sInverse],
                let columns = destination.entities[targetPlan.destinationEntity]?.toOneColumns[rInverse],
                columns.order == nil
            else { throw Refusal("\(several), and \(candidate.mapping.name) is not linked by its key (or ordered)") }
            let them = keysTable(candidate.index)
            let entity = columns.entity.map { ", \($0) = \(plan.destinationEntityNumber)" } ?? ""
            let key = Key(
                holder: candidate.index, keysOf: prepared.index, column: columns.key, entity: columns.entity,
                entityNumber: plan.destinationEntityNumber, sourceColumn: sInverseColumn.key)
            // Each member (`k`, its source row `s`) with its owner (`t`) and its row (`d`).
            parts.append(
                CountPart(
                    key: key,
                    pairs: "SELECT t.destination AS owner FROM "
                        + pairs(them, from: targetPlan.sourceTable, following: sInverseColumn.key, to: me)
                        + " JOIN main.\(targetPlan.destinationTable) AS d ON d.Z_PK = k.destination",
                    changed: "d.\(columns.key) IS NOT t.destination"))
            links.append(
                SQLLink(
                    partOf: name, target: candidate.index,
                    sql: update(
                        targetPlan.destinationTable, set: columns.key, entity, rows: them,
                        from: targetPlan.sourceTable, following: sInverseColumn.key, to: me),
                    key: key))
        }
        return counted(links, together: parts)
    }

    /// A part of a relationship's links that are counted together (``countGroup``): it
    /// counts nothing itself.
    init(partOf relationship: String, target: Int, sql: String, key: Key, dangling: DanglingKeys? = nil) {
        self.init(
            relationship: relationship, target: target, sql: sql, countSQL: "SELECT 0", countsEveryInstance: false,
            dangling: dangling, key: key, countBeforeAnyLinkSQL: "SELECT 0", countWrittenSQL: nil,
            countedWithGroup: true)
    }

    /// `links`, the parts of one relationship's link, the first counting for all of them
    /// over `parts` before any of them writes.
    static func counted(_ links: [SQLLink], together parts: [CountPart]) -> [SQLLink] {
        var links = links
        links[0].countGroup = parts
        links[0].countedWithGroup = false
        return links
    }

    /// The links of a to-one `r` (read from the to-one `s`) whose target several entity
    /// mappings make (sub-entities of its destination, each mapped on its own): one
    /// ``update(_:set:_:rows:from:following:to:)`` of the mapping's rows per target mapping,
    /// each setting the key (and its `Z_ENT` column) of the rows whose source key is among
    /// that mapping's, as the lookup finds the object whichever mapping made it. Every
    /// instance is counted once, by the first; a key naming no row is checked once, by the
    /// first. Only where each target mapping reads its own source entity from the table
    /// `s` points to, and the inverse is neither ordered nor a to-one.
    static func targetOfSeveralMappings(
        _ name: String, _ r: RelationshipDescription, _ s: RelationshipDescription,
        _ candidates: [PreparedEntityMapping], prepared: PreparedEntityMapping, plan: SQLMappingPlan,
        source: StoreLayout, destination: StoreLayout
    ) throws(SQLTranslator.Refusal) -> [SQLLink] {
        typealias Refusal = SQLTranslator.Refusal
        let several = "'\(name)': several entity mappings make its targets"
        guard let sourceEntity = prepared.sourceEntity, !s.isToMany,
            let sColumn = source.entities[sourceEntity.name]?.toOneColumns[s.name]?.key,
            let sTargetLayout = source.entities[s.destination],
            let columns = destination.entities[plan.destinationEntity]?.toOneColumns[r.name], columns.order == nil
        else { throw Refusal("\(several), and it is filled from a to-many or ordered") }
        if destination.model.inverse(of: r)?.isToMany == false { throw Refusal("\(several), and it is one-to-one") }
        try requireDistinctSources(candidates, several)
        let me = keysTable(prepared.index)
        var links: [SQLLink] = []
        for candidate in candidates {
            guard let targetPlan = Target(candidate, source: source, destination: destination),
                targetPlan.sourceTable == sTargetLayout.table
            else { throw Refusal("\(several), and \(candidate.mapping.name) reads another table") }
            let entity = columns.entity.map { ", \($0) = \(targetPlan.destinationEntityNumber)" } ?? ""
            links.append(
                SQLLink(
                    relationship: name, target: candidate.index,
                    sql: update(
                        plan.destinationTable, set: columns.key, entity, rows: me, from: plan.sourceTable,
                        following: sColumn, to: keysTable(candidate.index)),
                    countSQL: "SELECT count(*) FROM \(me)", countsEveryInstance: true,
                    dangling: links.isEmpty
                        ? DanglingKeys(
                            keysTable: me, sourceTable: plan.sourceTable, column: sColumn,
                            targetTable: sTargetLayout.table) : nil,
                    key: Key(
                        holder: prepared.index, keysOf: candidate.index, column: columns.key, entity: columns.entity,
                        entityNumber: targetPlan.destinationEntityNumber, sourceColumn: sColumn),
                    countBeforeAnyLinkSQL: "SELECT count(*) FROM \(me)", countWrittenSQL: nil,
                    countedWithGroup: !links.isEmpty))
        }
        return links
    }

    /// Each source object one candidate's (each reads its own source entity): an object
    /// two mappings made would be linked twice at once, which the interpreter's lookup
    /// refuses for a to-one and merges for a to-many.
    static func requireDistinctSources(_ candidates: [PreparedEntityMapping], _ several: String)
        throws(SQLTranslator.Refusal)
    {
        let sourceNames = candidates.compactMap { $0.sourceEntity?.name }
        guard sourceNames.count == candidates.count, Set(sourceNames).count == candidates.count else {
            throw SQLTranslator.Refusal("\(several) from the same source entity")
        }
    }
}
