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

    /// Whether the step's value for `attribute` (of the newer version, C), `expression`
    /// over an object of B, is written and read back as it is, so that a step after it
    /// may read the expression instead: the SQL over the row (`t0`, the joins and
    /// parameters `translator` gathers) that is true on any row where it would not be;
    /// nil where that cannot be told.
    ///
    /// The expression must translate to SQL (``SQLTranslator``), with no string method SQL
    /// asks the interpreter for, into a value of the kind the attribute reads back (an
    /// integer for an integer type in its range, a boolean, a double, text, a date, data,
    /// or nil); the attribute stored in the store itself, with no derivation, validation
    /// predicates or bounds on text. The SQL is true where the translation's guards hold
    /// (an error the interpreter reports, a key naming no row), where SQL cannot decide a
    /// condition, where a double is NaN (which the store keeps as NULL), and where the
    /// value breaks a rule of the attribute (required, bounds).
    static func computes(_ expression: String, _ attribute: AttributeDescription, with translator: inout SQLTranslator)
        -> String?
    {
        guard !attribute.isTransient, attribute.derivationExpression == nil, !attribute.storesExternalEncoding,
            !attribute.allowsExternalBinaryDataStorage, attribute.validationPredicates.isEmpty,
            attribute.type != .string || (attribute.minValue == nil && attribute.maxValue == nil),
            let parsed = try? FormatExpression(parsing: expression)
        else { return nil }
        translator.beginMapping()
        let before = translator.guards.count
        guard let term = try? translator.term(parsed), let written = try? translator.written(term, to: attribute),
            written == term.sql, Self.readsBack(term.kind, as: attribute.type), translator.stringChains.isEmpty
        else { return nil }
        let undecided = translator.endMapping()
        var failing = translator.guards[before...].map(\.condition) + (undecided.map { [$0] } ?? [])
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
        failing += StoreValidator.attributeRules(attribute, value: "(\(term.sql))", nullness: term.nullness).map {
            $0.condition
        }
        return failing.isEmpty ? "0" : failing.map { "(\($0))" }.joined(separator: " OR ")
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

    /// Whether no row of `store` (at the step's source version) is one on which a
    /// computed attribute would not be read back as its expression's value
    /// (``computes(_:_:with:)``): one scan of each entity that has one.
    func computesExactly(_ store: Store) throws -> Bool {
        guard let functions else { return computed.isEmpty }
        try store.database.registerValueFunctions()
        for (name, attributes) in computed.sorted(by: { $0.key < $1.key }) {
            guard let entity = store.model.entity(named: name), let rows = store.layout.entities[name],
                let newer = step.destination.entity(named: entities[name] ?? "")
            else { return false }
            let described = step.destination.allAttributes(of: newer)
            var translator = Self.translator(of: entity, in: store.layout, functions: functions)
            var conditions: [String] = []
            for (attributeName, expression) in attributes.sorted(by: { $0.key < $1.key }) {
                guard let attribute = described.first(where: { $0.name == attributeName }),
                    let failing = Self.computes(expression, attribute, with: &translator)
                else { return false }
                conditions.append("(\(failing))")
            }
            let statement = try store.database.prepare(
                "SELECT 1 FROM \(rows.table) AS t0 \(translator.joins.map { $0 + " " }.joined())"
                    + "WHERE t0.Z_ENT = \(rows.number) AND (\(conditions.joined(separator: " OR "))) LIMIT 1")
            // (Up to the last one the conditions name: a constant may be read only by the
            // value itself.)
            for (i, value) in translator.parameters.prefix(Int(statement.parameterCount)).enumerated() {
                try statement.bind(value, at: Int32(i + 1))
            }
            if try statement.step() { return false }
        }
        return true
    }
}
