import ExpressionLanguage
import ObjectGraph
import OrderedCollections

/// The mapping Core Data would infer between two model versions for a lightweight
/// migration (`NSMappingModel.inferredMappingModel(forSourceModel:destinationModel:)`,
/// COREDATA.md B4), as an ordinary ``MappingModel`` that the engine runs and that
/// ``mappingFile()`` writes as an editable mapping file.
///
///     let inference = MappingInference(from: v1, to: v2)
///     guard inference.errors.isEmpty else { throw InferenceErrors(inference.errors) }
///     for warning in inference.warnings { print("warning:", warning) }
///     let manager = try MigrationManager(mapping: inference.mapping, source: v1, destination: v2)
///
/// The rules (docs/engine.md, "Inferred mappings"):
/// - Entities are paired by renaming identifier (the name when there is none). A pair
///   whose version hashes are equal gets a `copy` mapping `IEM_Copy_<id>`, any other pair
///   a `transform` mapping `IEM_Transform_<id>`, both with the standard FETCH; an entity
///   only in the destination gets an `add` mapping `IEM_Add_<id>`, one only in the source
///   a `remove` mapping `IEM_Remove_<id>`. Mappings are in the order of their identifiers.
///   Abstract entities have no instances of their own and get no mapping.
/// - Properties are paired by renaming identifier too; an attribute paired with a
///   relationship counts as unpaired. Attribute values are read with
///   `FUNCTION($source, "valueForKey:", "old")`, or, when an optional attribute becomes
///   required, `FUNCTION($entityPolicy, "_nonNilValueOrDefaultValueForAttribute:source:destination:", "new", $source, $destination)`;
///   relationships are filled with `destinationInstancesForSourceRelationshipNamed:sourceInstances:`.
///   Every destination property is listed, an unpaired one as `null` (it keeps its
///   default), so that the engine adds no same-named mappings of its own.
public struct MappingInference: Sendable {
    public let source: ObjectModel
    public let destination: ObjectModel
    /// The inferred mapping. When there are ``errors`` it is a draft: each property that
    /// cannot be inferred is mapped the nearest way (`$source.<old>` for an attribute of
    /// another type), to be edited.
    public private(set) var mapping: MappingModel
    /// Why the mapping cannot be inferred; empty when it can.
    public private(set) var errors: [InferenceError] = []
    /// Required properties the mapping can leave without a value.
    public private(set) var warnings: [InferenceWarning] = []
    /// Whether an entity-level problem (duplicate entity identifiers) leaves no draft worth
    /// showing.
    private var hasNoDraft = false
    /// Why a property is mapped as it is, where that is not obvious: comments for the
    /// mapping file, by entity mapping name and property.
    private var notes: [String: [String: String]] = [:]

    /// The selector of the relationship lookup inferred mappings use.
    static let relationshipLookup = "destinationInstancesForSourceRelationshipNamed:sourceInstances:"
    /// The selector of the optional → required attribute form.
    static let nonNilOrDefault = "_nonNilValueOrDefaultValueForAttribute:source:destination:"

