import ExpressionLanguage
import ObjectGraph

/// An expression of a mapping translated to SQL over one source row (`t0`), with what it
/// needs to mean exactly what the interpreter computes.
struct SQLTerm {
    /// The kind of value the interpreter would have: what the write to a destination
    /// attribute must convert from.
    enum Kind: Equatable {
        case integer, double, bool, text, date, data, null
        /// A Decimal attribute's value, as the double writing it gives
        /// (``SQLTranslator/read(_:_:name:checkable:)``): written to a Decimal or Double
        /// attribute as it is; nothing else is translated on it, since the interpreter
        /// computes with decimals.
        case decimal
        /// A UUID attribute's value, as the 16 bytes writing it to a UUID attribute gives:
        /// written to one as it is; nothing else is translated on it (the interpreter reads
        /// it as text).
        case uuid
    }

    var sql: String
    var kind: Kind
    /// Whether the value may be nil (a NULL that is not a NaN of arithmetic).
    var isNullable: Bool
    /// SQL that is NULL exactly when the value is: the column an attribute is read from
    /// (a CAST keeps NULL, and only NULL, NULL).
    var nullness: String? = nil
    /// The integers the value can be, when that is known whatever the row holds (the
    /// length of a text): a write to an attribute whose range holds them needs no guard.
    var range: ClosedRange<Int64>? = nil
    /// The source column the value is, read as it is on the rows whose columns meet
    /// their expectations (``SQLTranslator/checksRows``): a guard on the value alone
    /// becomes part of the column's expectation.
    var checkedColumn: String? = nil
}

/// A condition on a source row under which SQL would not do what the interpreter does
/// (an error the interpreter reports, a value it reads differently): checked before a
/// mapping runs as SQL, which it runs interpreted instead when any row meets one.
struct SQLGuard: Hashable {
    /// True on a row SQL must not decide.
    var condition: String
    /// What is checked, for the plan: `quantity integer`, `quantity in range`,
    /// `no nil in '*'`.
    var check: String
    /// What such a row has, for the report: `a nil operand of '*' (an error)`.
    var reason: String
}

/// Translates attribute mappings to SQL whose results are the interpreter's, bit for bit,
/// or says why it cannot (docs/pushdown.md, "What runs as SQL").
///
/// Constants are bound as parameters (`?1`, `?2`, …), never written into the SQL: SQLite's
/// reading of a decimal literal is not guaranteed to round as Swift's does.
struct SQLTranslator {
    /// Source attributes by name, with their columns in the source table.
    let sourceAttributes: [String: (attribute: AttributeDescription, column: String)]

    /// A to-one relationship of a source entity, for `$source.r.a` (and `$source.r.s.a`)
    /// and for links read through a chain of them: its key column in the entity's table,
    /// and its destination: the entity, its table, its entity numbers (with its
    /// sub-entities') and attributes with their columns.
    struct ToOne {
        let keyColumn: String
        let destination: EntityDescription
        let table: String
        let entityNumbers: [Int]
        let attributes: [String: (attribute: AttributeDescription, column: String)]

        /// The to-one `name` of `entity` in `source`; nil when `entity` has no to-one of
        /// that name with a key column.
        init?(_ name: String, of entity: EntityDescription, in source: StoreLayout) {
            guard let relationship = source.model.allRelationships(of: entity).first(where: { $0.name == name }),
                !relationship.isToMany, let key = source.entities[entity.name]?.toOneColumns[name]?.key,
                let target = source.model.entity(named: relationship.destination),
                let layout = source.entities[target.name]
            else { return nil }
            keyColumn = key
            destination = target
            table = layout.table
            entityNumbers = source.model.descendants(of: target).compactMap { source.entities[$0.name]?.number }
            attributes = SQLTranslator.storedAttributes(of: target, in: source)
        }
    }

    /// The stored attributes of `entity` in `source`, by name, with their columns.
    static func storedAttributes(of entity: EntityDescription, in source: StoreLayout) -> [String: (
        attribute: AttributeDescription, column: String
    )] {
        var attributes: [String: (attribute: AttributeDescription, column: String)] = [:]
        for attribute in source.model.allAttributes(of: entity) where !attribute.isTransient {
            if let column = source.entities[entity.name]?.attributeColumns[attribute.name] {
                attributes[attribute.name] = (attribute, column)
            }
        }
        return attributes
    }

    /// The source entity and the store's layout, through which `$source.r.a` reads its
    /// to-ones (nil: no key path through a relationship is translated).
    let source: (entity: EntityDescription, layout: StoreLayout)?
    /// The rows of the to-ones the translated expressions read through, joined to the
    /// source row: `LEFT JOIN src.<table> AS j<n> ON j<n>.Z_PK = <key>`, one per
    /// relationship, in the order they were first read.
    private(set) var joins: [String] = []
    /// What names the tables ``joins`` read: `src.`, the source attached to the new
    /// store's connection, or nothing, on the source's own.
    let schema: String
    private var joinAliases: [String: String] = [:]
    private(set) var parameters: [SQLiteValue] = []
    private(set) var guards: [SQLGuard] = []
    /// What SQL says of a predicate over a source row's attributes (`t0` the row): the
    /// fetch predicates' two conditions (`StoreLayout.rowConditions(of:on:)`).
    /// The rows `conditions` may not decide, with its parameters from `?offset+1`: those
    /// its comparisons read differently (a test of their storage class and text), cheaper
    /// than testing both conditions; nil where nothing narrower is known.
    static func uncertainRows(_ conditions: RowConditions, offset: Int) -> String? {
        conditions.uncertain == "1" ? nil : "(\(renumbered(conditions.uncertain, by: offset)))"
    }

