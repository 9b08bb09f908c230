import ExpressionLanguage
import Foundation

/// What SQL can say about a predicate, row by row: two conditions for SQLite's WHERE.
///
/// - `whenTrue` is true (not false, not NULL) on every row the predicate accepts;
/// - `whenFalse` is true on every row the predicate rejects.
///
/// Both may hold on rows SQL cannot decide; the compiled predicate decides those, as it
/// decides every row a fetch reads. `NOT p` swaps the two rather than applying SQL's NOT,
/// which keeps NULL (a nil value) NULL where the language's NOT of a false comparison is
/// true. docs/object-context.md, "How fetches use SQL", gives the rules.
///
/// An exact narrowing decides every row: on each, exactly one of the two conditions is
/// true and neither is NULL, and the predicate gives the same answer. Fetches then take
/// SQL's answer for saved rows without evaluating the predicate on them (which, for
/// `image != nil`, would load every image). Nil tests of the fetched entity's own
/// attributes are exact, and so are AND, OR and NOT of exact parts.
struct SQLNarrowing: Hashable {
    var whenTrue: String
    var whenFalse: String
    var isExact = false
    /// True on every row SQL may not decide (where both conditions may hold): the rows
    /// an atom reads differently from the language (another storage class, text that is
    /// not plain ASCII), those of any part of AND, OR and NOT; `1` where nothing is known
    /// of it, `0` for an exact narrowing. Cheaper to test than both conditions together.
    var uncertain: String

    init(whenTrue: String, whenFalse: String, isExact: Bool = false, uncertain: String? = nil) {
        self.whenTrue = whenTrue
        self.whenFalse = whenFalse
        self.isExact = isExact
        self.uncertain = isExact ? "0" : uncertain ?? "1"
    }

    /// Nothing known: every row may go either way.
    static let unknown = SQLNarrowing(whenTrue: "1", whenFalse: "1")
    static let always = SQLNarrowing(whenTrue: "1", whenFalse: "0", isExact: true)
    static let never = SQLNarrowing(whenTrue: "0", whenFalse: "1", isExact: true)

    var negated: SQLNarrowing {
        SQLNarrowing(whenTrue: whenFalse, whenFalse: whenTrue, isExact: isExact, uncertain: uncertain)
    }
}

/// Translates fetch predicates to ``SQLNarrowing``s over Core Data's tables, with the
/// constants as numbered parameters (`?1`, `?2`, …; equal constants share one).
///
/// The fetched table is `t0`; relationships are followed with `EXISTS` subqueries over
/// `t1`, `t2`, …. What it cannot translate exactly enough stays `1`: comparisons of two key
/// paths, functions, arithmetic other than a double's (``arithmetic(_:_:_:)``), MATCHES,
/// decimal and UUID values, paths into tables that have unsaved changes (SQL would see
/// them as they were saved).
struct PredicateTranslator {
    private let bindings: [String: EntityBinding]
    private let unsavedTables: Set<String>
    /// The values of `?1`, `?2`, ….
    private(set) var parameters: [SQLiteValue] = []
    private var parameterNumbers: [SQLiteValue: Int] = [:]
    private var aliasCount = 0
    /// Whether every column holds NULL or its attribute type's storage class (a store
    /// Remodel wrote and validated: ``StoreLayout/rowConditions(of:on:storeIsWellTyped:)``),
    /// so that no row is read differently for its storage class.
    private let storeIsWellTyped: Bool
    /// What names the tables relationships lead into: `src.` where the store is attached
    /// under that name to another store's connection (a migration's SQL).
    private let schema: String

    init(
        bindings: [String: EntityBinding], unsavedTables: Set<String>, storeIsWellTyped: Bool = false,
        schema: String = ""
    ) {
        self.bindings = bindings
        self.unsavedTables = unsavedTables
        self.storeIsWellTyped = storeIsWellTyped
        self.schema = schema
    }

    /// The narrowing of `predicate` for rows of `entity`'s table, read as `t0`.
    mutating func translate(_ predicate: FormatPredicate, on entity: EntityBinding) -> SQLNarrowing {
        narrowing(predicate, entity, "t0")
    }

