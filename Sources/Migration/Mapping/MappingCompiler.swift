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

    // MARK: - Expressions

    /// Parses, checks and compiles one expression, reporting every problem of it by
    /// column; nil when it has any.
    /// - Parameter stageOneOf: for an expression that runs while the entity mapping at
    ///   this index creates its instances (an attribute mapping), the index.
    mutating func compile(
        _ text: String, _ place: String, _ compiler: ExpressionCompiler, variables: [String],
        sourceEntity: EntityDescription?, destinationEntity: EntityDescription?,
        relationship: RelationshipDescription?, stageOneOf: Int? = nil
    ) -> CompiledExpression? {
        if text.allSatisfy(\.isWhitespace) {
            fail(place, "the expression is empty; write null to map nothing", kind: .expression)
            return nil
        }
        let parsed: FormatExpression
        do {
            parsed = try FormatExpression(parsing: text)
        } catch {
            fail(place, error)
            return nil
        }
        var found = variableProblems(parsed, text, allowed: variables)
        found += selectorProblems(parsed, text)
        found += keyPathProblems(parsed, text, sourceEntity: sourceEntity, destinationEntity: destinationEntity)
        found += mappingNameProblems(parsed, text, relationship: relationship, stageOneOf: stageOneOf)
        var compiled: CompiledExpression?
        do {
            compiled = try compiler.compile(parsed, source: text)
        } catch {
            // The checks above say more about the same place (an unknown selector).
            if !found.contains(where: { $0.range == error.range }) { found.append(error) }
        }
        report(found, at: place)
        return found.isEmpty ? compiled : nil
    }

    /// Reports the problems of one expression by column.
    mutating func report(_ found: [ExpressionError], at place: String) {
        let ordered = found.enumerated().sorted { a, b in
            (a.element.range?.lowerBound ?? -1, a.offset) < (b.element.range?.lowerBound ?? -1, b.offset)
        }
        for (_, error) in ordered { fail(place, error) }
    }

    func variableProblems(_ expression: FormatExpression, _ text: String, allowed: [String]) -> [ExpressionError] {
        let local = expression.localVariables
        let isSourceExpression = allowed.count < Self.variables.count
        let what = isSourceExpression ? "a sourceExpression" : "a property mapping"
        let list = Self.list(allowed.map { "$" + $0 })
        var reported = Set<String>()
        var found: [ExpressionError] = []
        expression.forEachSubexpression { e in
            guard case .variable(let name) = e.kind, !allowed.contains(name), !local.contains(name),
                reported.insert(name).inserted
            else { return }
            let message: String
            if isSourceExpression, Self.variables.contains(name) {
                message =
                    "$\(name) has no value in a sourceExpression, which runs once, before there are instances; \(what) can use \(list)"
            } else if let suggestion = Suggestion.closest(to: name, among: allowed) {
                message = "unknown variable $\(name); did you mean $\(suggestion)?"
            } else {
                message = "unknown variable $\(name); \(what) can use \(list)"
            }
            found.append(ExpressionError(.unboundVariable, message, source: text, range: e.range))
        }
        return found
    }

    /// `a, b and c`.
    static func list(_ items: [String]) -> String {
        items.count <= 1 ? items.joined() : items.dropLast().joined(separator: ", ") + " and " + items.last!
    }

    /// FUNCTION selectors that nothing registered, with the nearest registered one.
    func selectorProblems(_ expression: FormatExpression, _ text: String) -> [ExpressionError] {
        var found: [ExpressionError] = []
        expression.forEachSubexpression { e in
            guard case .functionCall(_, let selectorExpression, _) = e.kind,
                let selector = selectorExpression.constantString,
                policies.functions.implementations(of: selector).isEmpty
            else { return }
            let colons = selector.filter { $0 == ":" }.count
            let known = policies.functions.selectors.filter { $0.filter { $0 == ":" }.count == colons }
            let suggestion =
                Suggestion.closest(to: selector, among: known)
                ?? known.first { $0.lowercased().hasPrefix(selector.lowercased()) }
            let hint = suggestion.map { "; did you mean '\($0)'?" } ?? ""
            found.append(
                ExpressionError(
                    .unknownSelector,
                    "unknown selector '\(selector)'\(hint) (FUNCTION calls only registered selectors: docs/functions.md lists them, and policies register more)",
                    source: text, range: selectorExpression.range))
        }
        return found
    }

    /// `$source.a.b` and `$destination.a` must name properties of the entities, through
    /// relationships; the caret goes under the key that is wrong.
    func keyPathProblems(
        _ expression: FormatExpression, _ text: String,
        sourceEntity: EntityDescription?, destinationEntity: EntityDescription?
    ) -> [ExpressionError] {
        var found: [ExpressionError] = []
        expression.forEachSubexpression { e in
            guard case .keyPath(let operand?, let path) = e.kind, case .variable(let name) = operand.kind else {
                return
            }
            let start: (ObjectModel, EntityDescription, String)?
            switch name {
            case "source": start = sourceEntity.map { (source, $0, "the source entity \($0.name)") }
            case "destination": start = destinationEntity.map { (destination, $0, "the destination entity \($0.name)") }
            default: start = nil
            }
            guard let (model, entity, described) = start,
                let (message, keyIndex) = Self.keyPathProblem(
                    path, from: entity, in: model, described: described, prefix: "$\(name).")
            else { return }
            let range = Self.keyRange(keyIndex, of: path, in: text, node: e.range, from: operand.range?.upperBound)
            found.append(ExpressionError(.unknownKey, message, source: text, range: range))
        }
        return found
    }

    /// What is wrong with a key path from `start`, and the index of the wrong key; nil
    /// when every key names a property (of the entity or, past a relationship to an
    /// entity with sub-entities, of one of them).
    static func keyPathProblem(
        _ path: [String], from start: EntityDescription, in model: ObjectModel,
        described: String, prefix: String
    ) -> (message: String, keyIndex: Int)? {
        var entity = start
        for (i, key) in path.enumerated() {
            if key.hasPrefix("@") || key == "self" { return nil }
            let family = model.descendants(of: entity)
            if family.contains(where: { e in model.allAttributes(of: e).contains { $0.name == key } }) { return nil }
            let relationships = family.lazy.compactMap { e in model.allRelationships(of: e).first { $0.name == key } }
            guard let relationship = relationships.first else {
                let names = model.allAttributes(of: entity).map(\.name) + model.allRelationships(of: entity).map(\.name)
                let hint = Suggestion.closest(to: key, among: names).map { "; did you mean '\($0)'?" } ?? ""
                let subject =
                    i == 0
                    ? described
                    : "\(prefix)\(path[..<i].joined(separator: ".")) is \(article(entity.name)), which"
                return ("\(subject) has no attribute or relationship '\(key)'\(hint)", i)
            }
            guard let next = model.entity(named: relationship.destination) else { return nil }
            entity = next
        }
        return nil
    }

    /// The range of key `keyIndex` of a key path whose node covers `node`, found in the
    /// text after `from` (the operand's end); the node's range when it cannot be found.
    static func keyRange(_ keyIndex: Int, of path: [String], in text: String, node: SourceRange?, from: Int?)
        -> SourceRange?
    {
        guard let node else { return nil }
        let bytes = Array(text.utf8)
        var position = from ?? node.lowerBound
        for (i, key) in path.enumerated() {
            let k = Array(key.utf8)
            guard !k.isEmpty,
                let found = (position..<max(position, node.upperBound - k.count + 1)).first(where: { p in
                    p + k.count <= bytes.count && Array(bytes[p..<(p + k.count)]) == k
                })
            else { return node }
            if i == keyIndex { return SourceRange(found, found + k.count) }
            position = found + k.count
        }
        return node
    }

    /// Constant entity mapping names given to the manager's lookups must exist; a
    /// relationship must be filled from a mapping that makes instances of its destination;
    /// and an expression of stage 1 (an attribute mapping, evaluated as its entity mapping
    /// creates instances) can only look up the mappings before its own, which have made theirs.
    func mappingNameProblems(
        _ expression: FormatExpression, _ text: String, relationship: RelationshipDescription?,
        stageOneOf current: Int?
    ) -> [ExpressionError] {
        var found: [ExpressionError] = []
        let names = mapping.entityMappings.map(\.name)
        expression.forEachSubexpression { e in
            guard case .functionCall(_, let selector, let arguments) = e.kind,
                let s = selector.constantString, Self.lookupSelectors.contains(s),
                let first = arguments.first, let name = first.constantString
            else { return }
            guard let named = mapping.entityMapping(named: name) else {
                let hint =
                    Suggestion.closest(to: name, among: names).map { "; did you mean '\($0)'?" }
                    ?? "; the file has \(names.joined(separator: ", "))"
                found.append(
                    ExpressionError(
                        .host, "no entity mapping is named '\(name)'\(hint)", source: text, range: first.range))
                return
            }
            if let current, let looked = mapping.entityMappings.firstIndex(where: { $0.name == name }),
                looked >= current
            {
                let own = mapping.entityMappings[current].name
                let origin = mapping.entityMappings[looked].origin
                let place = origin.map { "entityMappings[\($0.index)] of \($0.file)" } ?? "entityMappings[\(looked)]"
                let when = looked == current ? "is still making its instances" : "runs after '\(own)' (\(place))"
                let files =
                    origin == nil
                    ? ""
                    : "; in a step of several files, the files run in the order mapping-order.json gives (docs/mapping-migrate.md)"
                found.append(
                    ExpressionError(
                        .host,
                        "'\(name)' \(when), so this lookup would find nothing: attribute mappings run as their entity mapping creates its instances, one entity mapping after another; move '\(name)' before '\(own)', or look the objects up in a relationship mapping, which runs once every instance exists\(files)",
                        source: text, range: first.range))
                return
            }
            guard s == Self.lookupSelectors[0], let relationship, let made = named.destinationEntity,
                destination.entity(named: made) != nil,
                !mappingsMaking(relationship.destination).contains(where: { $0.name == name })
            else { return }
            let makers = mappingsMaking(relationship.destination).map { "'\($0.name)'" }
            let hint =
                makers.isEmpty
                ? "no entity mapping of this file makes them"
                : "\(Self.list(makers)) \(makers.count == 1 ? "makes" : "make") them"
            found.append(
                ExpressionError(
                    .type,
                    "'\(name)' makes \(made) instances, but '\(relationship.name)' is a relationship to \(relationship.destination); \(hint)",
                    source: text, range: first.range))
        }
        return found
    }
}