    /// Infers the mapping from `source` to `destination`; see ``errors`` and ``warnings``.
    public init(from source: ObjectModel, to destination: ObjectModel) {
        self.source = source
        self.destination = destination
        mapping = MappingModel(sourceModel: source.version, destinationModel: destination.version, entityMappings: [])
        let sourceEntities = entitiesByIdentifier(source, side: "source")
        let destinationEntities = entitiesByIdentifier(destination, side: "destination")
        let sourceHashes = source.entityVersionHashes, destinationHashes = destination.entityVersionHashes
        for id in Set(sourceEntities.keys).union(destinationEntities.keys).sorted() {
            switch (sourceEntities[id], destinationEntities[id]) {
            case (nil, let d?):
                if d.isAbstract { continue }
                mapping.entityMappings.append(
                    EntityMapping(name: "IEM_Add_\(id)", type: .add, destinationEntity: d.name))
            case (let s?, nil):
                if s.isAbstract { continue }
                mapping.entityMappings.append(
                    EntityMapping(name: "IEM_Remove_\(id)", type: .remove, sourceEntity: s.name))
            case (let s?, let d?):
                // An abstract source entity has no instances of its own to migrate.
                if s.isAbstract { continue }
                let type: MappingType = sourceHashes[s.name] == destinationHashes[d.name] ? .copy : .transform
                let name = type == .copy ? "IEM_Copy_\(id)" : "IEM_Transform_\(id)"
                if d.isAbstract {
                    let subentities = destination.descendants(of: d, includingSelf: false).filter { !$0.isAbstract }
                        .map(\.name)
                    let choice = subentities.isEmpty ? "" : " (\(MappingCompiler.list(subentities)))"
                    errors.append(
                        InferenceError(
                            .abstractDestination, entity: d.name, entityMapping: name,
                            message:
                                "it has instances in \(source.version) but is abstract in \(destination.version), so an inferred mapping has nowhere to put them; map them to one of its sub-entities\(choice) in a mapping file"
                        ))
                }
                var entityMapping = EntityMapping(
                    name: name, type: type, sourceEntity: s.name, destinationEntity: d.name,
                    sourceExpression: Self.standardFetch(of: s.name))
                inferProperties(of: &entityMapping, from: s, to: d)
                mapping.entityMappings.append(entityMapping)
            case (nil, nil):
                break
            }
        }
    }

    /// How an inferred mapping reads the source attribute `name`.
    static func attributeRead(_ name: String) -> String {
        "FUNCTION($source, \"valueForKey:\", \"\(name)\")"
    }

    /// How an inferred mapping fills a relationship from the source relationship `name`.
    static func relationshipRead(_ name: String) -> String {
        "FUNCTION($manager, \"\(relationshipLookup)\", \"\(name)\", \(attributeRead(name)))"
    }

    /// The standard source expression of an inferred mapping: every instance of `entity`,
    /// sub-entities excluded.
    public static func standardFetch(of entity: String) -> String {
        "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"\(entity)\", \"TRUEPREDICATE\"), FUNCTION($manager, \"sourceContext\"), NO)"
    }

    /// `model`'s entities by renaming identifier; duplicates are errors, and the entities
    /// that share an identifier are left out.
    private mutating func entitiesByIdentifier(_ model: ObjectModel, side: String) -> [String: EntityDescription] {
        var byIdentifier: [String: EntityDescription] = [:]
        var duplicates: Set<String> = []
        for entity in model.entities {
            let id = entity.renamingIdentifier ?? entity.name
            if let first = byIdentifier[id] {
                duplicates.insert(id)
                hasNoDraft = true
                errors.append(
                    InferenceError(
                        .duplicateRenamingIdentifier, entity: entity.name,
                        message:
                            "\(first.name) and \(entity.name) both have the renaming identifier '\(id)' in \(model.version); each \(side) entity must have a unique renaming identifier, since an inferred mapping pairs entities by it"
                    ))
            } else {
                byIdentifier[id] = entity
            }
        }
        for id in duplicates { byIdentifier[id] = nil }
        return byIdentifier
    }

    private enum SourceProperty {
        case attribute(AttributeDescription)
        case relationship(RelationshipDescription)

        var name: String {
            switch self {
            case .attribute(let a): a.name
            case .relationship(let r): r.name
            }
        }
    }

