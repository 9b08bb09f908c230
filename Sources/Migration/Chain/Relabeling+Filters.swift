import ExpressionLanguage
import Foundation
import ObjectGraph

// A step that filters right after the step whose mapping runs (docs/engine.md, "Steps
// that filter"): the pass fetches only the rows both steps' filters select, and gives the
// step before the counts and the checks of the rows the filter leaves behind.
extension Relabeling {
    /// The predicate of `expression`, a source expression of `entity` (a B entity, of
    /// `model`) that fetches some of its instances, where a pass can compose it with the
    /// step before (``composedFilter(of:after:from:in:layout:functions:)``): the standard fetch of
    /// `entity` from the source context, a predicate that reads no variable, and an entity
    /// that stands alone and has no relationships (its objects are then linked to nothing,
    /// so the rows the filter leaves behind change no link and no count of another
    /// entity). Nil for any other.
    static func filter(of expression: String?, _ entity: EntityDescription, in model: ObjectModel) -> String? {
        guard let expression, let parsed = try? FormatExpression(parsing: expression),
            let fetch = MappingCompiler.standardFetch(parsed), fetch.entity == entity.name,
            Self.isTheSourceContext(fetch.context), standsAlone(entity, in: model),
            model.allRelationships(of: entity).allSatisfy(\.isTransient),
            let predicate = try? FormatPredicate(parsing: fetch.predicate), predicate.variableNames.isEmpty
        else { return nil }
        return fetch.predicate
    }

    /// What a pass counts of the step whose mapping runs where the step after it filters:
    /// the objects one of its entity mappings makes, which the pass, fetching only the
    /// rows the filter keeps, does not all make.
    struct MiddleCount {
        /// The entity mapping of the step whose mapping runs.
        let mapping: String
        /// The entity it fetches, of the version the pass starts from.
        let entity: String
        /// Its fetch's predicate, in the same terms; nil where it fetches every instance.
        let filter: String?
    }

