import ExpressionLanguage
import ObjectGraph

/// A mapping checked against its two models and compiled: what a run executes.
struct PreparedMapping {
    let mapping: MappingModel
    let entityMappings: [PreparedEntityMapping]
}

/// One entity mapping, resolved and compiled once per run.
struct PreparedEntityMapping {
    let index: Int
    /// The mapping with the implicit property mappings of copy and transform mappings added.
    let mapping: EntityMapping
    let path: String
    let sourceEntity: EntityDescription?
    let destinationEntity: EntityDescription?
    let layout: VariableLayout
    let attributes: [PreparedProperty]
    let relationships: [PreparedProperty]
    let source: SourcePlan
}

/// One property mapping with its compiled expression. A class: the engine walks these for
/// every instance, and copying the struct's fields each time showed in profiles.
final class PreparedProperty {
    let mapping: PropertyMapping
    let path: String
    let expression: CompiledExpression
    let relationship: RelationshipDescription?

    init(mapping: PropertyMapping, path: String, expression: CompiledExpression, relationship: RelationshipDescription?)
    {
        self.mapping = mapping
        self.path = path
        self.expression = expression
        self.relationship = relationship
    }
}

/// Where an entity mapping's source instances come from.
enum SourcePlan {
    /// None (add and remove mappings, or a mapping without a source entity).
    case none
    /// A fetch streamed through a cursor: the standard FETCH, or no source expression.
    case fetch(FetchRequest)
    /// Any other expression, evaluated once; its result is the collection of instances.
    case expression(CompiledExpression)
}

/// Checks a mapping against its models and the registered policies, collecting every
/// problem, and compiles what it can: the one path that `mapping-migrate check` and a run
/// both take.
///
/// Problems are reported in file order: by the place of their key in the file (for a
/// mapping made in code, in the order docs/mapping-format.md lists the keys), property
/// mappings in turn, and the problems of one expression by column.
struct MappingCompiler {
    let mapping: MappingModel
    let source: ObjectModel
    let destination: ObjectModel
    let policies: PolicyRegistry
    private(set) var errors: [MappingError] = []

    /// The variables a mapping binds, in the order messages list them.
    static let variables = ["manager", "source", "destination", "entityMapping", "propertyMapping", "entityPolicy"]
    /// The variables a sourceExpression can use: it runs before there are instances.
    static let sourceExpressionVariables = ["manager", "entityMapping", "entityPolicy"]
    static let fetchSelector = "fetchRequestForSourceEntityNamed:predicateString:"
    static let fetchWithSubentitiesSelector = "fetchRequestForSourceEntityNamed:predicateString:includesSubentities:"
    static let lookupSelectors = [
        "destinationInstancesForEntityMappingNamed:sourceInstances:",
        "sourceInstancesForEntityMappingNamed:destinationInstances:"
    ]

    init(_ mapping: MappingModel, source: ObjectModel, destination: ObjectModel, policies: PolicyRegistry) {
        self.mapping = mapping
        self.source = source
        self.destination = destination
        self.policies = policies
    }

    /// The file problems are reported in: the entity mapping's own one in a step of
    /// several files (``EntityMapping/origin``), else the mapping's.
    var file: String?

    mutating func fail(_ path: String, _ message: String, kind: MappingError.Kind = .model) {
        errors.append(MappingError(kind, file: file ?? mapping.file, path: path, message: message))
    }

    mutating func fail(_ path: String, _ error: ExpressionError) {
        errors.append(MappingError(file: file ?? mapping.file, path: path, expressionError: error))
    }

    /// The index an entity mapping's problems name: its place in its own file.
    func shownIndex(_ index: Int) -> Int { mapping.entityMappings[index].origin?.index ?? index }