    private mutating func narrowing(_ p: FormatPredicate, _ entity: EntityBinding, _ alias: String) -> SQLNarrowing {
        switch p.kind {
        case .constant(let value):
            return value ? .always : .never
        case .not(let operand):
            return narrowing(operand, entity, alias).negated
        case .and(let operands):
            let parts = operands.map { narrowing($0, entity, alias) }
            return SQLNarrowing(
                whenTrue: SQL.all(parts.map(\.whenTrue)), whenFalse: SQL.any(parts.map(\.whenFalse)),
                isExact: parts.allSatisfy(\.isExact), uncertain: SQL.any(parts.map(\.uncertain)))
        case .or(let operands):
            let parts = operands.map { narrowing($0, entity, alias) }
            return SQLNarrowing(
                whenTrue: SQL.any(parts.map(\.whenTrue)), whenFalse: SQL.all(parts.map(\.whenFalse)),
                isExact: parts.allSatisfy(\.isExact), uncertain: SQL.any(parts.map(\.uncertain)))
        case .comparison(let c):
            return comparison(c, entity, alias) ?? .unknown
        }
    }

    // MARK: - Comparisons

    /// `path OP constant`, with ANY/ALL when the path crosses one to-many relationship.
    private mutating func comparison(_ c: Comparison, _ entity: EntityBinding, _ alias: String) -> SQLNarrowing? {
        guard let (path, op, constant) = Self.keyPathAndConstant(c) else { return arithmetic(c, entity, alias) }
        guard let (steps, end) = resolve(path, from: entity) else { return nil }
        let toMany = steps.firstIndex { if case .toMany = $0 { true } else { false } }
        let toManys = steps.filter { if case .toMany = $0 { true } else { false } }.count
        guard toManys == (c.modifier == .direct ? 0 : 1) else { return nil }

        var aliases = [alias]
        for _ in steps { aliases.append(newAlias()) }
        guard let atom = atom(end, aliases.last!, op, c.options, constant) else { return nil }
        var result = atom.narrowing
        for (i, step) in steps.enumerated().reversed() {
            let outer = aliases[i], inner = aliases[i + 1]
            switch step {
            case .toOne(let column, let destination):
                // A missing object makes the rest of the path nil: before a to-many that is a
                // nil collection (ANY is false, ALL true), elsewhere a nil value.
                let beforeToMany = toMany.map { i < $0 } ?? false
                let nilAnswer = beforeToMany ? c.modifier == .all : atom.acceptsNil
                let isNull = "\(outer).\(column) IS NULL"
                let row = "FROM \(schema)\(destination.layout.table) \(inner) WHERE \(inner).Z_PK = \(outer).\(column)"
                result = SQLNarrowing(
                    whenTrue: SQL.any([SQL.exists(row, result.whenTrue), nilAnswer ? isNull : "0"]),
                    whenFalse: SQL.any([SQL.exists(row, result.whenFalse), nilAnswer ? "0" : isNull]))
            case .toMany(let link, let destination):
                let rows = Self.rows(link, destination, outer, inner, schema: schema)
                // ANY: some row passes, or every row fails. ALL is NOT ANY NOT.
                let any = { (n: SQLNarrowing) in
                    SQLNarrowing(
                        whenTrue: SQL.exists(rows, n.whenTrue),
                        whenFalse: SQL.not(SQL.exists(rows, SQL.not(n.whenFalse))))
                }
                result = c.modifier == .all ? any(result.negated).negated : any(result)
            }
        }
        return result
    }

    /// The key path and the constant of a comparison, the key path put on the left
    /// (`10 < price` is `price > 10`, `{1, 2} CONTAINS x` is `x IN {1, 2}`).
    private static func keyPathAndConstant(_ c: Comparison) -> ([String], ComparisonOperator, Value)? {
        if let path = keyPath(c.lhs), let value = constant(c.rhs) { return (path, c.op, value) }
        guard c.modifier == .direct, let value = constant(c.lhs), let path = keyPath(c.rhs),
            let mirrored = mirrored(c.op)
        else { return nil }
        return (path, mirrored, value)
    }

