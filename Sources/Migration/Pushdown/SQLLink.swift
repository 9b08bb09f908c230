import ExpressionLanguage
import ObjectGraph

/// A relationship mapping that re-links a relationship, written as one `UPDATE … FROM`
/// over the association tables (`temp.remodel_keys_<n>`: source key → destination key) of
/// the two entity mappings: what stage 2 does for it object by object, for
/// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "M", $source.r)`
/// and `…ForSourceRelationshipNamed:…` with one candidate mapping.
///
/// The foreign key is on one side: the mapping's own rows for a to-one relationship, the
/// target's rows for a to-many one whose inverse is a to-one. Only rows whose key changes
/// are written; `Z_OPT` stays as the interpreter's saves leave it in a migration (1).
struct SQLLink {
    /// The destination relationship.
    let relationship: String
    /// The entity mapping that made the related instances.
    let target: Int
    let sql: String
    /// Run before ``sql``: how many values the interpreter would count as set (every
    /// instance's to-one; an instance's to-many when it gains a member).
    let countSQL: String
    /// Whether ``countSQL`` counts every instance of the mapping (a to-one: the
    /// interpreter counts each instance's), which the rows stage 1 wrote tell.
    let countsEveryInstance: Bool
    /// Checked first, for a to-one: a source row whose to-one points to no row (a damaged
    /// store), which the interpreter reports.
    let dangling: DanglingKeys?
    /// What ``sql`` writes. A link of the inverse relationship from the other side
    /// writes the same: once one has run, the other changes nothing. The same values may
    /// be written in stage 1 instead, when the mapping that holds the key runs after the
    /// one whose keys it takes.
    let key: Key
    /// ``countSQL`` as it counts before any link of the relationship has run: when its key
    /// was written in stage 1, the interpreter would still have found it unset.
    let countBeforeAnyLinkSQL: String
    /// The same count, for a to-many whose keys stage 1 wrote into the target's rows
    /// (`?1`…`?2`, the keys of the rows the target wrote): the instances of this mapping
    /// that some such row points to, one index lookup each, where ``countBeforeAnyLinkSQL``
    /// joins every target row. Those keys are the lookups the join makes, so the counts
    /// are the same.
    let countWrittenSQL: String?
    /// Run before ``sql`` when it is the relationship's first link: a row if ``sql`` would
    /// not write what the interpreter's first link writes (an ordered relationship's
    /// positions or a one-to-one's keys where a link already wrote some, which the
    /// interpreter merges with; two rows taking the same one-to-one target), and why. The
    /// interpreter then links the objects.
    var firstLinkCheck: (sql: String, reason: String)? = nil
    /// A row this link would change: one whose key is not the one the link gives it (a
    /// to-one), or an instance that would gain a member (the to-many side). Run instead
    /// of ``sql`` when the relationship's link from the other side wrote this one's keys
    /// too (a one-to-one, ``alsoWrites``), and when ``firstLinkCheck`` finds that a link
    /// of the relationship ran in the interpreter: finding no row, the link changes
    /// nothing, as the interpreter's would not (its to-one sets leave a key that does
    /// not change as it is, position included; its to-many sets add only new members),
    /// and is counted as the relationship's second link.
    var unchangedCheck: String? = nil
    /// The inverse's key, which ``sql`` writes as well (a one-to-one's target rows).
    var alsoWrites: Key? = nil
    /// A to-many whose members several entity mappings make is one link per member
    /// mapping, each with its key and its `UPDATE`, counted together by the first: an
    /// instance gains members once, however many mappings give it some. The first holds
    /// every part's member pairs; the others (``countedWithGroup``) count nothing.
    var countGroup: [CountPart]? = nil
    var countedWithGroup = false
    /// A to-many's (owner `k`, member `t`) pairs, as a `FROM` clause over the key tables.
    var pairs: String? = nil
    /// For a to-one: ``sql`` setting every row of the mapping, `NULL` where the lookup
    /// finds nothing, as the interpreter's link sets it. Run instead of ``sql`` when
    /// another link wrote the key column before (a to-many from the other side read from
    /// another relationship or through a chain): ``sql`` writes only the rows that get a
    /// target, assuming the others unset.
    var rewriteSQL: String? = nil
    /// For a to-one with ``rewriteSQL``: a row of the mapping whose key is set, to another
    /// target than the link gives (none included), which ``sql`` would leave as it is.
    var conflictCheck: String? = nil
    /// When this mapping links both a relationship between its own objects and its
    /// inverse (a folder's parent and children): the count, from the pairs alone, that
    /// the interpreter makes linking object by object, both relationships each
    /// (``interleave(_:prepared:source:destination:)``). It replaces every other count.
    var interleavedCount: String? = nil

    /// A part of a ``countGroup``: the key its link writes, and its (owner, member) pairs
    /// as `SELECT … AS owner FROM …`, joined with `d`, the member's destination row, which
    /// count where `changed` holds, or all of them while the interpreter would still find
    /// the key unset (written in stage 1, before any link of the relationship).
    struct CountPart {
        let key: Key
        let pairs: String
        let changed: String
    }

    /// The source rows of the mapping whose relationship holds a key that names no row of
    /// the table the key points into: a to-one's key column, or a join table's column of
    /// the other side.
    struct DanglingKeys {
        /// The rows, `s` the one holding the key (`k` the mapping's key table), the key
        /// column of `s`, and what names the mapping's source row.
        let rows: String
        let column: String
        let owner: String
        /// The source table of the target.
        let targetTable: String

