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
    /// The name of the attribute in an earlier version, for inferred mappings (Xcode's
    /// "Renaming ID", `elementID` in its XML).
    public var renamingIdentifier: String? = nil
    public var versionHashModifier: String? = nil
    /// Bounds for numbers, lengths for strings and binary data (Xcode's min/max value).
    public var minValue: Value? = nil
    public var maxValue: Value? = nil
    public var allowsExternalBinaryDataStorage: Bool = false
    /// Whether the value is kept in persistent history after the object is deleted
    /// (`preservesValueInHistoryOnDeletion`; Xcode's "Preserve After Deletion",
    /// `preserveAfterDeletion` in its XML). Remodel keeps no history; Apple's version hash
    /// includes it.
    public var preservesValueInHistoryOnDeletion: Bool = false
    public var valueTransformerName: String? = nil
    public var userInfo: [String: Value] = [:]

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

    public init(name: String) {
        self.name = name
    }

    public func attribute(named name: String) -> AttributeDescription? { attributes.first { $0.name == name } }
    public func relationship(named name: String) -> RelationshipDescription? { relationships.first { $0.name == name } }
}
