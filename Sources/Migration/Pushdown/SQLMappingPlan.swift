import ExpressionLanguage
import ObjectGraph

/// How the engine runs an entity mapping's two stages: as SQL over the attached source
/// (docs/pushdown.md), or interpreted, with the reason.
public struct MappingExecution: Sendable, Hashable, CustomStringConvertible {
    /// Stage 1 (the instances and their attributes) as one `INSERT … SELECT` per chunk.
    public var instancesAsSQL: Bool
    /// Why stage 1 is interpreted, when it is.
    public var instancesReason: String?
    /// Stage 2 (the relationships) as one `UPDATE … FROM` per relationship mapping.
    public var relationshipsAsSQL: Bool
    /// Why stage 2 is interpreted, when it is.
    public var relationshipsReason: String?
    /// What SQL checks of the source rows first (the interpreter runs the mapping when a
    /// row fails one): `quantity integer`, `quantity in range`, `no nil in '*'`.
    public var checks: [String] = []
    /// The source attributes SQL reads as they are, on the rows where each holds what its
    /// type writes, tested in one call a row; the other rows are read as the interpreter
    /// reads them, and meet ``checks`` (docs/pushdown.md, "Rows checked once").
    public var readAsTheyAre: [String] = []
    /// Why the mapping cannot run at all (a problem `check` reports), for a plan.
    public var problem: String?
    /// What SQL asks the interpreter for, row by row: attribute mappings by name, and
    /// `the source predicate`.
    public var evaluated: [String] = []
    /// Attribute mappings SQL computes except on the rows where it cannot decide a
    /// TERNARY's condition (text that is not plain ASCII, a value stored with another
    /// type), which the interpreter evaluates.
    public var evaluatedWhereUndecided: [String] = []
    /// Of those two lists, what the interpreter evaluates on the source object itself,
    /// read from the source store for each row (it reads relationships, or `$source`
    /// whole), where the others read the row's attributes.
    public var evaluatedOnObjects: [String] = []
    /// After a run: how many times SQL asked the interpreter for a value (one per
    /// evaluated attribute mapping and row; a TERNARY SQL decides asks only for the rows
    /// it cannot decide).
    public var evaluations = 0
    /// After a run: how many chunks of stage 1 as SQL were written without checking their
    /// rows as they were written, because the check made ahead of them on another thread
    /// had (docs/pushdown.md, "Checked ahead").
    public var chunksCheckedAhead = 0
    /// Whether stage 1, interpreted, sets the relationships as it makes each instance, and
    /// stage 2 has nothing to do (docs/engine.md, "Relationships with the instances").
    public var relationshipsWithInstances = false
    /// After a run whose stage 1 was interpreted: how (`row copy`, `rows` or `objects`),
    /// and why not faster (docs/engine.md, "How stage 1 runs").
    public var interpretedAs: String?

    public init(
        instancesAsSQL: Bool, instancesReason: String? = nil, relationshipsAsSQL: Bool,
        relationshipsReason: String? = nil, checks: [String] = []
    ) {
        self.instancesAsSQL = instancesAsSQL
        self.instancesReason = instancesReason
        self.relationshipsAsSQL = relationshipsAsSQL
        self.relationshipsReason = relationshipsReason
        self.checks = checks
    }

    /// `SQL`, `SQL, relationships interpreted: …`, `interpreted: …` (`…; relationships as
    /// SQL` when only stage 1 is, `…; relationships set with the instances`) or `does not
    /// check: …`.
    public var description: String {
        if let problem { return "does not check: \(problem)" }
        guard instancesAsSQL else {
            return "interpreted: \(instancesReason ?? "")"
                + (relationshipsAsSQL
                    ? "; relationships as SQL"
                    : relationshipsWithInstances ? "; relationships set with the instances" : "")
        }
        if let relationshipsReason, !relationshipsAsSQL {
            return "SQL, relationships interpreted: \(relationshipsReason)"
        }
        return "SQL"
    }
}