        /// A to-one's: the key column of the mapping's source rows.
        init(keysTable: String, sourceTable: String, column: String, targetTable: String) {
            rows = "\(keysTable) AS k JOIN src.\(sourceTable) AS s ON s.Z_PK = k.source"
            self.column = column
            owner = "s.Z_PK"
            self.targetTable = targetTable
            everyRow = "src.\(sourceTable) AS s"
        }

        /// For a to-one, the source table's rows as `s`, when every row of the mapping's
        /// source entity is checked instead of those it migrated (`s.Z_ENT` given): a
        /// superset, so a dangling key in a row the mapping does not migrate also leaves
        /// the links to the interpreter, which is only slower.
        private var everyRow: String?

        /// A many-to-many's: the member column of the source join table's rows of the
        /// mapping's source rows.
        init(keysTable: String, pairs: SourcePairs, targetTable: String) {
            rows = "\(pairs.from) JOIN \(keysTable) AS k ON k.source = \(pairs.owner)"
            column = pairs.memberColumn
            owner = "k.source"
            self.targetTable = targetTable
        }

        /// The first such source row's key, if any. When every key `targetKeys.low...high`
        /// is a row of the target table, an integer among them needs no lookup.
        func sql(targetKeys: (low: Int64, high: Int64, offset: Int64)?, everyRowOf entity: Int? = nil) -> String {
            if let written { return written }
            let test = StoreValidator.namesNoRow(
                "s.\(column)", lookup: "NOT EXISTS (SELECT 1 FROM src.\(targetTable) WHERE Z_PK = s.\(column))",
                keysThatAreRows: targetKeys.map { $0.low...$0.high })
            if let entity, let everyRow {
                return
                    "SELECT \(owner) FROM \(everyRow) WHERE s.Z_ENT = \(entity) AND s.\(column) IS NOT NULL AND \(test) LIMIT 1"
            }
            return "SELECT \(owner) FROM \(rows) WHERE s.\(column) IS NOT NULL AND \(test) LIMIT 1"
        }

        /// Whether ``sql(targetKeys:everyRowOf:)`` can check every row instead.
        var canCheckEveryRow: Bool { everyRow != nil }

        /// A check written out whole (a chain of to-ones: ``chainedLink``), `SELECT` of the
        /// first source row with a key that names no row.
        private var written: String?

        init(checking sql: String) {
            (rows, column, owner, targetTable, written) = ("", "", "", "", sql)
        }
    }

    /// The pairs of source keys (an instance of the mapping, a member) a source
    /// relationship holds, as rows `s` of one table: a join table's, the members' rows
    /// with their to-one to the instance (one-to-many), or the instances' rows with their
    /// to-one (a to-one becoming a to-many).
    struct SourcePairs {
        /// The table, as `s`.
        let from: String
        let ownerColumn: String
        let memberColumn: String
        /// The `ORDER BY` terms over `s` that give an owner's members in the order the
        /// interpreter reads them: by position where the source relationship is ordered
        /// (the unnumbered last), then by key.
        var order: String = ""

        var owner: String { "s.\(ownerColumn)" }
        var member: String { "s.\(memberColumn)" }
    }

    /// The key a link writes, from the key table of another mapping: by its `UPDATE` in
    /// stage 2, or by the `INSERT` of stage 1 (``value``).
    struct Key: Hashable {
        /// The entity mapping whose rows hold the key, and the one whose keys it takes.
        let holder: Int
        let keysOf: Int
        /// The destination column, and the `Z_ENT` column of a key to an entity with
        /// sub-entities, with the number it is set to.
        let column: String
        let entity: String?
        let entityNumber: Int
        /// The holder's source column the key follows.
        let sourceColumn: String
        /// Whether it is a join table's column (a many-to-many), which stage 1 never writes.
        var isJoin = false
        /// Whether the relationship is ordered: stage 1 never writes its key either (the
        /// positions come with it, in stage 2).
        var isOrdered = false
        /// Whether it is one-to-one: stage 1 never writes its key (the target's row holds
        /// one back, written with it in stage 2).
        var isOneToOne = false
        /// Whether it follows a chain of relationships (``chainedLink``): stage 1, which
        /// reads the source row alone, never writes it.
        var isChained = false

        /// The column's value for the source row `t0`.
        var value: String { "(SELECT destination FROM \(keysTable(keysOf)) WHERE source = t0.\(sourceColumn))" }
        /// The `Z_ENT` column's value, when there is one.
        var entityValue: String {
            "(SELECT \(entityNumber) FROM \(keysTable(keysOf)) WHERE source = t0.\(sourceColumn))"
        }

        /// ``value`` when every source key in `keys.low...keys.high` is a row of the
        /// target, which made it the key `source + keys.offset` (its keys table is that
        /// view): the same, without a lookup for each row. A key that is not an integer
        /// in the range points to no row there, as the lookup finds none.
        func value(offset keys: (low: Int64, high: Int64, offset: Int64)) -> String {
            "(CASE WHEN \(inRange(keys)) THEN t0.\(sourceColumn) + \(keys.offset) END)"
        }

        /// ``entityValue`` in the same case.
        func entityValue(offset keys: (low: Int64, high: Int64, offset: Int64)) -> String {
            "(CASE WHEN \(inRange(keys)) THEN \(entityNumber) END)"
        }

        private func inRange(_ keys: (low: Int64, high: Int64, offset: Int64)) -> String {
            "typeof(t0.\(sourceColumn)) = 'integer' AND t0.\(sourceColumn) BETWEEN \(keys.low) AND \(keys.high)"
        }
    }

    static func keysTable(_ index: Int) -> String { "temp.remodel_keys_\(index)" }

