import ExpressionLanguage

/// Checks a whole store against its model's rules with SQL, without loading objects:
/// required attributes and to-one relationships have values, to-many relationships have
/// between their minimum and maximum number of destinations, numbers lie within their
/// attribute's minimum and maximum and strings' lengths within theirs.
///
///     let failures = try StoreValidator(store: store).failures(limit: 10)
///
/// This is the validation a migration runs on its new store (Core Data validates every
/// object at the end of a migration); memory stays flat however large the store is.
public struct StoreValidator {
    public let store: Store

    public init(store: Store) { self.store = store }

    /// Up to `limit` failures, each naming the object (`Book/9`) and the property: entity
    /// by entity in the model's order, each entity's checks in the order of its properties,
    /// each check's failures in key order.
    ///
    /// The attribute checks of the entities in `attributesChecked` are left out: their
    /// rows were checked as they were written (a migration's SQL stage 1,
    /// ``attributeRules(_:value:nullness:)``).
    public func failures(limit: Int = 10, attributesChecked: Set<String> = []) throws(ContextError) -> [ContextError] {
        var failures: [ContextError] = []
        let model = store.model
        let layout = store.layout
        for entity in model.entities where !entity.isAbstract {
            guard failures.count < limit, let entityLayout = layout.entities[entity.name] else { continue }
            let table = entityLayout.table
            let own = "Z_ENT = \(entityLayout.number)"
            // The checks of single rows (required values, bounds) are made in one scan of
            // the table, however many there are: a required attribute each would otherwise
            // cost a scan of a table that may hold millions of rows.
            var rowChecks: [RowCheck] = []
            var checks: [Check] = []
            func rowCheck(_ condition: String, measure: String? = nil, _ message: @escaping (SQLiteValue?) -> String) {
                checks.append(.row(rowChecks.count))
                rowChecks.append(RowCheck(condition: condition, measure: measure, message: message))
            }
            for attribute in model.allAttributes(of: entity) where !attribute.isTransient {
                guard !attributesChecked.contains(entity.name),
                    let column = entityLayout.attributeColumns[attribute.name]
                else { continue }
                let noun = attribute.type == .string ? "length" : "value"
                for rule in Self.attributeRules(attribute, value: column) {
                    switch rule.kind {
                    case .required:
                        rowCheck(rule.condition) { _ in "'\(attribute.name)' is required but has no value" }
                    case .minimum(let min):
                        rowCheck(rule.condition, measure: rule.measure) { v in
                            "'\(attribute.name)' has \(noun) \(v.map(describe) ?? "?"), below its minimum \(Value.double(min).formatDescription)"
                        }
                    case .maximum(let max):
                        rowCheck(rule.condition, measure: rule.measure) { v in
                            "'\(attribute.name)' has \(noun) \(v.map(describe) ?? "?"), above its maximum \(Value.double(max).formatDescription)"
                        }
                    }
                }
            }
            for relationship in model.allRelationships(of: entity) where !relationship.isTransient {
                if !relationship.isToMany {
                    guard !relationship.isOptional, let columns = entityLayout.toOneColumns[relationship.name] else {
                        continue
                    }
                    rowCheck("\(columns.key) IS NULL") { _ in
                        "'\(relationship.name)' is required but has no destination"
                    }
                    continue
                }
                // As on save: an optional to-many may be empty, and so may a required one
                // without a minimum; otherwise it holds between its minimum and its maximum.
                let minimum = relationship.minCount
                let maximum = relationship.maxCount
                guard minimum > 0 || maximum > 0, let count = countExpression(entity, relationship) else { continue }
                var conditions: [String] = []
                if minimum > 0 {
                    conditions.append(relationship.isOptional ? "(c > 0 AND c < \(minimum))" : "c < \(minimum)")
                }
                if maximum > 0 { conditions.append("c > \(maximum)") }
                let bounds = maximum > 0 ? "between \(minimum) and \(maximum)" : "at least \(minimum)"
                let empty = relationship.isOptional ? " (or none, as it is optional)" : ""
                checks.append(
                    .query(
                        "SELECT Z_PK, c FROM (SELECT o.Z_PK, \(count) AS c FROM \(table) o WHERE o.\(own)) WHERE \(conditions.joined(separator: " OR "))",
                        { v in
                            "'\(relationship.name)' has \(v.map(describe) ?? "?") destinations; it needs \(bounds)\(empty)"
                        }))
            }

            func failure(_ pk: Int64, _ message: String) -> ContextError {
                ContextError(.validation, message, object: "\(entity.name)/\(pk)")
            }
            let scanned = try scan(table, own, rowChecks, limit: limit - failures.count, failure)
            for check in checks {
                guard failures.count < limit else { break }
                switch check {
                case .row(let index):
                    failures += scanned[index].prefix(limit - failures.count)
                case .query(let sql, let message):
                    do {
                        let statement = try store.database.prepare(sql + " LIMIT \(limit - failures.count)")
                        while try statement.step() {
                            failures.append(failure(statement.int64(at: 0), message(statement.value(at: 1))))
                        }
                    } catch {
                        throw ContextError(error)
                    }
                }
            }
        }
        return failures
    }