/// One entity mapping as SQL: the columns of its `INSERT … SELECT`, the guards checked
/// first, and the relationship links of stage 2.
struct SQLMappingPlan {
    /// The source entity's table and the `Z_ENT` its fetch reads.
    let sourceTable: String
    let sourceEntityNumber: Int
    /// Whether other entities (a parent's, sub-entities') share the source table.
    let sourceTableIsShared: Bool
    let destinationEntity: String
    let destinationTable: String
    let destinationEntityNumber: Int
    /// The destination columns after `Z_PK, Z_ENT, Z_OPT`, and the SQL of each over `s`.
    let columns: [String]
    let values: [String]
    /// The values of `?1` … `?n` in `values`, `filter` and the guards.
    let parameters: [SQLiteValue]
    let guards: [SQLGuard]
    /// The joins of the source row that ``values`` and ``guards`` read (`j0`, `j1`, …:
    /// the rows of the to-ones read through, ``SQLTranslator/joins``).
    let joins: [String]
    /// What selects the source rows besides their `Z_ENT`: the fetch's condition, and the
    /// predicate itself (`remodel_accept_<n>`) where that condition is not exact.
    let filter: String
    /// The attributes the predicate reads, when `filter` calls it; empty when it reads
    /// more (``predicateReadsObjects``).
    let predicateAttributes: [String]?
    /// Whether the predicate reads more than the row's attributes (a relationship, a
    /// function of the object): `filter` has it evaluated on the source object itself, on
    /// every row the condition selects, as a fetch evaluates it.
    let predicateReadsObjects: Bool
    /// The attribute mappings SQL asks the interpreter for (`remodel_eval_<n>`), by
    /// position: each with the source attributes it reads.
    let evaluated: [Evaluated]

    struct Evaluated {
        /// Its index among the prepared attribute mappings.
        let property: Int
        let attribute: AttributeDescription
        let reads: [String]
        /// Only on the rows SQL cannot decide a TERNARY's condition on.
        var undecidedOnly = false
        /// Whether it reads more of `$source` than attributes SQL hands over (its
        /// relationships, the object itself): evaluated on the source object, read from
        /// the source context (`reads` is then empty).
        var onObject = false
    }

    /// Conditions true on a row whose written values break a rule of the destination's
    /// attributes (``StoreValidator/attributeRules(_:value:nullness:)``): checked as the
    /// rows are written (`remodel_invalid_<n>`), which, when none breaks one, spares the
    /// validation its scan of them.
    let validation: [String]
    /// Whether ``validation`` holds every rule of the destination entity's attributes
    /// (the others would call a function again for each row, and are left to the scan).
    let validatesAttributes: Bool

    /// The chains of string methods `remodel_string_<n>` calls, by position
    /// (``SQLTranslator/stringChains``).
    let stringChains: [[SQLTranslator.StringCall]]

    /// `remodel_eval_<n>`, `remodel_accept_<n>` and `remodel_string_<n>`: the functions of
    /// the entity mapping at `index`.
    static func evaluateFunction(_ index: Int) -> String { "remodel_eval_\(index)" }
    static func stringFunction(_ index: Int) -> String { "remodel_string_\(index)" }
    static func acceptFunction(_ index: Int) -> String { "remodel_accept_\(index)" }
    /// Stage 2, when every relationship mapping is a link SQL can write; else the reason.
    var links: Result<[SQLLink], SQLTranslator.Refusal>

    /// The source columns this plan reads as they are, each with what it must hold on the
    /// rows the plan runs on (``SQLTranslator/rowChecks``); empty for a plan that reads
    /// every row as the interpreter does.
    let rowChecks: [(column: String, attribute: String, expectation: ColumnExpectation)]

    /// The same mapping reading the source row's columns as they are, for the rows whose
    /// columns meet its ``rowChecks`` (docs/pushdown.md, "Rows checked once"); this plan
    /// then writes the other rows. Nil where the source is well-typed, or where nothing
    /// would be read differently.
    private(set) var asItIs: AsItIs?

    /// A plan that reads the source row's columns as they are (``asItIs``).
    final class AsItIs {
        let plan: SQLMappingPlan
        init(_ plan: SQLMappingPlan) { self.plan = plan }
    }