    typealias RowConditions = (
        whenTrue: String, whenFalse: String, parameters: [SQLiteValue], isExact: Bool, uncertain: String
    )
    /// The conditions of a predicate on the row, taking the store as well-typed or not.
    let rowConditions: (FormatPredicate, _ storeIsWellTyped: Bool) -> RowConditions?

    /// The registry the mapping's expressions call, and the SQL function that calls it
    /// for the chains of string methods (``stringChains``).
    let functions: FunctionRegistry
    let stringFunctionName: String
    /// The chains of string methods the SQL asks ``stringFunctionName`` for, by position.
    private(set) var stringChains: [[StringCall]] = []

    /// Whether the source is a store Remodel wrote and validated (docs/pushdown.md, "A
    /// store the run wrote"): each column holds NULL or what its attribute's type is
    /// written as, text is well-formed UTF-8, integers fit their type, and a required
    /// attribute is never NULL. Its columns are then read as they are.
    let sourceIsWellTyped: Bool

    /// Whether the source row's own columns (`t0`) are read as they are, as in a
    /// well-typed store, by a statement that runs only on the rows where each meets its
    /// expectation (``rowChecks``; docs/pushdown.md, "Rows checked once"). A guard on
    /// such a column alone (nil, out of a range) and the rule that it is required become
    /// part of its expectation: the row goes to the statement that reads it as the
    /// interpreter does, which meets them.
    let checksRows: Bool

    /// The source columns read as they are, in the order first read, each with its
    /// attribute and what it must hold (``checksRows``).
    private(set) var rowChecks: [(column: String, attribute: String, expectation: ColumnExpectation)] = []

    /// How deep in TERNARY branches the translation is: a guard there holds only on the
    /// rows that take the branch, so it is not made part of an expectation.
    private var branchDepth = 0

    init(
        sourceAttributes: [String: (attribute: AttributeDescription, column: String)],
        source: (entity: EntityDescription, layout: StoreLayout)? = nil, functions: FunctionRegistry,
        stringFunctionName: String,
        sourceIsWellTyped: Bool = false, checksRows: Bool = false, schema: String = "src.",
        rowConditions: @escaping (FormatPredicate, _ storeIsWellTyped: Bool) -> RowConditions? = { _, _ in nil }
    ) {
        self.sourceAttributes = sourceAttributes
        self.source = source
        self.functions = functions
        self.stringFunctionName = stringFunctionName
        self.sourceIsWellTyped = sourceIsWellTyped
        self.schema = schema
        self.checksRows = checksRows && !sourceIsWellTyped
        self.rowConditions = rowConditions
    }

    /// Whether the conditions of `predicate`, on the source row, may take the store as
    /// well-typed: where it is, and where the rows are checked and the predicate reads
    /// only attributes of the row whose columns a check covers (dates' do not), which it
    /// then checks.
    mutating func readsAsWellTyped(_ predicate: FormatPredicate) -> Bool {
        if sourceIsWellTyped { return true }
        guard checksRows,
            let reads = SQLMappingPlan.attributesRead(by: predicate, among: Set(sourceAttributes.keys)),
            reads.allSatisfy({ Self.storage(of: sourceAttributes[$0]!.attribute) != nil })
        else { return false }
        for name in reads {
            let (attribute, column) = sourceAttributes[name]!
            _ = try? read(attribute, "t0.\(column)", name: name, checkable: true)
        }
        return true
    }

    /// Makes `column`, a source column read as it is (``SQLTerm/checkedColumn``), meet
    /// what `narrowed` makes of its expectation; false, and nothing changed, when it is no
    /// such column, the translation is in a branch, or `narrowed` gives nil.
    mutating func expect(_ column: String?, _ narrowed: (ColumnExpectation) -> ColumnExpectation?) -> Bool {
        guard branchDepth == 0, let column, let i = rowChecks.firstIndex(where: { $0.column == column }),
            let expectation = narrowed(rowChecks[i].expectation)
        else { return false }
        rowChecks[i].expectation = expectation
        return true
    }

    /// Makes `column`, if a source column read as it is, never nil (``expect(_:_:)``).
    mutating func expectNonNil(_ column: String?) -> Bool {
        expect(column) { ColumnExpectation($0.storage, allowsNull: false) }
    }

    struct Refusal: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// Appends `values` as parameters: SQL that numbers them `?1`, `?2`, … must be
    /// renumbered by the count before (``renumbered(_:by:)``).
    mutating func append(parameters values: [SQLiteValue]) { parameters += values }

    /// `sql` with `?N` made `?(N + offset)`: SQL whose constants are all parameters.
    static func renumbered(_ sql: String, by offset: Int) -> String {
        guard offset > 0 else { return sql }
        var result = "", digits = "", inNumber = false
        func flush() {
            if inNumber { result += String(Int(digits)! + offset) }
            digits = ""
            inNumber = false
        }
        for c in sql {
            if inNumber, c.isASCII, c.isNumber { digits.append(c); continue }
            flush()
            result.append(c)
            if c == "?" { inNumber = true }
        }
        flush()
        return result
    }

