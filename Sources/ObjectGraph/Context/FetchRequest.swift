import ExpressionLanguage

/// What to fetch: objects of an entity (and its sub-entities), those a predicate accepts,
/// in an order.
///
///     var request = try FetchRequest(entityName: "Book", predicate: "price > %@", arguments: [10])
///     request.sortDescriptors = [SortDescriptor("title")]
public struct FetchRequest: Sendable {
    public var entityName: String
    public var predicate: FormatPredicate?
    /// The text the predicate was parsed from, for error messages.
    public var predicateSource: String?
    public var sortDescriptors: [SortDescriptor] = []
    /// At most this many objects (nil: all).
    public var fetchLimit: Int? = nil
    public var includesSubentities = true

    public init(entityName: String, predicate: FormatPredicate? = nil) {
        self.entityName = entityName
        self.predicate = predicate
    }

    /// A request whose predicate is parsed from `predicate` (with format arguments).
    public init(entityName: String, predicate: String, arguments: [Value] = []) throws(ExpressionError) {
        self.entityName = entityName
        self.predicate = try FormatPredicate(parsing: predicate, arguments: arguments)
        self.predicateSource = predicate
    }
}

/// An order: a key path and a direction. Nil sorts before everything, as in SQLite.
public struct SortDescriptor: Sendable, Hashable {
    public var keyPath: String
    public var ascending: Bool

    public init(_ keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }
}
