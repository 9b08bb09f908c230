/// A problem with a store as a whole: it cannot be opened, it does not match a model,
/// its metadata is unreadable.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case cannotOpen, notAStore, modelMismatch, ambiguousVersion, unknownVersion, metadata, sqlite
    }

    public var kind: Kind
    public var path: String?
    public var message: String
    /// The error this one was made from (SQLite's), kept whole.
    public var underlying: UnderlyingError?

    public init(_ kind: Kind, _ message: String, path: String? = nil, underlying: (any Error)? = nil) {
        self.kind = kind
        self.message = message
        self.path = path
        self.underlying = underlying.flatMap(UnderlyingError.init)
    }

    init(_ error: SQLiteError, path: String?) {
        self.init(.sqlite, error.description, path: path, underlying: error)
    }

    public var description: String { (path.map { "\($0): " } ?? "") + message }
}