    /// `op` with its operands swapped: `a < b` is `b > a`.
    private static func mirrored(_ op: ComparisonOperator) -> ComparisonOperator? {
        switch op {
        case .equalTo, .notEqualTo: op
        case .lessThan: .greaterThan
        case .lessThanOrEqualTo: .greaterThanOrEqualTo
        case .greaterThan: .lessThan
        case .greaterThanOrEqualTo: .lessThanOrEqualTo
        case .contains: .in
        case .in: .contains
        default: nil
        }
    }

    // MARK: - Arithmetic

    /// An arithmetic term over the fetched row's own number attributes and number
    /// constants (``doubleTerm(_:_:_:)``).
    private struct DoubleTerm {
        var sql: String
        /// Whether the language's value is a double: a double attribute or constant.
        var isDouble: Bool
        /// The attributes it reads.
        var reads: [Operand]
    }

    /// `e` as SQL where every operation in it gives a double in the language (one of its
    /// operands a double attribute, a double constant or such an operation; `+`, `-`,
    /// `*`, `/`, negation): SQLite's REAL arithmetic is then the language's IEEE 754
    /// arithmetic, and an integer is converted to a double as both convert it. Integer
    /// arithmetic (which the language reports on overflow, and SQLite turns to REAL) and
    /// `**` are not translated. Nil for anything else.
    private mutating func doubleTerm(_ e: FormatExpression, _ entity: EntityBinding, _ alias: String) -> DoubleTerm? {
        switch e.kind {
        case .constant(.integer(let i)): return DoubleTerm(sql: parameter(.integer(i)), isDouble: false, reads: [])
        case .constant(.double(let d)) where !d.isNaN:
            return DoubleTerm(sql: parameter(.real(d)), isDouble: true, reads: [])
        case .negate(let a):
            guard let term = doubleTerm(a, entity, alias), term.isDouble else { return nil }
            return DoubleTerm(sql: "(-\(term.sql))", isDouble: true, reads: term.reads)
        case .arithmetic(let op, let a, let b) where op != .power:
            guard let l = doubleTerm(a, entity, alias), let r = doubleTerm(b, entity, alias), l.isDouble || r.isDouble
            else { return nil }
            return DoubleTerm(sql: "(\(l.sql) \(op.rawValue) \(r.sql))", isDouble: true, reads: l.reads + r.reads)
        default:
            // (An integer's or a double's column, read as it is.)
            guard let path = Self.keyPath(e), let (steps, end) = resolve(path, from: entity), steps.isEmpty,
                case .attribute(let type, _) = end, [.int16, .int32, .int64, .double].contains(type)
            else { return nil }
            let read = operand(end, alias)
            return DoubleTerm(sql: read.value, isDouble: type == .double, reads: [read])
        }
    }

    /// A comparison of a double's arithmetic (``doubleTerm(_:_:_:)``, `price * 1.03 > 50`)
    /// with a constant. Left to the predicate: a row where the term is NULL in SQL (a nil
    /// operand, which the language reports as an error; a NaN, which SQLite makes NULL; a
    /// division by zero, which SQLite makes NULL and the language infinity), and one whose
    /// column holds another storage class than its type's.
    private mutating func arithmetic(_ c: Comparison, _ entity: EntityBinding, _ alias: String) -> SQLNarrowing? {
        func isArithmetic(_ e: FormatExpression) -> Bool {
            switch e.kind {
            case .arithmetic, .negate: true
            default: false
            }
        }
        guard c.modifier == .direct, c.options.isEmpty else { return nil }
        var (term, op, other) = (c.lhs, c.op, c.rhs)
        if !isArithmetic(term) {
            guard isArithmetic(c.rhs), let mirrored = Self.mirrored(c.op), mirrored != .contains else { return nil }
            (term, op, other) = (c.rhs, mirrored, c.lhs)
        }
        guard let constant = Self.constant(other), !constant.isNull, let value = doubleTerm(term, entity, alias),
            value.isDouble
        else { return nil }
        let operand = Operand(value: value.sql, column: nil, storage: [], kind: .number)
        guard let test = test(operand, op == .notEqualTo ? .equalTo : op, c.options, constant) else { return nil }
        var undecided = ["(\(value.sql)) IS NULL"]
        if !storeIsWellTyped { undecided += value.reads.compactMap(\.ofAnotherClass) }
        let narrowing = SQLNarrowing(
            whenTrue: SQL.any([test] + undecided), whenFalse: SQL.any([SQL.not(test)] + undecided),
            uncertain: SQL.any(undecided))
        return op == .notEqualTo ? narrowing.negated : narrowing
    }

