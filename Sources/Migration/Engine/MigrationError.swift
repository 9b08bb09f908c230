import ExpressionLanguage
import ObjectGraph

/// Why a migration failed, and where: the entity mapping, the source instance (entity and
/// `Z_PK`), the property and its expression.
///
///     entity mapping "BookToBook", source Book Z_PK 9, attribute 'price' = "$source.price * 1.03": cannot multiply a string by a number
public struct MigrationError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable {
        /// The mapping does not fit the models (see ``MappingErrors`` for the details).
        case invalidMapping
        /// The source store cannot be opened or read.
        case sourceStore
        /// The destination store cannot be created or written.
        case destinationStore
        /// An expression failed on an instance.
        case expression
        /// A value does not fit its property, or a relationship mapping gave the wrong kind.
        case value
        /// A policy threw.
        case policy
        /// The migrated store breaks the destination model's rules (required values, counts).
        case validation
        /// The run was cancelled.
        case cancelled
    }

    public var kind: Kind
    public var message: String
    public var entityMapping: String?
    public var sourceEntity: String?
    /// The source instance's `Z_PK`.
    public var sourceKey: Int64?
    public var property: String?
    public var expression: String?
    /// The error this one was made from (SQLite's, the object context's, an expression's),
    /// kept whole: ``sqlite`` finds SQLite's code and SQL beneath the message.
    public var underlying: UnderlyingError?

    public init(
        _ kind: Kind, _ message: String, entityMapping: String? = nil, sourceEntity: String? = nil,
        sourceKey: Int64? = nil, property: String? = nil, expression: String? = nil, underlying: (any Error)? = nil
    ) {
        self.kind = kind
        self.message = message
        self.entityMapping = entityMapping
        self.sourceEntity = sourceEntity
        self.sourceKey = sourceKey
        self.property = property
        self.expression = expression
        self.underlying = underlying.flatMap(UnderlyingError.init)
    }

    /// The SQLite error the failure began with, if it began in SQLite.
    public var sqlite: SQLiteError? { underlying?.sqlite }

    /// Core Data's error code for the same failure (NSCocoaErrorDomain).
    public var code: Int {
        switch kind {
        case .invalidMapping: 134140
        case .sourceStore: 134150
        case .destinationStore: 134160
        case .policy: 134170
        case .cancelled: 134120
        case .expression, .value, .validation: 134110
        }
    }

    public var description: String {
        var place: [String] = []
        if let entityMapping { place.append("entity mapping \"\(entityMapping)\"") }
        if let sourceEntity {
            place.append(sourceKey.map { "source \(sourceEntity) Z_PK \($0)" } ?? "source \(sourceEntity)")
        }
        // A long expression is quoted by its start: the message's own column says where.
        let quoted = expression.map {
            $0.count > ExpressionError.quotedLineLimit ? String($0.prefix(ExpressionError.quotedWindow)) + "…" : $0
        }
        if let property {
            place.append(quoted.map { "'\(property)' = \"\($0)\"" } ?? "'\(property)'")
        } else if let quoted {
            place.append("\"\(quoted)\"")
        }
        return place.isEmpty ? message : place.joined(separator: ", ") + ": " + message
    }

    /// The same error with the places it lacks filled in from `other`.
    func filling(entityMapping: String?, sourceEntity: String?, sourceKey: Int64?) -> MigrationError {
        var copy = self
        copy.entityMapping = copy.entityMapping ?? entityMapping
        if copy.sourceEntity == nil {
            copy.sourceEntity = sourceEntity
            copy.sourceKey = sourceKey
        }
        return copy
    }
}