    /// Where a mapping's translation started, and the rows its conditions do not decide.
    private var mappingGuards = 0
    private var undecided: [String] = []

    /// Starts the translation of one attribute mapping (see ``endMapping()``).
    mutating func beginMapping() {
        mappingGuards = guards.count
        undecided = []
    }

    /// Ends the translation of an attribute mapping: the SQL true on the rows where SQL
    /// cannot decide one of its TERNARY conditions, which the interpreter evaluates
    /// instead (its guards made to hold only on the other rows); nil when SQL decides
    /// every row.
    mutating func endMapping() -> String? {
        guard !undecided.isEmpty else { return nil }
        let condition = undecided.count == 1 ? undecided[0] : "(" + undecided.joined(separator: " OR ") + ")"
        for i in mappingGuards..<guards.count {
            let g = guards[i]
            guards[i] = SQLGuard(condition: "NOT \(condition) AND (\(g.condition))", check: g.check, reason: g.reason)
        }
        return condition
    }

    /// A parameter holding `value`.
    mutating func parameter(_ value: SQLiteValue) -> String {
        parameters.append(value)
        return "?\(parameters.count)"
    }

    private mutating func guarding(_ condition: String, check: String, _ reason: String) {
        let g = SQLGuard(condition: condition, check: check, reason: reason)
        if !guards.contains(g) { guards.append(g) }
    }

    // MARK: - Values

    /// The value of `expression` for the row `s`.
    mutating func term(_ expression: FormatExpression) throws(Refusal) -> SQLTerm {
        if let name = EntityMappingRunner.copiedAttribute(expression) {
            return try attribute(name)
        }
        if case .keyPath(let operand?, let path) = expression.kind, path.count >= 2,
            case .variable("source") = operand.kind, !path.contains(where: { $0.hasPrefix("@") }),
            let source, let first = ToOne(path[0], of: source.entity, in: source.layout)
        {
            return try attribute(through: path, first: first, in: source.layout)
        }
        switch expression.kind {
        case .constant(let value):
            return try constant(value)
        case .arithmetic(let op, let lhs, let rhs):
            return try arithmetic(op, lhs, rhs)
        case .negate(let operand):
            let o = try term(operand)
            guard o.kind == .double else {
                throw Refusal(
                    "negating \(o.kind == .integer ? "an integer (its overflow is an error)" : "a non-number")")
            }
            nonNil(o, "-")
            return SQLTerm(sql: "(-\(o.sql))", kind: .double, isNullable: false)
        case .ternary(let predicate, let whenTrue, let whenFalse):
            return try ternary(predicate, whenTrue, whenFalse)
        case .functionCall(let target, let selector, let arguments):
            if arguments.isEmpty, let name = selector.constantString, Self.numberMethods.contains(name) {
                return try numberMethod(name, on: target)
            }
            return try stringFunction(expression)
        default:
            throw Refusal("\(Self.describe(expression)) is evaluated by the interpreter")
        }
    }

    /// `$source.name`, read as the interpreter reads the attribute's column.
    private mutating func attribute(_ name: String) throws(Refusal) -> SQLTerm {
        guard let (attribute, column) = sourceAttributes[name] else {
            throw Refusal("$source.\(name) is not a stored attribute of the source entity")
        }
        return try read(attribute, "t0.\(column)", name: name, checkable: true)
    }

    /// `$source.r.name` (`$source.r.s.name`, …), `r` a to-one of the source entity (and
    /// `s` one of its destination): the attribute of the row the keys lead to (``joins``),
    /// read as the interpreter reads it once it has followed them (a row lookup by `Z_PK`
    /// each, whose value is the key read as an integer, as a reader reads it); nil where a
    /// key is nil. A key that names no row, or a row of an entity the relationship cannot
    /// point to, is the interpreter's error to report: a guard, but in a store the run
    /// wrote, whose keys name rows.
    private mutating func attribute(through path: [String], first: ToOne, in layout: StoreLayout) throws(Refusal)
        -> SQLTerm
    {
        let dotted = path.joined(separator: ".")
        var holder = "t0", prefix = ""
        var last = first
        for (i, name) in path.dropLast().enumerated() {
            let toOne: ToOne
            if i == 0 {
                toOne = first
            } else {
                guard let next = ToOne(name, of: last.destination, in: layout) else {
                    throw Refusal(
                        "$source.\(dotted) goes through '\(name)', which is not a to-one of \(last.destination.name)")
                }
                toOne = next
            }
            prefix += prefix.isEmpty ? name : ".\(name)"
            let held = "\(holder).\(toOne.keyColumn)"
            let alias: String
            if let joined = joinAliases[prefix] {
                alias = joined
            } else {
                alias = "j\(joins.count)"
                joinAliases[prefix] = alias
                let key = sourceIsWellTyped ? held : "CAST(\(held) AS INTEGER)"
                joins.append("LEFT JOIN \(schema)\(toOne.table) AS \(alias) ON \(alias).Z_PK = \(key)")
            }
            if !sourceIsWellTyped {
                let entities = toOne.entityNumbers.map(String.init).joined(separator: ", ")
                guarding(
                    "\(held) IS NOT NULL AND (\(alias).Z_PK IS NULL OR \(alias).Z_ENT NOT IN (\(entities)))",
                    check: "'\(prefix)' names a row of its entity",
                    "a to-one key that names no row of its entity (an error)")
            }
            (holder, last) = (alias, toOne)
        }
        guard let (attribute, column) = last.attributes[path[path.count - 1]] else {
            throw Refusal("$source.\(dotted) is not a stored attribute of \(last.destination.name)")
        }
        var term = try read(attribute, "\(holder).\(column)", name: dotted)
        term.isNullable = true
        return term
    }

