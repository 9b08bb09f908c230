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

/// One property mapping with its compiled expression.
struct PreparedProperty {
    let mapping: PropertyMapping
    let path: String
    let expression: CompiledExpression
    let relationship: RelationshipDescription?
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
struct MappingCompiler {
    let mapping: MappingModel
    let source: ObjectModel
    let destination: ObjectModel
    let policies: PolicyRegistry
    private(set) var errors: [MappingError] = []

    /// The variables a mapping binds.
    static let variables = ["manager", "source", "destination", "entityMapping", "propertyMapping", "entityPolicy"]
    static let fetchSelector = "fetchRequestForSourceEntityNamed:predicateString:"

    init(_ mapping: MappingModel, source: ObjectModel, destination: ObjectModel, policies: PolicyRegistry) {
        self.mapping = mapping
        self.source = source
        self.destination = destination
        self.policies = policies
    }

    private mutating func fail(_ path: String, _ message: String) {
        errors.append(MappingError(file: mapping.file, path: path, message: message))
    }

    private mutating func fail(_ path: String, _ error: ExpressionError) {
        errors.append(MappingError(file: mapping.file, path: path, expressionError: error))
    }

    mutating func prepare() -> PreparedMapping {
        if mapping.sourceModel != source.version {
            fail("sourceModel", "the mapping starts from '\(mapping.sourceModel)', but the source model is '\(source.version)'")
        }
        if mapping.destinationModel != destination.version {
            fail("destinationModel", "the mapping leads to '\(mapping.destinationModel)', but the destination model is '\(destination.version)'")
        }
        var prepared: [PreparedEntityMapping] = []
        for (index, entityMapping) in mapping.entityMappings.enumerated() {
            if let p = prepare(entityMapping, index) { prepared.append(p) }
        }
        return PreparedMapping(mapping: mapping, entityMappings: prepared)
    }

    private mutating func entity(_ name: String?, in model: ObjectModel, _ path: String, _ side: String) -> EntityDescription? {
        guard let name else { return nil }
        if let entity = model.entity(named: name) { return entity }
        let hint = Suggestion.closest(to: name, among: model.entities.map(\.name)).map { "; did you mean '\($0)'?" }
            ?? "; it has \(model.entities.map(\.name).joined(separator: ", "))"
        fail(path, "the \(side) model \(model.version) has no entity '\(name)'\(hint)")
        return nil
    }