    private static func keyPath(_ e: FormatExpression) -> [String]? {
        switch e.kind {
        case .evaluatedObject: return []
        case .keyPath(nil, let path): return path
        case .keyPath(let operand?, let path) where operand.kind == .evaluatedObject: return path
        default: return nil
        }
    }

    private static func constant(_ e: FormatExpression) -> Value? {
        switch e.kind {
        case .constant(let value): return value
        case .aggregate(let elements):
            var values: [Value] = []
            for element in elements {
                guard case .constant(let value) = element.kind else { return nil }
                values.append(value)
            }
            return .array(values)
        default: return nil
        }
    }

    // MARK: - Key paths

    /// One relationship a key path goes through.
    private enum Step {
        /// A to-one: `column` holds the destination's `Z_PK`.
        case toOne(column: String, destination: EntityBinding)
        case toMany(ToMany, destination: EntityBinding)
    }

    /// How a to-many relationship finds its destinations.
    private enum ToMany {
        /// The inverse's to-one column in the destination's table.
        case inverse(column: String)
        case joinTable(StoreLayout.JoinTable.Side)
    }

    /// What a key path reads at its last row.
    private enum End {
        case attribute(AttributeType, column: String)
        /// An object: a to-one's key column, or `Z_PK` for the row's own object, in `table`.
        case object(column: String, table: String)
        /// `toMany.@count`.
        case count(ToMany, destination: EntityBinding)
    }

    /// Resolves a key path as the object's key-value coding reads it (attributes, then
    /// to-one, then to-many relationships). Nil when a key is unknown to the entity (it may
    /// belong to a sub-entity; the predicate decides) or a relationship leads into a table
    /// with unsaved changes.
    private func resolve(_ path: [String], from start: EntityBinding) -> ([Step], End)? {
        var entity = start
        var steps: [Step] = []
        for (i, key) in path.enumerated() {
            let isLast = i == path.count - 1
            if key == "@count", isLast, case .toMany(let link, let destination)? = steps.last {
                steps.removeLast()
                return (steps, .count(link, destination: destination))
            }
            if let slot = entity.attributeSlots[key] {
                guard isLast else { return nil }
                return (steps, .attribute(entity.attributes[slot].type, column: entity.attributeColumns[slot]))
            }
            if let slot = entity.slot(ofToOne: key), let destination = bindings[entity.toOnes[slot].destination] {
                let column = entity.toOneColumns[slot].key
                if isLast { return (steps, .object(column: column, table: destination.layout.table)) }
                guard !unsavedTables.contains(destination.layout.table) else { return nil }
                steps.append(.toOne(column: column, destination: destination))
                entity = destination
            } else if let relationship = entity.toManys[key], let destination = bindings[relationship.destination] {
                let link: ToMany
                if let side = entity.layout.joinTables[key] {
                    guard !unsavedTables.contains(side.table) else { return nil }
                    link = .joinTable(side)
                } else if let inverse = entity.layout.toManyInverses[key],
                    let column = destination.layout.toOneColumns[inverse]
                {
                    link = .inverse(column: column.key)
                } else {
                    return nil
                }
                guard !unsavedTables.contains(destination.layout.table) else { return nil }
                steps.append(.toMany(link, destination: destination))
                entity = destination
            } else {
                return nil
            }
        }
        // An empty path is the object itself; a path may end with a to-many for ANY/ALL.
        return (steps, .object(column: "Z_PK", table: entity.layout.table))
    }

