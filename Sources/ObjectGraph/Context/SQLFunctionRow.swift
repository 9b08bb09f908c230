import ExpressionLanguage

/// A source row handed to a SQL function as its arguments, read as a ``RowReader`` reads
/// the row's columns: what `$source` is when a migration's SQL asks the interpreter for
/// the value of an expression SQL cannot say (docs/pushdown.md).
///
///     let row = SQLFunctionRow(entity: note, model: model, attributes: ["title", "text"])
///     row.load(arguments, from: 2, primaryKey: arguments.int64(at: 1))
///     context[slot: source] = .object(ObjectReference(row))
public final class SQLFunctionRow: KeyValueCoding {
    public let entityName: String
    /// The attributes loaded, with their types, in argument order.
    public let attributes: [(name: String, type: AttributeType)]
    private var values: [String: Value] = [:]
    /// The row's primary key, once loaded.
    public private(set) var primaryKey: Int64 = 0

    /// Nil when an attribute is not stored, or holds Core Data's encoding of external
    /// storage (which reading decodes from files).
    public init?(entity: EntityDescription, model: ObjectModel, attributes names: [String]) {
        let all = model.allAttributes(of: entity).filter { !$0.isTransient }
        var attributes: [(String, AttributeType)] = []
        for name in names {
            guard let attribute = all.first(where: { $0.name == name }), !attribute.storesExternalEncoding,
                EntityBinding.readsFromValue(attribute.type)
            else { return nil }
            attributes.append((name, attribute.type))
        }
        entityName = entity.name
        self.attributes = attributes
    }

    /// Reads the attributes from the arguments from `first` on.
    public func load(_ arguments: SQLFunctionArguments, from first: Int, primaryKey: Int64) {
        self.primaryKey = primaryKey
        for (i, attribute) in attributes.enumerated() {
            values[attribute.name] = arguments.value(at: first + i, as: attribute.type) ?? .null
        }
    }

    public func value(forKey key: String) throws -> Value {
        guard let value = values[key] else {
            throw ExpressionError(
                .unknownKey,
                "\(objectDescription) is read as a row, which has the attributes \(attributes.map(\.name).joined(separator: ", ")); not '\(key)'"
            )
        }
        return value
    }

    public var objectDescription: String { "\(entityName)/\(primaryKey)" }
    public var kindName: String { entityName }
}