    /// The column `c` of `attribute` (`name`, for the reasons), read as the interpreter
    /// reads it; as it is where the store is well-typed, or where the rows are checked
    /// (``checksRows``) and `c` is the source row's own (`checkable`).
    private mutating func read(_ attribute: AttributeDescription, _ c: String, name: String, checkable: Bool = false)
        throws(Refusal) -> SQLTerm
    {
        // A decimal or a UUID: the column as it is on the rows checked to hold what writing
        // gives back, else as the function reads and writes it. (A store the run wrote may
        // hold a double no Decimal holds, which reads as 0: it is not taken on trust.)
        if let (function, kind, storage) = Self.converted(attribute.type) {
            guard checksRows, checkable else {
                if kind == .uuid {
                    // (What no UUID attribute takes is the interpreter's error to report.)
                    guarding(
                        "\(c) IS NOT NULL AND \(function)(\(c)) IS NULL", check: "\(name) is a UUID",
                        "a value of \(name) no UUID attribute holds (an error)")
                }
                return SQLTerm(sql: "\(function)(\(c))", kind: kind, isNullable: true, nullness: c)
            }
            return checked(
                SQLTerm(sql: c, kind: kind, isNullable: attribute.isOptional, nullness: c), c, attribute, storage)
        }
        if sourceIsWellTyped, let term = Self.wellTyped(attribute, c) { return term }
        if checksRows, checkable, var term = Self.wellTyped(attribute, c),
            let storage = Self.storage(of: attribute)
        {
            // (A boolean is 0 or 1: its check makes sure.)
            if attribute.type == .boolean { term.sql = c }
            return checked(term, c, attribute, storage)
        }
        switch attribute.type {
        // CAST converts as the sqlite3_value_* functions a reader reads with do, whatever
        // the column stores (sqlite3VdbeMemCast calls the same sqlite3VdbeIntValue and
        // sqlite3VdbeRealValue), and keeps NULL.
        case .int16, .int32, .int64:
            return SQLTerm(sql: "CAST(\(c) AS INTEGER)", kind: .integer, isNullable: true, nullness: c)
        case .boolean:
            return SQLTerm(sql: "(CAST(\(c) AS INTEGER) != 0)", kind: .bool, isNullable: true, nullness: c)
        case .double, .float:
            return SQLTerm(sql: "CAST(\(c) AS REAL)", kind: .double, isNullable: true, nullness: c)
        case .date:
            return SQLTerm(sql: "CAST(\(c) AS REAL)", kind: .date, isNullable: true, nullness: c)
        case .string, .uri:
            // remodel_text's value, without copying text that is already well-formed.
            return SQLTerm(sql: Self.textRead(c), kind: .text, isNullable: true, nullness: c)
        case .binary, .transformable:
            guard !attribute.storesExternalEncoding else {
                throw Refusal(
                    "\(name) allows external storage: its column holds Core Data's encoding, which reading decodes")
            }
            return SQLTerm(sql: "CAST(\(c) AS BLOB)", kind: .data, isNullable: true, nullness: c)
        case .decimal, .uuid, .undefined, .objectID, .composite:
            throw Refusal("\(name) is a \(attribute.type.rawValue) attribute, which reading converts")
        }
    }

    /// `term`, the source row's column `c` of `attribute` read as it is: on the rows whose
    /// check finds it holds `storage` (the column's check added once).
    private mutating func checked(
        _ term: SQLTerm, _ c: String, _ attribute: AttributeDescription, _ storage: ColumnExpectation.Storage
    ) -> SQLTerm {
        if !rowChecks.contains(where: { $0.column == c }) {
            rowChecks.append((c, attribute.name, ColumnExpectation(storage, allowsNull: attribute.isOptional)))
        }
        var term = term
        term.checkedColumn = c
        return term
    }

    /// For the types whose reading converts a column and whose value SQL writes only as
    /// it is (``SQLTerm/Kind/decimal``, ``SQLTerm/Kind/uuid``): the function that reads
    /// and writes a column as a context does, the term's kind, and what a column written
    /// back as it is holds.
    private static func converted(_ type: AttributeType) -> (
        function: String, kind: SQLTerm.Kind, storage: ColumnExpectation.Storage
    )? {
        switch type {
        case .decimal: ("remodel_decimal", .decimal, .decimal)
        case .uuid: ("remodel_uuid", .uuid, .uuid)
        default: nil
        }
    }

    /// A text column `c` (`t0.ZNAME`) read as the interpreter reads it: remodel_text's
    /// value, without copying text that is already well-formed.
    static func textRead(_ c: String) -> String {
        "(CASE WHEN remodel_wellformed(\(c)) THEN \(c) ELSE remodel_text(\(c)) END)"
    }