    /// Up to `limit` damaged rows: what a store should not hold, whatever the model's rules,
    /// and what reading it would otherwise hide (docs/store-format.md, "Damaged rows"):
    ///
    /// - a row whose `Z_ENT` is no entity of its table (no command reads it);
    /// - a value stored in a class its attribute's type never is (text in a number column):
    ///   reading converts it, as SQLite does (`'many'` reads as 0);
    /// - a to-one key that names no row of the destination (it reads as no destination).
    ///
    /// Each names the table's entity, the row (`Product/2`) and the property.
    public func damage(limit: Int = 10) throws(ContextError) -> [ContextError] {
        var damage: [ContextError] = []
        let model = store.model
        let layout = store.layout
        for root in model.entities where root.parent == nil {
            guard damage.count < limit, let rootLayout = layout.entities[root.name] else { continue }
            let table = rootLayout.table
            let known = rootLayout.numberList
            do {
                let statement = try store.database.prepare(
                    "SELECT Z_PK, Z_ENT FROM \(table) WHERE Z_ENT NOT IN (\(known)) OR Z_ENT IS NULL ORDER BY Z_PK LIMIT \(limit - damage.count)"
                )
                while try statement.step() {
                    damage.append(
                        ContextError(
                            .validation,
                            "its Z_ENT, \(describe(statement.value(at: 1))), is no entity of \(table) in \(model.version) (\(known)); no command reads the row",
                            object: "\(table) row \(statement.int64(at: 0))"))
                }
            } catch {
                throw ContextError(error)
            }
        }
        var contiguousKeys: [String: ClosedRange<Int64>?] = [:]
        // (remodel_decimal_unheld, for the Decimal attributes' check.)
        do { try store.database.registerValueFunctions() } catch { throw ContextError(error) }
        for entity in model.entities where !entity.isAbstract {
            guard damage.count < limit, let entityLayout = layout.entities[entity.name] else { continue }
            var rowChecks: [RowCheck] = []
            for attribute in model.allAttributes(of: entity) where !attribute.isTransient {
                guard let column = entityLayout.attributeColumns[attribute.name],
                    let classes = Self.storageClasses(attribute.type)
                else { continue }
                rowChecks.append(
                    RowCheck(
                        condition:
                            "typeof(\(column)) NOT IN (\(classes.map { "'\($0)'" }.joined(separator: ", ")), 'null')",
                        measure: "typeof(\(column))"
                    ) { found in
                        let kind = found.map(describe) ?? "?"
                        return
                            "'\(attribute.name)' holds \(kind == "text" ? "text" : "a \(kind)") where \(attribute.type.rawValue) values are stored; it reads converted, as SQLite converts it"
                    })
                if attribute.type == .decimal {
                    rowChecks.append(
                        RowCheck(
                            condition: "typeof(\(column)) = 'real' AND remodel_decimal_unheld(\(column))",
                            measure: column
                        ) { found in
                            "'\(attribute.name)' holds \(found.map(describe) ?? "?"), which no Decimal holds; it reads as 0"
                        })
                }
                if !attribute.isOptional {
                    rowChecks.append(
                        RowCheck(condition: "\(column) IS NULL", measure: nil) { _ in
                            "'\(attribute.name)' is required but holds no value (NULL); it reads as nil, and a new store that keeps it fails validation"
                        })
                }
            }
            for relationship in model.allRelationships(of: entity)
            where !relationship.isToMany && !relationship.isTransient {
                guard let columns = entityLayout.toOneColumns[relationship.name],
                    let destination = layout.entities[relationship.destination]
                else { continue }
                let numbers = destination.numberList
                let key = "\(entityLayout.table).\(columns.key)"
                let missing = Self.namesNoRow(
                    key,
                    lookup:
                        "NOT EXISTS (SELECT 1 FROM \(destination.table) d WHERE d.Z_PK = \(key) AND d.Z_ENT IN (\(numbers)))",
                    keysThatAreRows: try everyKeyIsARow(of: destination.table, numbers, known: &contiguousKeys))
                rowChecks.append(
                    RowCheck(
                        condition: "\(columns.key) IS NOT NULL AND \(missing)",
                        measure: columns.key
                    ) { key in
                        "'\(relationship.name)' points at \(relationship.destination) \(key.map(describe) ?? "?"), which is not in the store; it reads as no destination"
                    })
                if !relationship.isOptional {
                    rowChecks.append(
                        RowCheck(condition: "\(columns.key) IS NULL", measure: nil) { _ in
                            "'\(relationship.name)' is required but has no destination; a new store that keeps it fails validation"
                        })
                }
            }
            func found(_ pk: Int64, _ message: String) -> ContextError {
                ContextError(.validation, message, object: "\(entity.name)/\(pk)")
            }
            for list in try scan(
                entityLayout.table, "Z_ENT = \(entityLayout.number)", rowChecks, limit: limit - damage.count, found)
            {
                damage += list.prefix(limit - damage.count)
            }
        }
        return damage
    }

