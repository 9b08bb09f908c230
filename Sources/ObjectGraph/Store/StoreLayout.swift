/// How a model version is laid out in Core Data's SQLite format (docs/store-format.md):
/// a table per root entity with `Z_PK`, `Z_ENT`, `Z_OPT` and a `Z<NAME>` column per stored
/// attribute and to-one relationship; sub-entities share their root's table; many-to-many
/// relationships get join tables `Z_<n><NAME>`; a to-many relationship without an inverse
/// keeps its members in hidden columns of the destination's table, `Z<n><NAME>` (and
/// `Z_FOK_<n><NAME>` when ordered), as if the destination had a to-one back.
public struct StoreLayout: Sendable {
    public let model: ObjectModel
    /// Per entity, by name.
    public private(set) var entities: [String: EntityLayout]
    /// Per root entity table, by table name.
    public let tables: [String: Table]
    /// Join tables of many-to-many relationships.
    public private(set) var joinTables: [JoinTable]

    /// Where one entity's values live.
    public struct EntityLayout: Sendable {
        public let name: String
        /// `Z_ENT`.
        public let number: Int
        /// The parent's number; 0 for a root entity (`Z_SUPER`).
        public let superNumber: Int
        /// The root entity's table.
        public let table: String
        /// This entity's and its sub-entities' numbers: what a fetch of the entity selects.
        public let numbers: [Int]
        /// ``numbers`` as SQL lists them, `Z_ENT IN (<numberList>)`.
        public var numberList: String { numbers.map(String.init).joined(separator: ", ") }
        /// Column of each stored attribute (inherited ones included), by attribute name.
        public let attributeColumns: [String: String]
        /// Columns of each to-one relationship, by relationship name, and of each hidden
        /// to-one (``hiddenToOnes``), by its name.
        public let toOneColumns: [String: ToOneColumns]
        /// Join table of each many-to-many relationship, by relationship name.
        public fileprivate(set) var joinTables: [String: JoinTable.Side]
        /// The to-ones of the destination whose columns hold each one-to-many relationship
        /// (inherited ones included), by relationship name: the declared inverse, or for a
        /// to-many without an inverse, the hidden to-one Core Data keeps for it.
        public let toManyInverses: [String: String]
        /// The hidden to-ones in this entity's rows (inherited ones included): one per
        /// to-many relationship without an inverse whose destination this entity is.
        public let hiddenToOnes: [HiddenToOne]
    }

    /// The columns in a destination's table that hold a to-many relationship without an
    /// inverse: Core Data stores such a relationship as if the destination had a to-one
    /// back to its owner, in columns named for the owner's number and the relationship
    /// (`Z3ITEMS`, `Z_FOK_3ITEMS`). No model property has them.
    public struct HiddenToOne: Sendable, Hashable {
        /// The name its columns are found by in ``EntityLayout/toOneColumns``:
        /// `<Owner>.<relationship>`, which no property name can be.
        public let name: String
        /// The entity that declares the to-many relationship.
        public let owner: String
        public let relationship: String

        public init(owner: String, relationship: String) {
            name = "\(owner).\(relationship)"
            self.owner = owner
            self.relationship = relationship
        }
    }

    /// The columns of a to-one relationship: the destination's `Z_PK`, its `Z_ENT` when
    /// the destination has sub-entities, and, when the inverse is an ordered to-many
    /// relationship, `Z_FOK_<NAME>`: the object's position among the destination's.
    public struct ToOneColumns: Sendable, Hashable {
        public let key: String
        public let entity: String?
        public let order: String?

        public init(key: String, entity: String?, order: String? = nil) {
            self.key = key
            self.entity = entity
            self.order = order
        }
    }

    public struct Table: Sendable {
        public let name: String
        public let columns: [Column]
        /// `(index name, column)` for the indexes Core Data creates on to-one columns.
        public let indexes: [(name: String, column: String)]
    }

    public struct Column: Sendable, Hashable {
        public let name: String
        public let sqlType: String
    }

    /// A join table and its two columns.
    public struct JoinTable: Sendable, Hashable {
        public fileprivate(set) var name: String
        /// The primary keys of the first side's entity (`Z_<n><INVERSE>`).
        public let firstColumn: String
        /// The primary keys of the second side's entity (`Z_<m><NAME>`).
        public let secondColumn: String
        /// `Z_FOK_<column>` ordering columns for ordered relationships.
        public let firstOrderColumn: String?
        public let secondOrderColumn: String?