    /// The column `c` of `attribute` in a well-typed store, read as it is: integers (in
    /// their type's range), booleans (0 or 1), doubles and floats, and well-formed text
    /// are what the interpreter reads; never NULL when the attribute is required. Nil
    /// for the types read as from any store (a date's column may hold an integer, which
    /// reading makes a double: its CAST stays).
    private static func wellTyped(_ attribute: AttributeDescription, _ c: String) -> SQLTerm? {
        let nullable = attribute.isOptional
        switch attribute.type {
        case .int16, .int32, .int64:
            return SQLTerm(
                sql: c, kind: .integer, isNullable: nullable, nullness: c, range: attribute.type.integerRange)
        case .boolean:
            return SQLTerm(sql: "(\(c) != 0)", kind: .bool, isNullable: nullable, nullness: c)
        case .double, .float:
            return SQLTerm(sql: c, kind: .double, isNullable: nullable, nullness: c)
        case .string, .uri:
            return SQLTerm(sql: c, kind: .text, isNullable: nullable, nullness: c)
        default:
            return nil
        }
    }

    /// What the column of `attribute` holds in a well-typed store, for its check; nil
    /// for the types read with a conversion whatever the store.
    private static func storage(of attribute: AttributeDescription) -> ColumnExpectation.Storage? {
        switch attribute.type {
        case .int16, .int32, .int64: attribute.type.integerRange.map { .integer($0) }
        case .boolean: .integer(0...1)
        case .double: .real
        case .float: .float
        case .string, .uri: .text
        default: nil
        }
    }

    private mutating func constant(_ value: Value) throws(Refusal) -> SQLTerm {
        switch value {
        case .null: return SQLTerm(sql: "NULL", kind: .null, isNullable: true)
        case .integer(let i): return SQLTerm(sql: parameter(.integer(i)), kind: .integer, isNullable: false)
        case .double(let d): return SQLTerm(sql: parameter(.real(d)), kind: .double, isNullable: false)
        case .bool(let b): return SQLTerm(sql: parameter(.integer(b ? 1 : 0)), kind: .bool, isNullable: false)
        case .string(let s): return SQLTerm(sql: parameter(.text(s)), kind: .text, isNullable: false)
        // (Written as a Decimal attribute writes it; a NaN, bound as NULL, as its column holds it.)
        case .decimal(let d):
            let double = Value.double(d)
            return SQLTerm(sql: parameter(.real(double)), kind: .decimal, isNullable: double.isNaN)
        default: throw Refusal("a constant \(value.kind.rawValue) is evaluated by the interpreter")
        }
    }

    /// Arithmetic with a double operand: IEEE 754 in both, and SQLite turns a NaN into
    /// NULL as binding a NaN does; division by anything but a non-zero constant is left to
    /// the interpreter (SQLite's x / 0.0 is NULL, the interpreter's an infinity). Two
    /// integers: 64-bit in both, division truncating toward zero in both; where SQLite
    /// would go on (an overflow, which SQLite turns into a double: `typeof` says `real`;
    /// a division by zero, which it makes NULL) and the interpreter reports an error, a
    /// guard gives the row to the interpreter.
    private mutating func arithmetic(_ op: ArithmeticOperator, _ lhs: FormatExpression, _ rhs: FormatExpression)
        throws(Refusal) -> SQLTerm
    {
        guard op != .power else { throw Refusal("'**' is evaluated by the interpreter") }
        let a = try term(lhs), b = try term(rhs)
        for operand in [a, b] where operand.kind != .integer && operand.kind != .double {
            throw Refusal(
                "'\(op.rawValue)' of \(operand.kind == .null ? "nil" : "a non-number") is an error the interpreter reports"
            )
        }
        if a.kind == .integer && b.kind == .integer {
            nonNil(a, op.rawValue)
            nonNil(b, op.rawValue)
            let sql = "(\(a.sql) \(op.rawValue) \(b.sql))"
            if op == .divide {
                guarding("\(b.sql) = 0", check: "no integer division by zero", "an integer division by zero (an error)")
            }
            guarding(
                "typeof\(sql) = 'real'", check: "no integer overflow in '\(op.rawValue)'",
                "an integer overflow (an error)")
            return SQLTerm(sql: sql, kind: .integer, isNullable: false)
        }
        if op == .divide {
            guard case .constant(let divisor) = rhs.kind, let d = divisor.doubleValue, d != 0 else {
                throw Refusal("dividing by anything but a non-zero constant (SQLite's x / 0.0 is NULL)")
            }
        }
        nonNil(a, op.rawValue)
        nonNil(b, op.rawValue)
        return SQLTerm(sql: "(\(a.sql) \(op.rawValue) \(b.sql))", kind: .double, isNullable: false)
    }

