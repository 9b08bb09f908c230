import ExpressionLanguage

extension ObjectContext {
    /// Checks the number of destinations of to-many relationships before a save, as Core
    /// Data does (NSRelationshipDescription, "Cardinality"): between `minCount` and
    /// `maxCount` (0: no bound) destinations, except that an optional relationship may also
    /// be empty ("the counts are only enforced if the relationship value is not nil"). A
    /// non-optional to-many relationship without a `minCount` may be empty too: Core Data
    /// saves such objects (shipping models have required to-many relationships that are
    /// often empty), and its lightweight migration adds such relationships empty.
    ///
    /// Checked are the objects a save would write (inserted and changed ones) and the
    /// objects whose relationships change because of it: the old and new owners of a moved
    /// destination, both sides of a changed join row, the owners of deleted destinations.
    /// Counts are the saved rows adjusted by the unsaved changes, computed in one pass
    /// over the changes and one query per object checked.
    func validateRelationshipCounts() throws(ContextError) {
        for binding in bindings.values.sorted(by: { $0.entity.name < $1.entity.name }) {
            // Inherited relationships are checked on the entity that declares them, whose
            // layout covers its sub-entities' objects too.
            for relationship in binding.entity.relationships.sorted(by: { $0.name < $1.name })
            where relationship.isToMany && !relationship.isTransient
                && (relationship.minCount > 0 || relationship.maxCount > 0)
            {
                try validateCount(of: relationship, declaredBy: binding)
            }
        }
    }

    private func validateCount(of relationship: RelationshipDescription, declaredBy owner: EntityBinding)
        throws(ContextError)
    {
        // The owners to check, by primary key (unique in the owner's table), with how many
        // destinations the unsaved changes add or remove.
        var delta: [Int64: Int] = [:]
        var owners: [Int64: ObjectID] = [:]
        let table = owner.layout.table
        for object in pending.all where !object.isDeleted && owner.layout.numbers.contains(object.binding.layout.number)
        {
            owners[object.objectID.primaryKey] = object.objectID
        }
        let count: (Int64) throws(ContextError) -> Int
        if let side = owner.layout.joinTables[relationship.name] {
            for (row, insert) in joinChanges {
                guard let (source, _) = row.pair(for: side) else { continue }
                delta[source, default: 0] += insert ? 1 : -1
            }
            count = { key throws(ContextError) in
                try self.savedCount("SELECT count(*) FROM \(side.table) WHERE \(side.sourceColumn) = ?", key)
            }
        } else {
            guard let inverseName = owner.layout.toManyInverses[relationship.name],
                let destination = bindings[relationship.destination],
                let column = destination.layout.toOneColumns[inverseName]
            else { return }
            // Destinations that move: one fewer for the owner they had, one more for the new one.
            for member in pending.all where destination.layout.numbers.contains(member.binding.layout.number) {
                guard let slot = member.binding.toOneSlots[inverseName] else { continue }
                let now = member.isDeleted ? nil : member.toOne[slot]?.primaryKey
                let before = member.isInserted ? nil : try savedKey(of: member, column.key)
                if now == before { continue }
                if let before { delta[before, default: 0] -= 1 }
                if let now { delta[now, default: 0] += 1 }
            }
            let numbers = destination.layout.numberList
            count = { key throws(ContextError) in
                try self.savedCount(
                    "SELECT count(*) FROM \(destination.layout.table) WHERE \(column.key) = ? AND Z_ENT IN (\(numbers))",
                    key)
            }
        }
        for key in delta.keys where owners[key] == nil {
            owners[key] = ObjectID(entityName: owner.entity.name, primaryKey: key, table: table)
        }
        for (key, id) in owners.sorted(by: { $0.key < $1.key }) {
            let object = registered(id)
            if object?.isDeleted == true { continue }
            let saved = object?.isInserted == true ? 0 : try count(key)
            let n = saved + delta[key, default: 0]
            guard let problem = Self.countProblem(n, relationship) else { continue }
            // The object's own entity (a sub-entity's name for a sub-entity's object).
            var name = id.description
            if let object {
                name = object.objectID.description
            } else {
                name = try self.object(with: id).objectID.description
            }
            throw ContextError(.validation, problem, object: name, key: relationship.name)
        }
    }

    /// What is wrong with `count` destinations of `relationship`, or nil when nothing is.
    static func countProblem(_ count: Int, _ relationship: RelationshipDescription) -> String? {
        let name = relationship.name
        func objects(_ n: Int) -> String { n == 1 ? "1 object" : "\(n) objects" }
        if count == 0 {
            if relationship.isOptional || relationship.minCount == 0 { return nil }
            return "'\(name)' is required: it needs at least \(objects(relationship.minCount)) and has none"
        }
        if count < relationship.minCount {
            let empty = relationship.isOptional ? " (or none, as it is optional)" : ""
            return "'\(name)' has \(objects(count)); it needs at least \(relationship.minCount)\(empty)"
        }
        if relationship.maxCount > 0 && count > relationship.maxCount {
            return "'\(name)' has \(objects(count)); it allows at most \(relationship.maxCount)"
        }
        return nil
    }

    /// The first column of `sql` run with `key`, as a count.
    private func savedCount(_ sql: String, _ key: Int64) throws(ContextError) -> Int {
        let statement = try statement(sql)
        defer { statement.reset() }
        do {
            try statement.bind(key, at: 1)
            guard try statement.step() else { return 0 }
        } catch {
            throw ContextError(error)
        }
        return Int(statement.int64(at: 0))
    }

    /// The saved value of a to-one column of `object`'s row: the primary key it held.
    private func savedKey(of object: ManagedObject, _ column: String) throws(ContextError) -> Int64? {
        let statement = try statement("SELECT \(column) FROM \(object.objectID.table) WHERE Z_PK = ?")
        defer { statement.reset() }
        do {
            try statement.bind(object.objectID.primaryKey, at: 1)
            guard try statement.step(), !statement.isNull(0) else { return nil }
        } catch {
            throw ContextError(error)
        }
        return statement.int64(at: 0)
    }
}