    /// SQL true when `key` names no row: `lookup` (a `NOT EXISTS`), skipped for an integer
    /// among `keys` when each of those is known to be a row.
    public static func namesNoRow(_ key: String, lookup: String, keysThatAreRows keys: ClosedRange<Int64>?) -> String {
        guard let keys else { return lookup }
        return
            "CASE WHEN typeof(\(key)) = 'integer' AND \(key) BETWEEN \(keys.lowerBound) AND \(keys.upperBound) THEN 0 ELSE \(lookup) END"
    }

    /// The keys of `table` when they run without a gap from the first to the last and each
    /// row is of an entity `numbers` lists (a key among them names such a row); nil
    /// otherwise. Asked once per table and list (`known`). With ``namesNoRow(_:lookup:keysThatAreRows:)``,
    /// a check of keys that looks up only those outside the range.
    public func everyKeyIsARow(of table: String, _ numbers: String, known: inout [String: ClosedRange<Int64>?])
        throws(ContextError) -> ClosedRange<Int64>?
    {
        if let keys = known[table + " " + numbers] { return keys }
        var keys: ClosedRange<Int64>?
        do {
            let statement = try store.database.prepare(
                "SELECT count(*), min(Z_PK), max(Z_PK), total(Z_ENT IN (\(numbers))) FROM \(table)")
            if try statement.step(), !statement.isNull(1) {
                let (count, low, high) = (statement.int64(at: 0), statement.int64(at: 1), statement.int64(at: 2))
                let (span, overflow) = high.subtractingReportingOverflow(low)
                if !overflow, span == count - 1, statement.double(at: 3) == Double(count) { keys = low...high }
            }
        } catch {
            throw ContextError(error)
        }
        known[table + " " + numbers] = keys
        return keys
    }

    /// The storage classes SQLite may hold for an attribute of `type` in the column Core
    /// Data declares (with its type affinity); nil when any is fine.
    static func storageClasses(_ type: AttributeType) -> [String]? {
        switch type {
        case .int16, .int32, .int64, .boolean: ["integer"]
        case .double, .float, .date, .decimal: ["real", "integer"]
        case .string, .uri: ["text"]
        case .binary, .transformable: ["blob"]
        case .uuid: ["blob", "text"]
        case .undefined, .objectID, .composite: nil
        }
    }

    /// A rule of an attribute that a stored value can break: required, or a bound of a
    /// number or of a string's length.
    public struct AttributeRule: Sendable {
        public enum Kind: Sendable { case required, minimum(Double), maximum(Double) }
        public let kind: Kind
        /// SQL true of a value that breaks it.
        public let condition: String
        /// What the message shows: the value, or the string's length.
        public let measure: String?
    }