    /// The property mappings of a copy or transform mapping from `s` to `d`.
    private mutating func inferProperties(
        of entityMapping: inout EntityMapping, from s: EntityDescription, to d: EntityDescription
    ) {
        var byIdentifier: [String: SourceProperty] = [:]
        var shared: [String: [String]] = [:]
        let stored =
            source.allAttributes(of: s).filter { !$0.isTransient }.map {
                ($0.renamingIdentifier ?? $0.name, SourceProperty.attribute($0))
            }
            + source.allRelationships(of: s).filter { !$0.isTransient }.map {
                ($0.renamingIdentifier ?? $0.name, SourceProperty.relationship($0))
            }
        for (id, property) in stored {
            if let first = byIdentifier[id] {
                shared[id, default: [first.name]].append(property.name)
            } else {
                byIdentifier[id] = property
            }
        }
        var reportedShared: Set<String> = []
        /// The source property paired with a destination property of identifier `id`;
        /// nil when there is none or when it is ambiguous (reported once).
        func paired(_ id: String, _ name: String) -> SourceProperty? {
            if let names = shared[id] {
                if reportedShared.insert(id).inserted {
                    errors.append(
                        InferenceError(
                            .duplicateRenamingIdentifier, entity: d.name, property: name,
                            entityMapping: entityMapping.name,
                            message:
                                "\(MappingCompiler.list(names.map { "'\($0)'" })) of \(s.name) all have the renaming identifier '\(id)' in \(source.version), so an inferred mapping cannot tell which one '\(name)' comes from; give each source property a unique renaming identifier, or map '\(name)' in a mapping file"
                        ))
                }
                return nil
            }
            return byIdentifier[id]
        }
        let attributes = destination.allAttributes(of: d).filter { !$0.isTransient }
        for attribute in attributes {
            let id = attribute.renamingIdentifier ?? attribute.name
            guard case .attribute(let old)? = paired(id, attribute.name) else {
                entityMapping.attributeMappings.append(PropertyMapping(name: attribute.name, valueExpression: nil))
                if !attribute.isOptional, attribute.defaultValue == nil, shared[id] == nil {
                    warn(
                        d, attribute.name,
                        "new in \(destination.version), required, and without a default value, so nothing gives it a value: checking the mapping fails, and Core Data's migration would fail validation for any \(d.name); give it a default value, make it optional, or map it in a mapping file"
                    )
                }
                continue
            }
            if let why = incompatibility(old, attribute) {
                let renamed = old.name == attribute.name ? "" : " (named '\(old.name)')"
                let example = MappingCompiler.conversionExample(old.type.staticKind, attribute, "$source.\(old.name)")
                    .replacingOccurrences(of: ", such as \"", with: ", such as \"\(attribute.name)\": \"")
                errors.append(
                    InferenceError(
                        .incompatibleAttributeTypes, entity: d.name, property: attribute.name,
                        entityMapping: entityMapping.name,
                        message:
                            "it is \(MappingCompiler.article(old.type.rawValue)) attribute in \(source.version)\(renamed) and \(MappingCompiler.article(attribute.type.rawValue)) attribute in \(destination.version), and \(why) (Core Data: \"Source and destination attribute types are incompatible\"); map it in a mapping file\(example.isEmpty ? " with an expression that converts it" : example)"
                    ))
                // The draft reads the old value, so that checking it shows the conversion to write.
                entityMapping.attributeMappings.append(
                    PropertyMapping(name: attribute.name, valueExpression: "$source.\(old.name)"))
                continue
            }
            if old.isOptional, !attribute.isOptional {
                entityMapping.attributeMappings.append(
                    PropertyMapping(
                        name: attribute.name,
                        valueExpression:
                            "FUNCTION($entityPolicy, \"\(Self.nonNilOrDefault)\", \"\(attribute.name)\", $source, $destination)"
                    ))
                if attribute.defaultValue == nil {
                    warn(
                        d, attribute.name,
                        "optional in \(source.version) and required in \(destination.version) without a default value, so the migration fails validation if any \(s.name) has no '\(old.name)'; give it a default value, or map it in a mapping file"
                    )
                }
            } else {
                entityMapping.attributeMappings.append(
                    PropertyMapping(name: attribute.name, valueExpression: Self.attributeRead(old.name)))
            }
        }
        for relationship in destination.allRelationships(of: d) where !relationship.isTransient {
            let id = relationship.renamingIdentifier ?? relationship.name
            guard case .relationship(let old)? = paired(id, relationship.name) else {
                entityMapping.relationshipMappings.append(
                    PropertyMapping(name: relationship.name, valueExpression: nil))
                // A required to-many without a minimum count starts empty, as in Core Data.
                if !relationship.isOptional, !relationship.isToMany || relationship.minCount > 0, shared[id] == nil {
                    let needs =
                        relationship.isToMany
                        ? " with at least \(relationship.minCount) destination\(relationship.minCount == 1 ? "" : "s")"
                        : ""
                    warn(
                        d, relationship.name,
                        "new in \(destination.version) and required\(needs), so the migration fails validation for any \(d.name); make it optional, or map it in a mapping file"
                    )
                }
                continue
            }
            if old.isToMany, !relationship.isToMany {
                let renamed = old.name == relationship.name ? "" : " (named '\(old.name)')"
                errors.append(
                    InferenceError(
                        .toManyToToOne, entity: d.name, property: relationship.name, entityMapping: entityMapping.name,
                        message:
                            "it is a to-many relationship in \(source.version)\(renamed) and a to-one in \(destination.version), and an inferred mapping cannot choose which object to keep (Core Data: \"Can not map from a to-many to a to-one relationship\"); map it in a mapping file with an expression that chooses one"
                    ))
            } else if old.isOptional, !relationship.isOptional, !relationship.isToMany || relationship.minCount > 0 {
                warn(
                    d, relationship.name,
                    "optional in \(source.version) and required in \(destination.version), so the migration fails validation if any \(s.name) has none; map it in a mapping file if some may have none"
                )
            }
            if !(old.isToMany && !relationship.isToMany),
                let inverse = orderedInverse(of: relationship, pairedWith: old)
            {
                // Filled from this side as well, the ordered side would get its members in
                // the order this side's instances are migrated, not in its own order.
                entityMapping.relationshipMappings.append(
                    PropertyMapping(name: relationship.name, valueExpression: nil))
                notes[entityMapping.name, default: [:]][relationship.name] =
                    "set through its inverse, \(inverse), whose mapping keeps that relationship's order"
                continue
            }
            entityMapping.relationshipMappings.append(
                PropertyMapping(name: relationship.name, valueExpression: Self.relationshipRead(old.name)))
        }
    }

