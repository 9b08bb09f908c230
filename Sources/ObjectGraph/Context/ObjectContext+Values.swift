import ExpressionLanguage
import OrderedCollections

// Reading and setting values by key; changes recorded for the next save.
extension ObjectContext {
    func value(of object: ManagedObject, forKey key: String) throws(ContextError) -> Value {
        let binding = object.binding
        if let slot = binding.slot(ofAttribute: key) {
            if let value = object.storedValue(slot) { return value }
            let value = try loadLazy(object, slot)
            object.values[slot] = value
            return value
        }
        if let slot = binding.slot(ofToOne: key) {
            guard let id = object.toOne[slot] else { return .null }
            return .object(ObjectReference(try self.object(with: id)))
        }
        if let relationship = binding.toManys[key] {
            let objects = try destinations(of: object, relationship).map { id throws(ContextError) in
                Value.object(ObjectReference(try self.object(with: id)))
            }
            return relationship.isOrdered ? .array(objects) : .set(OrderedSet(objects))
        }
        throw ContextError(
            .unknownKey, "\(binding.entity.name) has no attribute or relationship '\(key)'",
            object: object.objectID.description, key: key)
    }

    func loadLazy(_ object: ManagedObject, _ slot: Int) throws(ContextError) -> Value {
        if object.isInserted { return .null }
        return try savedValue(of: object.binding, slot: slot, primaryKey: object.objectID.primaryKey)
    }

    /// The saved value of the attribute in `slot` of the row `primaryKey`, read on its own
    /// (an attribute not read with the row); null when there is no such row.
    func savedValue(of binding: EntityBinding, slot: Int, primaryKey: Int64) throws(ContextError) -> Value {
        let statement = try statement(
            "SELECT \(binding.attributeColumns[slot]) FROM \(binding.layout.table) WHERE Z_PK = ?")
        defer { statement.reset() }
        do {
            try statement.bind(primaryKey, at: 1)
            guard try statement.step() else { return .null }
        } catch {
            throw ContextError(error)
        }
        return try binding.decoded(
            EntityBinding.read(statement, 0, as: binding.attributeTypes[slot]), slot: slot,
            primaryKey: primaryKey, storePath: store.path)
    }

    /// Sets the attribute in `slot` of a live object, coerced to its type.
    func setAttribute(_ value: Value, of object: ManagedObject, slot: Int) throws(ContextError) {
        let binding = object.binding
        do {
            let stored = try AttributeCoercion.coerce(
                value, to: binding.attributeTypes[slot], name: binding.attributes[slot].name)
            switch stored {
            case .data(let d): pendingValueBytes += d.count
            case .string(let s): pendingValueBytes += s.utf8.count
            default: break
            }
            object.values[slot] = consume stored  // counted first, so the value moves in without a copy
        } catch {
            var e = error
            e.object = object.objectID.description
            throw e
        }
        markChanged(object, attribute: slot)
    }

    func setValue(_ value: Value, of object: ManagedObject, forKey key: String) throws(ContextError) {
        let binding = object.binding
        guard !object.isDeleted else {
            throw ContextError(.noSuchObject, "the object was deleted", object: object.objectID.description, key: key)
        }
        if let slot = binding.slot(ofAttribute: key) {
            try setAttribute(value, of: object, slot: slot)
            return
        }
        if let slot = binding.slot(ofToOne: key) {
            let destination = try destinationObject(value, binding.toOnes[slot], object)
            try setToOne(object, slot, destination)
            return
        }
        if let relationship = binding.toManys[key] {
            let members = try destinationObjects(value, relationship, object)
            try setToMany(object, relationship, members)
            return
        }
        throw ContextError(
            .unknownKey, "\(binding.entity.name) has no attribute or relationship '\(key)'",
            object: object.objectID.description, key: key)
    }

    func markChanged(_ object: ManagedObject, attribute slot: Int) {
        // An inserted object is pending already and is written whole.
        if object.isInserted { return }
        object.changedSlots.insert(attribute: slot)
        pending.add(changed: object)
    }

    func markChanged(_ object: ManagedObject, toOne slot: Int) {
        if object.isInserted { return }
        object.changedSlots.insert(toOne: slot)
        pending.add(changed: object)
    }
}