    /// The rules ``failures(limit:attributesChecked:)`` checks `attribute` against, over
    /// `value`, the SQL of the stored value (its column), and `nullness`, SQL that is NULL
    /// exactly when the value is (by default the value itself).
    public static func attributeRules(_ attribute: AttributeDescription, value: String, nullness: String? = nil)
        -> [AttributeRule]
    {
        var rules: [AttributeRule] = []
        if !attribute.isOptional {
            rules.append(AttributeRule(kind: .required, condition: "\(nullness ?? value) IS NULL", measure: nil))
        }
        let measure: String?
        switch attribute.type {
        case .int16, .int32, .int64, .decimal, .double, .float: measure = value
        case .string: measure = "length(\(value))"
        default: measure = nil
        }
        if let measure {
            if let min = attribute.minValue?.doubleValue {
                rules.append(AttributeRule(kind: .minimum(min), condition: "\(measure) < \(min)", measure: measure))
            }
            if let max = attribute.maxValue?.doubleValue {
                rules.append(AttributeRule(kind: .maximum(max), condition: "\(measure) > \(max)", measure: measure))
            }
        }
        return rules
    }

    /// A check of single rows: the rows where `condition` holds fail, with the value of
    /// `measure` (if any) in the message.
    private struct RowCheck {
        let condition: String
        let measure: String?
        let message: (SQLiteValue?) -> String
    }

    /// An entity's checks in the order their failures are reported.
    private enum Check {
        /// The row check at this index of the entity's scan.
        case row(Int)
        /// A query of its own (`Z_PK` and the value for the message), for checks that
        /// count a relationship's destinations.
        case query(String, (SQLiteValue?) -> String)
    }

    /// One pass over the entity's rows that fail any of `checks`: each check's first
    /// `limit` failures, in key order. It stops early once every check has that many.
    private func scan(
        _ table: String, _ own: String, _ checks: [RowCheck], limit: Int,
        _ failure: (Int64, String) -> ContextError
    ) throws(ContextError) -> [[ContextError]] {
        var found = Array(repeating: [ContextError](), count: checks.count)
        guard !checks.isEmpty, limit > 0 else { return found }
        // Per check: whether it fails (1, or 0 or NULL), then its measure if it has one.
        var columns = ["Z_PK"]
        var places: [(flag: Int32, measure: Int32?)] = []
        for check in checks {
            places.append((Int32(columns.count), check.measure.map { _ in Int32(columns.count + 1) }))
            columns.append("(\(check.condition))")
            if let measure = check.measure { columns.append(measure) }
        }
        let anyFails = checks.map { "(\($0.condition))" }.joined(separator: " OR ")
        do {
            let statement = try store.database.prepare(
                "SELECT \(columns.joined(separator: ", ")) FROM \(table) WHERE \(own) AND (\(anyFails)) ORDER BY Z_PK")
            var full = 0
            while full < checks.count, try statement.step() {
                let pk = statement.int64(at: 0)
                for (i, check) in checks.enumerated()
                where found[i].count < limit && statement.int64(at: places[i].flag) == 1 {
                    found[i].append(failure(pk, check.message(places[i].measure.map { statement.value(at: $0) })))
                    if found[i].count == limit { full += 1 }
                }
            }
        } catch {
            throw ContextError(error)
        }
        return found
    }

    /// SQL counting `o`'s destinations of a to-many relationship.
    private func countExpression(_ entity: EntityDescription, _ relationship: RelationshipDescription) -> String? {
        let layout = store.layout
        if let side = layout.entities[entity.name]?.joinTables[relationship.name] {
            return "(SELECT count(*) FROM \(side.table) j WHERE j.\(side.sourceColumn) = o.Z_PK)"
        }
        guard let inverse = layout.entities[entity.name]?.toManyInverses[relationship.name],
            let destination = layout.entities[relationship.destination],
            let columns = destination.toOneColumns[inverse]
        else { return nil }
        return
            "(SELECT count(*) FROM \(destination.table) d WHERE d.\(columns.key) = o.Z_PK AND d.Z_ENT IN (\(destination.numberList)))"
    }

    private func describe(_ value: SQLiteValue) -> String {
        switch value {
        case .integer(let i): String(i)
        case .real(let d): Value.double(d).formatDescription
        case .text(let s): s
        case .blob(let b): "\(b.count) bytes"
        case .null: "nil"
        }
    }
}
