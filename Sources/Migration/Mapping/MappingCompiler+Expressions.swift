import ExpressionLanguage
import ObjectGraph

// The checks of a mapping's expressions against the models: variables, FUNCTION
// selectors, key paths through relationships, the entity mappings that lookups name.
extension MappingCompiler {
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