        /// Whether a table with `columns` can hold this join table: it has both columns.
        public func isHeld(by columns: Set<String>) -> Bool {
            columns.contains(firstColumn) && columns.contains(secondColumn)
        }

        /// The name a store's `tables` (name → columns) hold this join table under: its own,
        /// or, as Core Data may name it after the other side, the first table by name with
        /// both columns; nil when none holds it.
        public func name(in tables: [String: Set<String>]) -> String? {
            if let columns = tables[name] { return isHeld(by: columns) ? name : nil }
            return tables.keys.sorted().first { isHeld(by: tables[$0]!) }
        }

        /// One relationship's view of its join table: which column holds its own objects'
        /// keys, which the destination's, and where its order is kept.
        public struct Side: Sendable, Hashable {
            public fileprivate(set) var table: String
            public let sourceColumn: String
            public let destinationColumn: String
            public let orderColumn: String?
        }
    }

    public init(model: ObjectModel) {
        self.model = model
        let numbers = model.entityNumbers

        func column(for name: String) -> String { "Z" + name.uppercased() }

        // To-many relationships without an inverse, by destination: their hidden to-ones.
        var hiddenByDestination: [String: [(hidden: HiddenToOne, isOrdered: Bool)]] = [:]
        for owner in model.entities.sorted(by: { $0.name < $1.name }) {
            for r in owner.relationships where r.isToMany && !r.isTransient && model.inverse(of: r) == nil {
                guard model.entity(named: r.destination) != nil else { continue }
                hiddenByDestination[r.destination, default: []].append(
                    (HiddenToOne(owner: owner.name, relationship: r.name), r.isOrdered))
            }
        }

        // Tables: one per root entity; columns of the whole hierarchy, root first.
        var tables: [String: Table] = [:]
        var attributeColumns: [String: [String: String]] = [:]
        var toOneColumns: [String: [String: ToOneColumns]] = [:]
        var hiddenToOnes: [String: [HiddenToOne]] = [:]
        for root in model.entities where root.parent == nil {
            let tableName = column(for: root.name)
            var columns = [
                Column(name: "Z_PK", sqlType: "INTEGER PRIMARY KEY"),
                Column(name: "Z_ENT", sqlType: "INTEGER"), Column(name: "Z_OPT", sqlType: "INTEGER")
            ]
            var indexes: [(String, String)] = []
            var used: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
            func unique(_ base: String) -> String {
                if used.insert(base).inserted { return base }
                var n = 1
                while !used.insert("\(base)\(n)").inserted { n += 1 }
                return "\(base)\(n)"
            }
            // Each entity of the hierarchy adds its own properties; children inherit the
            // parent's column names.
            func add(
                _ entity: EntityDescription, inheriting attributes: [String: String], _ toOnes: [String: ToOneColumns],
                _ hidden: [HiddenToOne]
            ) {
                var myAttributes = attributes
                var myToOnes = toOnes
                var myHidden = hidden
                for r in entity.relationships where !r.isToMany && !r.isTransient {
                    let key = unique(column(for: r.name))
                    columns.append(Column(name: key, sqlType: "INTEGER"))
                    indexes.append(("\(tableName)_\(key)_INDEX", key))
                    var entityColumn: String? = nil
                    if let destination = model.entity(named: r.destination), !model.subentities(of: destination).isEmpty
                    {
                        // Named for the destination's number, as in an Apple-written store
                        // (ZPAGE.Z1_BOOK, Book being entity 1 and Page 4).
                        let name = unique("Z\(numbers[destination.name] ?? 0)_\(r.name.uppercased())")
                        columns.append(Column(name: name, sqlType: "INTEGER"))
                        entityColumn = name
                    }
                    // An ordered one-to-many keeps each member's position beside its key
                    // (Core Data's `Z_FOK_<NAME>`, as in ZTRANSACTIONSPLIT.Z_FOK_TRANSACTION).
                    var orderColumn: String? = nil
                    if let destination = model.entity(named: r.destination), let inverseName = r.inverse,
                        let inverse = model.allRelationships(of: destination).first(where: { $0.name == inverseName }),
                        inverse.isToMany, inverse.isOrdered, !inverse.isTransient
                    {
                        let name = unique("Z_FOK_" + key.dropFirst())
                        columns.append(Column(name: name, sqlType: "INTEGER"))
                        orderColumn = name
                    }
                    myToOnes[r.name] = ToOneColumns(key: key, entity: entityColumn, order: orderColumn)
                }
                // The hidden to-ones of to-many relationships without an inverse that point
                // here: `Z<n><NAME>`, n the owner's number; `Z<n>_<n><NAME>` for the owner's
                // Z_ENT when it has sub-entities (named as a to-one's is, for its
                // destination, the owner; unverified).
                for (h, isOrdered) in hiddenByDestination[entity.name] ?? [] {
                    let suffix = "\(numbers[h.owner] ?? 0)\(h.relationship.uppercased())"
                    let key = unique("Z" + suffix)
                    columns.append(Column(name: key, sqlType: "INTEGER"))
                    indexes.append(("\(tableName)_\(key)_INDEX", key))
                    var entityColumn: String? = nil
                    if let owner = model.entity(named: h.owner), !model.subentities(of: owner).isEmpty {
                        let name = unique("Z\(numbers[h.owner] ?? 0)_\(suffix)")
                        columns.append(Column(name: name, sqlType: "INTEGER"))
                        entityColumn = name
                    }
                    var orderColumn: String? = nil
                    if isOrdered {
                        let name = unique("Z_FOK_" + suffix)
                        columns.append(Column(name: name, sqlType: "INTEGER"))
                        orderColumn = name
                    }
                    myToOnes[h.name] = ToOneColumns(key: key, entity: entityColumn, order: orderColumn)
                    myHidden.append(h)
                }
                for a in entity.attributes where !a.isTransient {
                    let name = unique(column(for: a.name))
                    columns.append(Column(name: name, sqlType: a.type.sqlType))
                    myAttributes[a.name] = name
                }
                attributeColumns[entity.name] = myAttributes
                toOneColumns[entity.name] = myToOnes
                hiddenToOnes[entity.name] = myHidden
                for sub in model.subentities(of: entity) { add(sub, inheriting: myAttributes, myToOnes, myHidden) }
            }
            add(root, inheriting: [:], [:], [])
            tables[tableName] = Table(name: tableName, columns: columns, indexes: indexes)
        }

        // Join tables: one per many-to-many pair.
        var joinTables: [JoinTable] = []
        var sides: [String: [String: JoinTable.Side]] = [:]
        var done: Set<String> = []
        for entity in model.entities {
            for r in entity.relationships where r.isToMany && !r.isTransient {
                guard let destination = model.entity(named: r.destination) else { continue }
                let inverse = model.inverse(of: r)
                // One-to-many: the inverse's column; no inverse: a hidden column.
                guard let inverse, inverse.isToMany else { continue }
                let key = "\(entity.name).\(r.name)"
                if done.contains(key) { continue }
                // The side whose entity name sorts first names the table (Core Data's
                // choice is not documented; readers accept either name, see StoreMatcher).
                var first = (entity: entity.name, relationship: r)
                var second: (entity: String, relationship: RelationshipDescription)? = (destination.name, inverse)
                if let s = second, (s.entity, s.relationship.name) < (first.entity, first.relationship.name) {
                    second = first
                    first = s
                }
                let n = numbers[first.entity] ?? 0
                let m = numbers[first.relationship.destination] ?? 0
                let tableName = "Z_\(n)\(first.relationship.name.uppercased())"
                let firstColumn = "Z_\(n)\((second?.relationship.name ?? "INVERSE").uppercased())"
                var secondColumn = "Z_\(m)\(first.relationship.name.uppercased())"
                if secondColumn == firstColumn { secondColumn += "1" }
                let firstOrder = second?.relationship.isOrdered == true ? "Z_FOK_\(firstColumn.dropFirst(2))" : nil
                let secondOrder = first.relationship.isOrdered ? "Z_FOK_\(secondColumn.dropFirst(2))" : nil
                let table = JoinTable(
                    name: tableName, firstColumn: firstColumn, secondColumn: secondColumn,
                    firstOrderColumn: firstOrder, secondOrderColumn: secondOrder)
                joinTables.append(table)
                // The first side's objects are in firstColumn; their destinations in secondColumn.
                let firstSide = JoinTable.Side(
                    table: tableName, sourceColumn: firstColumn, destinationColumn: secondColumn,
                    orderColumn: secondOrder)
                sides[first.entity, default: [:]][first.relationship.name] = firstSide
                done.insert("\(first.entity).\(first.relationship.name)")
                if let second {
                    sides[second.entity, default: [:]][second.relationship.name] = JoinTable.Side(
                        table: tableName, sourceColumn: secondColumn, destinationColumn: firstColumn,
                        orderColumn: firstOrder)
                    done.insert("\(second.entity).\(second.relationship.name)")
                }
            }
        }

        var entities: [String: EntityLayout] = [:]
        for entity in model.entities {
            let root = model.rootEntity(of: entity)
            // Sub-entities inherit their ancestors' join tables.
            var joins: [String: JoinTable.Side] = [:]
            var inverses: [String: String] = [:]
            for ancestor in ([entity] + model.ancestors(of: entity)).reversed() {
                joins.merge(sides[ancestor.name] ?? [:]) { _, new in new }
                for r in ancestor.relationships
                where r.isToMany && !r.isTransient && sides[ancestor.name]?[r.name] == nil {
                    inverses[r.name] =
                        model.inverse(of: r)?.name
                        ?? HiddenToOne(owner: ancestor.name, relationship: r.name).name
                }
            }
            entities[entity.name] = EntityLayout(
                name: entity.name,
                number: numbers[entity.name] ?? 0,
                superNumber: entity.parent.flatMap { numbers[$0] } ?? 0,
                table: column(for: root.name),
                numbers: model.descendants(of: entity).compactMap { numbers[$0.name] }.sorted(),
                attributeColumns: attributeColumns[entity.name] ?? [:],
                toOneColumns: toOneColumns[entity.name] ?? [:],
                joinTables: joins,
                toManyInverses: inverses,
                hiddenToOnes: hiddenToOnes[entity.name] ?? [])
        }
        self.entities = entities
        self.tables = tables
        self.joinTables = joinTables
    }