    mutating func prepare() -> PreparedMapping {
        if mapping.sourceModel == destination.version, mapping.destinationModel == source.version,
            source.version != destination.version
        {
            fail(
                "sourceModel",
                "the mapping goes from '\(mapping.sourceModel)' to '\(mapping.destinationModel)', but this step goes from '\(source.version)' to '\(destination.version)': sourceModel and destinationModel are swapped, or this is the mapping for the way back",
                kind: .step)
        } else {
            if mapping.sourceModel != source.version {
                fail(
                    "sourceModel",
                    "the mapping starts from '\(mapping.sourceModel)', but the source model is '\(source.version)'",
                    kind: .step)
            }
            if mapping.destinationModel != destination.version {
                fail(
                    "destinationModel",
                    "the mapping leads to '\(mapping.destinationModel)', but the destination model is '\(destination.version)'",
                    kind: .step)
            }
        }
        var prepared: [PreparedEntityMapping] = []
        for (index, entityMapping) in mapping.entityMappings.enumerated() {
            let start = errors.count
            file = entityMapping.origin?.file
            if let p = prepare(entityMapping, index) { prepared.append(p) }
            inFileOrder(
                since: start, base: MappingPath.entityMapping(shownIndex(index), entityMapping.name),
                entityMapping.keyOrder, canonical: MappingModel.entityMappingKeys)
            file = nil
        }
        inFileOrder(since: 0, base: "", mapping.keyOrder, canonical: MappingModel.fileKeys)
        return PreparedMapping(mapping: mapping, entityMappings: prepared)
    }

    /// Sorts the errors found since `start`, all at or under `base`, by where the key
    /// that follows `base` in their path stands in the file.
    mutating func inFileOrder(since start: Int, base: String, _ order: FileKeyOrder, canonical: [String]) {
        errors.sortByKey(from: start, under: base) { key in key.isEmpty ? -1 : order.rank(of: key, canonical: canonical)
        }
    }

    mutating func entity(_ name: String?, in model: ObjectModel, _ path: String, _ side: String) -> EntityDescription? {
        guard let name else { return nil }
        if let entity = model.entity(named: name) { return entity }
        let hint =
            Suggestion.closest(to: name, among: model.entities.map(\.name)).map { "; did you mean '\($0)'?" }
            ?? "; its entities are \(model.entities.map(\.name).joined(separator: ", "))"
        fail(path, "the \(side) model \(model.version) has no entity '\(name)'\(hint)")
        return nil
    }

    /// The concrete entities at or below `entity`, for "map to one of these" hints.
    static func concreteNames(below entity: EntityDescription, in model: ObjectModel) -> String {
        model.descendants(of: entity, includingSelf: false).filter { !$0.isAbstract }.map(\.name).joined(
            separator: ", ")
    }

