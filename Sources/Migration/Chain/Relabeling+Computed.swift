import ExpressionLanguage
import ObjectGraph

// A step that computes values before a step (docs/engine.md, "Steps that compute"): the
// step after it reads each computed attribute as the expression that computes it, once
// the source is known to hold no row on which writing that value and reading it back
// would not give the value itself.
extension Relabeling {
    /// The translator of the computed attributes' expressions over a row (`t0`) of
    /// `entity` in the store itself, laid out as `layout`.
    static func translator(of entity: EntityDescription, in layout: StoreLayout, functions: FunctionRegistry)
        -> SQLTranslator
    {
        SQLTranslator(
            sourceAttributes: SQLTranslator.storedAttributes(of: entity, in: layout), source: (entity, layout),
            functions: functions, stringFunctionName: "remodel_string", schema: ""
        ) {
            layout.rowConditions(of: $0, on: entity.name, storeIsWellTyped: $1)
        }
    }

    /// A value the step computes, as a step after it may read it (``computes(_:_:with:)``).
    struct Computation {
        /// The SQL over the row (`t0`, with the joins and parameters of the translator)
        /// that is true on any row where the value would not be read back as the
        /// expression's value, or as that value converted by ``readBack``.
        let failing: String
        /// The NSNumber method that gives the value the attribute reads back from the
        /// expression's value, where writing converts it (an integer written to a double
        /// reads back as `FUNCTION(value, 'doubleValue')`); nil where it reads back as it is.
        let readBack: String?
    }

    /// `expression`, or `FUNCTION(expression, '<method>')` where a method is given.
    static func converted(_ expression: FormatExpression, by method: String?) -> FormatExpression {
        guard let method else { return expression }
        return FormatExpression(
            .functionCall(target: expression, selector: FormatExpression(.constant(.string(method))), arguments: []))
    }

    /// Whether the step's value for `attribute` (of the newer version, C), `expression`
    /// over an object of B, is read back as a value a step after it may read instead: the
    /// value itself, or the value converted as writing converts it (``Computation``); nil
    /// where that cannot be told.
    ///
    /// The expression must translate to SQL (``SQLTranslator``), with no string method SQL
    /// asks the interpreter for, into a value of the kind the attribute reads back (an
    /// integer for an integer type in its range, a boolean, a double, text, a date, data,
    /// or nil), or one writing converts as a standard NSNumber method does (an integer or
    /// a boolean into a double, `doubleValue`; a number into a float, `floatValue`; 0 or 1
    /// into a boolean, `boolValue`; a boolean into an integer, `longLongValue`); the
    /// attribute stored in the store itself, with no derivation, validation predicates or
    /// bounds on text. The failing SQL is true where the translation's guards hold (an
    /// error the interpreter reports, a key naming no row), where SQL cannot decide a
    /// condition, where a double is NaN (which the store keeps as NULL), and where the
    /// written value breaks a rule of the attribute (required, bounds).
    static func computes(_ expression: String, _ attribute: AttributeDescription, with translator: inout SQLTranslator)
        -> Computation?
    {
        guard !attribute.isTransient, attribute.derivationExpression == nil, !attribute.storesExternalEncoding,
            !attribute.allowsExternalBinaryDataStorage, attribute.validationPredicates.isEmpty,
            attribute.type != .string || (attribute.minValue == nil && attribute.maxValue == nil),
            let parsed = try? FormatExpression(parsing: expression)
        else { return nil }
        guard let (term, written, unsaid) = write(parsed, to: attribute, with: &translator) else { return nil }
        let readBack: String?
        if written == term.sql, Self.readsBack(term.kind, as: attribute.type) {
            readBack = nil
        } else if let method = Self.conversion(of: term.kind, to: attribute.type),
            translator.isStandardNumberMethod(method)
        {
            readBack = method
        } else {
            return nil
        }
        var failing = unsaid
        if term.kind == .double || term.kind == .date {
            // (SQL's NULL where the value is NaN: the store keeps NaN as NULL.)
            if let nullness = term.nullness {
                failing.append("(\(term.sql)) IS NULL AND \(nullness) IS NOT NULL")
            } else if !term.isNullable {
                failing.append("(\(term.sql)) IS NULL")
            } else {
                return nil
            }
        }
        failing += StoreValidator.attributeRules(attribute, value: "(\(written))", nullness: term.nullness).map {
            $0.condition
        }
        return Computation(
            failing: failing.isEmpty ? "0" : failing.map { "(\($0))" }.joined(separator: " OR "), readBack: readBack)
    }