    /// `Entity.inverse` when `relationship` (paired with the source's `old`) is the
    /// unordered side of a pair whose other side is an ordered to-many that the mapping
    /// fills from the source's inverse of `old`: then that side alone says who belongs and
    /// in which order, and this one follows through inverse maintenance.
    private func orderedInverse(of relationship: RelationshipDescription, pairedWith old: RelationshipDescription)
        -> String?
    {
        guard !relationship.isOrdered, let inverseName = relationship.inverse,
            let target = destination.entity(named: relationship.destination),
            let inverse = destination.allRelationships(of: target).first(where: { $0.name == inverseName }),
            inverse.isToMany, inverse.isOrdered, !inverse.isTransient,
            let oldInverseName = old.inverse, let oldTarget = source.entity(named: old.destination),
            let oldInverse = source.allRelationships(of: oldTarget).first(where: { $0.name == oldInverseName }),
            !oldInverse.isTransient,
            (oldInverse.renamingIdentifier ?? oldInverse.name) == (inverse.renamingIdentifier ?? inverse.name),
            (oldTarget.renamingIdentifier ?? oldTarget.name) == (target.renamingIdentifier ?? target.name),
            source.descendants(of: oldTarget).contains(where: { !$0.isAbstract })
        else { return nil }
        return "\(target.name).\(inverse.name)"
    }