    /// Creates the keys table of entity mapping `index` and writes to it the stretches
    /// `write` gives: `count` sources with consecutive keys from `source`, each made the
    /// destination with the key as many after `destination`.
    static func createKeysTable(
        _ index: Int, in database: Database,
        from write: ((_ source: Int64, _ destination: Int64, _ count: Int) throws(SQLiteError) -> Void)
            throws(SQLiteError) -> Void
    ) throws(SQLiteError) {
        try database.execute(
            "CREATE TEMP TABLE \(keysTable(index)) (source INTEGER PRIMARY KEY, destination INTEGER NOT NULL)")
        let fill = try database.prepare(
            "WITH RECURSIVE r(k) AS (SELECT ?1 UNION ALL SELECT k + 1 FROM r WHERE k < ?2) INSERT INTO \(keysTable(index)) SELECT k, k - ?1 + ?3 FROM r"
        )
        try write { source, destination, count throws(SQLiteError) in
            try fill.bind(source, at: 1)
            try fill.bind(source + Int64(count - 1), at: 2)
            try fill.bind(destination, at: 3)
            try fill.run()
        }
    }

    /// What a link needs of the entity mapping that made the related instances.
    struct Target {
        let sourceTable: String
        let destinationEntity: String
        let destinationTable: String
        let destinationEntityNumber: Int

        init?(_ prepared: PreparedEntityMapping, source: StoreLayout, destination: StoreLayout) {
            guard let s = prepared.sourceEntity.flatMap({ source.entities[$0.name] }),
                let d = prepared.destinationEntity.flatMap({ destination.entities[$0.name] })
            else { return nil }
            sourceTable = s.table
            destinationEntity = prepared.destinationEntity!.name
            destinationTable = d.table
            destinationEntityNumber = d.number
        }
    }

