/// A problem with an operation on an object context: what went wrong, and on which object
/// and key.
public struct ContextError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case unknownEntity, unknownKey, type, deleteDenied, validation, noSuchObject, sqlite, predicate
        /// An external-storage attribute's data that cannot be read (``ExternalBinaryData``).
        case externalData
        /// SQL that changes saved rows asked for while the context has unsaved changes.
        case unsavedChanges
    }

    public var kind: Kind
    public var message: String
    /// `Book/9`, when an object is involved.
    public var object: String?
    public var key: String?
    /// The error this one was made from (SQLite's, or a predicate's), kept whole.
    public var underlying: UnderlyingError?

    public init(
        _ kind: Kind, _ message: String, object: String? = nil, key: String? = nil, underlying: (any Error)? = nil
    ) {
        self.kind = kind
        self.message = message
        self.object = object
        self.key = key
        self.underlying = underlying.flatMap(UnderlyingError.init)
    }

    /// `Book/9 .price: message`.
    public var description: String {
        var place = object ?? ""
        if let key { place += (place.isEmpty ? "" : " ") + "." + key }
        return place.isEmpty ? message : "\(place): \(message)"
    }
}

extension ContextError {
    /// A failure of SQLite's, kept as the underlying error.
    public init(_ error: SQLiteError) {
        self.init(.sqlite, error.description, underlying: error)
    }
}