    private mutating func prepare(_ original: EntityMapping, _ index: Int) -> PreparedEntityMapping? {
        let path = MappingPath.entityMapping(index, original.name)
        let errorsBefore = errors.count
        let sourceEntity = entity(original.sourceEntity, in: source, "\(path) .sourceEntity", "source")
        let destinationEntity = entity(original.destinationEntity, in: destination, "\(path) .destinationEntity", "destination")
        if let d = destinationEntity, d.isAbstract {
            fail("\(path) .destinationEntity", "'\(d.name)' is abstract and cannot have instances; map to one of its sub-entities")
        }
        if let policy = original.policy, !policies.contains(policy) {
            let known = policies.names
            let hint = Suggestion.closest(to: policy, among: known).map { "; did you mean '\($0)'?" }
                ?? (known.isEmpty ? "; no policies are registered (register it with PolicyRegistry.register)" : "; registered: \(known.joined(separator: ", "))")
            fail("\(path) .policy", "no policy named '\(policy)' is registered\(hint)")
        }
        if (original.sourceEntity != nil && sourceEntity == nil) || (original.destinationEntity != nil && destinationEntity == nil) {
            return nil
        }
        let mapping = withImplicitMappings(original, sourceEntity, destinationEntity)
        let compiler = ExpressionCompiler(functions: policies.functions, layout: VariableLayout(Self.variables))
        var attributes: [PreparedProperty] = []
        var relationships: [PreparedProperty] = []
        let destinationAttributes = destinationEntity.map { destination.allAttributes(of: $0) } ?? []
        let destinationRelationships = destinationEntity.map { destination.allRelationships(of: $0) } ?? []
        for property in mapping.attributeMappings {
            let place = MappingPath.property(index, mapping.name, "attributeMappings", property.name)
            guard let destinationEntity else {
                fail(place, "the mapping has no destinationEntity, so it has no attributes to map")
                continue
            }
            guard let attribute = destinationAttributes.first(where: { $0.name == property.name }) else {
                if destinationRelationships.contains(where: { $0.name == property.name }) {
                    fail(place, "'\(property.name)' is a relationship of \(destinationEntity.name); map it under relationshipMappings")
                } else {
                    fail(place, "\(destinationEntity.name) has no attribute '\(property.name)'" + hint(property.name, destinationAttributes.map(\.name)))
                }
                continue
            }
            guard let text = property.valueExpression else { continue }
            guard let compiled = compileProperty(text, place, compiler, sourceEntity, destinationEntity) else { continue }
            if let kind = StaticKind.of(compiled.expression, source: source, sourceEntity: sourceEntity),
                let problem = kind.misfit(attribute)
            {
                fail(place, ExpressionError(.type, problem, source: text, range: compiled.expression.range))
            }
            attributes.append(PreparedProperty(mapping: property, path: place, expression: compiled, relationship: nil))
        }
        for property in mapping.relationshipMappings {
            let place = MappingPath.property(index, mapping.name, "relationshipMappings", property.name)
            guard let destinationEntity else {
                fail(place, "the mapping has no destinationEntity, so it has no relationships to map")
                continue
            }
            guard let relationship = destinationRelationships.first(where: { $0.name == property.name }) else {
                if destinationAttributes.contains(where: { $0.name == property.name }) {
                    fail(place, "'\(property.name)' is an attribute of \(destinationEntity.name); map it under attributeMappings")
                } else {
                    fail(place, "\(destinationEntity.name) has no relationship '\(property.name)'" + hint(property.name, destinationRelationships.map(\.name)))
                }
                continue
            }
            guard let text = property.valueExpression else { continue }
            guard let compiled = compileProperty(text, place, compiler, sourceEntity, destinationEntity) else { continue }
            if let kind = StaticKind.of(compiled.expression, source: source, sourceEntity: sourceEntity), kind.isScalar {
                fail(place, ExpressionError(.type, "the expression gives \(kind.name), but '\(relationship.name)' is a relationship to \(relationship.destination); it needs objects (see destinationInstancesForEntityMappingNamed:sourceInstances:)",
                                            source: text, range: compiled.expression.range))
            }
            checkMappingNames(compiled.expression, text, place)
            relationships.append(PreparedProperty(mapping: property, path: place, expression: compiled, relationship: relationship))
        }
        if let destinationEntity, original.policy == nil, mapping.type != .custom {
            for attribute in destinationAttributes where !attribute.isOptional && !attribute.isTransient && attribute.defaultValue == nil {
                if mapping.attributeMappings.first(where: { $0.name == attribute.name })?.valueExpression == nil {
                    fail("\(path) .attributeMappings",
                         "\(destinationEntity.name).\(attribute.name) is required and has no default, but nothing maps it; add an attribute mapping for '\(attribute.name)' or a default value in the model")
                }
            }
        }
        let plan = sourcePlan(mapping, path, compiler, sourceEntity)
        guard errors.count == errorsBefore else { return nil }
        return PreparedEntityMapping(index: index, mapping: mapping, path: path, sourceEntity: sourceEntity,
                                     destinationEntity: destinationEntity, layout: compiler.layout,
                                     attributes: attributes, relationships: relationships, source: plan)
    }

    private func hint(_ name: String, _ candidates: [String]) -> String {
        if let s = Suggestion.closest(to: name, among: candidates) { return "; did you mean '\(s)'?" }
        return candidates.isEmpty ? "" : "; it has \(candidates.joined(separator: ", "))"
    }