    /// What the step's filter of `name` (a B entity) makes of `written`, an entity mapping
    /// of the step before (A → B, with its implicit property mappings) that makes its
    /// objects from `sourceEntity` (of `source`, laid out as `layout`): the source expression that fetches the
    /// rows both filters select, the count of what `written` makes, and the values it
    /// writes (attribute, expression), which the pass must check over every row it
    /// fetches, those the filter then leaves behind included: the step before writes them
    /// all, converting and checking each.
    ///
    /// The filter reads the B attributes as the A attributes `written` copies into them
    /// (the same value, or the same number where the language compares numbers by value:
    /// ``SourceRenamer/Read``), as the expressions that compute them evaluated on the row
    /// (as writing converts them: ``SourceRenamer/onTheEvaluatedObject(_:)``), or as their
    /// default where it writes none. Each B attribute it does not write must pass its
    /// rules with its default, and each it writes must be written as it is read back
    /// (``computes(_:_:with:)``), which the pass's check then finds on every row (unless it
    /// is written without fail whatever the store holds, ``writesWithoutFail(_:_:from:in:)``).
    /// Throws why the filter cannot be composed so.
    func composedFilter(
        of name: String, after written: EntityMapping, from sourceEntity: EntityDescription?, in source: ObjectModel,
        layout: StoreLayout, functions: FunctionRegistry
    ) throws(Refusal) -> (sourceExpression: String, count: MiddleCount, writes: [(AttributeDescription, String)]) {
        let middle = step.source
        let before = "entity mapping \(written.name) of the step before"
        guard let text = filters[name], let predicate = try? FormatPredicate(parsing: text),
            let entity = middle.entity(named: name)
        else { throw Refusal("its filter of \(name) does not parse") }
        guard let sourceEntity, source.subentities(of: sourceEntity).isEmpty,
            let fetched = try? FormatExpression(
                parsing: written.sourceExpression ?? MappingInference.standardFetch(of: sourceEntity.name)),
            let fetch = MappingCompiler.standardFetch(fetched), fetch.entity == sourceEntity.name,
            Self.isTheSourceContext(fetch.context), let older = try? FormatPredicate(parsing: fetch.predicate),
            case .fetch(let request, let context, let countOnly) = fetched.kind,
            case .functionCall(let target, let selector, var arguments) = request.kind
        else {
            throw Refusal(
                "it filters \(name), which \(before) makes otherwise than by fetching an entity without sub-entities")
        }
        var writes: [(AttributeDescription, String)] = []
        var defaults: [String: Value] = [:], reads: [String: SourceRenamer.Read] = [:]
        var computed: [String: FormatExpression] = [:]
        let read = Set(Self.keysRead(by: predicate))
        for attribute in middle.allAttributes(of: entity) where !attribute.isTransient {
            guard let expression = written.propertyMapping(named: attribute.name)?.valueExpression else {
                // (Unwritten, every row holds the default: the step before fails on each
                // row where that breaks a rule, the pass only on those the filter keeps.)
                guard Self.defaultPassesItsRules(attribute), attribute.derivationExpression == nil else {
                    throw Refusal(
                        "it filters \(name), whose \(attribute.name) \(before) leaves to a default that may break a rule"
                    )
                }
                if read.contains(attribute.name) {
                    guard Self.readsAsItsDefault(attribute) else {
                        throw Refusal(
                            "its filter reads \(name).\(attribute.name), whose default it cannot read as a constant")
                    }
                    defaults[attribute.name] = attribute.defaultValue ?? .null
                }
                continue
            }
            // (What it writes without fail whatever the store holds needs no check.)
            let withoutFail = Self.writesWithoutFail(attribute, expression, from: sourceEntity, in: source)
            if withoutFail && !read.contains(attribute.name) { continue }
            var translator = Self.translator(of: sourceEntity, in: layout, functions: functions)
            guard let computation = Self.computes(expression, attribute, with: &translator) else {
                throw Refusal(
                    "it filters \(name), whose \(attribute.name) \(before) writes as \(expression), which SQL cannot check on the rows the filter leaves behind"
                )
            }
            if !withoutFail { writes.append((attribute, expression)) }
            guard read.contains(attribute.name), let parsed = try? FormatExpression(parsing: expression) else {
                continue
            }
            if let copied = EntityMappingRunner.copiedAttribute(parsed),
                let attributeRead = source.allAttributes(of: sourceEntity).first(where: {
                    $0.name == copied && !$0.isTransient
                }),
                let value = SourceRenamer.Read(copied, attributeRead.type, convertedBy: computation.readBack)
            {
                reads[attribute.name] = value
            } else {
                // (Read on the row as its expression, as it is written.)
                computed[attribute.name] = Self.converted(parsed, by: computation.readBack)
            }
        }
        let renamer = SourceRenamer(
            model: middle, entities: [name: sourceEntity.name], properties: [:], defaults: [name: defaults],
            computed: [name: computed], readInPredicates: [name: reads])
        guard let renamed = renamer.rename(predicate, SourceRenamer.Scope(evaluated: name)) else {
            throw Refusal(
                "its filter of \(name), \(text), reads more of the attributes \(before) writes than their values")
        }
        let fetchesAll = if case .constant(true) = older.kind { true } else { false }
        let both = fetchesAll ? renamed : FormatPredicate(.and([older, renamed]))
        arguments[1] = FormatExpression(.constant(.string(both.description)))
        let composed = FormatExpression(
            .fetch(
                request: FormatExpression(.functionCall(target: target, selector: selector, arguments: arguments)),
                context: context, countOnly: countOnly))
        return (
            composed.description,
            MiddleCount(mapping: written.name, entity: sourceEntity.name, filter: fetchesAll ? nil : older.description),
            writes
        )
    }

    /// The keys a predicate reads of the object it is evaluated on: the first of each key
    /// path from it.
    private static func keysRead(by predicate: FormatPredicate) -> Set<String> {
        var keys: Set<String> = []
        predicate.forEachSubexpression { e in
            if case .keyPath(nil, let path) = e.kind, let first = path.first { keys.insert(first) }
        }
        return keys
    }