    /// The SQL that is true on a row where `expression`, written to the Decimal attribute
    /// `attribute` and read back as the decimal its column says, would be written again
    /// as another double (one no Decimal keeps: -0, beyond the magnitudes whose shortest
    /// text a Decimal holds); true too where the translation's guards hold, where SQL
    /// cannot decide a condition, and where the written value breaks a rule of the
    /// attribute. A renaming after the step that writes it carries it only where no row
    /// is such a row. Nil where SQL cannot say it (``computes(_:_:with:)`` is the check
    /// for values the step after reads).
    static func writtenAgain(
        _ expression: String, _ attribute: AttributeDescription, with translator: inout SQLTranslator
    )
        -> String?
    {
        guard attribute.type == .decimal, !attribute.isTransient, attribute.derivationExpression == nil,
            attribute.validationPredicates.isEmpty, let parsed = try? FormatExpression(parsing: expression)
        else { return nil }
        guard let (_, written, unsaid) = write(parsed, to: attribute, with: &translator) else { return nil }
        var failing = unsaid + ["remodel_decimal(\(written)) IS NOT (\(written))"]
        // (What no Decimal holds, NaN and the infinities, is written as NULL, and read
        // back and written again as NULL; a rule takes it for no value.)
        failing += StoreValidator.attributeRules(attribute, value: "(\(written))").map(\.condition)
        return failing.map { "(\($0))" }.joined(separator: " OR ")
    }

    /// `expression` translated in one mapping of `translator` and written to `attribute`:
    /// its term, the SQL of what the attribute's column then holds, and the conditions on
    /// which that is not the interpreter's value (the translation's guards, and what SQL
    /// cannot decide). Nil where SQL cannot say it.
    private static func write(
        _ expression: FormatExpression, to attribute: AttributeDescription, with translator: inout SQLTranslator
    ) -> (term: SQLTerm, written: String, unsaid: [String])? {
        translator.beginMapping()
        let before = translator.guards.count
        guard let term = try? translator.term(expression), let written = try? translator.written(term, to: attribute),
            translator.stringChains.isEmpty
        else { return nil }
        let undecided = translator.endMapping()
        return (term, written, translator.guards[before...].map(\.condition) + (undecided.map { [$0] } ?? []))
    }

    /// `expression`, the step's value for `attribute` over an object of `entity` (laid out
    /// as `layout`), as the attribute reads it back (``converted(_:by:)``); nil where that
    /// cannot be told (``computes(_:_:with:)``).
    static func readBack(
        _ expression: FormatExpression, _ attribute: AttributeDescription, over entity: EntityDescription,
        in layout: StoreLayout, functions: FunctionRegistry
    ) -> FormatExpression? {
        var translator = translator(of: entity, in: layout, functions: functions)
        guard let computation = computes(expression.description, attribute, with: &translator) else { return nil }
        return converted(expression, by: computation.readBack)
    }

    /// The standard NSNumber method that converts a value of `kind` as writing it to an
    /// attribute of `type` does (``AttributeDescription/stored(_:)``), where the two differ
    /// and the translator writes one (``SQLTranslator/written(_:to:)``).
    private static func conversion(of kind: SQLTerm.Kind, to type: AttributeType) -> String? {
        switch (kind, type) {
        case (.integer, .double): "doubleValue"
        case (.integer, .float), (.double, .float): "floatValue"
        case (.integer, .boolean): "boolValue"
        case (.bool, .int16), (.bool, .int32), (.bool, .int64): "longLongValue"
        default: nil
        }
    }