    /// `TERNARY(p, a, b)` as a `CASE`, where `p` compares attributes of `$source` with
    /// constants (with AND, OR, NOT), as a fetch predicate on the row. SQL's two conditions
    /// decide a row when exactly one holds; the rows where they do not (text that is not
    /// plain ASCII, a value stored with another type) are ``endMapping()``'s, evaluated by
    /// the interpreter. A branch's guards are checked only on the rows that take it, as
    /// the interpreter evaluates only that branch.
    private mutating func ternary(
        _ predicate: FormatPredicate, _ whenTrue: FormatExpression,
        _ whenFalse: FormatExpression
    ) throws(Refusal) -> SQLTerm {
        guard let onRow = onSourceRow(predicate), let decided = rowConditions(onRow, readsAsWellTyped(onRow)) else {
            throw Refusal("TERNARY's condition reads more than attributes of $source")
        }
        let offset = parameters.count
        parameters += decided.parameters
        let yes = "coalesce(\(Self.renumbered(decided.whenTrue, by: offset)), 0)"
        if !decided.isExact {
            // Both conditions where nothing narrower is known.
            undecided.append(
                Self.uncertainRows(decided, offset: offset)
                    ?? "(\(yes) = coalesce(\(Self.renumbered(decided.whenFalse, by: offset)), 0))")
        }
        let a = try branch(whenTrue, taken: yes), b = try branch(whenFalse, taken: "NOT \(yes)")
        let kind: SQLTerm.Kind
        switch (a.kind, b.kind) {
        case (let x, let y) where x == y: kind = x
        case (.null, let y): kind = y
        case (let x, .null): kind = x
        default: throw Refusal("TERNARY gives a \(a.kind) or a \(b.kind), which are written differently")
        }
        return SQLTerm(
            sql: "(CASE WHEN \(yes) THEN \(a.sql) ELSE \(b.sql) END)", kind: kind,
            isNullable: a.isNullable || b.isNullable)
    }

    /// The NSNumber methods translated, on a number (``numberMethod(_:on:)``).
    static let numberMethods: Set<String> = ["doubleValue", "floatValue", "boolValue", "longLongValue", "integerValue"]

    /// `FUNCTION(x, 'doubleValue')` and its kin on a number `x`, as the registry's
    /// standard implementations give them: the value as a double (`CAST … AS REAL`, which
    /// rounds an integer as Swift's `Double(_:)` does), as a 32-bit float widened again
    /// (`remodel_float`), as a boolean (not 0), as a 64-bit integer (of an integer or a
    /// boolean; a double's truncation, which may fail, is the interpreter's). Nil gives
    /// nil, as a message to nil does. Refused where an embedder registered one over the
    /// standard implementation, and on anything but a number.
    private mutating func numberMethod(_ name: String, on target: FormatExpression) throws(Refusal) -> SQLTerm {
        let refusal = Refusal("FUNCTION(…, '\(name)') on \(Self.describe(target)) is evaluated by the interpreter")
        guard isStandardNumberMethod(name) else {
            throw Refusal("'\(name)' is not the standard implementation (one was registered over it)")
        }
        let x = try term(target)
        // (NULL is nil for an integer or a boolean; a double's may be a NaN, kept as it is.)
        let nullness = x.kind == .double ? x.nullness : x.nullness ?? (x.isNullable ? x.sql : nil)
        switch (name, x.kind) {
        case (_, .null):
            return SQLTerm(sql: "NULL", kind: .null, isNullable: true)
        case ("doubleValue", .double):
            return x
        case ("doubleValue", .integer), ("doubleValue", .bool):
            return SQLTerm(sql: "CAST(\(x.sql) AS REAL)", kind: .double, isNullable: x.isNullable, nullness: nullness)
        case ("floatValue", .integer), ("floatValue", .bool), ("floatValue", .double):
            return SQLTerm(sql: "remodel_float(\(x.sql))", kind: .double, isNullable: x.isNullable, nullness: nullness)
        case ("boolValue", .bool):
            return x
        case ("boolValue", .integer):
            return SQLTerm(sql: "(\(x.sql) <> 0)", kind: .bool, isNullable: x.isNullable, nullness: x.nullness)
        case ("longLongValue", .integer), ("integerValue", .integer):
            return x
        case ("longLongValue", .bool), ("integerValue", .bool):
            return SQLTerm(sql: x.sql, kind: .integer, isNullable: x.isNullable, nullness: x.nullness, range: 0...1)
        default:
            throw refusal
        }
    }

    /// Whether `FUNCTION(x, '<name>')` runs the registry's standard implementation on
    /// any number, and on nil (a message to nil).
    func isStandardNumberMethod(_ name: String) -> Bool {
        [Value.integer(0), .double(0), .bool(false), .null].allSatisfy { functions.isStandard(name, on: $0) }
    }

    /// A Foundation method called through FUNCTION on a string, with constant arguments.
    struct StringCall: Sendable {
        let selector: String
        let arguments: [Value]
    }

    /// The methods whose chains on a string attribute are translated, by what each takes
    /// and gives.
    private static let stringMethods: [String: (takes: StringChainKind, gives: StringChainKind)] = [
        "uppercaseString": (.text, .text), "lowercaseString": (.text, .text),
        "capitalizedString": (.text, .text), "stringByTrimmingWhitespace": (.text, .text),
        "stringByAppendingString:": (.text, .text), "substringToIndex:": (.text, .text),
        "substringFromIndex:": (.text, .text), "stringByReplacingOccurrencesOfString:withString:": (.text, .text),
        "length": (.text, .integer), "componentsSeparatedByString:": (.text, .array), "count": (.array, .integer)
    ]

    enum StringChainKind { case text, integer, array }

    /// The methods whose result is no longer, in UTF-16 units, than their text.
    private static let keepsLengthBound: Set<String> = [
        "stringByTrimmingWhitespace", "substringToIndex:", "substringFromIndex:", "length",
        "componentsSeparatedByString:", "count"
    ]