    /// The links of `prepared`'s relationship mappings, or why stage 2 is interpreted.
    ///
    /// After an interpreted stage 1 (`afterInterpretedStage1`), one-to-ones and lookups of
    /// `$source` itself are left to the interpreter: such a mapping may set them with its
    /// instances in stage 1 (docs/engine.md, "Relationships with the instances"), which
    /// writes each row once where an `UPDATE` would rewrite it, large values included.
    static func links(
        of prepared: PreparedEntityMapping, plans: [Int: SQLMappingPlan], all: [PreparedEntityMapping],
        source: StoreLayout, destination: StoreLayout, afterInterpretedStage1: Bool = false
    ) throws(SQLTranslator.Refusal) -> [SQLLink] {
        typealias Refusal = SQLTranslator.Refusal
        guard let plan = plans[prepared.index], let sourceEntity = prepared.sourceEntity else {
            throw Refusal("stage 1 is interpreted")
        }
        var links: [SQLLink] = []
        for property in prepared.relationships {
            let name = property.mapping.name
            guard let r = property.relationship else { throw Refusal("'\(name)' is not a relationship") }
            // The source relationship read, or none for `$source` itself: the object the
            // target mapping made from the same source row (an entity split in two), whose
            // key follows the row's own.
            if let (mapping, path) = Self.chainedLookup(property.expression.expression) {
                links.append(
                    try chainedLink(
                        name, r, mapping: mapping, path: path, prepared: prepared, plan: plan, all: all, source: source,
                        destination: destination))
                continue
            }
            guard let (lookup, argument, read) = Self.lookup(property.expression.expression) else {
                throw Refusal("'\(name)' is evaluated by the interpreter")
            }
            let s: RelationshipDescription?
            if let read {
                guard
                    let relationship = source.model.allRelationships(of: sourceEntity).first(where: { $0.name == read })
                else { throw Refusal("'\(name)' is evaluated by the interpreter") }
                s = relationship
            } else {
                guard !afterInterpretedStage1 else {
                    throw Refusal(
                        "'\(name)' looks up the object made from the same source, after an interpreted stage 1")
                }
                s = nil
            }
            let sourceName = s?.name ?? "$source"
            // The entity mapping whose instances the lookup finds.
            let candidates: [PreparedEntityMapping]
            if lookup == Self.mappingLookup {
                candidates = all.filter { $0.mapping.name == argument }
            } else {
                guard let s, argument == sourceName, let sTarget = source.model.entity(named: s.destination),
                    let rTarget = destination.model.entity(named: r.destination)
                else { throw Refusal("'\(name)' looks up another relationship than it reads") }
                candidates = mappings(
                    from: sTarget, to: rTarget, among: all, sourceModel: source.model,
                    destinationModel: destination.model)
            }
            if candidates.count > 1, let s {
                if r.isToMany, let dSide = destination.entities[plan.destinationEntity]?.joinTables[r.name] {
                    links += try joinMembersOfSeveralMappings(
                        name, r, s, candidates, dSide: dSide, prepared: prepared, plan: plan, source: source,
                        destination: destination)
                    continue
                }
                links +=
                    r.isToMany
                    ? try membersOfSeveralMappings(
                        name, r, s, candidates, prepared: prepared, plan: plan, source: source, destination: destination
                    )
                    : try targetOfSeveralMappings(
                        name, r, s, candidates, prepared: prepared, plan: plan, source: source, destination: destination
                    )
                continue
            }
            guard candidates.count == 1 else {
                // (A mapping that does not check is not prepared: `plan` lists it, and a
                // run refuses the step.)
                if candidates.isEmpty {
                    throw Refusal(
                        lookup == Self.mappingLookup
                            ? "'\(name)': \(argument), which makes its targets, does not check"
                            : "'\(name)': no entity mapping that checks makes its targets")
                }
                throw Refusal("'\(name)': no single entity mapping makes its targets")
            }
            // A target mapping that runs interpreted gets its keys table from the
            // interpreter's associations, when they pair one source with one destination
            // (``MigrationManager`` writes it after its stage 1).
            guard let targetPlan = Target(candidates[0], source: source, destination: destination) else {
                throw Refusal("'\(name)': \(candidates[0].mapping.name) has no source entity")
            }
            let target = candidates[0].index
            guard let sTargetLayout = source.entities[s?.destination ?? sourceEntity.name],
                sTargetLayout.table == targetPlan.sourceTable,
                s != nil || candidates[0].sourceEntity?.name == sourceEntity.name
            else {
                throw Refusal("'\(name)': the target mapping reads another table than \(sourceName) points to")
            }
            let me = keysTable(prepared.index), them = keysTable(target)
            if !r.isToMany {
                // The key is in this mapping's rows.
                guard s?.isToMany != true,
                    let sColumn = s.map({ source.entities[sourceEntity.name]?.toOneColumns[$0.name]?.key }) ?? "Z_PK",
                    let columns = destination.entities[plan.destinationEntity]?.toOneColumns[r.name]
                else { throw Refusal("'\(name)' is a to-one filled from a to-many") }
                // A source key can point to no row; the row's own always names itself.
                let dangling =
                    s == nil
                    ? nil
                    : DanglingKeys(
                        keysTable: me, sourceTable: plan.sourceTable, column: sColumn, targetTable: sTargetLayout.table)
                let entity = columns.entity.map { ", \($0) = \(targetPlan.destinationEntityNumber)" } ?? ""
                if let inverse = destination.model.inverse(of: r), !inverse.isToMany {
                    guard !afterInterpretedStage1 else {
                        throw Refusal("'\(name)' is one-to-one, after an interpreted stage 1")
                    }
                    links.append(
                        try oneToOne(
                            name, inverse: inverse.name, holder: prepared.index, target: target, plan: plan,
                            targetPlan: targetPlan, columns: columns, entity: entity, sourceColumn: sColumn,
                            back: s.map { $0.inverse.flatMap { sTargetLayout.toOneColumns[$0]?.key } } ?? "Z_PK",
                            dangling: dangling, destination: destination))
                    continue
                }
                // With an ordered inverse, each row joins its target's relationship last, as
                // the interpreter's saves append it: in key order.
                let sql =
                    columns.order.map {
                        orderedUpdate(
                            plan.destinationTable, set: columns.key, position: $0, entity, rows: me,
                            from: plan.sourceTable, following: sColumn, to: them, order: "k.destination")
                    }
                    ?? update(
                        plan.destinationTable, set: columns.key, entity, rows: me, from: plan.sourceTable,
                        following: sColumn, to: them)
                var link = SQLLink(
                    relationship: name, target: target, sql: sql,
                    countSQL: "SELECT count(*) FROM \(me)", countsEveryInstance: true,
                    dangling: dangling,
                    key: Key(
                        holder: prepared.index, keysOf: target, column: columns.key, entity: columns.entity,
                        entityNumber: targetPlan.destinationEntityNumber, sourceColumn: sColumn,
                        isOrdered: columns.order != nil),
                    countBeforeAnyLinkSQL: "SELECT count(*) FROM \(me)", countWrittenSQL: nil,
                    firstLinkCheck: columns.order.map { _ in
                        (unsetCheck(plan.destinationTable, columns.key), orderedReason(name))
                    },
                    unchangedCheck: columns.order.map { _ in
                        changedKey(
                            plan.destinationTable, columns.key, rows: me, from: plan.sourceTable,
                            following: sColumn, to: them)
                    })
                if columns.order == nil {
                    link.conflictCheck = changedKey(
                        plan.destinationTable, columns.key, rows: me, from: plan.sourceTable, following: sColumn,
                        to: them, setOnly: true)
                    link.rewriteSQL = rewrite(
                        plan.destinationTable, set: columns.key,
                        entity: columns.entity.map { ($0, targetPlan.destinationEntityNumber) }, rows: me,
                        from: plan.sourceTable, following: sColumn, to: them)
                }
                links.append(link)
            } else if s == nil {
                throw Refusal("'\(name)' is a to-many filled with the object made from the same source")
            } else if let s, let dSide = destination.entities[plan.destinationEntity]?.joinTables[r.name] {
                // Many-to-many: rows of the join table, each a pair the source relationship
                // holds, through both key tables. A pair already there (the inverse's link
                // from the other side wrote it) is not written again, and an instance gains
                // a member only through a pair that is not there yet, as the interpreter
                // counts it. Ordered, as its first link only: the interpreter merges the
                // positions of a second (which then changes nothing when it adds no pair).
                let (source, dangling) = try sourcePairs(
                    name, s, of: sourceEntity, keysTable: me, plan: plan, targetTable: sTargetLayout.table, in: source)
                let pairs =
                    "\(source.from) JOIN \(me) AS k ON k.source = \(source.owner) "
                    + "JOIN \(them) AS t ON t.source = \(source.member)"
                let new = "\(pairs) WHERE \(absentPair(dSide))"
                let count = "SELECT count(DISTINCT k.destination) FROM \(new)"
                links.append(
                    SQLLink(
                        relationship: name, target: target,
                        sql: joinInsert(
                            dSide, order: source.order, inverse: inverseOrderColumn(r, in: destination), from: new),
                        countSQL: count, countsEveryInstance: false,
                        dangling: dangling,
                        // Its own: no key is written in stage 1, and both sides' links run
                        // (the second writes nothing).
                        key: Key(
                            holder: prepared.index, keysOf: target, column: "\(dSide.table).\(dSide.sourceColumn)",
                            entity: nil, entityNumber: 0, sourceColumn: source.ownerColumn, isJoin: true),
                        countBeforeAnyLinkSQL: count, countWrittenSQL: nil,
                        firstLinkCheck: dSide.orderColumn.map { _ in
                            ("SELECT 1 FROM main.\(dSide.table) LIMIT 1", orderedReason(name))
                        },
                        unchangedCheck: dSide.orderColumn.map { _ in "SELECT 1 FROM \(new) LIMIT 1" }, pairs: pairs))
            } else if let s {
                // The key is in the target's rows: the inverse to-ones on both sides.
                guard s.isToMany, let sInverse = source.entities[sourceEntity.name]?.toManyInverses[s.name],
                    let sInverseColumn = sTargetLayout.toOneColumns[sInverse]?.key,
                    let rInverse = destination.entities[plan.destinationEntity]?.toManyInverses[r.name],
                    let columns = destination.entities[targetPlan.destinationEntity]?.toOneColumns[rInverse]
                else { throw Refusal("'\(name)' uses a join table") }
                let entity = columns.entity.map { ", \($0) = \(plan.destinationEntityNumber)" } ?? ""
                // Ordered: the members' positions are their order in the source relationship
                // (`$source.r` reads it by position, the unnumbered last, then by key),
                // among those the target mapping made.
                let sOrder = sTargetLayout.toOneColumns[sInverse]?.order
                let sql =
                    columns.order.map {
                        orderedUpdate(
                            targetPlan.destinationTable, set: columns.key, position: $0, entity, rows: them,
                            from: targetPlan.sourceTable, following: sInverseColumn, to: me,
                            order: sOrder.map { "s.\($0) IS NULL, CAST(s.\($0) AS INTEGER), s.\($0), s.Z_PK" }
                                ?? "s.Z_PK")
                    }
                    ?? update(
                        targetPlan.destinationTable, set: columns.key, entity, rows: them,
                        from: targetPlan.sourceTable,
                        following: sInverseColumn, to: me)
                // Each member (`t`, its source row `s`) with its owner (`k`); and, joined with
                // its row (`d`), where its key is not that owner yet.
                let members =
                    "\(them) AS t JOIN src.\(targetPlan.sourceTable) AS s ON s.Z_PK = t.source "
                    + "JOIN \(me) AS k ON k.source = s.\(sInverseColumn)"
                let changed =
                    "\(members) JOIN main.\(targetPlan.destinationTable) AS d ON d.Z_PK = t.destination "
                    + "WHERE d.\(columns.key) IS NOT k.destination"
                links.append(
                    SQLLink(
                        relationship: name, target: target, sql: sql,
                        countSQL: "SELECT count(DISTINCT k.destination) FROM \(changed)", countsEveryInstance: false,
                        dangling: nil,
                        key: Key(
                            holder: target, keysOf: prepared.index, column: columns.key, entity: columns.entity,
                            entityNumber: plan.destinationEntityNumber, sourceColumn: sInverseColumn,
                            isOrdered: columns.order != nil),
                        countBeforeAnyLinkSQL: "SELECT count(DISTINCT k.destination) FROM \(members)",
                        countWrittenSQL:
                            "SELECT count(*) FROM \(me) AS k WHERE EXISTS (SELECT 1 FROM main.\(targetPlan.destinationTable) AS d "
                            + "WHERE d.\(columns.key) = k.destination AND d.Z_PK BETWEEN ?1 AND ?2)",
                        firstLinkCheck: columns.order.map { _ in
                            (unsetCheck(targetPlan.destinationTable, columns.key), orderedReason(name))
                        },
                        unchangedCheck: columns.order.map { _ in "SELECT 1 FROM \(changed) LIMIT 1" },
                        pairs: members))
            }
        }
        return try interleave(links, prepared: prepared, source: source, destination: destination)
    }