    /// The keys `expression` reads of `$source`: the first of each key path from it, and
    /// the keys `valueForKey:` and `valueForKeyPath:` read of it.
    static func keysRead(by expression: FormatExpression) -> Set<String> {
        var keys: Set<String> = []
        expression.forEachSubexpression { e in
            switch e.kind {
            case .keyPath(let operand?, let path):
                if case .variable("source") = operand.kind, let first = path.first { keys.insert(first) }
            case .functionCall(let target, let selector, let arguments):
                if case .variable("source") = target.kind,
                    ["valueForKey:", "valueForKeyPath:"].contains(selector.constantString ?? ""),
                    case .constant(.string(let key))? = arguments.first?.kind
                {
                    keys.insert(String(key.prefix { $0 != "." }))
                }
            default: break
            }
        }
        return keys
    }

    /// Whether a value of `kind` written to an attribute of `type` is read back as the
    /// same value, of the same kind.
    private static func readsBack(_ kind: SQLTerm.Kind, as type: AttributeType) -> Bool {
        switch (kind, type) {
        case (.null, _), (.integer, .int16), (.integer, .int32), (.integer, .int64), (.bool, .boolean),
            (.double, .double), (.text, .string), (.date, .date), (.data, .binary):
            true
        default: false
        }
    }

    /// A computed attribute as a pass reads it: the attribute, of the version the step
    /// that computes it writes, and its expression over an object of `entity`, of the
    /// version the pass starts from.
    struct ComputedValue {
        let entity: String
        let attribute: AttributeDescription
        let expression: String
        /// The predicate of the fetch that selects the objects it is computed for, where
        /// one does (a step with a filter): the check leaves out the rows SQL knows it
        /// rejects.
        var filter: String? = nil
        /// Whether the step after only writes the value again, reading nothing of it: a
        /// Decimal attribute it carries, which it reads back as a decimal
        /// (``writtenAgain(_:_:with:)``), not as the expression's value.
        var isWrittenAgain = false
    }

    /// The step's computed attributes as a pass that starts before the relabelings
    /// `earlier` (those before it, in order) reads them (``readBack(_:through:)``).
    func computedValues(after earlier: ArraySlice<Relabeling>) -> [ComputedValue]? {
        var values: [ComputedValue] = []
        for (from, attributes) in computed.sorted(by: { $0.key < $1.key }) {
            guard let to = entities[from].flatMap(step.destination.entity(named:)) else { return nil }
            let described = step.destination.allAttributes(of: to)
            for (name, text) in attributes.sorted(by: { $0.key < $1.key }) {
                guard let attribute = described.first(where: { $0.name == name }) else { return nil }
                values.append(ComputedValue(entity: from, attribute: attribute, expression: text))
            }
        }
        return Self.readBack(values, through: earlier)
    }

