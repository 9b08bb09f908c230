import ExpressionLanguage
import Foundation

/// One version of an object model: its entities, with inheritance resolved.
///
/// Load one from a JSON model file (``ObjectModel/load(contentsOf:)``) or from Xcode's
/// `.xcdatamodel` (``XcodeModelImporter``); build one in code and ``validate()`` it.
public struct ObjectModel: Hashable, Sendable {
    /// The version's name, such as `Model2`.
    public var version: String
    /// The entities in the order they were declared.
    public var entities: [EntityDescription]
    /// Xcode's configurations: name → the names of its entities, kept on the entities
    /// (``EntityDescription/configurationNames``); setting it ignores names of entities
    /// that are not in the model. Carried; Remodel migrates a store as holding every entity.
    //  Kept on the entities so that ObjectModel itself keeps its two fields.
    public var configurations: [String: [String]] {
        get {
            var result: [String: [String]] = [:]
            for entity in entities {
                for name in entity.configurationNames { result[name, default: []].append(entity.name) }
            }
            return result
        }
        set {
            for i in entities.indices {
                entities[i].configurationNames = newValue.keys.sorted().filter {
                    newValue[$0]!.contains(entities[i].name)
                }
            }
        }
    }

    /// Core Data's version identifiers (`NSManagedObjectModel.versionIdentifiers`; Xcode's
    /// "Identifier", `userDefinedModelVersionIdentifier`): free text Core Data writes into
    /// a store's `NSStoreModelVersionIdentifiers` and does not compare.
    public var versionIdentifiers: [String] = []
    /// The entity version hashes a compiled model's `VersionInfo.plist` gives for this
    /// version; nil for a model read from its source. Used as given where Core Data would
    /// use them (``storeVersionHashes``); ``warnings(file:)`` reports a disagreement with
    /// the computed ones.
    public var declaredVersionHashes: [String: Data]? = nil

    public init(version: String, entities: [EntityDescription]) {
        self.version = version
        self.entities = entities
    }

    public func entity(named name: String) -> EntityDescription? {
        entities.first { $0.name == name }
    }

    /// The entity's ancestors, nearest first.
    public func ancestors(of entity: EntityDescription) -> [EntityDescription] {
        var chain: [EntityDescription] = []
        var seen: Set<String> = [entity.name]
        var parentName = entity.parent
        while let name = parentName, let parent = self.entity(named: name), seen.insert(name).inserted {
            chain.append(parent)
            parentName = parent.parent
        }
        return chain
    }

    /// The entity at the top of `entity`'s hierarchy (itself when it has no parent): the
    /// one whose table the store keeps it in.
    public func rootEntity(of entity: EntityDescription) -> EntityDescription {
        ancestors(of: entity).last ?? entity
    }

    /// Direct sub-entities.
    public func subentities(of entity: EntityDescription) -> [EntityDescription] {
        entities.filter { $0.parent == entity.name }
    }

    /// The entity and all entities below it, depth first. An inheritance cycle (which
    /// validation refuses; a model is asked before it is validated) is walked once.
    public func descendants(of entity: EntityDescription, includingSelf: Bool = true) -> [EntityDescription] {
        var result = includingSelf ? [entity] : []
        var seen: Set<String> = [entity.name]
        func walk(_ entity: EntityDescription) {
            for sub in subentities(of: entity) where seen.insert(sub.name).inserted {
                result.append(sub)
                walk(sub)
            }
        }
        walk(entity)
        return result
    }

    /// Attributes including inherited ones, ancestors' first.
    public func allAttributes(of entity: EntityDescription) -> [AttributeDescription] {
        ancestors(of: entity).reversed().flatMap(\.attributes) + entity.attributes
    }

    /// Relationships including inherited ones, ancestors' first.
    public func allRelationships(of entity: EntityDescription) -> [RelationshipDescription] {
        ancestors(of: entity).reversed().flatMap(\.relationships) + entity.relationships
    }

    /// The relationship `relationship` names as its inverse, when its destination has it.
    public func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        guard let name = relationship.inverse, let destination = entity(named: relationship.destination) else {
            return nil
        }
        return allRelationships(of: destination).first { $0.name == name }
    }

    /// Entity numbers as Core Data assigns them (`Z_ENT`), from 1.
    ///
    /// Core Data's order, as its stores' `Z_PRIMARYKEY` tables show it: root entities by
    /// name, each followed at once by its sub-entities, depth first, siblings by name
    /// (`Car` 1, `SportCar` 2, `ExpensiveSportCar` 3, `Person` 4).
    public var entityNumbers: [String: Int] {
        var children: [String: [String]] = [:]
        let names = Set(entities.map(\.name))
        var roots: [String] = []
        for entity in entities {
            if let parent = entity.parent, names.contains(parent), parent != entity.name {
                children[parent, default: []].append(entity.name)
            } else {
                roots.append(entity.name)
            }
        }
        var numbers: [String: Int] = [:]
        var stack = roots.sorted().reversed().map { $0 }
        while let name = stack.popLast() {
            guard numbers[name] == nil else { continue }  // a cycle, which validation reports
            numbers[name] = numbers.count + 1
            stack += (children[name] ?? []).sorted().reversed()
        }
        // Entities only reachable through a cycle still get a number.
        for name in names.sorted() where numbers[name] == nil { numbers[name] = numbers.count + 1 }
        return numbers
    }
}

/// A problem in a model, with where it is: the file and the JSON path
/// (`entities.Book.relationships.user`).
public struct ModelError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem, for programs that handle some themselves.
    public enum Kind: String, Hashable, Sendable {
        /// The file or folder cannot be read (missing, not readable, empty of versions).
        case unreadable
        /// The text is not JSON, XML or a property list of the expected shape.
        case syntax
        /// A key or value the model format does not accept.
        case format
        /// The model breaks a rule of Core Data's (an inverse that does not match, a cycle, …).
        case invalid
        /// The versions of a model folder disagree (order, names, the current version).
        case versions
    }

    public var kind: Kind
    public var file: String?
    public var path: String
    public var message: String

    public init(_ kind: Kind = .format, file: String? = nil, path: String, message: String) {
        self.kind = kind
        self.file = file
        self.path = path
        self.message = message
    }

    /// `Model2.model.json: entities.Book.relationships.user: unknown destination entity 'Usr'`.
    public var description: String {
        [file, path.isEmpty ? nil : path, message].compactMap { $0 }.joined(separator: ": ")
    }
}

/// All the problems found in a model, in the order found.
public typealias ModelErrors = ErrorList<ModelError>
