import ExpressionLanguage

extension ObjectContext {
    /// Inserts the objects of a seed document — small fixture stores written by hand:
    ///
    ///     {
    ///       "User": [{"$id": "ann", "name": "Ann"}],
    ///       "Book": [{"title": "Emma", "price": 9.5, "user": {"$ref": "ann"}}]
    ///     }
    ///
    /// Entities are inserted in the order of the document; attribute values use the JSON
    /// forms of docs/language.md (`{"$date": "…"}`, `{"$data": "…"}`); a relationship
    /// takes `{"$ref": id}` or an array of them, naming objects given a `"$id"` anywhere
    /// in the document. Returns the objects by `$id`. Nothing is saved.
    @discardableResult
    public func insertSeed(_ json: JSON) throws(ContextError) -> [String: ManagedObject] {
        guard let entities = json.objectValue else {
            throw ContextError(.type, "a seed is an object of entity name → array of objects")
        }
        var byID: [String: ManagedObject] = [:]
        var links: [(ManagedObject, String, JSON, String)] = []
        for (entityName, list) in entities {
            guard let objects = list.arrayValue else {
                throw ContextError(.type, "seed.\(entityName): expected an array of objects")
            }
            for (index, element) in objects.enumerated() {
                let place = "seed.\(entityName)[\(index)]"
                guard let members = element.objectValue else {
                    throw ContextError(.type, "\(place): expected an object")
                }
                let object = try insert(entityName)
                for (key, value) in members {
                    if key == "$id" {
                        guard let id = value.stringValue else {
                            throw ContextError(.type, "\(place).$id: expected a string")
                        }
                        byID[id] = object
                    } else if object.entity.attribute(named: key) != nil
                        || store.model.allAttributes(of: object.entity).contains(where: { $0.name == key })
                    {
                        let converted: Value
                        do {
                            converted = try Value(json: value)
                        } catch {
                            throw ContextError(.type, "\(place).\(key): \(error.message)")
                        }
                        do {
                            try object.setValue(converted, forKey: key)
                        } catch {
                            throw ContextError(.type, "\(place).\(key): \(error)")
                        }
                    } else {
                        links.append((object, key, value, place))
                    }
                }
            }
        }
        for (object, key, value, place) in links {
            func resolve(_ json: JSON) throws(ContextError) -> Value {
                if json.isNull { return .null }
                guard let ref = json["$ref"]?.stringValue, let target = byID[ref] else {
                    throw ContextError(
                        .type, "\(place).\(key): expected {\"$ref\": id} naming an object with that \"$id\"")
                }
                return .object(ObjectReference(target))
            }
            let resolved: Value
            if let array = value.arrayValue {
                var elements: [Value] = []
                for element in array { elements.append(try resolve(element)) }
                resolved = .array(elements)
            } else {
                resolved = try resolve(value)
            }
            do {
                try object.setValue(resolved, forKey: key)
            } catch {
                throw ContextError(.type, "\(place).\(key): \(error)")
            }
        }
        return byID
    }
}
