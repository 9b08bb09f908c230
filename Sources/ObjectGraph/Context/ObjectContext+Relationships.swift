import ExpressionLanguage

// Relationships: destinations checked, inverses kept in step, to-many members read
// from the store and adjusted by unsaved changes.
extension ObjectContext {
    func destinationObject(_ value: Value, _ relationship: RelationshipDescription, _ owner: ManagedObject)
        throws(ContextError) -> ManagedObject?
    {
        switch value {
        case .null: return nil
        case .object(let reference):
            guard let object = reference.object as? ManagedObject, object.context === self else {
                throw ContextError(
                    .type,
                    "'\(relationship.name)' needs an object of this context, not \(reference.object.objectDescription)",
                    object: owner.objectID.description, key: relationship.name)
            }
            let allowed = Set(
                store.model.descendants(of: store.model.entity(named: relationship.destination)!).map(\.name))
            guard allowed.contains(object.entity.name) else {
                throw ContextError(
                    .type, "'\(relationship.name)' needs a \(relationship.destination), not a \(object.entity.name)",
                    object: owner.objectID.description, key: relationship.name)
            }
            return object
        default:
            throw ContextError(
                .type, "'\(relationship.name)' needs an object or nil, not \(value.kind.rawValue)",
                object: owner.objectID.description, key: relationship.name)
        }
    }

    func destinationObjects(_ value: Value, _ relationship: RelationshipDescription, _ owner: ManagedObject)
        throws(ContextError) -> [ManagedObject]
    {
        if value.isNull { return [] }
        guard let elements = value.collectionElements else {
            throw ContextError(
                .type,
                "'\(relationship.name)' is to-many and needs a set or an array of objects, not \(value.kind.rawValue)",
                object: owner.objectID.description, key: relationship.name)
        }
        var seen = Set<ObjectID>()
        var objects: [ManagedObject] = []
        for element in elements {
            guard let object = try destinationObject(element, relationship, owner) else { continue }
            if seen.insert(object.objectID).inserted { objects.append(object) }
        }
        return objects
    }

