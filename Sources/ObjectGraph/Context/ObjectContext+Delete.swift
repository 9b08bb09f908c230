import ExpressionLanguage

// Deleting, with the relationships' delete rules.
extension ObjectContext {
    /// Deletes `object`, applying its relationships' delete rules: nullify (the default)
    /// clears the inverse, cascade deletes the destinations, deny refuses while there are
    /// destinations, no action leaves them.
    public func delete(_ object: ManagedObject) throws(ContextError) {
        guard !object.isDeleted else { return }
        // Deny is checked before anything changes.
        for relationship in store.model.allRelationships(of: object.entity) where relationship.deleteRule == .deny {
            if try !related(object, relationship).isEmpty {
                throw ContextError(
                    .deleteDenied,
                    "cannot delete: '\(relationship.name)' has the delete rule deny and is not empty",
                    object: object.objectID.description, key: relationship.name)
            }
        }
        var cascade: [ManagedObject] = []
        for relationship in store.model.allRelationships(of: object.entity) where !relationship.isTransient {
            let destinations = try related(object, relationship)
            if relationship.deleteRule == .cascade { cascade += destinations }
            if let side = object.binding.layout.joinTables[relationship.name] {
                for d in destinations { recordJoin(side, object.objectID, d.objectID, insert: false) }
            } else if relationship.deleteRule != .noAction,
                let inverse = relationship.isToMany
                    ? inverse(ofToMany: relationship, from: object.binding) : inverse(of: relationship)
            {
                for d in destinations where !d.isDeleted {
                    if let s = d.binding.toOneSlots[inverse.name], d.toOne[s] == object.objectID {
                        d.toOne[s] = nil
                        markChanged(d, toOne: s)
                    }
                }
            }
        }
        object.isDeleted = true
        pending.add(changed: object)
        for d in cascade { try delete(d) }
    }

    func related(_ object: ManagedObject, _ relationship: RelationshipDescription) throws(ContextError)
        -> [ManagedObject]
    {
        if relationship.isToMany {
            return try destinations(of: object, relationship).map { id throws(ContextError) in try self.object(with: id)
            }
        }
        guard let slot = object.binding.toOneSlots[relationship.name], let id = object.toOne[slot] else { return [] }
        return [try self.object(with: id)]
    }
}
