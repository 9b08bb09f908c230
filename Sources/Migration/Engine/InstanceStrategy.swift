import ObjectGraph

/// How an interpreted stage 1 makes an entity mapping's instances: chosen once, when the
/// run starts, the fastest that gives what the policy's hooks would. (SQL, when the
/// mapping has a plan, comes first: docs/pushdown.md; a stage 1 that SQL gives back to the
/// interpreter uses this.)
enum InstanceStrategy {
    /// Source rows read without objects, each attribute copied column to column or
    /// evaluated, destination rows written directly (``RowCopyPlan``): the default policy,
    /// a plain fetch, expressions that read `$source`'s attributes only.
    case rowCopy(RowCopyPlan, RowInserter)
    /// Source objects; destination rows written directly, with no destination objects:
    /// the default policy, and nothing reads `$destination`.
    case rows(RowInserter)
    /// Objects on both sides, through the policy's hooks.
    case objects

    /// The strategy for `prepared` run by `policy`, and why no faster one applies (nil
    /// for row copies, the fastest).
    static func choose(
        _ prepared: PreparedEntityMapping, policy: any EntityMigrationPolicy, copiedAttributes: [AttributeKey?],
        destinationAttributes: [AttributeKey?], source: ObjectContext, destination: ObjectContext
    )
        -> (strategy: InstanceStrategy, reason: String?)
    {
        guard policy.isDefault else {
            return (.objects, "the policy \(prepared.mapping.policy ?? "") has its own hooks")
        }
        guard let entity = prepared.destinationEntity else {
            return (.objects, "the mapping has no destination entity")
        }
        if prepared.attributes.contains(where: { $0.expression.expression.variableNames.contains("destination") }) {
            return (.objects, "an attribute mapping reads $destination")
        }
        if let i = destinationAttributes.firstIndex(where: { $0 == nil }) {
            return (
                .objects,
                "\(entity.name) has no attribute '\(prepared.attributes[i].mapping.name)' to write as a column"
            )
        }
        let inserter: RowInserter
        do {
            inserter = try destination.makeRowInserter(for: entity.name)
        } catch {
            return (.objects, "\(entity.name)'s rows cannot be written directly: \(error.message)")
        }
        guard prepared.sourceEntity != nil else { return (.rows(inserter), "the mapping has no source rows to read") }
        guard
            let copy = RowCopyPlan(
                prepared, copiedAttributes: copiedAttributes.map { $0?.name },
                destinationAttributes: destinationAttributes.map { $0! }, source: source)
        else {
            return (.rows(inserter), "the source expression or an attribute mapping needs source objects")
        }
        return (.rowCopy(copy, inserter), nil)
    }

    /// The row copy, when this is one.
    var rowCopy: (RowCopyPlan, RowInserter)? {
        if case .rowCopy(let copy, let inserter) = self { return (copy, inserter) }
        return nil
    }

    /// What writes the rows when objects are not made on the destination's side (a row
    /// copy writes rows from objects too where its source has unsaved changes).
    var inserter: RowInserter? {
        switch self {
        case .rowCopy(_, let inserter), .rows(let inserter): inserter
        case .objects: nil
        }
    }

    /// `row copy`, `rows` or `objects`.
    var name: String {
        switch self {
        case .rowCopy: "row copy"
        case .rows: "rows"
        case .objects: "objects"
        }
    }
}

extension EntityMigrationPolicy {
    /// Whether this is the default policy, whose hooks the engine may run as rows or SQL
    /// without calling them.
    var isDefault: Bool { self is DefaultMigrationPolicy }
}
