import ExpressionLanguage

/// A context is a value expressions can hold (`$manager.sourceContext`) and the context
/// `FETCH(request, context, countOnly)` runs in.
extension ObjectContext: FetchExecuting {
    public func value(forKey key: String) throws -> Value {
        switch key {
        case "hasChanges": return .bool(hasChanges)
        default: throw ExpressionError(.unknownKey, "a context has no key '\(key)'")
        }
    }

    public var objectDescription: String { "context of \(store.model.version) at \(store.path)" }
    public var kindName: String { "NSManagedObjectContext" }

    /// Runs a ``FetchRequestObject`` (what `fetchRequestForSourceEntityNamed:predicateString:`
    /// gives): the objects as an array, or their number.
    public func executeFetch(_ request: Value, countOnly: Bool) throws -> Value {
        guard case .object(let reference) = request, let fetch = reference.object as? FetchRequestObject else {
            throw ExpressionError(
                .type,
                "FETCH needs a fetch request (such as FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Book\", \"TRUEPREDICATE\")), not \(request.kind.rawValue)"
            )
        }
        if countOnly { return .integer(Int64(try count(fetch.request))) }
        return .array(try self.fetch(fetch.request).map { .object(ObjectReference($0)) })
    }

    /// The ID of the object of `entityName` with primary key `primaryKey`, whether or not
    /// such a row exists.
    public func objectID(entityName: String, primaryKey: Int64) throws(ContextError) -> ObjectID {
        ObjectID(entityName: entityName, primaryKey: primaryKey, table: try binding(entityName).layout.table)
    }
}

/// A fetch request as a value of the expression language, for FETCH.
public final class FetchRequestObject: KeyValueCoding {
    public let request: FetchRequest

    public init(_ request: FetchRequest) { self.request = request }

    public func value(forKey key: String) throws -> Value {
        switch key {
        case "entityName": return .string(request.entityName)
        case "predicate": return request.predicate.map { .string($0.description) } ?? .null
        case "includesSubentities": return .bool(request.includesSubentities)
        default: throw ExpressionError(.unknownKey, "a fetch request has no key '\(key)'")
        }
    }

    public var objectDescription: String { "fetch request for \(request.entityName)" }
    public var kindName: String { "NSFetchRequest" }
}