    /// Whether `mapping` (the step before, A → B) reads nothing of what its entity
    /// mappings `filtered` make, which the pass makes fewer of: every use of `$manager` in
    /// its expressions fetches from the source context, or looks up the targets of a
    /// source relationship, or what an entity mapping not in `filtered`, named by a
    /// constant, makes.
    static func readsNothingMadeBy(_ filtered: Set<String>, in mapping: MappingModel) -> Bool {
        var uses = 0, allowed = 0
        for entityMapping in mapping.entityMappings {
            let texts =
                [entityMapping.sourceExpression]
                + (entityMapping.attributeMappings + entityMapping.relationshipMappings).map(\.valueExpression)
            for text in texts.compactMap({ $0 }) {
                guard let parsed = try? FormatExpression(parsing: text) else { return false }
                parsed.forEachSubexpression { e in
                    switch e.kind {
                    case .variable("manager"): uses += 1
                    case .keyPath(let manager?, ["sourceContext"]):
                        if case .variable("manager") = manager.kind { allowed += 1 }
                    case .functionCall(let manager, let selector, let arguments):
                        guard case .variable("manager") = manager.kind, let name = selector.constantString else {
                            break
                        }
                        if [
                            MappingCompiler.fetchSelector, MappingCompiler.fetchWithSubentitiesSelector,
                            MappingInference.relationshipLookup
                        ].contains(name) || (name == "sourceContext" && arguments.isEmpty) {
                            allowed += 1
                        } else if MappingCompiler.lookupSelectors.contains(name),
                            let looked = arguments.first?.constantString, !filtered.contains(looked)
                        {
                            allowed += 1
                        }
                    default: break
                    }
                }
            }
        }
        return uses == allowed
    }

    /// `counts`, of the source of the relabelings `earlier` (in order), as a pass that
    /// starts before them reads them: each entity and filter renamed back through them;
    /// nil where a filter cannot be (``SourceRenamer``).
    static func readBack(_ counts: [MiddleCount], through earlier: ArraySlice<Relabeling>) -> [MiddleCount]? {
        guard !earlier.isEmpty else { return counts }
        let renamers = earlier.map { try? $0.renamerBefore() }
        var result: [MiddleCount] = []
        for count in counts {
            var entity = count.entity
            var filter = count.filter.flatMap { try? FormatPredicate(parsing: $0) }
            guard count.filter == nil || filter != nil else { return nil }
            for (relabeling, renamer) in zip(earlier, renamers).reversed() {
                guard let renamer, let older = relabeling.namesBefore.entities[entity] else { return nil }
                if let predicate = filter {
                    guard let renamed = renamer.rename(predicate, SourceRenamer.Scope(evaluated: entity)) else {
                        return nil
                    }
                    filter = renamed
                }
                entity = older
            }
            result.append(MiddleCount(mapping: count.mapping, entity: entity, filter: filter?.description))
        }
        return result
    }

    /// The objects each of `counts` makes from `store` (at the version a pass starts from),
    /// by entity mapping: the rows of its entity its filter accepts, as SQL says it
    /// (``StoreLayout/rowConditions(of:on:storeIsWellTyped:schema:)``); nil where SQL
    /// cannot tell on some row whether the filter accepts it.
    static func count(_ counts: [MiddleCount], in store: Store) throws -> [String: Int]? {
        var result: [String: Int] = [:]
        if !counts.isEmpty { try store.database.registerValueFunctions() }
        for count in counts {
            guard let rows = store.layout.entities[count.entity] else { return nil }
            let table = "FROM \(rows.table) AS t0 WHERE t0.Z_ENT = \(rows.number)"
            guard let text = count.filter else {
                let statement = try store.database.prepare("SELECT count(*) \(table)")
                result[count.mapping, default: 0] += try statement.step() ? Int(statement.int64(at: 0)) : 0
                continue
            }
            guard let predicate = try? FormatPredicate(parsing: text),
                let conditions = store.layout.rowConditions(of: predicate, on: count.entity)
            else { return nil }
            // The rows whose accepting condition holds, and of those the ones whose
            // rejecting condition holds too: rows SQL cannot tell. One scan, its WHERE
            // cut short on the rows it rejects (a NULL holds as false there, and in CASE).
            let statement = try store.database.prepare(
                "SELECT count(*), coalesce(sum(CASE WHEN (\(conditions.whenFalse)) THEN 1 ELSE 0 END), 0) \(table) "
                    + "AND (\(conditions.whenTrue))")
            try statement.bind(upTo: conditions.parameters)
            guard try statement.step() else { return nil }
            let (accepted, untold) = (Int(statement.int64(at: 0)), Int(statement.int64(at: 1)))
            guard untold == 0 else { return nil }
            result[count.mapping, default: 0] += accepted
        }
        return result
    }
}
