import ExpressionLanguage
import ObjectGraph

// Source expressions: the FETCH a mapping reads its rows with, narrowed by SQL where the
// filter predicate allows, and the literals' offsets that errors point into.
extension MappingCompiler {
    mutating func sourcePlan(
        _ mapping: EntityMapping, _ path: String, _ compiler: ExpressionCompiler, _ sourceEntity: EntityDescription?
    ) -> SourcePlan {
        let place = "\(path) .sourceExpression"
        // Add and remove mappings have no source instances (the file reader says so of a
        // sourceExpression they are given).
        guard mapping.type != .add, mapping.type != .remove else { return .none }
        guard let text = mapping.sourceExpression else {
            guard let sourceEntity else { return .none }
            var request = FetchRequest(entityName: sourceEntity.name)
            request.includesSubentities = false
            return .fetch(request)
        }
        if text.allSatisfy(\.isWhitespace) {
            fail(
                place, "the sourceExpression is empty; leave it out to fetch every instance of the source entity",
                kind: .expression)
            return .none
        }
        let parsed: FormatExpression
        do {
            parsed = try FormatExpression(parsing: text)
        } catch {
            fail(place, error)
            return .none
        }
        var found = variableProblems(parsed, text, allowed: Self.sourceExpressionVariables)
        found += selectorProblems(parsed, text)
        let compiled: CompiledExpression
        do {
            compiled = try compiler.compile(parsed, source: text)
        } catch {
            if !found.contains(where: { $0.range == error.range }) { found.append(error) }
            report(found, at: place)
            return .none
        }
        // The standard form streams.
        guard let standard = Self.standardFetch(parsed) else {
            report(found, at: place)
            return found.isEmpty ? .expression(compiled) : .none
        }
        let (entityName, predicateText, includesSubentities) =
            (standard.entity, standard.predicate, standard.includesSubentities)
        guard let entity = source.entity(named: entityName) else {
            let hint =
                Suggestion.closest(to: entityName, among: source.entities.map(\.name)).map { "; did you mean '\($0)'?" }
                ?? ""
            found.append(
                ExpressionError(
                    .host, "the source model \(source.version) has no entity '\(entityName)'\(hint)", source: text,
                    range: standard.entityLiteral.range))
            report(found, at: place)
            return .none
        }
        if let sourceEntity, entity.name != sourceEntity.name,
            !source.ancestors(of: entity).contains(where: { $0.name == sourceEntity.name })
        {
            found.append(
                ExpressionError(
                    .type,
                    "the mapping's sourceEntity is \(sourceEntity.name), but this fetches \(entityName) instances; fetch \(sourceEntity.name) (or one of its sub-entities), or change the sourceEntity",
                    source: text, range: standard.entityLiteral.range))
        } else if entity.isAbstract, !includesSubentities {
            found.append(
                ExpressionError(
                    .type,
                    "'\(entityName)' is abstract, and this fetch leaves out sub-entities, so it would find no instances; map each sub-entity (\(Self.concreteNames(below: entity, in: source))) with a mapping of its own",
                    source: text, range: standard.entityLiteral.range))
        }
        var fetch = FetchRequest(entityName: entityName)
        fetch.includesSubentities = includesSubentities
        // Places in the predicate are places inside its string literal in the expression.
        let literal = standard.predicateLiteral.range
        let offsets = literal.flatMap { FormatParser.valueOffsets(ofStringAt: $0, in: text) }
        func inExpression(_ range: SourceRange?) -> SourceRange? {
            guard let literal, let offsets else { return nil }
            guard let range else { return literal }
            func map(_ offset: Int) -> Int { offsets[max(0, min(offset, offsets.count - 1))] }
            return SourceRange(map(range.lowerBound), map(range.upperBound))
        }
        func located(_ error: ExpressionError) -> ExpressionError {
            var located = error
            located.message = "in the fetch predicate: " + error.message
            located.source = text
            located.range = inExpression(error.range)
            located.related = error.related.flatMap(inExpression)
            return located
        }
        do {
            let predicate = try FormatPredicate(parsing: predicateText)
            fetch.predicate = predicate
            fetch.predicateSource = predicateText
            predicate.forEachSubexpression { e in
                guard case .keyPath(nil, let keys) = e.kind,
                    let (message, keyIndex) = Self.keyPathProblem(
                        keys, from: entity, in: source, described: "the fetched entity \(entity.name)", prefix: "")
                else { return }
                let range = Self.keyRange(keyIndex, of: keys, in: predicateText, node: e.range, from: nil)
                found.append(ExpressionError(.unknownKey, message, source: text, range: inExpression(range)))
            }
            do {
                _ = try compiler.compile(predicate, source: predicateText)
            } catch {
                found.append(located(error))
            }
        } catch {
            found.append(located(error))
        }
        report(found, at: place)
        return found.isEmpty ? .fetch(fetch) : .none
    }

    /// A source expression in the standard form, which streams:
    /// `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "E",
    /// "P"), context, NO)`, or its variant with a constant `includesSubentities:` argument.
    struct StandardFetch {
        let entity: String
        let predicate: String
        let includesSubentities: Bool
        /// The entity's and the predicate's literals, whose places errors name.
        let entityLiteral: FormatExpression
        let predicateLiteral: FormatExpression
        /// The context it fetches from (`$manager.sourceContext`).
        let context: FormatExpression
    }

    /// `expression` in the standard form; nil for any other.
    static func standardFetch(_ expression: FormatExpression) -> StandardFetch? {
        guard case .fetch(let request, let context, let countOnly) = expression.kind,
            constantFlag(countOnly) == false,
            case .functionCall(let target, let selector, let arguments) = request.kind,
            case .variable("manager") = target.kind,
            let selectorName = selector.constantString,
            (selectorName == fetchSelector && arguments.count == 2)
                || (selectorName == fetchWithSubentitiesSelector && arguments.count == 3),
            let entity = arguments[0].constantString,
            let predicate = arguments[1].constantString,
            let includesSubentities = arguments.count == 2 ? false : constantFlag(arguments[2])
        else { return nil }
        return StandardFetch(
            entity: entity, predicate: predicate, includesSubentities: includesSubentities,
            entityLiteral: arguments[0], predicateLiteral: arguments[1], context: context)
    }

    /// The truth of a constant boolean (`YES`, `NO`) or number (`1`, `0`).
    static func constantFlag(_ expression: FormatExpression) -> Bool? {
        guard case .constant(let value) = expression.kind else { return nil }
        switch value {
        case .bool(let b): return b
        case .integer(let i): return i != 0
        default: return nil
        }
    }
}