    mutating func prepare(_ original: EntityMapping, _ index: Int) -> PreparedEntityMapping? {
        let path = MappingPath.entityMapping(shownIndex(index), original.name)
        let errorsBefore = errors.count
        let sourceEntity = entity(original.sourceEntity, in: source, "\(path) .sourceEntity", "source")
        let fetches = original.type == .copy || original.type == .transform || original.type == .custom
        if let s = sourceEntity, s.isAbstract, fetches, original.sourceExpression == nil {
            fail(
                "\(path) .sourceEntity",
                "'\(s.name)' is abstract, and a mapping fetches its source entity without sub-entities, so this one would find no instances; map each sub-entity (\(Self.concreteNames(below: s, in: source))) with a mapping of its own"
            )
        }
        let destinationEntity = entity(
            original.destinationEntity, in: destination, "\(path) .destinationEntity", "destination")
        if let d = destinationEntity, d.isAbstract {
            fail(
                "\(path) .destinationEntity",
                "'\(d.name)' is abstract and cannot have instances of its own; map to one of its sub-entities (\(Self.concreteNames(below: d, in: destination)))"
            )
        }
        // An unknown entity is reported once; what does not depend on it is still checked.
        let destinationUnknown = original.destinationEntity != nil && destinationEntity == nil
        let mapping = withImplicitMappings(original, sourceEntity, destinationEntity)
        let compiler = ExpressionCompiler(functions: policies.functions, layout: VariableLayout(Self.variables))
        let plan = sourcePlan(mapping, path, compiler, sourceEntity)

        var attributes: [PreparedProperty] = []
        var relationships: [PreparedProperty] = []
        let destinationAttributes = destinationEntity.map { destination.allAttributes(of: $0) } ?? []
        let destinationRelationships = destinationEntity.map { destination.allRelationships(of: $0) } ?? []
        // What the default policy leaves empty must be mapped or have a default.
        let checksRequired = original.policy == nil && (mapping.type == .copy || mapping.type == .transform)
        func isRequiredWithoutDefault(_ a: AttributeDescription) -> Bool {
            !a.isOptional && !a.isTransient && a.defaultValue == nil
        }

        for property in mapping.attributeMappings {
            let place = MappingPath.property(shownIndex(index), mapping.name, "attributeMappings", property.name)
            var attribute: AttributeDescription?
            if let destinationEntity {
                attribute = destinationAttributes.first { $0.name == property.name }
                if attribute == nil {
                    if destinationRelationships.contains(where: { $0.name == property.name }) {
                        fail(
                            place,
                            "'\(property.name)' is a relationship of \(destinationEntity.name); map it under relationshipMappings"
                        )
                    } else {
                        fail(
                            place,
                            "the destination entity \(destinationEntity.name) has no attribute '\(property.name)'"
                                + hint(property.name, destinationAttributes.map(\.name)))
                    }
                    continue
                }
            } else if !destinationUnknown {
                fail(place, "the mapping has no destinationEntity, so it has no attributes to map")
                continue
            }
            guard let text = property.valueExpression else {
                if let attribute, let destinationEntity, checksRequired, isRequiredWithoutDefault(attribute) {
                    fail(
                        place,
                        "\(destinationEntity.name).\(attribute.name) is required and has no default, but null maps nothing; map it to an expression"
                    )
                }
                continue
            }
            guard
                let compiled = compile(
                    text, place, compiler, variables: Self.variables, sourceEntity: sourceEntity,
                    destinationEntity: destinationEntity, relationship: nil, stageOneOf: index)
            else { continue }
            if let attribute, let kind = StaticKind.of(compiled.expression, source: source, sourceEntity: sourceEntity),
                let problem = kind.misfit(attribute)
            {
                if property.isImplicit, let sourceEntity,
                    let sourceAttribute = source.allAttributes(of: sourceEntity).first(where: {
                        $0.name == attribute.name
                    })
                {
                    fail(
                        place,
                        "the same-named attribute would be copied, but '\(attribute.name)' is \(Self.article(sourceAttribute.type.rawValue)) attribute in \(source.version) and \(Self.article(attribute.type.rawValue)) attribute in \(destination.version); map it with a conversion\(Self.conversionExample(kind, attribute, "$source.\(attribute.name)"))"
                    )
                } else {
                    fail(
                        place,
                        ExpressionError(
                            .type, problem + Self.conversionHint(kind, attribute, compiled.expression),
                            source: text, range: compiled.expression.range))
                }
            }
            attributes.append(PreparedProperty(mapping: property, path: place, expression: compiled, relationship: nil))
        }
        if let destinationEntity, let sourceEntity, checksRequired {
            for attribute in destinationAttributes
            where isRequiredWithoutDefault(attribute) && mapping.propertyMapping(named: attribute.name) == nil {
                fail(
                    "\(path) .attributeMappings",
                    "\(destinationEntity.name).\(attribute.name) is required and has no default, but nothing maps it; "
                        + renameHint(for: attribute, in: mapping, sourceEntity: sourceEntity)
                        + "or give it a default value in the model")
            }
        }
        for property in mapping.relationshipMappings {
            let place = MappingPath.property(shownIndex(index), mapping.name, "relationshipMappings", property.name)
            var relationship: RelationshipDescription?
            if let destinationEntity {
                relationship = destinationRelationships.first { $0.name == property.name }
                if relationship == nil {
                    if destinationAttributes.contains(where: { $0.name == property.name }) {
                        fail(
                            place,
                            "'\(property.name)' is an attribute of \(destinationEntity.name); map it under attributeMappings"
                        )
                    } else {
                        fail(
                            place,
                            "the destination entity \(destinationEntity.name) has no relationship '\(property.name)'"
                                + hint(property.name, destinationRelationships.map(\.name)))
                    }
                    continue
                }
            } else if !destinationUnknown {
                fail(place, "the mapping has no destinationEntity, so it has no relationships to map")
                continue
            }
            guard let text = property.valueExpression else { continue }
            guard
                let compiled = compile(
                    text, place, compiler, variables: Self.variables, sourceEntity: sourceEntity,
                    destinationEntity: destinationEntity, relationship: relationship)
            else { continue }
            if let relationship,
                let kind = StaticKind.of(compiled.expression, source: source, sourceEntity: sourceEntity), kind.isScalar
            {
                fail(
                    place,
                    ExpressionError(
                        .type,
                        "'\(relationship.name)' is a relationship to \(relationship.destination), but the expression gives \(kind.name); a relationship mapping gives destination objects, such as \(lookupExample(for: relationship, sourceEntity: sourceEntity))",
                        source: text, range: compiled.expression.range))
            }
            relationships.append(
                PreparedProperty(mapping: property, path: place, expression: compiled, relationship: relationship))
        }
        if let policy = original.policy, !policies.contains(policy) {
            let known = policies.names
            let unqualified = policy.split(separator: ".").last.map(String.init) ?? policy
            let hint =
                Suggestion.closest(to: unqualified, among: known).map { "; did you mean '\($0)'?" }
                ?? ((known.isEmpty ? "" : "; the registered policies are \(known.joined(separator: ", "))")
                    + "; register a Swift stand-in for it: `policies.register(\"\(unqualified)\") { MyPolicy() }` (docs/engine.md, \"Custom policies\")")
            fail("\(path) .policy", "no policy named '\(policy)' is registered\(hint)", kind: .policy)
        }
        guard errors.count == errorsBefore else { return nil }
        return PreparedEntityMapping(
            index: index, mapping: mapping, path: path, sourceEntity: sourceEntity,
            destinationEntity: destinationEntity, layout: compiler.layout,
            attributes: attributes, relationships: relationships, source: plan)
    }