    /// The plan of `prepared`, or why it runs interpreted.
    /// (`sourceIsWellTyped`: see ``SQLTranslator/sourceIsWellTyped``.)
    static func make(
        _ prepared: PreparedEntityMapping, usesDefaultPolicy: Bool, functions: FunctionRegistry,
        source: StoreLayout, sourceIsWellTyped: Bool = false, destination: StoreLayout
    ) -> Result<SQLMappingPlan, SQLTranslator.Refusal> {
        Result { () throws(SQLTranslator.Refusal) in
            var plan = try SQLMappingPlan(
                prepared, usesDefaultPolicy: usesDefaultPolicy, functions: functions, source: source,
                sourceIsWellTyped: sourceIsWellTyped, destination: destination)
            if !sourceIsWellTyped,
                let asItIs = try? SQLMappingPlan(
                    prepared, usesDefaultPolicy: usesDefaultPolicy, functions: functions, source: source,
                    sourceIsWellTyped: false, checksRows: true, evaluatedAfter: plan.evaluated.count,
                    destination: destination),
                !asItIs.rowChecks.isEmpty, asItIs.asksTheSame(as: plan)
            {
                plan.asItIs = AsItIs(asItIs)
            }
            return plan
        }
    }

    /// Whether `other` asks the interpreter for what this plan asks, by the same
    /// functions: the same string methods, and the predicate, where this plan asks for
    /// it, of the same attributes (the attribute mappings it evaluates are numbered after
    /// the other's, and registered with them); and writes the same columns.
    private func asksTheSame(as other: SQLMappingPlan) -> Bool {
        columns == other.columns && joins == other.joins
            && (predicateAttributes == nil
                || (predicateAttributes == other.predicateAttributes
                    && predicateReadsObjects == other.predicateReadsObjects))
            && stringChains.map { $0.map(\.selector) } == other.stringChains.map { $0.map(\.selector) }
    }