    /// Why the lightweight rules cannot convert `old` to `new`; nil when they can.
    private func incompatibility(_ old: AttributeDescription, _ new: AttributeDescription) -> String? {
        if old.type == new.type { return nil }
        if old.type.isNumeric, new.type.isNumeric { return nil }
        let data: Set<AttributeType> = [.binary, .transformable]
        if data.contains(old.type), data.contains(new.type) {
            if new.userInfo["NSMigrationAllowTypeTransformation"] != nil { return nil }
            return
                "an inferred mapping changes \(old.type.rawValue) to \(new.type.rawValue) only when the destination attribute's userInfo has NSMigrationAllowTypeTransformation (add it to '\(new.name)' in \(destination.version) to copy the data as it is)"
        }
        return
            "an inferred mapping converts only between numbers and booleans (int16, int32, int64, decimal, double, float, boolean)"
    }

    private mutating func warn(_ entity: EntityDescription, _ property: String, _ message: String) {
        warnings.append(InferenceWarning(entity: entity.name, property: property, message: message))
    }

    // MARK: - The mapping file

    /// The mapping as an editable, pretty-printable mapping file, with a comment saying
    /// where it came from. A draft (when there are ``errors``) has a comment at each entity
    /// mapping and property that could not be inferred, saying why; nil when there is no
    /// draft to show (entities that share a renaming identifier).
    public func mappingFile() -> JSON? {
        guard !hasNoDraft, case .object(var root) = mapping.json else { return nil }
        var comment =
            "Inferred from \(source.version) to \(destination.version) by Core Data's lightweight rules (docs/engine.md, \"Inferred mappings\"); edit it as you need."
        if !errors.isEmpty {
            comment +=
                " A draft: \(errors.count) thing\(errors.count == 1 ? "" : "s") could not be inferred; each has a comment saying why, and `mapping-migrate check` shows what is left to do."
        }
        var file = OrderedDictionary<String, JSON>()
        file["comment"] = .string(comment)
        for (key, value) in root { file[key] = value }
        root = file
        guard case .array(var entityMappings)? = root["entityMappings"] else { return .object(root) }
        for (index, entityMapping) in mapping.entityMappings.enumerated() {
            let problems = errors.filter { $0.entityMapping == entityMapping.name }
            let comments = (notes[entityMapping.name] ?? [:]).merging(
                problems.compactMap { p in p.property.map { ($0, p.message) } },
                uniquingKeysWith: { _, problem in problem })
            guard !comments.isEmpty || !problems.isEmpty, case .object(var o) = entityMappings[index] else { continue }
            if let whole = problems.first(where: { $0.property == nil }) {
                o = Self.withComment(whole.message, o)
            }
            for group in ["attributeMappings", "relationshipMappings"] {
                guard case .object(var members)? = o[group] else { continue }
                for (property, comment) in comments {
                    guard let value = members[property] else { continue }
                    members[property] = .object(["comment": .string(comment), "valueExpression": value])
                }
                o[group] = .object(members)
            }
            entityMappings[index] = .object(o)
        }
        root["entityMappings"] = .array(entityMappings)
        return .object(root)
    }

    private static func withComment(_ comment: String, _ members: OrderedDictionary<String, JSON>) -> OrderedDictionary<
        String, JSON
    > {
        var result: OrderedDictionary<String, JSON> = ["comment": .string(comment)]
        for (key, value) in members { result[key] = value }
        return result
    }
}

extension MappingModel {
    /// The mapping Core Data would infer from `source` to `destination` (see
    /// ``MappingInference``); throws every reason it cannot be inferred.
    ///
    ///     let mapping = try MappingModel.inferred(from: v1, to: v2)
    public static func inferred(from source: ObjectModel, to destination: ObjectModel) throws(InferenceErrors)
        -> MappingModel
    {
        let inference = MappingInference(from: source, to: destination)
        if !inference.errors.isEmpty { throw InferenceErrors(inference.errors) }
        return inference.mapping
    }
}
