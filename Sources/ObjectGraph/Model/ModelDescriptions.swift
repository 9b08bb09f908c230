import ExpressionLanguage

/// An attribute of an entity.
public struct AttributeDescription: Hashable, Sendable {
    public var name: String
    public var type: AttributeType
    /// Optional unless declared otherwise (`"optional": false`).
    public var isOptional: Bool = true
    /// Transient attributes are not stored.
    public var isTransient: Bool = false
    /// The value a new object gets; must fit ``type``.
    public var defaultValue: Value? = nil
    /// The class of a default value a compiled model archives that is no plain value (an
    /// app's own class, for a transformable attribute): Remodel cannot hold it, and new
    /// objects start without it (``ObjectModel/warnings(file:)`` says so).
    public var unreadableDefaultClass: String? = nil
    /// The name of the attribute in an earlier version, for inferred mappings (Xcode's
    /// "Renaming ID", `elementID` in its XML).
    public var renamingIdentifier: String? = nil
    public var versionHashModifier: String? = nil
    /// Bounds for numbers, lengths for strings and binary data (Xcode's min/max value).
    public var minValue: Value? = nil
    public var maxValue: Value? = nil
    public var allowsExternalBinaryDataStorage: Bool = false
    public var valueTransformerName: String? = nil
    /// Validation predicates on the value beyond ``minValue`` and ``maxValue``, as format
    /// strings on `SELF` (Xcode's regular expression for a string becomes
    /// `SELF MATCHES "…"`; a compiled model may hold any predicate). Carried, not enforced.
    public var validationPredicates: [String] = []
    public var userInfo: [String: Value] = [:]
    /// For a derived attribute (Xcode's "Derived", `derivationExpression`): the expression
    /// Core Data computes its value from. Remodel stores and migrates the value like any
    /// other and does not recompute it.
    public var derivationExpression: String? = nil
    /// Whether the value is kept in persistent history after the object is deleted
    /// (`preservesValueInHistoryOnDeletion`; Xcode's "Preserve After Deletion",
    /// `preserveAfterDeletion` in its XML). Remodel writes no history; Apple's version hash
    /// includes it.
    public var preservesValueInHistoryOnDeletion: Bool = false

    public init(name: String, type: AttributeType) {
        self.name = name
        self.type = type
    }
}

/// What deleting an object does to the objects its relationship points at.
public enum DeleteRule: String, CaseIterable, Hashable, Sendable {
    case nullify, cascade, deny, noAction

    /// Xcode's spelling in `deletionRule`.
    public var xcodeName: String {
        switch self {
        case .nullify: "Nullify"
        case .cascade: "Cascade"
        case .deny: "Deny"
        case .noAction: "No Action"
        }
    }

    public init?(xcodeName: String) {
        guard let rule = DeleteRule.allCases.first(where: { $0.xcodeName == xcodeName }) else { return nil }
        self = rule
    }
}

/// A relationship from one entity to another.
public struct RelationshipDescription: Hashable, Sendable {
    public var name: String
    public var destination: String
    public var inverse: String?
    public var isToMany: Bool = false
    public var isOrdered: Bool = false
    public var isOptional: Bool = true
    public var isTransient: Bool = false
    /// For to-many relationships: how many objects at least and at most (0: no bound).
    /// A to-one relationship may declare a `minCount` too (Xcode writes `minCount="1"` for
    /// some); only Apple's version hash reads it, and its `maxCount` stays 0 here.
    public var minCount: Int = 0
    public var maxCount: Int = 0
    public var deleteRule: DeleteRule = .nullify
    public var renamingIdentifier: String? = nil
    public var versionHashModifier: String? = nil
    public var userInfo: [String: Value] = [:]

    public init(name: String, destination: String, inverse: String? = nil, isToMany: Bool = false) {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.isToMany = isToMany
    }
}

/// An entity: its own attributes and relationships (inherited ones come from ``parent``).
public struct EntityDescription: Hashable, Sendable {
    public var name: String
    public var parent: String? = nil
    public var isAbstract: Bool = false
    public var attributes: [AttributeDescription] = []
    public var relationships: [RelationshipDescription] = []
    public var renamingIdentifier: String? = nil
    public var versionHashModifier: String? = nil
    /// The entity's own uniqueness constraints (Xcode's "Constraints"), each a list of
    /// property names, in declaration order. Sub-entities do not inherit them here, as in
    /// Core Data's compiled models. Remodel does not enforce them; Apple's version hash
    /// includes them.
    public var uniquenessConstraints: [[String]] = []
    public var userInfo: [String: Value] = [:]
    /// Fetched properties: not stored, carried for tools; Remodel does not evaluate them.
    public var fetchedProperties: [FetchedPropertyDescription] = []
    /// The configurations the entity is in (``ObjectModel/configurations``), in name order.
    public var configurationNames: [String] = []
    /// Xcode's fetch indexes and compound indexes: each one's name (nil for a compound
    /// index) and properties. Stores Remodel writes do not have them.
    public var fetchIndexes: [FetchIndexDescription] = []

    public init(name: String) {
        self.name = name
    }

    public func attribute(named name: String) -> AttributeDescription? { attributes.first { $0.name == name } }
    public func relationship(named name: String) -> RelationshipDescription? { relationships.first { $0.name == name } }
}

/// A fetch index (Xcode's `<fetchIndex>`, or an older `<compoundIndex>` without a name).
public struct FetchIndexDescription: Hashable, Sendable {
    public var name: String?
    /// The properties (or expressions) indexed, in order.
    public var properties: [String]

    public init(name: String?, properties: [String]) {
        self.name = name
        self.properties = properties
    }
}

/// A fetched property (Xcode's `<fetchedProperty>`): a stored fetch request of `entity`'s
/// objects matching `predicate`. Not stored and not migrated; Remodel carries it only.
public struct FetchedPropertyDescription: Hashable, Sendable {
    public var name: String
    /// The entity the request fetches.
    public var entity: String
    /// The request's predicate, as written in the model (`$FETCH_SOURCE` and
    /// `$FETCHED_PROPERTY` are its variables); nil for every object of `entity`.
    public var predicate: String?

    public init(name: String, entity: String, predicate: String? = nil) {
        self.name = name
        self.entity = entity
        self.predicate = predicate
    }
}

/// Something a model declares that Remodel reads but does not do as Core Data does (a
/// derived attribute, a uniqueness constraint, a fetch index …), with where it is and what
/// Remodel does with it: ``ObjectModel/warnings(file:)`` lists them for the caller to
/// print; they never stop a load.
public struct ModelWarning: Hashable, Sendable, CustomStringConvertible {
    public var file: String?
    public var path: String
    public var message: String

    public init(file: String? = nil, path: String, message: String) {
        self.file = file
        self.path = path
        self.message = message
    }

    /// `Model.xcdatamodel/contents: entity Car fetchIndex byMaker: …`, as errors print.
    public var description: String {
        [file, path.isEmpty ? nil : path, message].compactMap { $0 }.joined(separator: ": ")
    }
}