    /// `FROM … WHERE …` selecting the destinations of a to-many relationship of `outer`'s
    /// row, as the context reads them.
    private static func rows(
        _ link: ToMany, _ destination: EntityBinding, _ outer: String, _ inner: String, schema: String
    ) -> String {
        let table = schema + destination.layout.table
        switch link {
        case .inverse(let column):
            let numbers = destination.layout.numberList
            return "FROM \(table) \(inner) WHERE \(inner).\(column) = \(outer).Z_PK AND \(inner).Z_ENT IN (\(numbers))"
        case .joinTable(let side):
            return
                "FROM \(schema)\(side.table) \(inner)j JOIN \(table) \(inner) ON \(inner).Z_PK = \(inner)j.\(side.destinationColumn) "
                + "WHERE \(inner)j.\(side.sourceColumn) = \(outer).Z_PK"
        }
    }

    private mutating func newAlias() -> String {
        aliasCount += 1
        return "t\(aliasCount)"
    }

    // MARK: - Atoms

    /// A comparison at the last row of a key path, and its answer when the value there is
    /// nil (so that the steps before can account for missing objects).
    private struct Atom {
        var narrowing: SQLNarrowing
        var acceptsNil: Bool
    }

    /// How a value looks in SQL.
    private enum Kind: Equatable {
        case number, string, date, data
        case object(table: String)
        /// Decimal and UUID values: nothing but nil is translated.
        case opaque
    }

    private struct Operand {
        /// The value, as the attribute's type reads it: `t0.ZPRICE`, `(t0.ZFLAG <> 0)`.
        var value: String
        /// The column, for `IS NULL` and the storage test; nil for a value never NULL.
        var column: String?
        /// The storage classes the context reads exactly; others are left to the predicate.
        var storage: [String]
        var kind: Kind

        /// True on a row whose column holds another storage class than those (which the
        /// context reads otherwise than SQLite compares it); nil where it has none.
        var ofAnotherClass: String? {
            guard let column, !storage.isEmpty else { return nil }
            return "typeof(\(column)) NOT IN (\((storage + ["null"]).map { "'\($0)'" }.joined(separator: ", ")))"
        }
    }

    private mutating func operand(_ end: End, _ alias: String) -> Operand {
        switch end {
        case .attribute(let type, let name):
            let column = "\(alias).\(name)"
            switch type {
            case .int16, .int32, .int64:
                return Operand(value: column, column: column, storage: ["integer"], kind: .number)
            case .boolean:
                return Operand(value: "(\(column) <> 0)", column: column, storage: ["integer"], kind: .number)
            case .double, .float: return Operand(value: column, column: column, storage: ["real"], kind: .number)
            case .date: return Operand(value: column, column: column, storage: ["integer", "real"], kind: .date)
            case .string, .uri:
                return Operand(value: "\(column) COLLATE BINARY", column: column, storage: ["text"], kind: .string)
            case .binary, .transformable: return Operand(value: column, column: column, storage: ["blob"], kind: .data)
            case .decimal, .uuid, .undefined, .objectID, .composite:
                return Operand(value: column, column: column, storage: [], kind: .opaque)
            }
        case .object(let name, let table):
            return Operand(
                value: "\(alias).\(name)", column: "\(alias).\(name)", storage: [], kind: .object(table: table))
        case .count(let link, let destination):
            let rows = Self.rows(link, destination, alias, newAlias(), schema: schema)
            return Operand(value: "(SELECT count(*) \(rows))", column: nil, storage: [], kind: .number)
        }
    }