    /// The layout with its join tables found under the names a store has them: Core Data's
    /// choice of side to name a join table after is not documented (docs/store-format.md),
    /// so a store's join table may be named after the other side, with the same two
    /// columns. `tables` maps table names to their columns.
    public func matchingJoinTables(of tables: [String: Set<String>]) -> StoreLayout {
        var layout = self
        for (i, join) in joinTables.enumerated() {
            guard let name = join.name(in: tables), name != join.name else { continue }
            layout.joinTables[i].name = name
            for (entity, entityLayout) in layout.entities {
                for (relationship, side) in entityLayout.joinTables where side.table == join.name {
                    layout.entities[entity]!.joinTables[relationship]!.table = name
                }
            }
        }
        return layout
    }

    /// Those of ``createStatements`` that create an index (never a unique one: a table's
    /// keys are in its `CREATE TABLE`), which a bulk load may run after its rows.
    public var indexStatements: [String] {
        createStatements.filter { $0.hasPrefix("CREATE INDEX ") }
    }

    /// The statements that create the store's tables and indexes, in a stable order.
    public var createStatements: [String] {
        var statements: [String] = []
        for table in tables.values.sorted(by: { $0.name < $1.name }) {
            statements.append(
                "CREATE TABLE \(table.name) ( "
                    + table.columns.map { "\($0.name) \($0.sqlType)" }.joined(separator: ", ") + " )")
            for index in table.indexes {
                statements.append("CREATE INDEX \(index.name) ON \(table.name) (\(index.column))")
            }
        }
        for join in joinTables.sorted(by: { $0.name < $1.name }) {
            var columns = ["\(join.firstColumn) INTEGER", "\(join.secondColumn) INTEGER"]
            if let o = join.firstOrderColumn { columns.append("\(o) INTEGER") }
            if let o = join.secondOrderColumn { columns.append("\(o) INTEGER") }
            statements.append(
                "CREATE TABLE \(join.name) ( \(columns.joined(separator: ", ")), PRIMARY KEY (\(join.firstColumn), \(join.secondColumn)) )"
            )
            statements.append(
                "CREATE INDEX \(join.name)_\(join.secondColumn)_INDEX ON \(join.name) (\(join.secondColumn), \(join.firstColumn))"
            )
        }
        statements.append(
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        statements.append("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        statements.append("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
        return statements
    }
}
