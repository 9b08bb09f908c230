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

    /// Up to `limit` failures, each naming the object (`Book/9`) and the property.
    public func failures(limit: Int = 10) throws(ContextError) -> [ContextError] {
        var failures: [ContextError] = []
        let model = store.model
        let layout = store.layout
        for entity in model.entities where !entity.isAbstract {
            guard failures.count < limit, let entityLayout = layout.entities[entity.name] else { continue }
            let table = entityLayout.table
            let own = "Z_ENT = \(entityLayout.number)"
            func collect(_ sql: String, _ message: (Int64, SQLiteValue?) -> String) throws(ContextError) {
                guard failures.count < limit else { return }
                do {
                    let statement = try store.database.prepare(sql + " LIMIT \(limit - failures.count)")
                    while try statement.step() {
                        let pk = statement.int64(at: 0)
                        let extra = statement.columnCount > 1 ? statement.value(at: 1) : nil
                        failures.append(ContextError(.validation, message(pk, extra), object: "\(entity.name)/\(pk)"))
                    }
                } catch {
                    throw ContextError(error)
                }
            }
            for attribute in model.allAttributes(of: entity) where !attribute.isTransient {
                guard let column = entityLayout.attributeColumns[attribute.name] else { continue }
                if !attribute.isOptional {
                    try collect("SELECT Z_PK FROM \(table) WHERE \(own) AND \(column) IS NULL", { _, _ in
                        "'\(attribute.name)' is required but has no value"
                    })
                }
                let measure: String?
                switch attribute.type {
                case .int16, .int32, .int64, .decimal, .double, .float: measure = column
                case .string: measure = "length(\(column))"
                default: measure = nil
                }
                if let measure {
                    let noun = attribute.type == .string ? "length" : "value"
                    if let min = attribute.minValue?.doubleValue {
                        try collect("SELECT Z_PK, \(measure) FROM \(table) WHERE \(own) AND \(measure) < \(min)", { _, v in
                            "'\(attribute.name)' has \(noun) \(v.map(describe) ?? "?"), below its minimum \(Value.double(min).formatDescription)"
                        })
                    }
                    if let max = attribute.maxValue?.doubleValue {
                        try collect("SELECT Z_PK, \(measure) FROM \(table) WHERE \(own) AND \(measure) > \(max)", { _, v in
                            "'\(attribute.name)' has \(noun) \(v.map(describe) ?? "?"), above its maximum \(Value.double(max).formatDescription)"
                        })
                    }
                }
            }
            for relationship in model.allRelationships(of: entity) where !relationship.isTransient {
                if !relationship.isToMany {
                    guard !relationship.isOptional, let columns = entityLayout.toOneColumns[relationship.name] else { continue }
                    try collect("SELECT Z_PK FROM \(table) WHERE \(own) AND \(columns.key) IS NULL", { _, _ in
                        "'\(relationship.name)' is required but has no destination"
                    })
                    continue
                }
                // As on save: an optional to-many may be empty; otherwise it holds between
                // its minimum (at least one when required) and its maximum.
                let minimum = max(relationship.minCount, relationship.isOptional ? 0 : 1)
                let maximum = relationship.maxCount
                guard minimum > 0 || maximum > 0, let count = countExpression(entity, relationship) else { continue }
                var conditions: [String] = []
                if minimum > 0 { conditions.append(relationship.isOptional ? "(c > 0 AND c < \(minimum))" : "c < \(minimum)") }
                if maximum > 0 { conditions.append("c > \(maximum)") }
                try collect("SELECT Z_PK, c FROM (SELECT o.Z_PK, \(count) AS c FROM \(table) o WHERE o.\(own)) WHERE \(conditions.joined(separator: " OR "))", { _, v in
                    let bounds = maximum > 0 ? "between \(minimum) and \(maximum)" : "at least \(minimum)"
                    let empty = relationship.isOptional ? " (or none, as it is optional)" : ""
                    return "'\(relationship.name)' has \(v.map(describe) ?? "?") destinations; it needs \(bounds)\(empty)"
                })
            }
        }
        return failures
    }

    /// SQL counting `o`'s destinations of a to-many relationship.
    private func countExpression(_ entity: EntityDescription, _ relationship: RelationshipDescription) -> String? {
        let layout = store.layout
        if let side = layout.entities[entity.name]?.joinTables[relationship.name] {
            return "(SELECT count(*) FROM \(side.table) j WHERE j.\(side.sourceColumn) = o.Z_PK)"
        }
        guard let inverse = relationship.inverse, let destination = layout.entities[relationship.destination],
            let columns = destination.toOneColumns[inverse]
        else { return nil }
        return "(SELECT count(*) FROM \(destination.table) d WHERE d.\(columns.key) = o.Z_PK AND d.Z_ENT IN (\(destination.numbers.map(String.init).joined(separator: ","))))"
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
