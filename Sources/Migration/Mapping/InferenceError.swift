import ExpressionLanguage

/// Why a mapping cannot be inferred between two model versions (Core Data's error 134190,
/// "inferred mapping model error"), with the entity and property it is about.
///
///     Book.price: it is a string attribute in Model1 and a double attribute in Model2, and an inferred mapping converts only between numbers and booleans (…)
public struct InferenceError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable {
        /// Two entities of one model, or two properties of one source entity, share a
        /// renaming identifier, so pairs cannot be told apart.
        case duplicateRenamingIdentifier
        /// A paired attribute changes type in a way the lightweight rules do not convert.
        case incompatibleAttributeTypes
        /// A to-many relationship becomes a to-one.
        case toManyToToOne
        /// An entity with instances becomes abstract, so its instances have nowhere to go.
        case abstractDestination
    }

    public var kind: Kind
    /// The entity the problem is in (the destination's, except for a source model's
    /// duplicate identifiers).
    public var entity: String
    /// The property, for problems of one property.
    public var property: String?
    /// The entity mapping the problem is in (its `IEM_…` name), when there is one.
    public var entityMapping: String?
    public var message: String

    public init(_ kind: Kind, entity: String, property: String? = nil, entityMapping: String? = nil, message: String) {
        self.kind = kind
        self.entity = entity
        self.property = property
        self.entityMapping = entityMapping
        self.message = message
    }

    /// Core Data's error code for the failure (NSCocoaErrorDomain): 134190.
    public var code: Int { 134190 }

    /// `Entity.property: message`.
    public var description: String {
        "\(entity)\(property.map { ".\($0)" } ?? ""): \(message)"
    }
}

/// Every reason a mapping cannot be inferred, in entity mapping order.
public typealias InferenceErrors = ErrorList<InferenceError>

/// Something an inferred mapping does that may fail when it runs: a required property
/// that can be left without a value (Core Data flags these "could fail validation").
///
///     Book.title: optional in Model1 and required in Model2 without a default value: …
public struct InferenceWarning: Hashable, Sendable, CustomStringConvertible {
    /// The destination entity.
    public var entity: String
    /// The destination property.
    public var property: String
    public var message: String

    public init(entity: String, property: String, message: String) {
        self.entity = entity
        self.property = property
        self.message = message
    }

    /// `Entity.property: message`.
    public var description: String { "\(entity).\(property): \(message)" }
}