    private init(
        _ prepared: PreparedEntityMapping, usesDefaultPolicy: Bool, functions: FunctionRegistry,
        source: StoreLayout, sourceIsWellTyped: Bool, checksRows: Bool = false, evaluatedAfter: Int = 0,
        destination: StoreLayout
    ) throws(SQLTranslator.Refusal) {
        typealias Refusal = SQLTranslator.Refusal
        guard usesDefaultPolicy else {
            throw Refusal("a custom policy (\(prepared.mapping.policy ?? "")) makes the instances")
        }
        guard let destinationEntity = prepared.destinationEntity,
            let destinationLayout = destination.entities[destinationEntity.name]
        else { throw Refusal("the mapping makes no destination instances") }
        guard !destinationEntity.isAbstract else { throw Refusal("\(destinationEntity.name) is abstract") }
        guard case .fetch(let request) = prepared.source else {
            throw Refusal(
                prepared.mapping.sourceExpression == nil
                    ? "the mapping has no source entity, so it makes nothing"
                    : "the source expression is evaluated by the interpreter")
        }
        guard request.fetchLimit == nil else { throw Refusal("the source fetch has a limit") }
        guard let sourceEntity = source.model.entity(named: request.entityName),
            let sourceLayout = source.entities[sourceEntity.name]
        else {
            throw Refusal("the source entity \(request.entityName) is not in the source model")
        }
        guard !request.includesSubentities || sourceLayout.numbers.count == 1 else {
            throw Refusal("the source fetch includes the sub-entities of \(sourceEntity.name)")
        }
        for property in prepared.attributes
        where property.expression.expression.variableNames.contains("destination")
            && Self.nonNilOrDefault(property.expression.expression) == nil
        {
            throw Refusal("the attribute mapping '\(property.mapping.name)' reads $destination")
        }
        let sourceAttributes = SQLTranslator.storedAttributes(of: sourceEntity, in: source)
        let sourceName = sourceEntity.name
        var translator = SQLTranslator(
            sourceAttributes: sourceAttributes, source: (sourceEntity, source), functions: functions,
            stringFunctionName: Self.stringFunction(prepared.index), sourceIsWellTyped: sourceIsWellTyped,
            checksRows: checksRows
        ) {
            source.rowConditions(of: $0, on: sourceName, storeIsWellTyped: $1)
        }
        var evaluated: [Evaluated] = []
        let storedNames = Set(sourceAttributes.keys)
        /// The column of an attribute mapping the interpreter evaluates for SQL, when its
        /// expression reads nothing of `$source` but stored attributes SQL can hand over.
        func evaluatedColumn(
            _ i: Int, _ attribute: AttributeDescription, _ refusal: Refusal,
            undecidedOnly: Bool = false
        ) throws(Refusal) -> String {
            let expression = prepared.attributes[i].expression.expression
            guard let reads = RowCopyPlan.sourceAttributesRead(by: expression, among: storedNames) else {
                // It reads more of $source than attributes (a relationship, the object
                // itself): the source object, when it reads nothing else the
                // interpreter's evaluation would (the manager, the new store).
                guard RowCopyPlan.readsOnlySource(expression) else {
                    throw Refusal("'\(prepared.attributes[i].mapping.name)': \(refusal.reason)")
                }
                evaluated.append(
                    Evaluated(
                        property: i, attribute: attribute, reads: [], undecidedOnly: undecidedOnly, onObject: true))
                return "\(Self.evaluateFunction(prepared.index))(\(evaluatedAfter + evaluated.count - 1), t0.Z_PK)"
            }
            var unique: [String] = []
            for name in reads where !unique.contains(name) { unique.append(name) }
            // (An attribute whose reading converts its column, large values kept outside
            // the store among them, keeps the mapping in the interpreter, which writes such
            // rows once, with their links.)
            guard SQLFunctionRow(entity: sourceEntity, model: source.model, attributes: unique) != nil else {
                throw Refusal("'\(prepared.attributes[i].mapping.name)' reads an attribute SQL cannot hand over")
            }
            evaluated.append(Evaluated(property: i, attribute: attribute, reads: unique, undecidedOnly: undecidedOnly))
            let arguments = unique.map { ", t0.\(sourceAttributes[$0]!.column)" }.joined()
            return
                "\(Self.evaluateFunction(prepared.index))(\(evaluatedAfter + evaluated.count - 1), t0.Z_PK\(arguments))"
        }
        let attributes = destination.model.allAttributes(of: destinationEntity).filter { !$0.isTransient }
        var columns: [String] = [], values: [String] = []
        var validation: [String] = [], validatesAttributes = true
        /// The rules of `attribute` over `value`, the SQL written to its column; a value
        /// SQL knows is never nil (not a double, whose NaN is NULL) meets `required`.
        func validate(
            _ attribute: AttributeDescription, _ value: String, nullness: String? = nil, neverNil: Bool = false
        ) {
            let rules = StoreValidator.attributeRules(attribute, value: value, nullness: nullness).filter {
                // (A column read as it is, and checked to be never nil.)
                if case .required = $0.kind {
                    return !neverNil && !translator.expectNonNil(nullness)
                }
                return true
            }
            // Checking it again would call a function again (the interpreter, a text check).
            guard !rules.contains(where: { $0.condition.contains("remodel_") }) else {
                validatesAttributes = false
                return
            }
            validation += rules.map { "(\($0.condition))" }
        }
        var mapped = Set<String>()
        for (i, property) in prepared.attributes.enumerated() {
            guard let attribute = attributes.first(where: { $0.name == property.mapping.name }),
                let column = destinationLayout.attributeColumns[attribute.name]
            else { throw Refusal("'\(property.mapping.name)' is not a stored attribute of \(destinationEntity.name)") }
            // A refused translation leaves nothing behind (parameters, guards).
            let saved = translator
            do throws(Refusal) {
                if let name = Self.nonNilOrDefault(property.expression.expression) {
                    values.append(
                        try Self.nonNilOrDefault(
                            name, attribute, &translator, source: source.model.allAttributes(of: sourceEntity),
                            destination: attributes))
                    validate(attribute, values.last!)
                    columns.append(column)
                    mapped.insert(attribute.name)
                    continue
                }
                translator.beginMapping()
                let term = try translator.term(property.expression.expression)
                // A constant goes through the coercion a row's value goes through: its
                // type error is the interpreter's to report.
                if case .constant(let value) = property.expression.expression.kind,
                    (try? attribute.columnValue(value)) == nil
                {
                    throw Refusal("the constant is not a \(attribute.type.rawValue) (an error)")
                }
                let written = try translator.written(term, to: attribute)
                let neverNil = !term.isNullable && [.integer, .bool, .text, .data].contains(term.kind)
                // Rows SQL cannot decide a condition on get the interpreter's value.
                if let undecided = translator.endMapping() {
                    values.append(
                        "CASE WHEN \(undecided) THEN \(try evaluatedColumn(i, attribute, Refusal("undecided"), undecidedOnly: true)) ELSE \(written) END"
                    )
                    // (The interpreter evaluates the same expression: nil where SQL's is.)
                    validate(attribute, values.last!, neverNil: neverNil)
                } else {
                    values.append(written)
                    validate(attribute, written, nullness: term.nullness, neverNil: neverNil)
                }
            } catch {
                translator = saved
                guard !attribute.storesExternalEncoding else {
                    throw Refusal("'\(property.mapping.name)': \(error.reason)")
                }
                values.append(try evaluatedColumn(i, attribute, error))
                validate(attribute, values.last!)
            }
            columns.append(column)
            mapped.insert(attribute.name)
        }
        // What the interpreter's new rows hold for the attributes no mapping sets.
        for attribute in attributes where !mapped.contains(attribute.name) {
            guard let column = destinationLayout.attributeColumns[attribute.name] else { continue }
            columns.append(column)
            values.append(translator.parameter(attribute.defaultColumnValue))
            validate(attribute, values.last!)
        }
        // The rows the fetch reads: its SQL condition, then its predicate where that is
        // not exact, as a fetch evaluates it on the rows the condition selects.
        var filter = "1"
        var predicateReads: [String]? = nil
        var readsObjects = false
        if let predicate = request.predicate {
            guard
                let fetch = source.rowConditions(
                    of: predicate, on: sourceName, storeIsWellTyped: translator.readsAsWellTyped(predicate),
                    schema: "src.")
            else {
                throw Refusal("the source fetch cannot be read")
            }
            let offset = translator.parameters.count
            translator.append(parameters: fetch.parameters)
            filter = SQLTranslator.renumbered(fetch.whenTrue, by: offset)
            if !fetch.isExact {
                // A row both conditions hold on is the interpreter's to decide; the others
                // are decided by SQL.
                let undecided: String
                let arguments: String
                if let reads = Self.attributesRead(by: predicate, among: storedNames),
                    SQLFunctionRow(entity: sourceEntity, model: source.model, attributes: reads) != nil
                {
                    arguments = reads.map { ", t0.\(sourceAttributes[$0]!.column)" }.joined()
                    // (Past the first condition: where it may not decide, or, where nothing
                    // narrower is known, where the second holds too.)
                    undecided =
                        SQLTranslator.uncertainRows(fetch, offset: offset)
                        ?? "coalesce(\(SQLTranslator.renumbered(fetch.whenFalse, by: offset)), 0)"
                    predicateReads = reads
                } else {
                    // It reads more than the row (a relationship's rows, whose keys may
                    // name no row or a row of another entity: an error the predicate
                    // reports where SQL would just not match): on every row the first
                    // condition selects, the source object itself decides, as a fetch
                    // decides its rows.
                    (arguments, undecided) = ("", "1")
                    predicateReads = []
                    readsObjects = true
                }
                filter =
                    "CASE WHEN NOT coalesce(\(filter), 0) THEN 0 WHEN \(undecided) "
                    + "THEN \(Self.acceptFunction(prepared.index))(t0.Z_PK\(arguments)) ELSE 1 END"
            }
        }
        predicateAttributes = predicateReads
        predicateReadsObjects = readsObjects
        self.filter = filter
        self.evaluated = evaluated
        self.sourceTable = sourceLayout.table
        self.sourceEntityNumber = sourceLayout.number
        self.sourceTableIsShared = source.entities.values.contains {
            $0.table == sourceLayout.table && $0.number != sourceLayout.number
        }
        self.destinationEntity = destinationEntity.name
        self.destinationTable = destinationLayout.table
        self.destinationEntityNumber = destinationLayout.number
        self.columns = columns
        self.values = values
        self.parameters = translator.parameters
        self.guards = translator.guards
        self.joins = translator.joins
        self.stringChains = translator.stringChains
        self.validation = validation
        self.validatesAttributes = validatesAttributes
        self.rowChecks = translator.rowChecks
        self.links = .failure(Refusal("not planned yet"))
    }
}