    func hint(_ name: String, _ candidates: [String]) -> String {
        if let s = Suggestion.closest(to: name, among: candidates) { return "; did you mean '\(s)'?" }
        return candidates.isEmpty ? "" : "; it has \(candidates.joined(separator: ", "))"
    }

    /// "add … such as": for a required attribute nothing maps, the source attribute it was
    /// probably renamed from, when exactly one of that kind is left unused.
    func renameHint(for attribute: AttributeDescription, in mapping: EntityMapping, sourceEntity: EntityDescription)
        -> String
    {
        let destinationNames = Set(
            destination.allAttributes(of: destination.entity(named: mapping.destinationEntity ?? "") ?? sourceEntity)
                .map(\.name))
        let texts = (mapping.attributeMappings + mapping.relationshipMappings).compactMap(\.valueExpression)
        let unused = source.allAttributes(of: sourceEntity).filter { candidate in
            !candidate.isTransient && candidate.type.staticKind == attribute.type.staticKind
                && !destinationNames.contains(candidate.name)
                && !texts.contains { $0.contains("$source.\(candidate.name)") }
        }
        if unused.count == 1 {
            return
                "if it was renamed from '\(unused[0].name)', add \"\(attribute.name)\": \"$source.\(unused[0].name)\" to attributeMappings, "
        }
        return "add an attribute mapping for '\(attribute.name)' to attributeMappings, "
    }

    /// `an int32`, `a string`.
    static func article(_ word: String) -> String {
        (["a", "e", "i", "o", "u"].contains(word.prefix(1).lowercased()) ? "an " : "a ") + word
    }