    /// The inverse of `relationship` as declared on its destination.
    func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        store.model.inverse(of: relationship)
    }

    /// The to-one of the destination whose column holds the one-to-many relationship
    /// `relationship` of `owner`'s objects: its declared inverse, or the hidden to-one of a
    /// to-many without an inverse. Nil for a to-many with a join table.
    func inverse(ofToMany relationship: RelationshipDescription, from owner: EntityBinding)
        -> RelationshipDescription?
    {
        guard let name = owner.layout.toManyInverses[relationship.name],
            let destination = bindings[relationship.destination], let slot = destination.toOneSlots[name]
        else { return nil }
        return destination.toOnes[slot]
    }

    /// Sets a to-one relationship and keeps its inverse in step.
    func setToOne(_ object: ManagedObject, _ slot: Int, _ destination: ManagedObject?) throws(ContextError) {
        let relationship = object.binding.toOnes[slot]
        let old = object.toOne[slot]
        if old == destination?.objectID { return }
        object.toOne[slot] = destination?.objectID
        // In an ordered inverse, an object that moves in goes last (see ObjectContext+Order).
        object.positions[slot] = nil
        markChanged(object, toOne: slot)
        if let destination { pending.note(object, pointsTo: destination.objectID) }
        // One-to-one: the new destination's inverse points back; the old partners let go.
        if let inverse = inverse(of: relationship), !inverse.isToMany {
            if let old, let oldObject = try? self.object(with: old), let s = oldObject.binding.toOneSlots[inverse.name],
                oldObject.toOne[s] == object.objectID
            {
                oldObject.toOne[s] = nil
                markChanged(oldObject, toOne: s)
            }
            if let destination, let s = destination.binding.toOneSlots[inverse.name] {
                if let previous = destination.toOne[s], previous != object.objectID,
                    let previousObject = try? self.object(with: previous),
                    let p = previousObject.binding.toOneSlots[relationship.name]
                {
                    previousObject.toOne[p] = nil
                    markChanged(previousObject, toOne: p)
                }
                destination.toOne[s] = object.objectID
                markChanged(destination, toOne: s)
                pending.note(destination, pointsTo: object.objectID)
            }
        }
        // One-to-many: the to-many side is read from this column, nothing else to do.
    }

    /// Replaces the members of a to-many relationship.
    func setToMany(_ object: ManagedObject, _ relationship: RelationshipDescription, _ members: [ManagedObject])
        throws(ContextError)
    {
        let current = try destinations(of: object, relationship)
        let wanted = Set(members.map(\.objectID))
        if let side = object.binding.layout.joinTables[relationship.name] {
            for id in current where !wanted.contains(id) { recordJoin(side, object.objectID, id, insert: false) }
            let existing = Set(current)
            for member in members where !existing.contains(member.objectID) {
                recordJoin(side, object.objectID, member.objectID, insert: true)
            }
            if let orderColumn = side.orderColumn {
                for (i, member) in members.enumerated() {
                    let row = JoinRow(
                        side: side, source: object.objectID.primaryKey, destination: member.objectID.primaryKey)
                    joinPositions[row, default: [:]][orderColumn] = Int64(i + 1)
                }
            }
            pending.add(changed: object)
            return
        }
        // One-to-many: the members' inverse to-one columns hold the relationship (and, when
        // it is ordered, their Z_FOK_ columns the order).
        guard let inverse = inverse(ofToMany: relationship, from: object.binding) else { return }
        for id in current where !wanted.contains(id) {
            let member = try self.object(with: id)
            if let s = member.binding.toOneSlots[inverse.name] { try setToOne(member, s, nil) }
        }
        for (i, member) in members.enumerated() {
            guard let s = member.binding.toOneSlots[inverse.name] else { continue }
            try setToOne(member, s, object)
            if member.binding.toOneColumns[s].order != nil {
                member.positions[s] = Int64(i + 1)
                markChanged(member, toOne: s)
            }
        }
    }

    func recordJoin(_ side: StoreLayout.JoinTable.Side, _ source: ObjectID, _ destination: ObjectID, insert: Bool) {
        let row = JoinRow(side: side, source: source.primaryKey, destination: destination.primaryKey)
        if !insert { joinPositions[row] = nil }
        if let previous = joinChanges[row], previous != insert {
            joinChanges[row] = nil  // an insert and a delete of the same row cancel out
        } else {
            joinChanges[row] = insert
        }
    }

    /// The destinations of a to-many relationship: saved rows adjusted by unsaved changes.
    func destinations(of object: ManagedObject, _ relationship: RelationshipDescription) throws(ContextError)
        -> [ObjectID]
    {
        guard let destinationBinding = bindings[relationship.destination] else { return [] }
        let table = destinationBinding.layout.table
        var ids: [ObjectID] = []
        if let side = object.binding.layout.joinTables[relationship.name] {
            var keys: [Int64] = []
            var saved: [Int64: Int64] = [:]  // saved positions, when ordered
            if !object.isInserted {
                let sql =
                    side.orderColumn.map {
                        "SELECT \(side.destinationColumn), \($0) FROM \(side.table) WHERE \(side.sourceColumn) = ? ORDER BY \($0), \(side.destinationColumn)"
                    } ?? "SELECT \(side.destinationColumn) FROM \(side.table) WHERE \(side.sourceColumn) = ?"
                let statement = try statement(sql)
                defer { statement.reset() }
                do {
                    try statement.bind(object.objectID.primaryKey, at: 1)
                    while try statement.step() {
                        let key = statement.int64(at: 0)
                        keys.append(key)
                        if side.orderColumn != nil, !statement.isNull(1) { saved[key] = statement.int64(at: 1) }
                    }
                } catch {
                    throw ContextError(error)
                }
            }
            var keySet = Set(keys)
            var added: [Int64] = []
            for (row, insert) in joinChanges where row.table == side.table {
                guard let (source, destination) = row.pair(for: side), source == object.objectID.primaryKey else {
                    continue
                }
                if insert, keySet.insert(destination).inserted { added.append(destination) }
                if !insert { keySet.remove(destination) }
            }
            keys = (keys + added.sorted()).filter { keySet.contains($0) }
            if let orderColumn = side.orderColumn {
                let source = object.objectID.primaryKey
                keys = Self.ordered(keys) { key in
                    self.joinPositions[JoinRow(side: side, source: source, destination: key)]?[orderColumn]
                        ?? saved[key]
                }
            }
            for key in keys {
                ids.append(try identify(key, table: table, fallback: relationship.destination))
            }
        } else if let inverse = inverse(ofToMany: relationship, from: object.binding),
            let column = destinationBinding.layout.toOneColumns[inverse.name]
        {
            var saved: [Int64: Int64] = [:]  // saved positions, when ordered
            if !object.isInserted {
                let numbers = destinationBinding.layout.numberList
                let order = column.order.map { ($0 + ", ", ", " + $0) } ?? ("", "")
                let statement = try statement(
                    "SELECT Z_PK, Z_ENT\(order.1) FROM \(table) WHERE \(column.key) = ? AND Z_ENT IN (\(numbers)) ORDER BY \(order.0)Z_PK"
                )
                defer { statement.reset() }
                do {
                    try statement.bind(object.objectID.primaryKey, at: 1)
                    while try statement.step() {
                        let entity = binding(number: statement.int64(at: 1))?.entity.name ?? relationship.destination
                        let key = statement.int64(at: 0)
                        ids.append(ObjectID(entityName: entity, primaryKey: key, table: table))
                        if column.order != nil, !statement.isNull(2) { saved[key] = statement.int64(at: 2) }
                    }
                } catch {
                    throw ContextError(error)
                }
            }
            // Unsaved changes win: drop members whose column now points elsewhere, add new ones.
            ids.removeAll { id in
                guard let member = pending.object(id) else { return false }
                guard !member.isDeleted, let s = member.binding.toOneSlots[inverse.name] else { return true }
                return member.toOne[s] != object.objectID
            }
            var present = Set(ids)
            // The unsaved members, found first and then put in key order: sorting every
            // pending object for each call cost stage 2 of a migration a fifth of its time,
            // and walking them all (rather than those set to point here) a sixth.
            let unsaved = pending.objects(pointingTo: object.objectID).filter { member in
                guard !member.isDeleted, let s = member.binding.toOneSlots[inverse.name],
                    member.toOne[s] == object.objectID
                else { return false }
                return destinationBinding.layout.numbers.contains(member.binding.layout.number)
                    && present.insert(member.objectID).inserted
            }
            ids += unsaved.sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }.map(\.objectID)
            if column.order != nil {
                ids = Self.ordered(ids) { id in
                    if let member = self.pending.object(id), let s = member.binding.toOneSlots[inverse.name],
                        let position = member.positions[s]
                    {
                        return position
                    }
                    return saved[id.primaryKey]
                }
            }
        }
        return ids
    }

    func identify(_ key: Int64, table: String, fallback: String) throws(ContextError) -> ObjectID {
        let probe = ObjectID(entityName: fallback, primaryKey: key, table: table)
        if let object = registered(probe) { return object.objectID }
        return try object(with: probe).objectID
    }
}