extension SQLMappingPlan {
    /// The stored attributes of the fetched object a predicate reads, in order, when it
    /// reads nothing else (no variables, no relationships, not `SELF` itself); nil
    /// otherwise.
    static func attributesRead(by predicate: FormatPredicate, among attributes: Set<String>) -> [String]? {
        var reads: [String] = [], other = false
        predicate.forEachSubexpression { e in
            switch e.kind {
            case .keyPath(let operand, let path):
                switch operand?.kind {
                case nil, .evaluatedObject?:
                    if let first = path.first, attributes.contains(first) {
                        if !reads.contains(first) { reads.append(first) }
                    } else {
                        other = true
                    }
                default:
                    break
                }
            case .evaluatedObject, .variable, .subquery, .assignment:
                other = true
            default:
                break
            }
        }
        return other ? nil : reads
    }

    /// The attribute name of `FUNCTION($entityPolicy, "_nonNilValueOrDefaultValueForAttribute:source:destination:", "name", $source, $destination)`,
    /// the form inferred mappings give an attribute that becomes required.
    static func nonNilOrDefault(_ expression: FormatExpression) -> String? {
        guard case .functionCall(let target, let selector, let arguments) = expression.kind, arguments.count == 3,
            case .variable("entityPolicy") = target.kind, selector.constantString == MappingInference.nonNilOrDefault,
            let name = arguments[0].constantString,
            case .variable("source") = arguments[1].kind, case .variable("destination") = arguments[2].kind
        else { return nil }
        return name
    }

