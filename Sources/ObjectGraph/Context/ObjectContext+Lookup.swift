import ExpressionLanguage

extension ObjectContext {
    /// The object of `entityName` (or of one of its sub-entities) whose primary key is
    /// `primaryKey`: `Book/9`.
    ///
    ///     let book = try context.object(entityName: "Book", primaryKey: 9)
    ///
    /// Errors name the object and say what to do: an unknown entity lists the model's
    /// entities, a missing row gives the range of primary keys the entity has.
    public func object(entityName: String, primaryKey: Int64) throws(ContextError) -> ManagedObject {
        let binding = try binding(entityName)
        let id = ObjectID(entityName: entityName, primaryKey: primaryKey, table: binding.layout.table)
        let object: ManagedObject
        do {
            object = try self.object(with: id)
        } catch {
            guard error.kind == .noSuchObject else { throw error }
            throw ContextError(
                .noSuchObject, "no such object in the store; " + (try keyRange(of: binding)), object: id.description)
        }
        guard binding.layout.numbers.contains(object.binding.layout.number) else {
            throw ContextError(
                .noSuchObject,
                "row \(primaryKey) of \(binding.layout.table) is \(object.objectID), not an object of \(entityName); "
                    + (try keyRange(of: binding)),
                object: id.description)
        }
        return object
    }

    /// The object that `reference` names: `Book/9` (as `{"$object": "Book/9"}` writes it).
    public func object(reference: String) throws(ContextError) -> ManagedObject {
        guard let slash = reference.lastIndex(of: "/"), let key = Int64(reference[reference.index(after: slash)...])
        else {
            throw ContextError(
                .noSuchObject, "'\(reference)' does not name an object; write ENTITY/PRIMARY-KEY, such as Book/9")
        }
        return try object(entityName: String(reference[..<slash]), primaryKey: key)
    }

    /// `Book has primary keys 9 to 12 (4 objects)`, or `there are no Book objects`.
    private func keyRange(of binding: EntityBinding) throws(ContextError) -> String {
        let numbers = binding.layout.numberList
        let statement = try statement(
            "SELECT count(*), min(Z_PK), max(Z_PK) FROM \(binding.layout.table) WHERE Z_ENT IN (\(numbers))")
        defer { statement.reset() }
        do {
            guard try statement.step() else { return "" }
        } catch {
            throw ContextError(error)
        }
        let count = statement.int64(at: 0)
        let name = binding.entity.name
        if count == 0 { return "there are no \(name) objects" }
        if count == 1 { return "the only \(name) is \(name)/\(statement.int64(at: 1))" }
        return "\(name) has primary keys \(statement.int64(at: 1)) to \(statement.int64(at: 2)) (\(count) objects)"
    }
}