    private mutating func atom(
        _ end: End, _ alias: String, _ op: ComparisonOperator,
        _ options: ComparisonOptions, _ constant: Value
    ) -> Atom? {
        if op == .notEqualTo, !constant.isNull {
            guard let equal = atom(end, alias, .equalTo, options, constant) else { return nil }
            return Atom(narrowing: equal.narrowing.negated, acceptsNil: !equal.acceptsNil)
        }
        var operand = operand(end, alias)
        let isNull = operand.column.map { "\($0) IS NULL" } ?? "0"
        if constant.isNull {
            // Nil rules: both nil are equal, and <= and >= hold; every other operator is false.
            let isNotNull = operand.column.map { "\($0) IS NOT NULL" } ?? "1"
            // An attribute reads as nil exactly when its column is NULL, whatever its type
            // and whatever SQLite stored (an empty blob is data, unparseable decimal text
            // is 0), so SQL decides these alone. (Key paths through relationships are made
            // inexact by the steps around the atom.)
            let exact = if case .attribute = end { true } else { false }
            switch op {
            case .equalTo, .lessThanOrEqualTo, .greaterThanOrEqualTo:
                return Atom(
                    narrowing: SQLNarrowing(whenTrue: isNull, whenFalse: isNotNull, isExact: exact), acceptsNil: true)
            case .notEqualTo:
                return Atom(
                    narrowing: SQLNarrowing(whenTrue: isNotNull, whenFalse: isNull, isExact: exact), acceptsNil: false)
            default:
                return Atom(narrowing: .never, acceptsNil: false)
            }
        }
        let foldsCase = options.contains(.caseInsensitive) && !options.contains(.normalized)
        if operand.kind == .string, foldsCase, let column = operand.column { operand.value = "lower(\(column))" }
        guard let test = test(operand, op, options, constant) else { return nil }
        guard test != "0" else { return Atom(narrowing: .never, acceptsNil: false) }
        // Rows the context reads differently from SQLite go to the predicate: values of
        // another storage class than the type's, and text that is not plain ASCII (case
        // folding, canonical equivalence and grapheme clusters are the language's).
        var undecided: [String] = []
        if !storeIsWellTyped, let other = operand.ofAnotherClass { undecided.append(other) }
        // Only the empty text equals the empty string, whatever else text holds: no
        // character is canonically equivalent to nothing, and repaired UTF-8 is never empty.
        let equalsEmpty = op == .equalTo && options.isEmpty && constant == .string("")
        if operand.kind == .string, let column = operand.column, !equalsEmpty {
            undecided.append("\(column) GLOB \(parameter(.text(Self.notPlainText)))")
            undecided.append("length(\(column)) <> length(CAST(\(column) AS BLOB))")
        }
        // Elsewhere `test` is exact: 0 or 1, or NULL on a NULL column (nil, which no
        // comparison with a value accepts), where `whenFalse` holds. In a well-typed store
        // an attribute's comparison may have no such rows at all.
        let exact = storeIsWellTyped && undecided.isEmpty && !operand.storage.isEmpty && operand.column != nil
        return Atom(
            narrowing: SQLNarrowing(
                whenTrue: SQL.any([test] + undecided),
                whenFalse: SQL.any([SQL.not(test)] + undecided + [isNull]), isExact: exact,
                uncertain: SQL.any(undecided)),
            acceptsNil: false)
    }

    /// A GLOB pattern for text with a character outside ASCII, a CR (CR LF is one
    /// character) or bytes that are not UTF-8. (Text with a NUL is caught by comparing
    /// lengths: `length` stops at a NUL.)
    static let notPlainText = "*[^\u{1}-\u{C}\u{E}-\u{7F}]*"

    /// The comparison of a non-nil value with a non-nil constant, exact for values of the
    /// operand's storage class (and plain ASCII text); "0" when it is false for every
    /// non-nil value; nil when SQL cannot tell (or the predicate raises an error).
    private mutating func test(
        _ operand: Operand, _ op: ComparisonOperator, _ options: ComparisonOptions, _ constant: Value
    ) -> String? {
        let v = operand.value
        switch op {
        case .equalTo:
            switch bound(constant, operand.kind, options, literal: true) {
            case .value(let p): return "\(v) = \(p)"
            case .otherKind: return "0"  // isEqual: is false across kinds
            case .unknown: return nil
            }
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            guard [.number, .string, .date].contains(operand.kind),
                case .value(let p) = bound(constant, operand.kind, options)
            else {
                return nil
            }
            return "\(v) \(op.rawValue) \(p)"
        case .between:
            guard [.number, .string, .date].contains(operand.kind), let bounds = constant.collectionElements,
                bounds.count == 2
            else {
                return nil
            }
            if bounds.contains(where: \.isNull) { return "0" }
            guard case .value(let low) = bound(bounds[0], operand.kind, options),
                case .value(let high) = bound(bounds[1], operand.kind, options)
            else { return nil }
            return "\(v) BETWEEN \(low) AND \(high)"
        case .in:
            let elements: [Value]
            switch constant {
            case .array(let a): elements = a
            case .set(let s): elements = Array(s)
            case .dictionary(let d): elements = Array(d.values)
            default: return nil  // a string to search, or an error
            }
            var list: [String] = []
            for element in elements where !element.isNull {
                switch bound(element, operand.kind, options, literal: true) {
                case .value(let p): list.append(p)
                case .otherKind: continue
                case .unknown: return nil
                }
            }
            return list.isEmpty ? "0" : "\(v) IN (\(list.joined(separator: ", ")))"
        case .beginsWith, .endsWith, .contains, .like:
            guard operand.kind == .string, case .string(let s) = constant else { return nil }
            let glob: String
            switch op {
            case .like: glob = Self.glob(like: s, options)
            case _ where s.isEmpty: return "0"  // an empty needle is never found
            case .beginsWith: glob = Self.globEscaped(Self.key(s, options)) + "*"
            case .endsWith: glob = "*" + Self.globEscaped(Self.key(s, options))
            default: glob = "*" + Self.globEscaped(Self.key(s, options)) + "*"
            }
            return "\(v) GLOB \(parameter(.text(glob)))"
        default:
            return nil
        }
    }