    /// Copy and transform mappings copy same-named attributes and re-link same-named
    /// relationships that exactly one entity mapping maps, unless the file says otherwise.
    private func withImplicitMappings(_ original: EntityMapping, _ sourceEntity: EntityDescription?, _ destinationEntity: EntityDescription?) -> EntityMapping {
        guard original.type == .copy || original.type == .transform, let sourceEntity, let destinationEntity else { return original }
        var mapping = original
        let sourceAttributes = Set(source.allAttributes(of: sourceEntity).filter { !$0.isTransient }.map(\.name))
        for attribute in destination.allAttributes(of: destinationEntity) where !attribute.isTransient {
            guard original.propertyMapping(named: attribute.name) == nil, sourceAttributes.contains(attribute.name) else { continue }
            mapping.attributeMappings.append(PropertyMapping(name: attribute.name, valueExpression: "$source.\(attribute.name)", isImplicit: true))
        }
        let sourceRelationships = source.allRelationships(of: sourceEntity)
        for relationship in destination.allRelationships(of: destinationEntity) where !relationship.isTransient {
            guard original.propertyMapping(named: relationship.name) == nil,
                let sourceRelationship = sourceRelationships.first(where: { $0.name == relationship.name })
            else { continue }
            let candidates = self.mapping.entityMappings.filter {
                $0.sourceEntity == sourceRelationship.destination && $0.destinationEntity == relationship.destination && $0.type != .remove
            }
            guard candidates.count == 1 else { continue }
            let expression = "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\(candidates[0].name)\", $source.\(relationship.name))"
            mapping.relationshipMappings.append(PropertyMapping(name: relationship.name, valueExpression: expression, isImplicit: true))
        }
        return mapping
    }

    private mutating func compileProperty(_ text: String, _ place: String, _ compiler: ExpressionCompiler,
                                          _ sourceEntity: EntityDescription?, _ destinationEntity: EntityDescription) -> CompiledExpression? {
        let compiled: CompiledExpression
        do {
            compiled = try compiler.compileExpression(text)
        } catch {
            fail(place, error)
            return nil
        }
        checkVariables(compiled.expression, text, place, allowed: Set(Self.variables))
        checkKeyPaths(compiled.expression, text, place, sourceEntity: sourceEntity, destinationEntity: destinationEntity)
        return compiled
    }

    private mutating func checkVariables(_ expression: FormatExpression, _ text: String, _ place: String, allowed: Set<String>) {
        let local = ExpressionWalk.localVariables(expression)
        var reported = Set<String>()
        ExpressionWalk.visit(expression) { e in
            guard case .variable(let name) = e.kind, !allowed.contains(name), !local.contains(name), reported.insert(name).inserted else { return }
            let bound = allowed.sorted().map { "$" + $0 }.joined(separator: ", ")
            let hint = Suggestion.closest(to: name, among: allowed).map { "did you mean $\($0)? " } ?? ""
            errors.append(MappingError(file: mapping.file, path: place, expressionError: ExpressionError(
                .unboundVariable, "$\(name) is not bound here; \(hint)this expression can use \(bound)", source: text, range: e.range)))
        }
    }

    /// `$source.a.b` and `$destination.a` must name properties of the entities, through
    /// relationships.
    private mutating func checkKeyPaths(_ expression: FormatExpression, _ text: String, _ place: String,
                                        sourceEntity: EntityDescription?, destinationEntity: EntityDescription?) {
        var found: [ExpressionError] = []
        ExpressionWalk.visit(expression) { e in
            guard case .keyPath(let operand?, let path) = e.kind, case .variable(let name) = operand.kind else { return }
            let start: (ObjectModel, EntityDescription)?
            switch name {
            case "source": start = sourceEntity.map { (source, $0) }
            case "destination": start = destinationEntity.map { (destination, $0) }
            default: start = nil
            }
            guard let (model, entity) = start else { return }
            if let problem = Self.keyPathProblem(path, from: entity, in: model) {
                found.append(ExpressionError(.unknownKey, problem, source: text, range: e.range))
            }
        }
        for error in found { fail(place, error) }
    }

