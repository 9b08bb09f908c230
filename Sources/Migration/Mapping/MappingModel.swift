import ExpressionLanguage
import ObjectGraph

/// How one model version maps to the next: entity mappings, run in order.
///
/// The names follow Core Data's `NSMappingModel`, `NSEntityMapping` and
/// `NSPropertyMapping`; the file format is docs/mapping-format.md.
///
///     let mapping = try MappingModel.load(contentsOf: url)
///     let problems = MappingChecker(mapping, source: v1, destination: v2, policies: .standard).check()
public struct MappingModel: Hashable, Sendable {
    /// The source model's version name (`"Model1"`).
    public var sourceModel: String
    /// The destination model's version name (`"Model2"`).
    public var destinationModel: String
    /// Entity mappings in processing order.
    public var entityMappings: [EntityMapping]
    /// The file the mapping was read from, for messages (`A + B` for a step mapped by several).
    public var file: String?
    /// The files the mapping was read from, in the order they run: one, or for a step
    /// mapped by several, each (``combined(_:)``); empty for a mapping built in code.
    public var files: [String] { parts ?? file.map { [$0] } ?? [] }
    /// The files of a combined mapping.
    var parts: [String]?
    /// What reading the mapping decided that a user should hear of: an entity mapping of
    /// one file replacing another's (``combined(_:)``).
    public var notes: [String] = []
    /// The order of the top-level keys in that file, for reporting problems in file order.
    var keyOrder = FileKeyOrder()

    public init(sourceModel: String, destinationModel: String, entityMappings: [EntityMapping], file: String? = nil) {
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        self.entityMappings = entityMappings
        self.file = file
    }

    /// The entity mapping called `name`.
    public func entityMapping(named name: String) -> EntityMapping? {
        entityMappings.first { $0.name == name }
    }
}

/// Core Data's mapping types (`NSEntityMappingType`).
public enum MappingType: String, CaseIterable, Hashable, Sendable {
    /// Destination instances are created only by a custom policy.
    case add
    /// Source instances are not migrated.
    case remove
    /// Same-named properties are copied.
    case copy
    /// Properties are computed by the property mappings.
    case transform
    /// Everything is up to the policy.
    case custom
}

/// How instances of one source entity become instances of a destination entity.
public struct EntityMapping: Hashable, Sendable {
    public var name: String
    public var type: MappingType
    public var sourceEntity: String?
    public var destinationEntity: String?
    /// The source instances: a FETCH expression, or nil for every instance of
    /// ``sourceEntity`` (none for `add` and `remove` mappings).
    public var sourceExpression: String?
    /// Destination attributes and how to compute them.
    public var attributeMappings: [PropertyMapping]
    /// Destination relationships and how to compute them.
    public var relationshipMappings: [PropertyMapping]
    /// The name of a registered ``EntityMigrationPolicy`` (nil: the default policy).
    public var policy: String?
    public var userInfo: [String: Value]
    /// The order of the mapping's keys in its file, for reporting problems in file order.
    var keyOrder = FileKeyOrder()
    /// For an entity mapping of a step made of several files (``MappingModel/combined(_:)``):
    /// its own file and its place there, which problems with it name.
    public internal(set) var origin: Origin?

    /// Where an entity mapping was written: its file, and its index in that file's `entityMappings`.
    public struct Origin: Hashable, Sendable {
        public var file: String
        public var index: Int
    }

    public init(
        name: String, type: MappingType, sourceEntity: String? = nil, destinationEntity: String? = nil,
        sourceExpression: String? = nil, attributeMappings: [PropertyMapping] = [],
        relationshipMappings: [PropertyMapping] = [], policy: String? = nil, userInfo: [String: Value] = [:]
    ) {
        self.name = name
        self.type = type
        self.sourceEntity = sourceEntity
        self.destinationEntity = destinationEntity
        self.sourceExpression = sourceExpression
        self.attributeMappings = attributeMappings
        self.relationshipMappings = relationshipMappings
        self.policy = policy
        self.userInfo = userInfo
    }

    /// The name an entity mapping gets when its file gives none: `<Source>To<Destination>`
    /// (`BookToBook`, as Xcode names them), or the one entity's name for a mapping with
    /// only one (an add mapping of `Author` is called `Author`).
    public static func defaultName(source: String?, destination: String?) -> String? {
        switch (source, destination) {
        case let (source?, destination?): "\(source)To\(destination)"
        case let (source?, nil): source
        case let (nil, destination?): destination
        case (nil, nil): nil
        }
    }

    /// The mapping for the destination property `name`, if any.
    public func propertyMapping(named name: String) -> PropertyMapping? {
        attributeMappings.first { $0.name == name } ?? relationshipMappings.first { $0.name == name }
    }
}

/// How one destination property gets its value.
public struct PropertyMapping: Hashable, Sendable {
    /// The destination attribute or relationship.
    public var name: String
    /// The expression; nil maps nothing (the property keeps its default).
    public var valueExpression: String?
    public var userInfo: [String: Value]
    /// True for the mappings the engine adds for a `copy` or `transform` mapping's
    /// unmentioned properties (same-named attributes copied, relationships re-linked).
    public var isImplicit: Bool

    public init(name: String, valueExpression: String?, userInfo: [String: Value] = [:], isImplicit: Bool = false) {
        self.name = name
        self.valueExpression = valueExpression
        self.userInfo = userInfo
        self.isImplicit = isImplicit
    }
}

/// Where keys stood in the file a mapping was read from, so that its problems can be
/// reported in file order. Not part of the mapping's value: any two compare equal.
struct FileKeyOrder: Hashable, Sendable {
    var keys: [String] = []

    static func == (lhs: FileKeyOrder, rhs: FileKeyOrder) -> Bool { true }
    func hash(into hasher: inout Hasher) {}

    /// Where `key` stands: its place in the file, or after the file's keys in the order of
    /// `canonical` (for keys the file does not have, or a mapping made in code).
    func rank(of key: String, canonical: [String]) -> Int {
        if let i = keys.firstIndex(of: key) { return i }
        return keys.count + (canonical.firstIndex(of: key) ?? canonical.count)
    }
}