    /// That function as SQL, written to `attribute`: the source attribute paired with the
    /// destination attribute `name` by renaming identifier, as the function pairs them,
    /// or the destination attribute's default value where the source's is nil.
    static func nonNilOrDefault(
        _ name: String, _ attribute: AttributeDescription, _ translator: inout SQLTranslator,
        source: [AttributeDescription], destination: [AttributeDescription]
    ) throws(SQLTranslator.Refusal) -> String {
        let paired = destination.first { $0.name == name }
        let id = paired?.renamingIdentifier ?? name
        let sourceName =
            source.first { ($0.renamingIdentifier ?? $0.name) == id }?.name
            ?? (source.contains { $0.name == id } ? id : name)
        let value = try translator.term(
            FormatExpression(.keyPath(operand: FormatExpression(.variable("source")), path: [sourceName])))
        let fallback = paired?.defaultValue ?? .null
        guard (try? attribute.columnValue(fallback)) != nil else {
            throw SQLTranslator.Refusal("the default value of \(name) is not a \(attribute.type.rawValue) (an error)")
        }
        let written = try translator.written(value, to: attribute)
        let writtenFallback = try translator.written(
            try translator.term(FormatExpression(.constant(fallback))), to: attribute)
        return "CASE WHEN \(value.sql) IS NULL THEN \(writtenFallback) ELSE \(written) END"
    }