    /// `values`, over objects of the source of the relabelings `earlier` (in order), as a
    /// pass that starts before them reads them: each expression renamed back through them,
    /// what they compute read as its own expression; nil where one cannot be
    /// (``SourceRenamer``). A value of an entity one of them adds, which has no row, is
    /// left out: nothing computes it.
    static func readBack(_ values: [ComputedValue], through earlier: ArraySlice<Relabeling>) -> [ComputedValue]? {
        guard !earlier.isEmpty else { return values }
        let renamers = earlier.map { try? $0.renamerBefore() }
        var result: [ComputedValue] = []
        values: for value in values {
            var carried = value.entity
            for relabeling in earlier.reversed() {
                guard let older = relabeling.namesBefore.entities[carried] else { continue values }
                carried = older
            }
            guard var expression = try? FormatExpression(parsing: value.expression) else { return nil }
            var filter = value.filter.flatMap { try? FormatPredicate(parsing: $0) }
            var entity = value.entity
            for (relabeling, renamer) in zip(earlier, renamers).reversed() {
                guard let renamer, let renamed = renamer.rename(expression, SourceRenamer.Scope(source: entity)),
                    let older = relabeling.namesBefore.entities[entity]
                else { return nil }
                // (A filter that cannot be renamed is left out: every row is checked.)
                filter = filter.flatMap { renamer.rename($0, SourceRenamer.Scope(evaluated: entity)) }
                (expression, entity) = (renamed, older)
            }
            result.append(
                ComputedValue(
                    entity: entity, attribute: value.attribute, expression: expression.description,
                    filter: filter?.description, isWrittenAgain: value.isWrittenAgain))
        }
        return result
    }

    /// The scan of one entity's rows that finds one on which a computed attribute would
    /// not be read back as its expression's value: SQL with its parameters.
    struct Scan {
        let sql: String
        let parameters: [SQLiteValue]
    }

    /// The scans of a store laid out as `layout` (at the version a pass starts from) that
    /// check `values`, one per entity (``computes(_:_:with:)``; where the fetch of a value
    /// rejects a row, the step never computes it, so SQL's condition for rejecting, where
    /// it says one, leaves the row out); nil where one cannot be said.
    static func scans(_ values: [ComputedValue], in layout: StoreLayout, functions: FunctionRegistry) -> [Scan]? {
        var scans: [Scan] = []
        for (name, group) in Dictionary(grouping: values, by: \.entity).sorted(by: { $0.key < $1.key }) {
            guard let entity = layout.model.entity(named: name), let rows = layout.entities[name] else { return nil }
            var translator = translator(of: entity, in: layout, functions: functions)
            var conditions: [String] = []
            for value in group {
                guard
                    let failing = value.isWrittenAgain
                        ? writtenAgain(value.expression, value.attribute, with: &translator)
                        : computes(value.expression, value.attribute, with: &translator)?.failing
                else { return nil }
                if let text = value.filter, let predicate = try? FormatPredicate(parsing: text),
                    let rejects = layout.rowConditions(of: predicate, on: name)
                {
                    let offset = translator.parameters.count
                    translator.append(parameters: rejects.parameters)
                    conditions.append(
                        "((\(failing)) AND NOT coalesce((\(SQLTranslator.renumbered(rejects.whenFalse, by: offset))), 0))"
                    )
                } else {
                    conditions.append("(\(failing))")
                }
            }
            scans.append(
                Scan(
                    sql: "SELECT 1 FROM \(rows.table) AS t0 \(translator.joins.map { $0 + " " }.joined())"
                        + "WHERE t0.Z_ENT = \(rows.number) AND (\(conditions.joined(separator: " OR "))) LIMIT 1",
                    parameters: translator.parameters))
        }
        return scans
    }

    /// Whether `values` can be checked over a store laid out as `layout` (``scans``).
    static func translates(_ values: [ComputedValue], in layout: StoreLayout, functions: FunctionRegistry) -> Bool {
        scans(values, in: layout, functions: functions) != nil
    }

    /// Whether no row of `store` (at the version a pass starts from) is one on which a
    /// computed attribute of `values` would not be read back as its expression's value:
    /// the ``scans`` run.
    static func computesExactly(_ values: [ComputedValue], in store: Store, functions: FunctionRegistry) throws
        -> Bool
    {
        guard !values.isEmpty else { return true }
        guard let scans = scans(values, in: store.layout, functions: functions) else { return false }
        try store.database.registerValueFunctions()
        for scan in scans {
            let statement = try store.database.prepare(scan.sql)
            // (A constant may be read only by the value itself, not by its conditions.)
            try statement.bind(upTo: scan.parameters)
            if try statement.step() { return false }
        }
        return true
    }
}