    static func keyPathProblem(_ path: [String], from start: EntityDescription, in model: ObjectModel) -> String? {
        var entity = start
        for key in path {
            if key.hasPrefix("@") || key == "self" { return nil }
            if model.allAttributes(of: entity).contains(where: { $0.name == key }) { return nil }
            guard let relationship = model.allRelationships(of: entity).first(where: { $0.name == key }) else {
                let names = model.allAttributes(of: entity).map(\.name) + model.allRelationships(of: entity).map(\.name)
                let hint = Suggestion.closest(to: key, among: names).map { "; did you mean '\($0)'?" } ?? ""
                return "\(entity.name) has no attribute or relationship '\(key)'\(hint)"
            }
            guard let next = model.entity(named: relationship.destination) else { return nil }
            entity = next
        }
        return nil
    }

    /// Constant entity mapping names given to the manager's lookups must exist.
    private mutating func checkMappingNames(_ expression: FormatExpression, _ text: String, _ place: String) {
        var found: [ExpressionError] = []
        let names = mapping.entityMappings.map(\.name)
        ExpressionWalk.visit(expression) { e in
            guard case .functionCall(_, let selector, let arguments) = e.kind,
                let s = ExpressionWalk.constantString(selector),
                s == "destinationInstancesForEntityMappingNamed:sourceInstances:" || s == "sourceInstancesForEntityMappingNamed:destinationInstances:",
                let first = arguments.first, let name = ExpressionWalk.constantString(first), !names.contains(name)
            else { return }
            let hint = Suggestion.closest(to: name, among: names).map { "; did you mean '\($0)'?" } ?? "; the file has \(names.joined(separator: ", "))"
            found.append(ExpressionError(.host, "no entity mapping is named '\(name)'\(hint)", source: text, range: first.range))
        }
        for error in found { fail(place, error) }
    }

    private mutating func sourcePlan(_ mapping: EntityMapping, _ path: String, _ compiler: ExpressionCompiler, _ sourceEntity: EntityDescription?) -> SourcePlan {
        let place = "\(path) .sourceExpression"
        guard let text = mapping.sourceExpression else {
            guard let sourceEntity, mapping.type != .add, mapping.type != .remove else { return .none }
            var request = FetchRequest(entityName: sourceEntity.name)
            request.includesSubentities = false
            return .fetch(request)
        }
        let compiled: CompiledExpression
        do {
            compiled = try compiler.compileExpression(text)
        } catch {
            fail(place, error)
            return .none
        }
        checkVariables(compiled.expression, text, place, allowed: ["manager", "entityMapping", "entityPolicy"])
        // The standard form streams: FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "E", "P"), …, NO).
        guard case .fetch(let request, _, let countOnly) = compiled.expression.kind,
            case .constant(let countValue) = countOnly.kind, countValue == .bool(false) || countValue == .integer(0),
            case .functionCall(let target, let selector, let arguments) = request.kind,
            case .variable("manager") = target.kind,
            ExpressionWalk.constantString(selector) == Self.fetchSelector, arguments.count == 2,
            let entityName = ExpressionWalk.constantString(arguments[0]),
            let predicateText = ExpressionWalk.constantString(arguments[1])
        else {
            return .expression(compiled)
        }
        guard source.entity(named: entityName) != nil else {
            let hint = Suggestion.closest(to: entityName, among: source.entities.map(\.name)).map { "; did you mean '\($0)'?" } ?? ""
            fail(place, ExpressionError(.host, "the source model \(source.version) has no entity '\(entityName)'\(hint)", source: text, range: arguments[0].range))
            return .none
        }
        var fetch = FetchRequest(entityName: entityName)
        fetch.includesSubentities = false
        do {
            fetch.predicate = try FormatPredicate(parsing: predicateText)
            fetch.predicateSource = predicateText
        } catch {
            // Place the predicate's error inside the string literal of the expression.
            var located = error
            located.source = text
            if let literal = arguments[1].range {
                let inner = error.range.map { SourceRange(literal.lowerBound + 1 + $0.lowerBound, literal.lowerBound + 1 + $0.upperBound) }
                located.range = inner ?? literal
            }
            fail(place, located)
            return .none
        }
        if let predicate = fetch.predicate, let entity = source.entity(named: entityName) {
            var found: [ExpressionError] = []
            ExpressionWalk.visit(predicate) { e in
                guard case .keyPath(nil, let path) = e.kind, let problem = Self.keyPathProblem(path, from: entity, in: source) else { return }
                let range = arguments[1].range.flatMap { literal in
                    e.range.map { SourceRange(literal.lowerBound + 1 + $0.lowerBound, literal.lowerBound + 1 + $0.upperBound) }
                }
                found.append(ExpressionError(.unknownKey, problem, source: text, range: range))
            }
            for error in found { fail(place, error) }
        }
        return .fetch(fetch)
    }
}

/// What an expression is known to give before it runs, where that is knowable.
enum StaticKind: Equatable {
    case number, string, bool, date, data, null, object, collection