    /// The plans of a step's entity mappings, by index (nil where stage 1 is interpreted,
    /// with the reason), links included: what ``MigrationManager`` runs and
    /// `mapping-migrate plan` prints.
    static func plans(
        _ prepared: [PreparedEntityMapping], usesDefaultPolicy: (PreparedEntityMapping) -> Bool,
        functions: FunctionRegistry, source: StoreLayout, sourceIsWellTyped: Bool = false, destination: StoreLayout
    ) -> (plans: [Int: Result<SQLMappingPlan, SQLTranslator.Refusal>], linksAfterInterpreted: [Int: SQLMappingPlan]) {
        var results: [Int: Result<SQLMappingPlan, SQLTranslator.Refusal>] = [:]
        var plans: [Int: SQLMappingPlan] = [:]
        var linksOnly: Set<Int> = []
        for p in prepared {
            let isDefault = usesDefaultPolicy(p)
            let result = make(
                p, usesDefaultPolicy: isDefault, functions: functions, source: source,
                sourceIsWellTyped: sourceIsWellTyped, destination: destination)
            results[p.index] = result
            if case .success(let plan) = result {
                plans[p.index] = plan
            } else if isDefault,
                let plan = SQLMappingPlan(linksOf: p, source: source, destination: destination)
            {
                plans[p.index] = plan
                linksOnly.insert(p.index)
            }
        }
        var linksAfterInterpreted: [Int: SQLMappingPlan] = [:]
        for p in prepared {
            guard var plan = plans[p.index] else { continue }
            plan.links = Result { () throws(SQLTranslator.Refusal) in
                try SQLLink.links(
                    of: p, plans: plans, all: prepared, source: source, destination: destination,
                    afterInterpretedStage1: linksOnly.contains(p.index))
            }
            if linksOnly.contains(p.index) {
                linksAfterInterpreted[p.index] = plan
            } else {
                results[p.index] = .success(plan)
            }
        }
        return (results, linksAfterInterpreted)
    }

    /// The plan of `prepared`'s links alone, for a mapping with the default policy whose
    /// stage 1 the interpreter runs: its links run as SQL once its keys table is written
    /// from the interpreter's associations. Nil without a source or destination entity.
    init?(linksOf prepared: PreparedEntityMapping, source: StoreLayout, destination: StoreLayout) {
        guard let sourceEntity = prepared.sourceEntity, let sourceLayout = source.entities[sourceEntity.name],
            let destinationEntity = prepared.destinationEntity,
            let destinationLayout = destination.entities[destinationEntity.name]
        else { return nil }
        sourceTable = sourceLayout.table
        sourceEntityNumber = sourceLayout.number
        sourceTableIsShared = source.entities.values.contains {
            $0.table == sourceLayout.table && $0.number != sourceLayout.number
        }
        self.destinationEntity = destinationEntity.name
        destinationTable = destinationLayout.table
        destinationEntityNumber = destinationLayout.number
        (columns, values, parameters, guards, joins, evaluated, stringChains) = ([], [], [], [], [], [], [])
        filter = "1"
        predicateAttributes = nil
        predicateReadsObjects = false
        (validation, validatesAttributes) = ([], false)
        rowChecks = []
        links = .failure(SQLTranslator.Refusal("not planned yet"))
    }

    /// Whether a link of stage 2 reads the keys of the entity mapping at `index`.
    func linksTo(_ index: Int) -> Bool {
        guard case .success(let links) = links else { return false }
        return links.contains { $0.target == index }
    }

    /// How the mapping is planned to run, before any row is seen.
    var plannedExecution: MappingExecution {
        var execution = MappingExecution(instancesAsSQL: true, relationshipsAsSQL: false, checks: guards.map(\.check))
        execution.readAsTheyAre = (asItIs?.plan.rowChecks.map(\.attribute) ?? []).sorted()
        // The source predicate is asked of every row the fetch's SQL selects when it reads
        // the object, else of the rows SQL cannot decide.
        let predicate = predicateAttributes == nil ? [] : ["the source predicate"]
        execution.evaluated =
            evaluated.filter { !$0.undecidedOnly }.map(\.attribute.name) + (predicateReadsObjects ? predicate : [])
        execution.evaluatedWhereUndecided =
            evaluated.filter(\.undecidedOnly).map(\.attribute.name) + (predicateReadsObjects ? [] : predicate)
        execution.evaluatedOnObjects =
            evaluated.filter(\.onObject).map(\.attribute.name) + (predicateReadsObjects ? predicate : [])
        switch links {
        case .success: execution.relationshipsAsSQL = true
        case .failure(let refusal): execution.relationshipsReason = refusal.reason
        }
        return execution
    }
}