    /// The pairs of source keys (owner, member) that `s`, a relationship of
    /// `sourceEntity` that fills a many-to-many, holds (``SourcePairs``), and the check of
    /// its keys that name no row of `targetTable` (where a key column, not the members'
    /// rows, holds them; `keysTable` is the owners' keys table).
    static func sourcePairs(
        _ name: String, _ s: RelationshipDescription, of sourceEntity: EntityDescription, keysTable: String,
        plan: SQLMappingPlan, targetTable: String, in source: StoreLayout
    ) throws(SQLTranslator.Refusal) -> (SourcePairs, DanglingKeys?) {
        let sLayout = source.entities[sourceEntity.name]
        /// By the position column `position` (if any), then by `key`.
        func order(_ position: String?, _ key: String) -> String {
            position.map { "s.\($0) IS NULL, CAST(s.\($0) AS INTEGER), s.\($0), s.\(key)" } ?? "s.\(key)"
        }
        if let sSide = sLayout?.joinTables[s.name] {
            let pairs = SourcePairs(
                from: "src.\(sSide.table) AS s", ownerColumn: sSide.sourceColumn, memberColumn: sSide.destinationColumn,
                order: order(sSide.orderColumn, sSide.destinationColumn))
            return (pairs, DanglingKeys(keysTable: keysTable, pairs: pairs, targetTable: targetTable))
        } else if s.isToMany, let inverse = sLayout?.toManyInverses[s.name],
            let columns = source.entities[s.destination]?.toOneColumns[inverse]
        {
            // The members' rows hold the key: every pair names a row on both sides.
            return (
                SourcePairs(
                    from: "src.\(targetTable) AS s", ownerColumn: columns.key, memberColumn: "Z_PK",
                    order: order(columns.order, "Z_PK")), nil
            )
        } else if !s.isToMany, let column = sLayout?.toOneColumns[s.name]?.key {
            return (
                SourcePairs(
                    from: "src.\(plan.sourceTable) AS s", ownerColumn: "Z_PK", memberColumn: column,
                    order: order(nil, column)),
                DanglingKeys(
                    keysTable: keysTable, sourceTable: plan.sourceTable, column: column, targetTable: targetTable)
            )
        }
        throw SQLTranslator.Refusal("'\(name)' is filled from a relationship without a key column or join table")
    }

