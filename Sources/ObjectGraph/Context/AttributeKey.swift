import ExpressionLanguage

/// An attribute of an entity resolved once, for loops that read or write it on many
/// objects: reading and writing through it skips the lookup by name.
///
///     let price = try context.attributeKey("price", of: "Product")
///     while let product = try cursor.next() {
///         total += try product.value(for: price).doubleValue ?? 0
///     }
///
/// Objects of another entity (a sub-entity, say) are served by name, so a key is never
/// wrong, only slower.
public struct AttributeKey {
    // One reference and a number, so that copying a key (as `for key in keys` does) costs
    // one reference count, not two: the name is the binding's.
    let binding: EntityBinding
    let slot: Int

    /// The attribute's name.
    public var name: String { binding.attributeNames[slot] }
}

extension ObjectContext {
    /// The key of the stored attribute `name` of `entity` (inherited attributes included).
    public func attributeKey(_ name: String, of entity: String) throws(ContextError) -> AttributeKey {
        let binding = try binding(entity)
        guard let slot = binding.attributeSlots[name] else {
            throw ContextError(.unknownKey, "\(entity) has no stored attribute '\(name)'", key: name)
        }
        return AttributeKey(binding: binding, slot: slot)
    }
}

extension ManagedObject {
    /// The attribute's value (see ``AttributeKey``).
    public func value(for key: AttributeKey) throws -> Value {
        guard key.binding === binding, let value = storedValue(key.slot) else { return try value(forKey: key.name) }
        return value
    }

    /// Sets the attribute, coerced to its type (see ``AttributeKey``).
    public func setValue(_ value: Value, for key: AttributeKey) throws {
        if key.binding === binding, !isDeleted,
            try binding.withContext({ context in try context.setAttribute(value, of: self, slot: key.slot) }) != nil
        {
            return
        }
        try setValue(value, forKey: key.name)
    }
}