    var name: String {
        switch self {
        case .number: "a number"
        case .string: "a string"
        case .bool: "a boolean"
        case .date: "a date"
        case .data: "data"
        case .null: "nil"
        case .object: "an object"
        case .collection: "a collection"
        }
    }

    var isScalar: Bool { [.number, .string, .bool, .date, .data].contains(self) }

    static func of(_ expression: FormatExpression, source: ObjectModel, sourceEntity: EntityDescription?) -> StaticKind? {
        switch expression.kind {
        case .constant(let value):
            switch value {
            case .null: return .null
            case .bool: return .bool
            case .integer, .double, .decimal: return .number
            case .string: return .string
            case .date: return .date
            case .data: return .data
            case .array, .set, .dictionary: return .collection
            case .object: return .object
            }
        case .arithmetic(_, let a, let b):
            let ka = of(a, source: source, sourceEntity: sourceEntity), kb = of(b, source: source, sourceEntity: sourceEntity)
            return ka == .number && kb == .number ? .number : nil
        case .negate(let a):
            return of(a, source: source, sourceEntity: sourceEntity) == .number ? .number : nil
        case .keyPath(let operand?, let path):
            guard case .variable("source") = operand.kind, var entity = sourceEntity else { return nil }
            var kind: StaticKind? = nil
            for (i, key) in path.enumerated() {
                if key.hasPrefix("@") { return key == "@count" && i == path.count - 1 ? .number : nil }
                if let attribute = source.allAttributes(of: entity).first(where: { $0.name == key }) {
                    guard i == path.count - 1 else { return nil }
                    return attribute.type.staticKind
                }
                guard let relationship = source.allRelationships(of: entity).first(where: { $0.name == key }),
                    let next = source.entity(named: relationship.destination)
                else { return nil }
                if relationship.isToMany { return i == path.count - 1 ? .collection : nil }
                kind = .object
                entity = next
            }
            return kind
        default:
            return nil
        }
    }

    /// Why a value of this kind cannot go into `attribute`; nil when it can.
    func misfit(_ attribute: AttributeDescription) -> String? {
        let accepted: [StaticKind]
        switch attribute.type {
        case .int16, .int32, .int64, .decimal, .double, .float: accepted = [.number, .bool]
        case .boolean: accepted = [.bool, .number]
        case .string, .uri, .uuid: accepted = [.string]
        case .date: accepted = [.date]
        case .binary, .transformable: accepted = [.data]
        }
        if self == .null || accepted.contains(self) { return nil }
        return "the expression gives \(name), but '\(attribute.name)' is a \(attribute.type.rawValue) attribute"
    }
}

extension AttributeType {
    var staticKind: StaticKind {
        switch self {
        case .int16, .int32, .int64, .decimal, .double, .float: .number
        case .boolean: .bool
        case .string, .uri, .uuid: .string
        case .date: .date
        case .binary, .transformable: .data
        }
    }
}