    /// ``update(_:set:_:rows:from:following:to:)`` for a key whose relationship is ordered
    /// (or whose inverse is), as the first link of it: each row gets the key and, in
    /// `position`, its place among the rows that get the same key, in `order` (over `k`,
    /// the rows' keys, and `s`, their source rows).
    private static func orderedUpdate(
        _ destinationTable: String, set key: String, position: String, _ entity: String, rows: String,
        from table: String, following foreignKey: String, to targets: String, order: String
    ) -> String {
        "UPDATE main.\(destinationTable) AS d SET \(key) = p.target, \(position) = p.position\(entity) FROM ("
            + "SELECT k.destination AS row, t.destination AS target, "
            + "row_number() OVER (PARTITION BY t.destination ORDER BY \(order)) AS position "
            + "FROM \(pairs(rows, from: table, following: foreignKey, to: targets))) AS p WHERE d.Z_PK = p.row"
    }

    /// `links` with the counts of a relationship between the mapping's own objects whose
    /// inverse it links too (a folder's parent and children, a note's related notes and
    /// the notes relating to it). The interpreter links each object's relationships in
    /// turn, so the second side finds some of its pairs made by the first for objects
    /// before (and the first some made by the second): an object's to-many gains a member
    /// only from itself on (the first of the two) or after itself (the second), in key
    /// order, the order it links them in. The pairs are the same from both sides when each
    /// reads the other's inverse in the source, which is then required; neither may be
    /// ordered (the interpreter merges the positions object by object), and a one-to-one
    /// is left to the interpreter (which takes a partner from an earlier object where the
    /// source's two keys disagree).
    static func interleave(
        _ links: [SQLLink], prepared: PreparedEntityMapping, source: StoreLayout, destination: StoreLayout
    ) throws(SQLTranslator.Refusal) -> [SQLLink] {
        var links = links
        let relationships = Dictionary(
            prepared.relationships.compactMap { p in p.relationship.map { ($0.name, (p, $0)) } },
            uniquingKeysWith: { first, _ in first })
        for (a, first) in links.enumerated() where first.target == prepared.index {
            guard let (p, r) = relationships[first.relationship], let inverse = destination.model.inverse(of: r),
                let b = links.indices.first(where: {
                    $0 > a && links[$0].target == prepared.index && links[$0].relationship == inverse.name
                }),
                let (q, _) = relationships[inverse.name]
            else { continue }
            let both = "'\(r.name)' and its inverse '\(inverse.name)' are both linked by this mapping"
            guard !r.isOrdered, !inverse.isOrdered else {
                throw SQLTranslator.Refusal("\(both), and one is ordered (the interpreter merges the positions)")
            }
            guard r.isToMany || inverse.isToMany else {
                throw SQLTranslator.Refusal(
                    "\(both), one-to-one (the interpreter sets and unsets the partners object by object)")
            }
            guard let sEntity = prepared.sourceEntity,
                let sA = Self.lookup(p.expression.expression).flatMap(\.relationship),
                let sB = Self.lookup(q.expression.expression).flatMap(\.relationship),
                let s = source.model.allRelationships(of: sEntity).first(where: { $0.name == sA }),
                source.model.inverse(of: s)?.name == sB
            else { throw SQLTranslator.Refusal("\(both), from relationships that are not each other's inverse") }
            for (index, after, toMany) in [(a, false, r.isToMany), (b, true, inverse.isToMany)] where toMany {
                guard let pairs = links[index].pairs else {
                    throw SQLTranslator.Refusal("\(both), and '\(links[index].relationship)' is linked in parts")
                }
                links[index].interleavedCount =
                    "SELECT count(DISTINCT k.destination) FROM \(pairs) WHERE t.destination \(after ? ">" : ">=") k.destination"
            }
        }
        return links
    }

    /// SQL true when the join table of `side` lacks the pair of owner `k` and member `t`.
    static func absentPair(_ side: StoreLayout.JoinTable.Side) -> String {
        "NOT EXISTS (SELECT 1 FROM main.\(side.table) AS d WHERE d.\(side.sourceColumn) = k.destination "
            + "AND d.\(side.destinationColumn) = t.destination)"
    }

    /// The order column of the inverse of the many-to-many `r`, when it is ordered.
    static func inverseOrderColumn(_ r: RelationshipDescription, in destination: StoreLayout) -> String? {
        destination.model.inverse(of: r).flatMap {
            destination.entities[r.destination]?.joinTables[$0.name]?.orderColumn
        }
    }

    /// The `INSERT` of a many-to-many's pairs into the join table of `side`, from `from`
    /// (owners `k`, members `t`, source rows `s`; only pairs not there yet), with the
    /// positions the interpreter gives: when the relationship is ordered, each member's
    /// place among its owner's in the source relationship's `order`; when its inverse is
    /// ordered (column `inverse`), the new pairs of a member after the largest position it
    /// has, by owner key, as the interpreter's save appends the rows it finds without one.
    static func joinInsert(_ side: StoreLayout.JoinTable.Side, order: String, inverse: String?, from: String) -> String
    {
        var columns = [side.sourceColumn, side.destinationColumn], values = ["k.destination", "t.destination"]
        if let position = side.orderColumn {
            columns.append(position)
            values.append("row_number() OVER (PARTITION BY k.destination ORDER BY \(order))")
        }
        if let inverse {
            columns.append(inverse)
            values.append(
                "coalesce((SELECT max(e.\(inverse)) FROM main.\(side.table) AS e WHERE e.\(side.destinationColumn) = t.destination), 0) "
                    + "+ row_number() OVER (PARTITION BY t.destination ORDER BY k.destination)")
        }
        return "INSERT INTO main.\(side.table) (\(columns.joined(separator: ", "))) "
            + "SELECT \(values.joined(separator: ", ")) FROM \(from) ORDER BY k.destination, t.destination"
    }

