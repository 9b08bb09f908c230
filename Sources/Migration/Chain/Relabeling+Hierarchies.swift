import ObjectGraph

// Relationships into hierarchies in a renaming step (docs/engine.md, "Steps run as one"):
// a to-many whose members are of several entities, each made by a mapping of its own, or
// whose owners share their table with other entities, counted as the interpreter counts
// it.
extension Relabeling {
    /// What the step counts of `old`, a to-many of `from` (a B entity, copied by the
    /// mapping at `index`, whose rows are `rows` in `layout`), where its members are of
    /// several entities (its destination and sub-entities), or its owners share their
    /// table with other entities: the owners of `from` that gain a member when the step
    /// links it. A member gained is one the mapping that makes it links later (it comes
    /// after, or leaves the link to this one), or, made by this mapping, one it links
    /// after the owner: object by object in key order, from the owner itself on when the
    /// to-many is linked before its inverse, after it when second. Nil where neither is so,
    /// or where the members are not in `layout` as columns or a join table (a chain:
    /// ``report(in:layout:written:locate:chain:)`` counts those).
    func countInAHierarchy(
        _ old: RelationshipDescription, of from: String, at index: Int, rows: StoreLayout.EntityLayout,
        in database: Database, layout: StoreLayout,
        locate: (_ entity: String, _ property: String?) -> (entity: String, property: String?)
    ) throws(SQLiteError) -> Int? {
        guard let inverse = old.inverse, let targets = step.source.entity(named: old.destination) else { return nil }
        let members = step.source.descendants(of: targets).map(\.name).filter { places[$0] != nil }
        let ownersShare = rows.numbers != [rows.number] || rows.superNumber != 0
        guard members.count > 1 || ownersShare else { return nil }
        let gains = members.contains(from) ? self.gains(linking: old.name, and: inverse, of: from) : nil
        let later = members.filter {
            $0 != from && (places[$0]! > index || throughInverse[$0]?.contains(inverse) == true)
        }
        let same = gains != nil ? [from] : []
        guard !later.isEmpty || !same.isEmpty else { return 0 }
        // Members that hold the owner's key in a to-one: each owner looked up in the index
        // of its members' keys.
        if let laterKeys = Self.rows(of: later, inverse, in: layout, locate: locate),
            let sameKeys = Self.rows(of: same, inverse, in: layout, locate: locate)
        {
            let exists =
                laterKeys.map { table, column, numbers in
                    "EXISTS (SELECT 1 FROM \(table) AS m WHERE m.\(column) = o.Z_PK AND m.Z_ENT IN (\(numbers)))"
                }
                + sameKeys.map { table, column, numbers in
                    "EXISTS (SELECT 1 FROM \(table) AS m WHERE m.\(column) = o.Z_PK AND m.Z_ENT IN (\(numbers)) "
                        + "AND \(gains!("m.Z_PK", "o.Z_PK")))"
                }
            return try Self.count(
                "SELECT count(*) FROM \(rows.table) AS o WHERE o.Z_ENT = \(rows.number) AND ("
                    + exists.joined(separator: " OR ") + ")", in: database)
        }
        // Members in a join table: the owners of the pairs whose member gains them.
        guard let side = locate(from, old.name).property.flatMap({ rows.joinTables[$0] }),
            let laterRows = Self.rows(of: later, nil, in: layout, locate: locate),
            let sameRows = Self.rows(of: same, nil, in: layout, locate: locate)
        else { return nil }
        let pairs =
            "SELECT j.\(side.sourceColumn) AS k FROM \(side.table) AS j JOIN \(rows.table) AS o "
            + "ON o.Z_PK = j.\(side.sourceColumn) AND o.Z_ENT = \(rows.number)"
        let selects =
            laterRows.map { table, _, numbers in
                "\(pairs) JOIN \(table) AS m ON m.Z_PK = j.\(side.destinationColumn) WHERE m.Z_ENT IN (\(numbers))"
            }
            + sameRows.map { table, _, numbers in
                "\(pairs) JOIN \(table) AS m ON m.Z_PK = j.\(side.destinationColumn) WHERE m.Z_ENT IN (\(numbers)) "
                    + "AND \(gains!("j.\(side.destinationColumn)", "j.\(side.sourceColumn)"))"
            }
        return try Self.count(
            "SELECT count(DISTINCT k) FROM (" + selects.joined(separator: " UNION ALL ") + ")", in: database)
    }

    /// Where the rows of `entities` (B entities, found in `layout` by `locate`) are, a
    /// table at a time: with the column of their to-one `inverse` (with nil, none), and
    /// their `Z_ENT` numbers listed for `IN`. Nil where one of them has no rows, or no
    /// such column, there.
    private static func rows(
        of entities: [String], _ inverse: String?, in layout: StoreLayout,
        locate: (_ entity: String, _ property: String?) -> (entity: String, property: String?)
    ) -> [(table: String, column: String, numbers: String)]? {
        var found: [(table: String, column: String, numbers: [Int])] = []
        for entity in entities {
            let (name, property) = locate(entity, inverse)
            guard let rows = layout.entities[name] else { return nil }
            var column = ""
            if inverse != nil {
                guard let key = property.flatMap({ rows.toOneColumns[$0] })?.key else { return nil }
                column = key
            }
            if let i = found.firstIndex(where: { $0.table == rows.table && $0.column == column }) {
                found[i].numbers.append(rows.number)
            } else {
                found.append((rows.table, column, [rows.number]))
            }
        }
        return found.map { ($0.table, $0.column, $0.numbers.map(String.init).joined(separator: ", ")) }
    }
}