    private enum Bound {
        case value(String)
        /// A constant of another kind than the operand's: never equal.
        case otherKind
        case unknown
    }

    /// `constant` as a parameter compared with an operand of `kind`.
    /// - Parameter literal: for equality and membership, which compare strings by their
    ///   UTF-16 code units when no option folds them: the constant is not composed.
    private mutating func bound(_ constant: Value, _ kind: Kind, _ options: ComparisonOptions, literal: Bool = false)
        -> Bound
    {
        let value: SQLiteValue
        switch (kind, constant) {
        case (.opaque, _), (_, .null): return .unknown
        case (.number, .integer(let i)): value = .integer(i)
        case (.number, .bool(let b)): value = .integer(b ? 1 : 0)
        case (.number, .double(let d)) where !d.isNaN: value = .real(d)
        case (.number, .double), (.number, .decimal): return .unknown
        case (.string, .string(let s)): value = .text(literal && options.isEmpty ? s : Self.key(s, options))
        case (.date, .date(let d)): value = .real(d.timeIntervalSinceReferenceDate)
        case (.data, .data(let d)): value = .blob(d)
        case (.object(let table), .object(let reference)):
            // Objects are equal when they name the same row.
            guard let object = reference.object as? ManagedObject, object.objectID.table == table else {
                return .otherKind
            }
            value = .integer(object.objectID.primaryKey)
        default:
            return .otherKind
        }
        return .value(parameter(value))
    }

    /// A string constant as plain ASCII text compares with it: folded as the options fold,
    /// in canonical composition (so that the Kelvin sign is `K`).
    private static func key(_ s: String, _ options: ComparisonOptions) -> String {
        let folded = options.folding(s)
        return folded.utf8.allSatisfy { $0 < 0x80 } ? folded : folded.precomposedStringWithCanonicalMapping
    }

    /// A LIKE pattern as a GLOB pattern over the folded text: `*` and `?` stay, a
    /// backslash makes the next character literal, literal text is folded as LIKE folds it.
    private static func glob(like pattern: String, _ options: ComparisonOptions) -> String {
        var glob = ""
        var run = String.UnicodeScalarView()
        func flush() {
            glob += globEscaped(key(String(run), options))
            run = String.UnicodeScalarView()
        }
        var scalars = pattern.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            switch scalar {
            case "\\": run.append(scalars.next() ?? "\\")
            case "*", "?":
                flush()
                glob.unicodeScalars.append(scalar)
            default: run.append(scalar)
            }
        }
        flush()
        return glob
    }

    private static func globEscaped(_ s: String) -> String {
        var escaped = ""
        for ch in s {
            switch ch {
            case "*", "?", "[": escaped += "[\(ch)]"
            default: escaped.append(ch)
            }
        }
        return escaped
    }

    private mutating func parameter(_ value: SQLiteValue) -> String {
        if let n = parameterNumbers[value] { return "?\(n)" }
        parameters.append(value)
        parameterNumbers[value] = parameters.count
        return "?\(parameters.count)"
    }
}