    /// A row of `table` whose key column `key` holds a key.
    private static func unsetCheck(_ table: String, _ key: String) -> String {
        "SELECT Z_PK FROM main.\(table) WHERE \(key) IS NOT NULL LIMIT 1"
    }

    /// A row of the keys table `rows` whose key column `key` in `destinationTable` is not
    /// the destination its source key column `foreignKey` gives through `targets` (nil
    /// when it names no row there, or holds none): what ``update(_:set:_:rows:from:following:to:)``
    /// would change. With `setOnly`, only among rows whose key is set: what it would leave
    /// as it is, and ``rewrite(_:set:entity:rows:from:following:to:)`` would not.
    private static func changedKey(
        _ destinationTable: String, _ key: String, rows: String, from table: String, following foreignKey: String,
        to targets: String, setOnly: Bool = false
    ) -> String {
        "SELECT 1 FROM \(rowTargets(rows, from: table, following: foreignKey, to: targets)) "
            + "JOIN main.\(destinationTable) AS d ON d.Z_PK = k.destination "
            + "WHERE \(setOnly ? "d.\(key) IS NOT NULL AND " : "")d.\(key) IS NOT t.destination LIMIT 1"
    }

    /// The rows of the keys table `rows` (as `k`) with their source rows (`s`) and, where
    /// their source key column `foreignKey` names one, the row of the keys table `targets`
    /// (as `t`): ``pairs(_:from:following:to:)`` with the rows that get no target too.
    private static func rowTargets(_ rows: String, from table: String, following foreignKey: String, to targets: String)
        -> String
    {
        "\(rows) AS k JOIN src.\(table) AS s ON s.Z_PK = k.source LEFT JOIN \(targets) AS t ON t.source = s.\(foreignKey)"
    }

    /// ``update(_:set:_:rows:from:following:to:)`` setting every row of `rows`: `NULL`
    /// (and `NULL` in the entity column) where the source key gives no target, as the
    /// interpreter's link sets it.
    private static func rewrite(
        _ destinationTable: String, set key: String, entity: (column: String, number: Int)?, rows: String,
        from table: String, following foreignKey: String, to targets: String
    ) -> String {
        let entity = entity.map { ", \($0.column) = CASE WHEN p.target IS NULL THEN NULL ELSE \($0.number) END" } ?? ""
        return "UPDATE main.\(destinationTable) AS d SET \(key) = p.target\(entity) "
            + "FROM (SELECT k.destination AS row, t.destination AS target "
            + "FROM \(rowTargets(rows, from: table, following: foreignKey, to: targets))) AS p "
            + "WHERE d.Z_PK = p.row AND d.\(key) IS NOT p.target"
    }

    private static func orderedReason(_ name: String) -> String {
        "'\(name)' is ordered, and a link of it has run (the interpreter merges the positions)"
    }

    /// A one-to-one's link (`name`, whose inverse is `inverse`): the key in this mapping's
    /// rows, as for any to-one, and in its target's row the key back. As the interpreter's
    /// first link makes it when no row holds either key yet and no two rows take the same
    /// target (otherwise it unlinks the earlier partner, and the interpreter links the
    /// objects). When the other side's link (reading the source's inverse, key `back`)
    /// ran first, it wrote these keys, and this link only checks that it would write
    /// nothing else (a damaged source's two keys can disagree).
    private static func oneToOne(
        _ name: String, inverse: String, holder: Int, target: Int, plan: SQLMappingPlan, targetPlan: Target,
        columns: StoreLayout.ToOneColumns, entity: String, sourceColumn: String, back: String?,
        dangling: DanglingKeys?, destination: StoreLayout
    ) throws(SQLTranslator.Refusal) -> SQLLink {
        guard !(inverse == name && plan.destinationEntity == targetPlan.destinationEntity),
            let backColumns = destination.entities[targetPlan.destinationEntity]?.toOneColumns[inverse]
        else { throw SQLTranslator.Refusal("'\(name)' is one-to-one with itself") }
        let me = keysTable(holder), them = keysTable(target)
        let pairs =
            "SELECT k.destination AS row, t.destination AS target "
            + "FROM \(Self.pairs(me, from: plan.sourceTable, following: sourceColumn, to: them))"
        let backEntity = backColumns.entity.map { ", \($0) = \(plan.destinationEntityNumber)" } ?? ""
        let sql =
            update(
                plan.destinationTable, set: columns.key, entity, rows: me, from: plan.sourceTable,
                following: sourceColumn, to: them)
            + "; UPDATE main.\(targetPlan.destinationTable) AS d SET \(backColumns.key) = p.row\(backEntity) "
            + "FROM (\(pairs)) AS p WHERE d.Z_PK = p.target AND d.\(backColumns.key) IS NOT p.row"
        let firstLinkCheck =
            "SELECT 1 FROM main.\(plan.destinationTable) WHERE \(columns.key) IS NOT NULL "
            + "UNION ALL SELECT 1 FROM main.\(targetPlan.destinationTable) WHERE \(backColumns.key) IS NOT NULL "
            + "UNION ALL SELECT 1 FROM (\(pairs)) GROUP BY target HAVING count(*) > 1 LIMIT 1"
        return SQLLink(
            relationship: name, target: target, sql: sql,
            countSQL: "SELECT count(*) FROM \(me)", countsEveryInstance: true,
            dangling: dangling,
            key: Key(
                holder: holder, keysOf: target, column: columns.key, entity: columns.entity,
                entityNumber: targetPlan.destinationEntityNumber, sourceColumn: sourceColumn, isOneToOne: true),
            countBeforeAnyLinkSQL: "SELECT count(*) FROM \(me)", countWrittenSQL: nil,
            firstLinkCheck: (
                firstLinkCheck,
                "'\(name)' is one-to-one, and a link of it has run or two rows take the same target (the interpreter unlinks the earlier one)"
            ),
            unchangedCheck: changedKey(
                plan.destinationTable, columns.key, rows: me, from: plan.sourceTable, following: sourceColumn, to: them),
            alsoWrites: back.map {
                Key(
                    holder: target, keysOf: holder, column: backColumns.key, entity: backColumns.entity,
                    entityNumber: plan.destinationEntityNumber, sourceColumn: $0, isOneToOne: true)
            })
    }