    /// A chain of Foundation string methods on a string attribute of `$source`, each with
    /// constant arguments (`FUNCTION(FUNCTION($source.text, 'componentsSeparatedByString:',
    /// ' '), 'count')`), that gives text or an integer.
    ///
    /// Every row's value is the interpreter's: the SQL function ``stringFunctionName``
    /// reads the column as the interpreter reads the attribute and calls the registry's
    /// implementations in order, as FUNCTION does. Where SQLite's own functions say
    /// exactly the same on plain ASCII text (`length`, `upper`, `lower`, `trim`), they run
    /// on such text, and the function on the other rows; `count` of
    /// `componentsSeparatedByString:` with a separator of printable ASCII is counted from
    /// the bytes of any text where they tell it (`remodel_separated_count`). Only standard implementations are
    /// translated: a method an embedder registered over one is the interpreter's.
    private mutating func stringFunction(_ expression: FormatExpression) throws(Refusal) -> SQLTerm {
        let refusal = Refusal("\(Self.describe(expression)) is evaluated by the interpreter")
        var calls: [StringCall] = []
        var e = expression
        while case .functionCall(let target, let selector, let arguments) = e.kind {
            guard let name = selector.constantString, FunctionRegistry.arity(of: name) == arguments.count else {
                throw refusal
            }
            var values: [Value] = []
            for argument in arguments {
                guard case .constant(let value) = argument.kind else { throw refusal }
                values.append(value)
            }
            calls.insert(StringCall(selector: name, arguments: values), at: 0)
            e = target
        }
        guard let name = EntityMappingRunner.copiedAttribute(e), let (attribute, column) = sourceAttributes[name],
            attribute.type == .string
        else { throw refusal }
        var kind = StringChainKind.text
        for call in calls {
            guard let method = Self.stringMethods[call.selector], method.takes == kind else { throw refusal }
            let sample: Value = kind == .array ? .array([]) : .string("")
            guard functions.isStandard(call.selector, on: sample) else {
                throw Refusal("'\(call.selector)' is not the standard implementation (one was registered over it)")
            }
            kind = method.gives
        }
        guard kind != .array else { throw refusal }
        let c = "t0.\(column)"
        stringChains.append(calls)
        let exact = "\(stringFunctionName)(\(stringChains.count - 1), \(c))"
        let termKind: SQLTerm.Kind = kind == .text ? .text : .integer
        // A length counts UTF-16 units, no more than the text's bytes; components are one
        // more than the separators, each at least a unit. Text a method may make longer
        // (appending, replacing, case mapping: "ΐ" is three units uppercased) has no such
        // bound.
        let bytes = Database.maximumValueBytes
        let keepsBound = calls.allSatisfy { Self.keepsLengthBound.contains($0.selector) }
        let range: ClosedRange<Int64>? =
            kind != .integer || !keepsBound ? nil : calls.last?.selector == "count" ? 1...(bytes + 1) : 0...bytes
        if calls.count == 2, calls[0].selector == "componentsSeparatedByString:", calls[1].selector == "count",
            case .string(let separator)? = calls[0].arguments.first, !separator.isEmpty,
            separator.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F })
        {
            // Counted from the bytes where they tell it (remodel_separated_count), on
            // any text; the function on the rest. NULL gives NULL.
            return SQLTerm(
                sql:
                    "(CASE WHEN \(c) IS NULL THEN NULL ELSE coalesce(remodel_separated_count(\(c), \(parameter(.text(separator)))), \(exact)) END)",
                kind: termKind, isNullable: true, range: range)
        }
        guard let plain = plainASCII(calls, c) else {
            return SQLTerm(sql: exact, kind: termKind, isNullable: true, range: range)
        }
        // remodel_plain holds for NULL, which every method here gives back.
        return SQLTerm(
            sql: "(CASE WHEN remodel_plain(\(c)) THEN \(plain) ELSE \(exact) END)", kind: termKind, isNullable: true,
            range: range)
    }

    /// SQLite's own SQL for `calls` on `c`, exact where `c` is plain ASCII text (no NUL,
    /// no carriage return, which Swift joins with a line feed into one character); nil
    /// for chains it has none for.
    private mutating func plainASCII(_ calls: [StringCall], _ c: String) -> String? {
        switch (calls.count, calls.first?.selector) {
        case (1, "length"): return "length(\(c))"
        case (1, "uppercaseString"): return "upper(\(c))"
        case (1, "lowercaseString"): return "lower(\(c))"
        case (1, "stringByTrimmingWhitespace"):
            // .whitespacesAndNewlines in ASCII: tab, line feed, vertical tab, form feed,
            // carriage return (never plain text here) and space.
            return "trim(\(c), char(9, 10, 11, 12, 13, 32))"
        default:
            return nil
        }
    }

    /// A branch of a TERNARY, its new guards made to hold only where `condition` does.
    private mutating func branch(_ expression: FormatExpression, taken condition: String) throws(Refusal) -> SQLTerm {
        let before = guards.count
        branchDepth += 1
        defer { branchDepth -= 1 }
        let result = try term(expression)
        for i in before..<guards.count {
            let g = guards[i]
            guards[i] = SQLGuard(condition: "(\(condition)) AND (\(g.condition))", check: g.check, reason: g.reason)
        }
        return result
    }

    /// `predicate` on the source row itself: `$source.x` as the key path `x`. Nil when it
    /// reads anything but stored attributes of `$source` and constants.
    private func onSourceRow(_ predicate: FormatPredicate) -> FormatPredicate? {
        var result = predicate
        switch predicate.kind {
        case .constant:
            return predicate
        case .comparison(var c):
            guard let lhs = onSourceRow(c.lhs), let rhs = onSourceRow(c.rhs) else { return nil }
            (c.lhs, c.rhs) = (lhs, rhs)
            result.kind = .comparison(c)
        case .and(let parts):
            let mapped = parts.compactMap(onSourceRow)
            guard mapped.count == parts.count else { return nil }
            result.kind = .and(mapped)
        case .or(let parts):
            let mapped = parts.compactMap(onSourceRow)
            guard mapped.count == parts.count else { return nil }
            result.kind = .or(mapped)
        case .not(let part):
            guard let mapped = onSourceRow(part) else { return nil }
            result.kind = .not(mapped)
        }
        return result
    }

    private func onSourceRow(_ expression: FormatExpression) -> FormatExpression? {
        if let name = EntityMappingRunner.copiedAttribute(expression) {
            return sourceAttributes[name] == nil ? nil : FormatExpression(.keyPath(operand: nil, path: [name]))
        }
        switch expression.kind {
        case .constant:
            return expression
        case .aggregate(let elements):
            return elements.allSatisfy { if case .constant = $0.kind { true } else { false } } ? expression : nil
        default:
            return nil
        }
    }

    /// A nil operand is an error in the interpreter: such a row is left to it.
    private mutating func nonNil(_ operand: SQLTerm, _ operation: String) {
        if operand.isNullable, !expectNonNil(operand.checkedColumn) {
            guarding(
                "\(operand.nullness ?? operand.sql) IS NULL", check: "no nil in '\(operation)'",
                "a nil operand of '\(operation)' (an error)")
        }
    }

    // MARK: - Writing

    /// The SQL of `term` as the column of `attribute` holds it once coerced and bound as a
    /// ``RowInserter`` does.
    mutating func written(_ term: SQLTerm, to attribute: AttributeDescription) throws(Refusal) -> String {
        guard !attribute.storesExternalEncoding else {
            throw Refusal("\(attribute.name) allows external storage, which the interpreter encodes")
        }
        let x = term.sql
        switch (term.kind, attribute.type) {
        case (.null, _):
            return "NULL"
        case (.integer, .int16), (.integer, .int32), (.integer, .int64):
            let range = attribute.type.integerRange!
            let fits = term.range.map { range.contains($0.lowerBound) && range.contains($0.upperBound) } ?? false
            if range != Int64.min...Int64.max, !fits,
                !expect(term.checkedColumn, { Self.narrowed($0, to: range) })
            {
                guarding(
                    "\(x) NOT BETWEEN \(range.lowerBound) AND \(range.upperBound)", check: "\(attribute.name) in range",
                    "a value out of range for \(attribute.name) (an error)")
            }
            return x
        case (.integer, .double): return "CAST(\(x) AS REAL)"
        case (.double, .float)
        where expect(term.checkedColumn, { ColumnExpectation(.float, allowsNull: $0.allowsNull) }):
            return x
        case (.integer, .float), (.double, .float): return "remodel_float(\(x))"
        case (.integer, .boolean) where expect(term.checkedColumn, { Self.narrowed($0, to: 0...1) }):
            return x
        case (.integer, .boolean):
            guarding(
                "\(x) NOT IN (0, 1)", check: "\(attribute.name) 0 or 1",
                "a number other than 0 or 1 for \(attribute.name) (an error)")
            return x
        case (.bool, .boolean), (.bool, .int16), (.bool, .int32), (.bool, .int64), (.double, .double),
            (.text, .string), (.text, .uri), (.date, .date), (.data, .binary), (.data, .transformable):
            return x
        // (A Double attribute holds the double a decimal converts to, Value.double's, which
        // is what writing a Decimal gives.)
        case (.decimal, .decimal), (.decimal, .double), (.uuid, .uuid):
            return x
        // (A double a Decimal attribute takes is converted as the interpreter converts it.)
        case (.double, .decimal): return "remodel_decimal_written(\(x))"
        default:
            throw Refusal(
                "a \(term.kind) value for the \(attribute.type.rawValue) attribute \(attribute.name) is converted by the interpreter"
            )
        }
    }

    /// `expectation` of integers kept within `range`; nil for other expectations, and
    /// where no integer would do.
    private static func narrowed(_ expectation: ColumnExpectation, to range: ClosedRange<Int64>) -> ColumnExpectation? {
        guard case .integer(let r) = expectation.storage, r.overlaps(range) else { return nil }
        return ColumnExpectation(.integer(r.clamped(to: range)), allowsNull: expectation.allowsNull)
    }

    static func describe(_ expression: FormatExpression) -> String {
        switch expression.kind {
        case .keyPath(let operand, let path):
            if case .variable(let v)? = operand?.kind { return "$\(v).\(path.joined(separator: "."))" }
            return "the key path \(path.joined(separator: "."))"
        case .variable(let name): return "$\(name)"
        case .function(let selector, _): return "the function \(selector)"
        case .functionCall(_, let selector, _):
            return "FUNCTION(…, \(selector.constantString.map { "'\($0)'" } ?? "…"))"
        case .ternary: return "TERNARY"
        case .cast: return "CAST"
        case .subquery: return "SUBQUERY"
        case .fetch: return "FETCH"
        case .aggregate: return "an aggregate"
        case .index: return "an index"
        case .assignment: return "an assignment"
        case .evaluatedObject: return "SELF"
        default: return "the expression"
        }
    }
}