/// Building SQL conditions, with `1` and `0` folded away.
enum SQL {
    static func all(_ parts: [String]) -> String {
        if parts.contains("0") { return "0" }
        return joined(parts.filter { $0 != "1" }, "AND", empty: "1")
    }

    static func any(_ parts: [String]) -> String {
        if parts.contains("1") { return "1" }
        return joined(parts.filter { $0 != "0" }, "OR", empty: "0")
    }

    static func not(_ x: String) -> String {
        switch x {
        case "1": "0"
        case "0": "1"
        default: "NOT (\(x))"
        }
    }

    /// `EXISTS (SELECT 1 FROM … WHERE … AND condition)`.
    static func exists(_ rows: String, _ condition: String) -> String {
        if condition == "0" { return "0" }
        return "EXISTS (SELECT 1 \(rows)\(condition == "1" ? "" : " AND \(condition)"))"
    }

    /// Long lists are nested in halves, because SQLite limits how deep an expression
    /// may be (a flat chain of 1,000 ORs is too deep).
    private static func joined(_ parts: [String], _ op: String, empty: String) -> String {
        switch parts.count {
        case 0: return empty
        case 1: return parts[0]
        case ...8: return "(" + parts.joined(separator: " \(op) ") + ")"
        default:
            let half = parts.count / 2
            return "(" + joined(Array(parts[..<half]), op, empty: empty) + " \(op) "
                + joined(Array(parts[half...]), op, empty: empty) + ")"
        }
    }
}

extension StoreLayout {
    /// What SQL says of `request`'s predicate over the fetched table read as `t0`, as a
    /// fetch from a saved store reads it: `condition` is true on every row the predicate
    /// accepts (a fetch reads only those rows), and when `isExact` it is true on exactly
    /// those, so the predicate need not be evaluated. Its constants are `?1`, `?2`, … with
    /// `parameters`' values. Nil when the request's entity is not in the model.
    public func fetchCondition(for request: FetchRequest) -> (
        condition: String, parameters: [SQLiteValue], isExact: Bool
    )? {
        guard let predicate = request.predicate else { return ("1", [], true) }
        guard let narrowing = rowConditions(of: predicate, on: request.entityName) else { return nil }
        return (narrowing.whenTrue, narrowing.parameters, narrowing.isExact)
    }

    /// Both conditions SQL says of `predicate` on a row of `entityName`'s table read as
    /// `t0`: `whenTrue` is true (not false, not NULL) on every row the predicate accepts,
    /// `whenFalse` on every row it rejects. So on a row where exactly one of them is true,
    /// that one is the predicate's answer; where both are, SQL cannot tell. When `isExact`,
    /// exactly one is true on every row. Constants are `?1`, `?2`, … with `parameters`'
    /// values; key paths through relationships read the tables they lead into by their
    /// names, in `schema` when one is given (`src.` for a store attached under that name);
    /// the row itself is `t0`. Nil when the entity is not in the model.
    ///
    /// When `storeIsWellTyped`, the store is taken to hold in every attribute's column NULL
    /// or the storage class its type is written with, as every store Remodel writes does
    /// (docs/pushdown.md, "A store the run wrote"): no row is then left undecided for
    /// its storage class.
    public func rowConditions(
        of predicate: FormatPredicate, on entityName: String, storeIsWellTyped: Bool = false, schema: String = ""
    ) -> (whenTrue: String, whenFalse: String, parameters: [SQLiteValue], isExact: Bool, uncertain: String)? {
        var bindings: [String: EntityBinding] = [:]
        for entity in model.entities {
            bindings[entity.name] = EntityBinding(entity: entity, model: model, layout: self)
        }
        guard let binding = bindings[entityName] else { return nil }
        var translator = PredicateTranslator(
            bindings: bindings, unsavedTables: [], storeIsWellTyped: storeIsWellTyped, schema: schema)
        let narrowing = translator.translate(predicate, on: binding)
        return (narrowing.whenTrue, narrowing.whenFalse, translator.parameters, narrowing.isExact, narrowing.uncertain)
    }
}