    /// How to convert a value of `kind` for `attribute`, as an example expression after
    /// "such as"; empty when there is no conversion to suggest.
    static func conversionExample(_ kind: StaticKind, _ attribute: AttributeDescription, _ operand: String) -> String {
        switch (kind, attribute.type.staticKind) {
        case (.string, .number): ", such as \"CAST(\(operand), 'NSNumber')\""
        case (.number, .string): ", such as \"CAST(\(operand), 'NSString')\""
        case (.number, .date): ", such as \"CAST(\(operand), 'NSDate')\" (seconds since 2001-01-01)"
        default: ""
        }
    }

    /// What to do about a value of the wrong kind, after the problem.
    static func conversionHint(_ kind: StaticKind, _ attribute: AttributeDescription, _ expression: FormatExpression)
        -> String
    {
        if case .constant(.string(let s)) = expression.kind, attribute.type.staticKind == .number, Double(s) != nil {
            return "; write the number without quotes: \(s)"
        }
        switch (kind, attribute.type.staticKind) {
        case (.string, .number): return "; convert it with CAST(…, 'NSNumber')"
        case (.number, .string): return "; convert it with CAST(…, 'NSString')"
        case (.bool, .string): return "; choose the text with TERNARY(… == YES, \"…\", \"…\")"
        case (.number, .date): return "; convert seconds since 2001-01-01 with CAST(…, 'NSDate')"
        default: return ""
        }
    }

    /// The lookup that fills `relationship`, for messages.
    func lookupExample(for relationship: RelationshipDescription, sourceEntity: EntityDescription?) -> String {
        let makers = mappingsMaking(relationship.destination)
        let name =
            makers.count == 1 ? makers[0].name : "<the entity mapping that makes \(relationship.destination) instances>"
        let hasSame =
            sourceEntity.map { source.allRelationships(of: $0).contains { $0.name == relationship.name } } ?? false
        let operand = hasSame ? "$source.\(relationship.name)" : "$source.<relationship>"
        return
            "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\(name)\", \(operand))"
    }

    /// The entity mappings that make instances of `entityName` or of one of its sub-entities.
    func mappingsMaking(_ entityName: String) -> [EntityMapping] {
        mapping.entityMappings.filter { m in
            guard m.type != .remove, let d = m.destinationEntity.flatMap({ destination.entity(named: $0) }) else {
                return false
            }
            return d.name == entityName || destination.ancestors(of: d).contains { $0.name == entityName }
        }
    }

    /// Copy and transform mappings copy same-named attributes and re-link same-named
    /// relationships that exactly one entity mapping maps, unless the file says otherwise.
    func withImplicitMappings(
        _ original: EntityMapping, _ sourceEntity: EntityDescription?, _ destinationEntity: EntityDescription?
    ) -> EntityMapping {
        guard original.type == .copy || original.type == .transform, let sourceEntity, let destinationEntity else {
            return original
        }
        var mapping = original
        let sourceAttributes = Set(source.allAttributes(of: sourceEntity).filter { !$0.isTransient }.map(\.name))
        for attribute in destination.allAttributes(of: destinationEntity) where !attribute.isTransient {
            guard original.propertyMapping(named: attribute.name) == nil, sourceAttributes.contains(attribute.name)
            else { continue }
            mapping.attributeMappings.append(
                PropertyMapping(name: attribute.name, valueExpression: "$source.\(attribute.name)", isImplicit: true))
        }
        let sourceRelationships = source.allRelationships(of: sourceEntity)
        for relationship in destination.allRelationships(of: destinationEntity) where !relationship.isTransient {
            guard original.propertyMapping(named: relationship.name) == nil,
                let sourceRelationship = sourceRelationships.first(where: { $0.name == relationship.name })
            else { continue }
            let candidates = self.mapping.entityMappings.filter {
                $0.sourceEntity == sourceRelationship.destination && $0.destinationEntity == relationship.destination
                    && $0.type != .remove
            }
            guard candidates.count == 1 else { continue }
            let expression =
                "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\(candidates[0].name)\", $source.\(relationship.name))"
            mapping.relationshipMappings.append(
                PropertyMapping(name: relationship.name, valueExpression: expression, isImplicit: true))
        }
        return mapping
    }
}