    /// Sets the key column `key` (and `entity`, its `Z_ENT` column's assignment, if any) of
    /// the destination rows whose keys table is `rows`, made from rows of the source table
    /// `table`, to the destination key `targets` gives for their source key column
    /// `foreignKey`; only rows whose key changes are written. (`Z_OPT` stays 1: see
    /// `ObjectContext.versionsUpdates`.)
    static func update(
        _ destinationTable: String, set key: String, _ entity: String, rows: String, from table: String,
        following foreignKey: String, to targets: String
    ) -> String {
        update(destinationTable, set: key, entity, rows: rows, from: table, following: .column(foreignKey), to: targets)
    }

    static func update(
        _ destinationTable: String, set key: String, _ entity: String, rows: String, from table: String,
        following sourceKey: SourceKey, to targets: String
    ) -> String {
        "UPDATE main.\(destinationTable) AS d SET \(key) = t.destination\(entity) "
            + "FROM \(pairs(rows, from: table, following: sourceKey, to: targets)) "
            + "WHERE d.Z_PK = k.destination AND d.\(key) IS NOT t.destination"
    }

    /// What a source row `s` holds of its target's source key: a key column of its own, or
    /// the last key of a chain of to-ones, each row of the chain joined (`h1`, `h2`, …).
    struct SourceKey {
        let joins: String
        let key: String

        static func column(_ column: String) -> SourceKey { SourceKey(joins: "", key: "s.\(column)") }
    }

    /// The rows of the keys table `rows` (as `k`) with their source rows (`s`, of `table`)
    /// and the keys table `targets` (as `t`) row their source key column `foreignKey`
    /// names: each destination row with the destination its key points to.
    static func pairs(_ rows: String, from table: String, following foreignKey: String, to targets: String)
        -> String
    {
        pairs(rows, from: table, following: .column(foreignKey), to: targets)
    }

    static func pairs(_ rows: String, from table: String, following sourceKey: SourceKey, to targets: String)
        -> String
    {
        "\(rows) AS k JOIN src.\(table) AS s ON s.Z_PK = k.source\(sourceKey.joins) "
            + "JOIN \(targets) AS t ON t.source = \(sourceKey.key)"
    }

    static let mappingLookup = "destinationInstancesForEntityMappingNamed:sourceInstances:"

    /// The entity mappings whose objects a lookup by source relationship
    /// (`destinationInstancesForSourceRelationshipNamed:sourceInstances:`) finds: those from
    /// `sources` or one of its sub-entities to `destination` or one of its sub-entities.
    static func mappings(
        from sources: EntityDescription, to destination: EntityDescription, among all: [PreparedEntityMapping],
        sourceModel: ObjectModel, destinationModel: ObjectModel
    ) -> [PreparedEntityMapping] {
        let sourceKinds = Set(sourceModel.descendants(of: sources).map(\.name))
        let destinationKinds = Set(destinationModel.descendants(of: destination).map(\.name))
        return all.filter {
            guard let a = $0.sourceEntity, let b = $0.destinationEntity else { return false }
            return sourceKinds.contains(a.name) && destinationKinds.contains(b.name)
        }
    }

    /// `FUNCTION($manager, "<lookup>", "<argument>", $source.<relationship>)`, the last
    /// argument also as `FUNCTION($source, "valueForKey:", "<relationship>")`, or
    /// `$source` itself (`relationship` nil: the object mapping `<argument>` made from the
    /// same source object, with ``mappingLookup`` only).
    static func lookup(_ expression: FormatExpression) -> (lookup: String, argument: String, relationship: String?)? {
        guard case .functionCall(let target, let selector, let arguments) = expression.kind, arguments.count == 2,
            case .variable("manager") = target.kind, let lookup = selector.constantString,
            lookup == mappingLookup || lookup == MappingInference.relationshipLookup,
            let argument = arguments[0].constantString
        else { return nil }
        if case .variable("source") = arguments[1].kind {
            return lookup == mappingLookup ? (lookup, argument, nil) : nil
        }
        guard let relationship = EntityMappingRunner.copiedAttribute(arguments[1]) else { return nil }
        return (lookup, argument, relationship)
    }

    /// `M` of the lookup of `$source` itself in mapping `M` (``lookup(_:)``).
    static func lookupOfItsSource(_ expression: FormatExpression) -> String? {
        guard let (_, argument, relationship) = lookup(expression), relationship == nil else { return nil }
        return argument
    }
}
