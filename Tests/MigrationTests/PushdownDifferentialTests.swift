import ExpressionLanguage
import Foundation
import ObjectGraph
import Synchronization
import Testing
import TestSupport

@testable import Migration

/// Every expression form the SQL path translates, run both ways (SQL, and the interpreter
/// with `pushdown` off) on generated rows with NULLs, extremes, integer and double mixes,
/// non-ASCII and ill-formed text and empty strings: the stores must be the same bit for
/// bit (every column of every row, `Z_OPT` and `Z_PRIMARYKEY` included), or both runs must
/// fail with the same error (docs/pushdown.md, "How exactness is tested").
@Suite struct PushdownDifferentialTests {
    static let source = """
        {"version": "D1", "entities": {
          "Group": {"attributes": {"name": "string", "rank": "int32", "weight": "double"},
                    "relationships": {"members": {"destination": "Row", "inverse": "group", "toMany": true}}},
          "Row": {"attributes": {"i16": "int16", "i32": "int32", "i64": "int64", "flag": "boolean", "dbl": "double",
                                 "flt": "float", "when": "date", "text": "string", "blob": "binary",
                                 "price": "double", "count": "int32", "label": "string"},
                  "relationships": {"group": {"destination": "Group", "inverse": "members"}}}}}
        """
    static let destination = """
        {"version": "D2", "entities": {
          "Group": {"attributes": {"name": "string", "rank": "int32", "weight": "double"},
                    "relationships": {"members": {"destination": "Row", "inverse": "group", "toMany": true}}},
          "Row": {"attributes": {"i16": "int16", "i32": "int32", "i64": "int64", "flag": "boolean", "dbl": "double",
                                 "flt": "float", "when": "date", "text": "string", "blob": "binary",
                                 "price": "double", "count": "int32",
                                 "label": {"type": "string", "optional": false, "default": "(none)"},
                                 "out16": "int16", "out64": "int64", "outFlag": "boolean", "outDouble": "double",
                                 "outFloat": "float", "outText": "string", "outDate": "date", "outData": "binary",
                                 "extra": {"type": "int32", "default": 7}},
                  "relationships": {"group": {"destination": "Group", "inverse": "members"}}}}}
        """

    /// How a form is expected to run on the generated rows.
    enum Expected {
        /// Stage 1 as SQL, the expression translated (a TERNARY's condition may leave
        /// the odd rows to the interpreter).
        case sql
        /// Stage 1 as SQL, the expression evaluated by the interpreter row by row inside it.
        case evaluated
        /// Stage 1 as SQL, the expression translated, the interpreter evaluating it on the
        /// rows SQL cannot decide (text that is not plain ASCII): fewer than half.
        case partly
        /// Planned as SQL, but a row meets a guard: interpreted (and usually an error).
        case guarded
        /// Not translated.
        case interpreted
        /// As SQL, failing on a row with the interpreter's error.
        case fails
    }

    static let forms: [(attribute: String, expression: String, expected: Expected)] = [
        // Copies and widenings.
        ("out16", "$source.i16", .sql),
        ("out64", "$source.i32", .sql),
        ("out16", "$source.i64", .guarded),  // out of range: an error
        ("outDouble", "$source.i64", .sql),
        ("outDouble", "$source.count", .sql),
        ("outFloat", "$source.dbl", .sql),
        ("outFloat", "$source.i32", .sql),
        ("outFlag", "$source.flag", .sql),
        ("out64", "$source.flag", .sql),
        ("outFlag", "$source.i16", .guarded),  // not 0 or 1: an error
        ("outText", "$source.text", .sql),
        ("outText", "FUNCTION($source, 'valueForKey:', 'label')", .sql),
        ("outData", "$source.blob", .sql),
        ("outDate", "$source.when", .sql),
        // Constants.
        ("out16", "42", .sql),
        ("out16", "70000", .interpreted),  // out of range: an error
        ("outText", "'Zoë'", .sql),
        ("outText", "nil", .sql),
        ("outDouble", "2.5", .sql),
        ("outDouble", "7", .sql),
        ("outFlag", "YES", .sql),
        ("outFloat", "0.1", .sql),
        // Arithmetic with a double.
        ("outDouble", "$source.price * 1.03", .sql),
        ("outDouble", "$source.count * 1.5", .sql),
        ("outDouble", "$source.price + $source.count", .sql),
        ("outDouble", "$source.price / 3", .sql),
        ("outDouble", "$source.price * 0", .sql),  // infinity × 0: a NaN, stored as NULL both ways
        ("outDouble", "-$source.price", .sql),
        ("outDouble", "$source.price - 0.1 * $source.count", .sql),
        ("outFloat", "$source.price * 1.1", .sql),
        ("outDouble", "$source.dbl * 1.03", .guarded),  // a nil operand: an error
        ("out64", "$source.price * 2", .guarded),  // a non-integral double for an integer: refused when written
        // Integer arithmetic: 64-bit both ways, division truncating toward zero; an overflow
        // or a division by zero (the interpreter's errors) is a guarded row.
        ("outDouble", "$source.count + 1", .sql),
        ("out64", "$source.count * 2 - 7", .sql),
        ("out64", "$source.count / 3", .sql),
        ("out64", "-7 / 2 + $source.count", .sql),
        ("out64", "$source.count * $source.count", .sql),
        ("out64", "$source.count / ($source.count - 1)", .fails),  // a count of 1: the interpreter's division by zero
        // TERNARY whose condition SQL decides exactly: a CASE, each branch's guards
        // checked only where it is taken.
        ("outText", "TERNARY($source.flag == YES, 'y', 'n')", .sql),
        ("outText", "TERNARY($source.i16 >= 2, 'high', TERNARY($source.i16 == 1, 'normal', 'low'))", .sql),
        ("outDouble", "TERNARY($source.dbl == nil, -1.0, $source.dbl * 2)", .sql),
        ("outDouble", "TERNARY($source.dbl != nil AND $source.i32 > 100, $source.dbl, nil)", .sql),
        ("out16", "TERNARY($source.i32 BETWEEN {-5, 5}, $source.i32, 0)", .sql),
        ("outText", "TERNARY($source.text == nil, $source.label, $source.text)", .sql),
        ("outText", "TERNARY(NOT ($source.count < 0), 'non-negative', nil)", .sql),
        // A nil dbl where the branch is taken; a double or an integer; text not plain ASCII
        // is the interpreter's.
        ("outDouble", "TERNARY($source.i16 > 0, $source.dbl * 2, 0.5)", .guarded),
        ("outDouble", "TERNARY($source.i16 > 0, 1.5, 2)", .evaluated),
        ("outText", "TERNARY($source.text BEGINSWITH 'row', 'r', 'o')", .partly),
        // String methods: SQLite's functions on plain ASCII text, the registry's own
        // implementations (remodel_string) on every other value of the column.
        ("outText", "FUNCTION($source.text, 'lowercaseString')", .sql),
        ("outText", "FUNCTION($source.label, 'stringByTrimmingWhitespace')", .sql),
        ("out64", "FUNCTION($source.text, 'length')", .sql),
        ("out64", "FUNCTION(FUNCTION($source.text, 'componentsSeparatedByString:', ','), 'count')", .sql),
        ("out64", "FUNCTION(FUNCTION($source.text, 'componentsSeparatedByString:', '  '), 'count')", .sql),
        ("out64", "FUNCTION(FUNCTION($source.text, 'componentsSeparatedByString:', 'é'), 'count')", .sql),
        ("outText", "FUNCTION(FUNCTION($source.text, 'stringByTrimmingWhitespace'), 'uppercaseString')", .sql),
        ("outText", "FUNCTION($source.text, 'capitalizedString')", .sql),
        ("outText", "FUNCTION($source.text, 'stringByAppendingString:', '–ü')", .sql),
        (
            "out64",
            "FUNCTION(FUNCTION($source.text, 'stringByReplacingOccurrencesOfString:withString:', 'o', 'öö'), 'length')",
            .sql
        ),
        ("outText", "FUNCTION($source.text, 'substringFromIndex:', 1)", .guarded),  // "" has no index 1: an error
        // NSNumber's conversions: nil for nil, Swift's rounding of a 64-bit integer to a
        // double, a double rounded to a 32-bit float and widened again.
        ("outDouble", "FUNCTION($source.count, 'doubleValue')", .sql),
        ("outDouble", "FUNCTION($source.i64, 'doubleValue')", .sql),
        ("outDouble", "TERNARY($source.i64 == nil, 0.5, FUNCTION($source.i64, 'doubleValue') / 3)", .sql),
        ("outDouble", "FUNCTION($source.price, 'floatValue')", .sql),
        ("outDouble", "FUNCTION($source.dbl, 'floatValue') * 2", .guarded),  // a nil operand: an error
        ("outFloat", "FUNCTION($source.i64, 'floatValue')", .sql),
        ("outFlag", "FUNCTION($source.i16, 'boolValue')", .sql),
        ("outFlag", "FUNCTION($source.flag, 'boolValue')", .sql),
        ("outDouble", "FUNCTION($source.flag, 'doubleValue')", .sql),
        ("outText", "TERNARY(FUNCTION($source.flag, 'boolValue') == YES, 'y', 'n')", .evaluated),  // in a condition
        ("out64", "TERNARY($source.flag == nil, -1, FUNCTION($source.flag, 'longLongValue') * 5)", .sql),
        ("out64", "FUNCTION($source.i32, 'integerValue')", .sql),
        ("outFlag", "FUNCTION($source.price, 'boolValue')", .evaluated),  // a NaN is not 0
        ("out64", "FUNCTION($source.i16, 'intValue')", .evaluated),  // (not translated)
        // A method not translated:
        (
            "outText", "FUNCTION($source.text, 'stringByPaddingToLength:withString:startingAtIndex:', 3, '.', 0)",
            .evaluated
        ),
        // What SQL asks the interpreter for, row by row (remodel_eval): the same values,
        // the same errors on the same row.
        ("outDouble", "$source.price / $source.count", .evaluated),
        ("outDouble", "$source.price / 0.0", .evaluated),
        ("outDouble", "$source.price ** 2", .evaluated),
        ("outText", "FUNCTION($source.text, 'uppercaseString')", .sql),
        (
            "outText",
            "TERNARY($source.text == nil OR $source.text == '', 'Untitled', FUNCTION($source.text, 'stringByTrimmingWhitespace'))",
            .sql
        ),
        ("out64", "FUNCTION(FUNCTION($source.text, 'componentsSeparatedByString:', ' '), 'count')", .sql),
        ("outText", "$entityMapping.name", .evaluated),
        ("outText", "$propertyMapping.name", .evaluated),
        ("outDate", "CAST($source.i32, 'NSDate')", .evaluated),
        ("out64", "$source.i64 + 1", .fails),  // Int64.max + 1: the interpreter's overflow error, on the same row
        ("out16", "$source.i32 - 0", .fails),  // out of range for Integer 16: the coercion's error
        // An attribute through a to-one: the row its key names (nil where it is nil).
        ("outText", "$source.group.name", .sql),
        ("out64", "$source.group.rank", .sql),
        ("outDouble", "$source.group.weight", .sql),
        // … and in what SQL does not translate: evaluated on the source object.
        ("outDouble", "TERNARY($source.group.weight == nil, 0.0, $source.group.weight)", .evaluated),
        ("out16", "$source.group.rank", .guarded),  // out of range: an error
        ("out64", "$source.group.rank * 2", .guarded),  // a nil operand: an error
        // $source itself, handed to a function: evaluated on the source object, with the
        // interpreter's error on the same row (no attribute is named like the label).
        ("outText", "FUNCTION($source, 'valueForKey:', $source.label)", .fails),
        // What the interpreter keeps.
        ("outDouble", "$manager.userInfo.rate", .interpreted)
    ]

    static let rowCount = 3_000

    /// What the generated rows hold besides what their attributes describe.
    enum Rows: CaseIterable, CustomTestStringConvertible {
        case clean
        /// Ill-formed UTF-8, a number and a blob in text columns: SQL reads them as the
        /// interpreter does (`remodel_text`).
        case oddText
        /// Text in an integer column: SQL's CAST reads it as the interpreter's reader does.
        case oddInteger
        var testDescription: String { "\(self)" }
    }

    /// The key of the `i`th generated row: with gaps (as a store has after deletions), or
    /// none (keys by an offset).
    static func key(_ i: Int, contiguous: Bool) -> Int { contiguous ? i : i * 3 - (i % 2) }

    /// A D1 store of generated rows, with the odd ones `rows` asks for, after them.
    static func makeSource(at path: String, model: ObjectModel, rows: Rows, contiguousKeys: Bool = false) throws {
        let store = try Store.create(at: path, model: model)
        let row = store.layout.entities["Row"]!, group = store.layout.entities["Group"]!
        let c = row.attributeColumns
        let groups = 40
        try store.database.execute(
            """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(groups))
            INSERT INTO \(group.table) (Z_PK, Z_ENT, Z_OPT, \(group.attributeColumns["name"]!),
                \(group.attributeColumns["rank"]!), \(group.attributeColumns["weight"]!))
            SELECT i, \(group.number), 1, CASE WHEN i % 9 = 0 THEN NULL ELSE 'group ' || i END,
                CASE WHEN i % 5 = 0 THEN NULL ELSE i * 1000 END, CASE WHEN i % 7 = 0 THEN NULL ELSE i * 0.5 END FROM n;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rowCount))
            INSERT INTO \(row.table) (Z_PK, Z_ENT, Z_OPT, \(c["i16"]!), \(c["i32"]!), \(c["i64"]!), \(c["flag"]!), \(c["dbl"]!),
                \(c["flt"]!), \(c["when"]!), \(c["text"]!), \(c["blob"]!), \(c["price"]!), \(c["count"]!), \(c["label"]!),
                \(row.toOneColumns["group"]!.key))
            SELECT \(contiguousKeys ? "i" : "i * 3 - (i % 2)"), \(row.number), 1,
                CASE i % 9 WHEN 0 THEN NULL WHEN 1 THEN 32767 WHEN 2 THEN -32768 WHEN 3 THEN 0 WHEN 4 THEN 1 ELSE (i * 37) % 2000 - 1000 END,
                CASE i % 11 WHEN 0 THEN NULL WHEN 1 THEN 2147483647 WHEN 2 THEN -2147483648 ELSE (i * 7919) % 100000 END,
                CASE i % 13 WHEN 0 THEN NULL WHEN 1 THEN 9223372036854775807 WHEN 2 THEN -9223372036854775808
                    WHEN 3 THEN 9007199254740993 ELSE i * 104729 END,
                CASE i % 3 WHEN 0 THEN NULL ELSE i % 2 END,
                CASE i % 10 WHEN 0 THEN NULL WHEN 1 THEN 0.0 WHEN 2 THEN -1e-310 WHEN 3 THEN 1e308 WHEN 4 THEN 9e999
                    WHEN 5 THEN -9e999 ELSE i * 0.1 END,
                CASE i % 6 WHEN 0 THEN NULL ELSE i / 3.0 END,
                CASE i % 8 WHEN 0 THEN NULL ELSE 700000000 + i * 0.5 END,
                CASE i % 7 WHEN 0 THEN NULL WHEN 1 THEN '' WHEN 2 THEN 'Zoë ' || i WHEN 3 THEN '日本語 🎌' WHEN 4 THEN ' spaced '
                    WHEN 5 THEN CASE i % 3 WHEN 0 THEN char(9, 32) || 'a  b,c ' || i || char(11, 12, 10) WHEN 1 THEN char(28) || 'x,y  z' || char(31, 127)
                        ELSE ' e' || char(13, 10) END
                    ELSE 'row ' || i END,
                CASE i % 5 WHEN 0 THEN NULL WHEN 1 THEN x'' WHEN 2 THEN x'00ff10' ELSE CAST('b' || i AS BLOB) END,
                CASE i % 10 WHEN 1 THEN 0.0 WHEN 2 THEN 9e999 WHEN 3 THEN -1.5e300 WHEN 4 THEN 5e-324 ELSE i * 0.25 END,
                (i * 31) % 1000 - 500,
                CASE i % 4 WHEN 0 THEN NULL WHEN 1 THEN 'Ünïcode ' || i ELSE 'label ' || i END,
                CASE i % 4 WHEN 0 THEN NULL ELSE (i % \(groups)) + 1 END
            FROM n;
            UPDATE Z_PRIMARYKEY SET Z_MAX = \(groups) WHERE Z_ENT = \(group.number);
            UPDATE Z_PRIMARYKEY SET Z_MAX = \(key(rowCount, contiguous: contiguousKeys)) WHERE Z_ENT = \(row.number);
            """)
        if rows != .clean {
            let last = key(rowCount, contiguous: contiguousKeys)
            try store.database.execute(
                """
                INSERT INTO \(row.table) (Z_PK, Z_ENT, Z_OPT, \(c["i16"]!), \(c["text"]!), \(c["label"]!), \(c["price"]!), \(c["count"]!),
                    \(row.toOneColumns["group"]!.key))
                VALUES (\(last + 1), \(row.number), 1, 5, x'c328ff61', 12, 1.0, 1, \(groups + 1)),
                       (\(last + 2), \(row.number), 1, 6, 3.25, CAST('blob text' AS BLOB), 2.0, 2, \(groups + 1)),
                       (\(last + 3), \(row.number), 1, \(rows == .oddInteger ? "'seven'" : "7"), 'ok', CAST(x'206f6b00200d' AS TEXT), 3.0, 3, NULL);
                INSERT INTO \(group.table) (Z_PK, Z_ENT, Z_OPT, \(group.attributeColumns["name"]!),
                    \(group.attributeColumns["rank"]!), \(group.attributeColumns["weight"]!))
                VALUES (\(groups + 1), \(group.number), 1, x'c328ff61', \(rows == .oddInteger ? "'seven'" : "7.5"), '2.5');
                UPDATE Z_PRIMARYKEY SET Z_MAX = \(groups + 1) WHERE Z_ENT = \(group.number);
                """)
        }
    }

    /// A mapping from version `source` to `destination` of the entity mappings `mappings`
    /// (each as JSON).
    static func mapping(from source: String, to destination: String, _ mappings: [String]) throws -> MappingModel {
        try Migration.MappingModel(
            json: JSON.parse(
                #"{"sourceModel": "\#(source)", "destinationModel": "\#(destination)", "entityMappings": [\#(mappings.joined(separator: ", "))]}"#
            ), file: "test.mapping.json")
    }

    /// The forms' mapping: `attribute` from `expression`, `label` (required in D2, with a
    /// default) as inferred mappings fill it, everything else copied or re-linked.
    static func mapping(
        _ attribute: String, _ expression: String, predicate: String? = nil, from sourceModel: String = "D1"
    ) throws -> MappingModel {
        func escaped(_ text: String) -> String {
            text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        }
        let sourceExpression =
            predicate.map {
                " \"sourceExpression\": \""
                    + escaped(
                        "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Row\", \"\($0)\"), $manager.sourceContext, NO)"
                    ) + "\","
            } ?? ""
        let label = escaped(
            "FUNCTION($entityPolicy, \"_nonNilValueOrDefaultValueForAttribute:source:destination:\", \"label\", $source, $destination)"
        )
        return try Migration.MappingModel(
            json: JSON.parse(
                """
                {"sourceModel": "\(sourceModel)", "destinationModel": "D2", "entityMappings": [
                  {"name": "GroupToGroup", "type": "copy", "sourceEntity": "Group", "destinationEntity": "Group"},
                  {"name": "RowToRow", "type": "transform", "sourceEntity": "Row", "destinationEntity": "Row",\(sourceExpression)
                   "attributeMappings": {"label": "\(label)", "\(attribute)": "\(escaped(expression))"}}]}
                """), file: "test.mapping.json")
    }

    /// Every row of every table of the store at `path`, each value with its storage class
    /// and, for doubles, its bits (0.0 and -0.0 differ).
    static func dump(_ path: String) throws -> [String: [[String]]] {
        let database = try Database(path: path, mode: .readOnly)
        let tables = try database.prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('Z_METADATA', 'Z_MODELCACHE') ORDER BY name"
        )
        var result: [String: [[String]]] = [:]
        while try tables.step() {
            let table = tables.string(at: 0)!
            let rows = try database.prepare("SELECT * FROM \(table) ORDER BY 1, 2")
            var values: [[String]] = []
            while try rows.step() {
                values.append(
                    (0..<rows.columnCount).map { i in
                        switch rows.value(at: i) {
                        case .null: "null"
                        case .integer(let v): "i:\(v)"
                        case .real(let d): "r:\(d.bitPattern)"
                        case .text(let s): "t:\(s)"
                        case .blob(let d): "b:\(d.base64EncodedString())"
                        }
                    })
            }
            result[table] = values
        }
        return result
    }

    /// `sql` with each `{name}` replaced by the table or column `names` gives it.
    static func filling(_ sql: String, _ names: [String: String]) -> String {
        names.reduce(sql) { sql, name in sql.replacingOccurrences(of: "{\(name.key)}", with: name.value) }
    }

    enum Outcome: Equatable {
        case store([String: [[String]]], [[Int]])
        case failure(String)
    }

    static func run(
        _ mapping: MappingModel, _ v1: ObjectModel, _ v2: ObjectModel, source: String, to path: String,
        pushdown: Bool, policies: PolicyRegistry = PolicyRegistry(), sourceIsWellTyped: Bool = false,
        sqlChunkRows: Int? = nil, associationRunsInMemory: Int? = nil, after: (MigrationManager) -> Void = { _ in }
    ) throws -> (Outcome, MigrationReport?) {
        var options = MigrationOptions(chunkSize: 700, pushdown: pushdown)
        if let associationRunsInMemory {
            options.associationRunsInMemory = associationRunsInMemory
            // (So that `after` finds the associations, which it then releases.)
            options.keepsResults = true
        }
        if let sqlChunkRows {
            // (Many chunks, each from the second on checked ahead and written without a check.)
            options.sqlChunkRows = sqlChunkRows
            options.checkAhead = .waiting
        }
        let manager = try MigrationManager(
            mapping: mapping, source: v1, destination: v2, policies: policies, options: options)
        manager.sourceIsWellTyped = sourceIsWellTyped
        do {
            let report = try manager.migrateStore(from: source, to: path)
            after(manager)
            let counts = report.entityMappings.map {
                [$0.sourceInstances, $0.destinationInstances, $0.relationshipsSet]
            }
            return (.store(try dump(path), counts), report)
        } catch {
            return (.failure("\((error as? MigrationError)?.kind.rawValue ?? "?"): \(error)"), nil)
        }
    }

    /// `run(…)` with the interpreter
    /// (`i<name>.sqlite`) and with SQL (`s<name>.sqlite`).
    static func bothWays(
        _ mapping: MappingModel, _ v1: ObjectModel, _ v2: ObjectModel, source: String, in directory: TemporaryDirectory,
        name: String, policies: PolicyRegistry = PolicyRegistry()
    ) throws -> (interpreted: Outcome, pushed: Outcome, report: MigrationReport?) {
        let (interpreted, _) = try run(
            mapping, v1, v2, source: source, to: directory.path("i\(name).sqlite"), pushdown: false, policies: policies)
        let (pushed, report) = try run(
            mapping, v1, v2, source: source, to: directory.path("s\(name).sqlite"), pushdown: true, policies: policies)
        return (interpreted, pushed, report)
    }

    /// Each form both ways, over keys with gaps (numbered by counting, in key order) and
    /// without (by an offset, the rows that fail the check written after their chunk:
    /// an error is still the one the interpreter meets first).
    @Test(arguments: Rows.allCases, [false, true])
    func everyFormGivesWhatTheInterpreterGives(rows: Rows, contiguousKeys: Bool) throws {
        let v1 = try model(Self.source), v2 = try model(Self.destination)
        let directory = try TemporaryDirectory()
        let source = directory.path("D1.sqlite")
        try Self.makeSource(at: source, model: v1, rows: rows, contiguousKeys: contiguousKeys)
        var sqlRuns = 0
        var failures: [String] = []
        for (n, form) in Self.forms.enumerated() {
            let mapping = try Self.mapping(form.attribute, form.expression)
            let (interpreted, pushed, report) = try Self.bothWays(
                mapping, v1, v2, source: source, in: directory, name: "\(n)")
            #expect(pushed == interpreted, "\(form.attribute) = \(form.expression)")
            guard case .store(let tables, _) = pushed else {
                #expect(form.expected != .sql, "\(form.expression) failed: \(pushed)")
                if form.expected == .fails, case .failure(let message) = pushed { failures.append(message) }
                continue
            }
            #expect(form.expected != .fails, "\(form.expression) did not fail")
            #expect(tables["ZROW"]?.count == Self.rowCount + (rows == .clean ? 0 : 3))
            let execution = report!.entityMappings[1].execution!
            switch form.expected {
            case .sql:
                // Translated: the interpreter is asked for no value, or (a TERNARY) only on
                // the odd rows SQL cannot decide its condition on.
                #expect(execution.instancesAsSQL && execution.relationshipsAsSQL, "\(form.expression): \(execution)")
                #expect(
                    execution.evaluations <= (rows == .clean ? 0 : 3),
                    "\(form.expression): \(execution.evaluations) evaluations")
            case .partly:
                #expect(
                    execution.instancesAsSQL && !execution.evaluatedWhereUndecided.isEmpty && execution.evaluations > 0
                        && execution.evaluations < Self.rowCount / 2,
                    "\(form.expression): \(execution), \(execution.evaluations) evaluations")
            case .evaluated:
                #expect(
                    execution.instancesAsSQL && !(execution.evaluated + execution.evaluatedWhereUndecided).isEmpty
                        && execution.evaluations > 0,
                    "\(form.expression): \(execution), \(execution.evaluations) evaluations")
            case .interpreted:
                // Stage 1 interpreted, with the default policy: its links run as SQL over
                // the keys table written from its associations.
                #expect(!execution.instancesAsSQL && execution.relationshipsAsSQL, "\(form.expression): \(execution)")
            default:
                break
            }
            if execution.instancesAsSQL { sqlRuns += 1 }
            #expect(report!.entityMappings[0].execution!.instancesAsSQL)
        }
        #expect(sqlRuns == Self.forms.filter { [.sql, .evaluated, .partly].contains($0.expected) }.count)
        // The errors name the mapping, the row and the property, as the interpreter's do:
        // the first row where the interpreter fails (the 371st, the first).
        do {
            let (k371, k1) = (Self.key(371, contiguous: contiguousKeys), Self.key(1, contiguous: contiguousKeys))
            #expect(
                failures == [
                    "expression: entity mapping \"RowToRow\", source Row Z_PK \(k371), 'out64' = \"$source.count / ($source.count - 1)\": 1:1: integer division by zero (1 / 0); divide by a double (1 / 0.0) for IEEE infinity",
                    "expression: entity mapping \"RowToRow\", source Row Z_PK \(k1), 'out64' = \"$source.i64 + 1\": 1:1: integer overflow in 9223372036854775807 + 1; use a double operand (such as 9223372036854775807.0) for floating-point arithmetic",
                    "value: entity mapping \"RowToRow\", source Row Z_PK \(k1), 'out16' = \"$source.i32 - 0\": 2147483647 is out of range for a int16 attribute",
                    "expression: entity mapping \"RowToRow\", source Row Z_PK \(k1), 'outText' = \"FUNCTION($source, 'valueForKey:', $source.label)\": 1:1: Row/\(k1) has no attribute or relationship 'Ünïcode 1'; Row has blob, count, dbl, flag, flt, group, i16, i32, i64, label, price, text, when"
                ])
        }
    }

    /// W1: D1 as a store Remodel wrote holds it (a chain's later steps read such a store),
    /// with `count` required.
    static let written = source.replacingOccurrences(of: "\"D1\"", with: "\"W1\"").replacingOccurrences(
        of: "\"count\": \"int32\"", with: "\"count\": {\"type\": \"int32\", \"optional\": false}")

    /// A store Remodel wrote, read as one (``MigrationManager/sourceIsWellTyped``): the
    /// odd rows of a D1 store, migrated to W1 by the interpreter, are read by SQL without
    /// conversions or checks, and every form (and every predicate) gives what the
    /// interpreter gives, with fewer checks than from a store from elsewhere and no value
    /// asked of the interpreter for a form SQL translates. The same reading of the odd D1
    /// store itself, which does not hold what W1's types say, gives other values: what
    /// is taken on trust matters.
    /// (The odd integer rows have the odd text rows too.)
    @Test func aStoreTheRunWroteIsReadAsItIs() throws {
        let v1 = try model(Self.source), w1 = try model(Self.written), v2 = try model(Self.destination)
        let directory = try TemporaryDirectory()
        let odd = directory.path("D1.sqlite"), written = directory.path("W1.sqlite")
        try Self.makeSource(at: odd, model: v1, rows: .oddInteger)
        let first = try MigrationManager(
            mapping: Migration.MappingModel.inferred(from: v1, to: w1), source: v1, destination: w1,
            options: MigrationOptions(pushdown: false))
        try first.migrateStore(from: odd, to: written)
        var (checks, checksFromElsewhere, differences) = (0, 0, 0)
        let forms =
            Self.forms.map { ($0.attribute, $0.expression, $0.expected, nil as String?) }
            + Self.predicates.map { ("outText", "$source.text", $0.expected, $0.predicate as String?) }
        for (n, (attribute, expression, expected, predicate)) in forms.enumerated() {
            let mapping = try Self.mapping(attribute, expression, predicate: predicate, from: "W1")
            let (interpreted, _) = try Self.run(
                mapping, w1, v2, source: written, to: directory.path("i\(n).sqlite"), pushdown: false)
            let (pushed, report) = try Self.run(
                mapping, w1, v2, source: written, to: directory.path("s\(n).sqlite"), pushdown: true,
                sourceIsWellTyped: true)
            #expect(pushed == interpreted, "\(attribute) = \(expression) \(predicate ?? "")")
            if expected == .sql, predicate.map(Self.decidedBySQL.contains) ?? true,
                let execution = report?.entityMappings[1].execution
            {
                #expect(execution.evaluations == 0, "\(expression) \(predicate ?? ""): \(execution.evaluations)")
            }
            checks +=
                MigrationManager.plannedExecutions(mapping, source: w1, destination: v2, sourceIsWellTyped: true)[1]
                .execution.checks.count
            checksFromElsewhere +=
                MigrationManager.plannedExecutions(mapping, source: w1, destination: v2)[1].execution.checks.count
            // The odd D1 store read as if Remodel had written it, until it differs.
            guard differences == 0 else { continue }
            let d1Mapping = try Self.mapping(attribute, expression, predicate: predicate)
            let (fromOdd, _) = try Self.run(
                d1Mapping, v1, v2, source: odd, to: directory.path("o\(n).sqlite"), pushdown: false)
            let (trusted, _) = try Self.run(
                d1Mapping, v1, v2, source: odd, to: directory.path("t\(n).sqlite"), pushdown: true,
                sourceIsWellTyped: true)
            if trusted != fromOdd { differences += 1 }
        }
        #expect(checks < checksFromElsewhere, "\(checks) checks, \(checksFromElsewhere) from elsewhere")
        #expect(differences > 0)
    }

    /// A chain's later steps read the store the step before wrote as such: from the odd
    /// rows of a store from elsewhere, D1 → W1 (inferred) → D2 gives the same store with
    /// SQL as with the interpreter, and only the first step reads its source with every
    /// conversion and check.
    @Test func aChainsLaterStepsReadTheStoreTheStepBeforeWrote() throws {
        let v1 = try model(Self.source), w1 = try model(Self.written), v2 = try model(Self.destination)
        let label =
            "FUNCTION($entityPolicy, \\\"_nonNilValueOrDefaultValueForAttribute:source:destination:\\\", \\\"label\\\", $source, $destination)"
        let mapping = try Migration.MappingModel(
            json: JSON.parse(
                """
                {"sourceModel": "W1", "destinationModel": "D2", "entityMappings": [
                  {"name": "GroupToGroup", "type": "copy", "sourceEntity": "Group", "destinationEntity": "Group"},
                  {"name": "RowToRow", "type": "transform", "sourceEntity": "Row", "destinationEntity": "Row",
                   "sourceExpression": "FETCH(FUNCTION($manager, \\"fetchRequestForSourceEntityNamed:predicateString:\\", \\"Row\\", \\"count > -400 AND flag != YES\\"), $manager.sourceContext, NO)",
                   "attributeMappings": {"label": "\(label)", "out16": "$source.i16", "outDouble": "$source.count * 1.5",
                     "outText": "TERNARY($source.i16 >= 2, 'high', TERNARY($source.i16 == 1, 'normal', 'low'))",
                     "out64": "FUNCTION(FUNCTION($source.text, 'componentsSeparatedByString:', ' '), 'count')"}}]}
                """), file: "test.mapping.json")
        let directory = try TemporaryDirectory()
        try Self.makeSource(at: directory.path("D1.sqlite"), model: v1, rows: .oddInteger)
        var stores: [[String: [[String]]]] = []
        for pushdown in [false, true] {
            var migrator = StoreMigrator(
                models: [v1, w1, v2], mappings: [mapping], options: MigrationOptions(chunkSize: 700, pushdown: pushdown)
            )
            migrator.keepsBackup = false
            let steps = try migrator.plan(from: "D1", to: "D2")
            #expect(try migrator.managers(for: steps).map(\.sourceIsWellTyped) == [false, true])
            let path = directory.path("\(pushdown).sqlite")
            try FileManager.default.copyItem(atPath: directory.path("D1.sqlite"), toPath: path)
            let reports = try migrator.migrate(storeAt: path)
            #expect(reports.count == 2)
            if pushdown {
                let execution = reports[1].report.entityMappings[1].execution!
                #expect(execution.instancesAsSQL && execution.relationshipsAsSQL, "\(execution)")
                #expect(execution.evaluations == 0 && execution.checks.isEmpty, "\(execution)")
            }
            stores.append(try Self.dump(path))
        }
        #expect(stores[0] == stores[1])
        #expect((stores[1]["ZROW"]?.count ?? 0) > Self.rowCount / 4)
    }

    /// A middle version made in code, whose default does not fit its attribute (a model
    /// file with one does not load): the store written with it is not read as well-typed.
    @Test func aMiddleModelThatFailsItsChecksIsNotReadAsWellTyped() throws {
        let v1 = try model(Self.source), v2 = try model(Self.destination)
        var w1 = try model(Self.written)
        let row = try #require(w1.entities.firstIndex { $0.name == "Row" })
        let i16 = try #require(w1.entities[row].attributes.firstIndex { $0.name == "i16" })
        w1.entities[row].attributes[i16].defaultValue = .integer(70_000)
        #expect(!w1.validationErrors().isEmpty)
        let mapping = try Self.mapping("out16", "$source.i16", from: "W1")
        let migrator = StoreMigrator(models: [v1, w1, v2], mappings: [mapping])
        #expect(
            try migrator.managers(for: migrator.plan(from: "D1", to: "D2")).map(\.sourceIsWellTyped) == [false, false])
    }

    static let predicates: [(predicate: String, expected: Expected)] = [
        ("flag == YES", .sql),
        ("i16 > 5", .sql),
        ("text BEGINSWITH[cd] 'z'", .sql),
        ("label != nil AND count > 0", .sql),
        ("dbl < 1.0 OR NOT (i32 >= 100)", .sql),
        ("text MATCHES '.*[0-9]'", .sql),
        ("text == nil", .sql),
        ("text == ''", .sql),
        ("text == nil OR text == ''", .sql),
        ("text != ''", .sql),
        ("text ==[c] ''", .sql),
        ("TRUEPREDICATE", .sql),
        ("FALSEPREDICATE", .sql),
        ("i64 / 0 == 1", .fails),  // integer division by zero, on the first row with an i64
        // Through relationships: SQL selects, the source object decides each row.
        ("group.name == 'group 3'", .sql),
        ("group.rank > 5000", .sql),
        ("group != nil AND NOT (group.weight < 10)", .sql),
        ("ANY group.members.i16 > 900", .sql)
    ]

    static let decidedBySQL: Set<String> = [
        "flag == YES", "i16 > 5", "label != nil AND count > 0", "dbl < 1.0 OR NOT (i32 >= 100)",
        "text == nil", "TRUEPREDICATE", "FALSEPREDICATE",
        // Only the empty text equals '', however the others are written.
        "text == ''", "text == nil OR text == ''", "text != ''"
    ]

    /// Source fetches with predicates, both ways: the same rows selected, the same errors.
    @Test(arguments: Rows.allCases)
    func everyPredicateSelectsWhatTheInterpreterSelects(rows: Rows) throws {
        let v1 = try model(Self.source), v2 = try model(Self.destination)
        let directory = try TemporaryDirectory()
        let source = directory.path("D1.sqlite")
        try Self.makeSource(at: source, model: v1, rows: rows)
        var counts: [Int] = []
        for (n, form) in Self.predicates.enumerated() {
            var mapping = try Self.mapping("outText", "$source.text", predicate: form.predicate)
            // Rows first: the new store's groups table is then empty while the rows' fetch
            // reads the source's groups (`src.`).
            mapping.entityMappings.reverse()
            let (interpreted, pushed, report) = try Self.bothWays(
                mapping, v1, v2, source: source, in: directory, name: "\(n)")
            #expect(pushed == interpreted, "\(form.predicate)")
            guard case .store(let tables, _) = pushed else {
                #expect(form.expected == .fails, "\(form.predicate) failed: \(pushed)")
                continue
            }
            counts.append(tables["ZROW"]?.count ?? -1)
            let execution = report!.entityMappings[1].execution!
            #expect(execution.instancesAsSQL == (form.expected == .sql), "\(form.predicate): \(execution)")
            // Comparisons of numbers and nil tests are decided by SQL on every row but the
            // odd ones; text is left to the interpreter where it is not plain ASCII.
            if Self.decidedBySQL.contains(form.predicate) {
                #expect(
                    execution.evaluations <= (rows == .clean ? 0 : 3),
                    "\(form.predicate): \(execution.evaluations) evaluations")
            }
        }
        // The predicates select some rows and not others.
        #expect(counts.filter { $0 > 0 && $0 < Self.rowCount }.count >= 6, "\(counts)")
    }

    /// A row that meets a guard (a value out of range for the destination, which the
    /// interpreter reports) stops the SQL, removes what it wrote, and the interpreter runs
    /// the mapping: the error is the interpreter's, naming the row; the plan lists the check.
    @Test func aGuardedRowGetsTheInterpretersError() throws {
        let v1 = try model(Self.source), v2 = try model(Self.destination)
        let directory = try TemporaryDirectory()
        let source = directory.path("D1.sqlite")
        try Self.makeSource(at: source, model: v1, rows: .clean)
        let mapping = try Self.mapping("out16", "$source.i32")
        let (interpreted, pushed, _) = try Self.bothWays(
            mapping, v1, v2, source: source, in: directory, name: "")
        #expect(pushed == interpreted)
        #expect(
            pushed
                == .failure(
                    "value: entity mapping \"RowToRow\", source Row Z_PK 2, 'out16' = \"$source.i32\": 2147483647 is out of range for a int16 attribute"
                ))
        #expect(!FileManager.default.fileExists(atPath: directory.path("s.sqlite")))
        let planned = MigrationManager.plannedExecutions(mapping, source: v1, destination: v2)
        #expect(planned[1].execution.instancesAsSQL)
        #expect(planned[1].execution.checks == ["out16 in range", "i16 in range", "i32 in range", "count in range"])
    }

    /// An attribute read through a to-one (`$source.car.doors`, `$source.car.name`, the
    /// parent's) and through two (`$source.car.maker.name`), whose target shares its table
    /// with a parent and a sibling: by SQL where every key names a row of the target's
    /// entity, with the interpreter's values (a nil key gives nil; a key stored as a
    /// double, as an integer); a key that names no row (at either step), a row of the
    /// sibling, or that is text, is the interpreter's to report, with the same error both
    /// ways. The same keys in a source fetch's predicate: SQL selects the rows, the source
    /// object decides each, as the interpreter's fetch does, damaged keys included.
    @Test func anAttributeThroughAToOneIsReadAsTheInterpreterReadsIt() throws {
        let v1 = try model(
            """
            {"version": "K1", "entities": {
              "Vehicle": {"attributes": {"name": "string"},
                          "relationships": {"maker": {"destination": "Maker", "inverse": "vehicles"}}},
              "Maker": {"attributes": {"name": "string"},
                        "relationships": {"vehicles": {"destination": "Vehicle", "inverse": "maker", "toMany": true}}},
              "Car": {"parent": "Vehicle", "attributes": {"doors": "int16"},
                      "relationships": {"trips": {"destination": "Trip", "inverse": "car", "toMany": true}}},
              "Bike": {"parent": "Vehicle", "attributes": {"gears": "int16"}},
              "Trip": {"attributes": {"km": "double"},
                       "relationships": {"car": {"destination": "Car", "inverse": "trips"}}}}}
            """)
        let v2 = try model(
            #"{"version": "K2", "entities": {"Trip": {"attributes": {"km": "double", "doors": "int32", "carName": "string", "makerName": "string"}}}}"#
        )
        let mapping = try Migration.MappingModel(
            json: JSON.parse(
                #"{"sourceModel": "K1", "destinationModel": "K2", "entityMappings": [{"name": "TripToTrip", "type": "transform", "sourceEntity": "Trip", "destinationEntity": "Trip", "attributeMappings": {"km": "$source.km", "doors": "$source.car.doors", "carName": "$source.car.name", "makerName": "$source.car.maker.name"}}]}"#
            ), file: "test.mapping.json")
        let predicate = "car.doors > 1 AND car.maker.name != 'maker 3'"
        let filtered = try Migration.MappingModel(
            json: JSON.parse(
                #"{"sourceModel": "K1", "destinationModel": "K2", "entityMappings": [{"name": "TripToTrip", "type": "transform", "sourceEntity": "Trip", "destinationEntity": "Trip", "sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Trip\", \"\#(predicate)\"), $manager.sourceContext, NO)", "attributeMappings": {"km": "$source.km"}}]}"#
            ), file: "test.mapping.json")
        let directory = try TemporaryDirectory()
        // (what the source rows get, the property whose error the interpreter reports)
        let damages: [(String, String?)] = [
            ("", nil), ("UPDATE {trip} SET {car} = 999 WHERE Z_PK = 5", "doors"),
            ("UPDATE {trip} SET {car} = 2 WHERE Z_PK = 6", "doors"),
            ("UPDATE {trip} SET {car} = 'three' WHERE Z_PK = 7", "doors"),
            ("UPDATE {trip} SET {car} = 3.0 WHERE Z_PK = 8", nil),
            ("UPDATE {vehicle} SET {maker} = 99 WHERE Z_PK = 3", "makerName")
        ]
        for (n, (damage, failing)) in damages.enumerated() {
            let source = directory.path("K1-\(n).sqlite")
            let store = try Store.create(at: source, model: v1)
            let layout = store.layout.entities
            let vehicle = layout["Vehicle"]!, car = layout["Car"]!, bike = layout["Bike"]!, trip = layout["Trip"]!
            let maker = layout["Maker"]!
            // Vehicles 1…30 in one table: cars (odd keys), bikes (even), a plain vehicle (30).
            try store.database.execute(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4)
                INSERT INTO \(maker.table) (Z_PK, Z_ENT, Z_OPT, \(maker.attributeColumns["name"]!))
                SELECT i, \(maker.number), 1, CASE WHEN i = 4 THEN NULL ELSE 'maker ' || i END FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30)
                INSERT INTO \(vehicle.table) (Z_PK, Z_ENT, Z_OPT, \(vehicle.attributeColumns["name"]!), \(car.attributeColumns["doors"]!), \(bike.attributeColumns["gears"]!),
                    \(vehicle.toOneColumns["maker"]!.key))
                SELECT i, CASE WHEN i = 30 THEN \(vehicle.number) WHEN i % 2 = 1 THEN \(car.number) ELSE \(bike.number) END, 1,
                    CASE WHEN i % 7 = 0 THEN NULL WHEN i = 9 THEN x'c328' ELSE 'vehicle ' || i END,
                    CASE WHEN i % 2 = 0 OR i % 5 = 0 THEN NULL WHEN i = 11 THEN '4' ELSE i % 6 END,
                    CASE WHEN i % 2 = 1 THEN NULL ELSE i END, CASE WHEN i % 3 = 0 THEN NULL ELSE i % 4 + 1 END FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 120)
                INSERT INTO \(trip.table) (Z_PK, Z_ENT, Z_OPT, \(trip.attributeColumns["km"]!), \(trip.toOneColumns["car"]!.key))
                SELECT i, \(trip.number), 1, i * 1.5, CASE WHEN i % 4 = 0 THEN NULL ELSE ((i * 7) % 15) * 2 + 1 END FROM n;
                UPDATE Z_PRIMARYKEY SET Z_MAX = 30 WHERE Z_ENT IN (\(vehicle.number), \(car.number), \(bike.number));
                UPDATE Z_PRIMARYKEY SET Z_MAX = 120 WHERE Z_ENT = \(trip.number);
                UPDATE Z_PRIMARYKEY SET Z_MAX = 4 WHERE Z_ENT = \(maker.number);
                \(Self.filling(damage, ["trip": trip.table, "car": trip.toOneColumns["car"]!.key, "vehicle": vehicle.table, "maker": vehicle.toOneColumns["maker"]!.key]));
                """)
            // The trips fetched by a predicate through the same keys: the fetch's SQL
            // selects, and the source object decides, as the interpreter's fetch does.
            let (fetched, fetchedBySQL, fetchReport) = try Self.bothWays(
                filtered, v1, v2, source: source, in: directory, name: "kf\(n)")
            #expect(fetchedBySQL == fetched, "\(damage), fetched")
            if damage.isEmpty {
                let execution = fetchReport?.entityMappings[0].execution
                #expect(
                    execution?.instancesAsSQL == true && (execution?.evaluations ?? 0) > 0,
                    "fetched: \(String(describing: execution))")
                guard case .store(let tables, _) = fetchedBySQL, let count = tables["ZTRIP"]?.count else {
                    Issue.record("fetched: \(fetchedBySQL)")
                    continue
                }
                #expect(count > 10 && count < 100, "fetched: \(count) trips")
            }
            let (interpreted, pushed, report) = try Self.bothWays(
                mapping, v1, v2, source: source, in: directory, name: "k\(n)")
            #expect(pushed == interpreted, "\(damage)")
            if let failing {
                guard case .failure(let message) = pushed else {
                    Issue.record("\(damage) did not fail")
                    continue
                }
                #expect(message.contains("'\(failing)'"), "\(damage): \(message)")
            } else {
                let execution = report?.entityMappings[0].execution
                #expect(
                    execution?.instancesAsSQL == true && execution?.evaluations == 0,
                    "\(damage): \(String(describing: execution))")
                guard case .store(let tables, _) = pushed else {
                    Issue.record("\(damage): \(pushed)")
                    continue
                }
                // Values read through the keys: doors (1…5, '4' read as 4) and names.
                #expect(
                    tables["ZTRIP"]?.contains {
                        $0.contains("t:vehicle 1") && $0.contains("i:1") && $0.contains("t:maker 2")
                    } == true)
            }
        }
        // `plan` says what is asked of each source object.
        let fetchedPlan = MigrationManager.plannedExecutions(filtered, source: v1, destination: v2)[0].execution
        #expect(
            fetchedPlan.evaluated == ["the source predicate"] && fetchedPlan.evaluatedWhereUndecided.isEmpty
                && fetchedPlan.evaluatedOnObjects == ["the source predicate"], "\(fetchedPlan)")
        let planned = MigrationManager.plannedExecutions(mapping, source: v1, destination: v2)
        #expect(planned[0].execution.instancesAsSQL, "\(planned[0].execution)")
        #expect(planned[0].execution.evaluatedOnObjects.isEmpty)
        #expect(
            planned[0].execution.checks.contains("'car' names a row of its entity"), "\(planned[0].execution.checks)")
    }

    /// Entities that share a table with their parent and siblings: each mapping writes its
    /// own entity's rows only, keyed as the interpreter keys them (the keys of one entity
    /// have gaps where the others' rows are), with the same links. The owners' table holds
    /// a row of an entity the model does not know, which neither path reads.
    @Test func entitiesSharingATableMigrateAsTheInterpreterMigratesThem() throws {
        let models = ["H1", "H2"].map { version in
            """
            {"version": "\(version)", "entities": {
              "Vehicle": {"attributes": {"name": "string"}},
              "Car": {"parent": "Vehicle", "attributes": {"doors": "int16"},
                      "relationships": {"owner": {"destination": "Owner", "inverse": "cars"}}},
              "Bike": {"parent": "Vehicle", "attributes": {"gears": "int16"}},
              "Owner": {"attributes": {"name": "string"},
                        "relationships": {"cars": {"destination": "Car", "inverse": "owner", "toMany": true}}}}}
            """
        }
        let v1 = try model(models[0]), v2 = try model(models[1])
        let directory = try TemporaryDirectory()
        let source = directory.path("H1.sqlite")
        do {
            let store = try Store.create(at: source, model: v1)
            let layout = store.layout.entities
            let vehicle = layout["Vehicle"]!, car = layout["Car"]!, bike = layout["Bike"]!, owner = layout["Owner"]!
            #expect(car.table == vehicle.table && bike.table == vehicle.table)
            try store.database.execute(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10)
                INSERT INTO \(owner.table) (Z_PK, Z_ENT, Z_OPT, \(owner.attributeColumns["name"]!)) SELECT i + 1, \(owner.number), 1, 'owner ' || i FROM n;
                INSERT INTO \(owner.table) (Z_PK, Z_ENT, Z_OPT) VALUES (1, 99, 1);
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 900)
                INSERT INTO \(vehicle.table) (Z_PK, Z_ENT, Z_OPT, \(vehicle.attributeColumns["name"]!), \(car.attributeColumns["doors"]!),
                    \(bike.attributeColumns["gears"]!), \(car.toOneColumns["owner"]!.key))
                SELECT i, CASE i % 3 WHEN 0 THEN \(vehicle.number) WHEN 1 THEN \(car.number) ELSE \(bike.number) END, 1, 'vehicle ' || i,
                    CASE i % 3 WHEN 1 THEN i % 5 END, CASE i % 3 WHEN 2 THEN i % 21 END, CASE i % 3 WHEN 1 THEN i % 10 + 2 END FROM n;
                UPDATE Z_PRIMARYKEY SET Z_MAX = 11 WHERE Z_ENT = \(owner.number);
                UPDATE Z_PRIMARYKEY SET Z_MAX = 900 WHERE Z_ENT = \(vehicle.number);
                """)
        }
        let mapping = try Migration.MappingModel(
            json: JSON.parse(
                """
                {"sourceModel": "H1", "destinationModel": "H2", "entityMappings": [
                  {"name": "OwnerToOwner", "type": "copy", "sourceEntity": "Owner", "destinationEntity": "Owner"},
                  {"name": "CarToCar", "type": "transform", "sourceEntity": "Car", "destinationEntity": "Car",
                   "attributeMappings": {"doors": "$source.doors + 1"}},
                  {"name": "BikeToBike", "type": "copy", "sourceEntity": "Bike", "destinationEntity": "Bike"}]}
                """), file: "test.mapping.json")
        let (interpreted, pushed, report) = try Self.bothWays(
            mapping, v1, v2, source: source, in: directory, name: "")
        #expect(pushed == interpreted)
        guard case .store(let tables, let counts) = pushed else {
            Issue.record("the migration failed: \(pushed)")
            return
        }
        #expect(counts.map { $0[1] } == [10, 300, 300])
        #expect(tables["ZVEHICLE"]?.count == 600)
        let executions = report!.entityMappings.map { $0.execution! }
        #expect(executions.allSatisfy { $0.instancesAsSQL && $0.relationshipsAsSQL }, "\(executions)")
    }

    /// A to-many whose members two entity mappings make (sub-entities of its destination,
    /// each mapped on its own, as inferred mappings do, with the lookup by source
    /// relationship): one `UPDATE` per member mapping, the owners that gain members
    /// counted once, as the interpreter counts them, in every order of the mappings. Plain
    /// vehicles, which no mapping maps, are no garage's members. With a custom policy on
    /// the bikes (`policy`), their mapping is the interpreter's, and the garages' link
    /// still runs as SQL over the keys of its associations.
    @Test(arguments: [false, true])
    func aToManyWhoseMembersSeveralMappingsMakeIsLinkedBySQL(policy: Bool) throws {
        let models = ["G1", "G2"].map { version in
            """
            {"version": "\(version)", "entities": {
              "Vehicle": {"attributes": {"name": "string"},
                          "relationships": {"garage": {"destination": "Garage", "inverse": "vehicles"}}},
              "Car": {"parent": "Vehicle", "attributes": {"doors": "int16"}},
              "Bike": {"parent": "Vehicle", "attributes": {"gears": "int16"}},
              "Garage": {"attributes": {"name": "string"},
                         "relationships": {"vehicles": {"destination": "Vehicle", "inverse": "garage", "toMany": true}}}}}
            """
        }
        let v1 = try model(models[0]), v2 = try model(models[1])
        let directory = try TemporaryDirectory()
        let source = directory.path("G1.sqlite")
        do {
            let store = try Store.create(at: source, model: v1)
            let layout = store.layout.entities
            let vehicle = layout["Vehicle"]!, car = layout["Car"]!, bike = layout["Bike"]!, garage = layout["Garage"]!
            try store.database.execute(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 12)
                INSERT INTO \(garage.table) (Z_PK, Z_ENT, Z_OPT, \(garage.attributeColumns["name"]!)) SELECT i, \(garage.number), 1, 'garage ' || i FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 900)
                INSERT INTO \(vehicle.table) (Z_PK, Z_ENT, Z_OPT, \(vehicle.attributeColumns["name"]!), \(car.attributeColumns["doors"]!),
                    \(bike.attributeColumns["gears"]!), \(vehicle.toOneColumns["garage"]!.key))
                SELECT i, CASE i % 3 WHEN 0 THEN \(vehicle.number) WHEN 1 THEN \(car.number) ELSE \(bike.number) END, 1, 'vehicle ' || i,
                    CASE i % 3 WHEN 1 THEN i % 5 END, CASE i % 3 WHEN 2 THEN i % 21 END,
                    CASE WHEN i % 4 = 0 THEN NULL WHEN i % 7 = 0 THEN 11 ELSE i % 10 + 1 END FROM n;
                UPDATE Z_PRIMARYKEY SET Z_MAX = 12 WHERE Z_ENT = \(garage.number);
                UPDATE Z_PRIMARYKEY SET Z_MAX = 900 WHERE Z_ENT = \(vehicle.number);
                """)
        }
        let garages =
            #"{"name": "GarageToGarage", "type": "transform", "sourceEntity": "Garage", "destinationEntity": "Garage", "relationshipMappings": {"vehicles": "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"vehicles\", $source.vehicles)"}}"#
        let cars =
            #"{"name": "CarToCar", "type": "transform", "sourceEntity": "Car", "destinationEntity": "Car", "attributeMappings": {"doors": "$source.doors + 1"}}"#
        let bikes =
            #"{"name": "BikeToBike", "type": "copy", "sourceEntity": "Bike", "destinationEntity": "Bike""#
            + (policy ? #", "policy": "Shouting"}"# : "}")
        var policies = PolicyRegistry()
        policies.register("Shouting") { ShoutingPolicy() }
        var counts: [Int] = []
        for (n, order) in [[garages, cars, bikes], [cars, garages, bikes], [cars, bikes, garages]].enumerated() {
            let mapping = try Self.mapping(from: "G1", to: "G2", order)
            let (interpreted, pushed, report) = try Self.bothWays(
                mapping, v1, v2, source: source, in: directory, name: "\(n)", policies: policies)
            #expect(pushed == interpreted, "order \(n)")
            guard case .store(let tables, _) = pushed, let report else {
                Issue.record("order \(n): the migration failed: \(pushed)")
                continue
            }
            #expect(tables["ZVEHICLE"]?.count == 600)
            let garage = report.entityMappings.first { $0.name == "GarageToGarage" }!
            #expect(
                garage.execution!.instancesAsSQL && garage.execution!.relationshipsAsSQL,
                "order \(n): \(garage.execution!)")
            counts.append(garage.relationshipsSet)
        }
        // Each garage but the twelfth gains members when its link runs first; later, only
        // from the mappings whose own links have not run (or are the interpreter's).
        #expect(counts[0] == 11, "\(counts)")
        #expect(Set(counts).count > 1, "\(counts)")
    }

    /// A many-to-many whose members two entity mappings make (drivers of vehicles, cars and
    /// bikes each mapped on their own): one `INSERT OR IGNORE` into the join table per
    /// member mapping, the drivers that gain a vehicle counted once, in every order of the
    /// mappings, with the vehicles' side linked too (by SQL, or by a custom policy's
    /// interpreter first), and with a pair naming no vehicle (the interpreter's error).
    /// With the vehicles' drivers ordered, the drivers' link appends each vehicle's new
    /// drivers after its last, by key, as the interpreter's saves do.
    @Test(arguments: [false, true], [false, true])
    func aManyToManyWhoseMembersSeveralMappingsMakeIsLinkedBySQL(policy: Bool, ordered: Bool) throws {
        let models = ["J1", "J2"].map { version in
            """
            {"version": "\(version)", "entities": {
              "Vehicle": {"attributes": {"name": "string"},
                          "relationships": {"drivers": {"destination": "Driver", "inverse": "vehicles", "toMany": true, "ordered": \(ordered && version == "J2")}}},
              "Car": {"parent": "Vehicle", "attributes": {"doors": "int16"}},
              "Bike": {"parent": "Vehicle", "attributes": {"gears": "int16"}},
              "Driver": {"attributes": {"name": "string"},
                         "relationships": {"vehicles": {"destination": "Vehicle", "inverse": "drivers", "toMany": true}}}}}
            """
        }
        let v1 = try model(models[0]), v2 = try model(models[1])
        let directory = try TemporaryDirectory()
        func makeSource(_ name: String, _ odd: String = "") throws -> String {
            let path = directory.path(name)
            let store = try Store.create(at: path, model: v1)
            let layout = store.layout.entities
            let vehicle = layout["Vehicle"]!, car = layout["Car"]!, bike = layout["Bike"]!, driver = layout["Driver"]!
            let drives = driver.joinTables["vehicles"]!
            try store.database.execute(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 12)
                INSERT INTO \(driver.table) (Z_PK, Z_ENT, Z_OPT, \(driver.attributeColumns["name"]!)) SELECT i, \(driver.number), 1, 'driver ' || i FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
                INSERT INTO \(vehicle.table) (Z_PK, Z_ENT, Z_OPT, \(vehicle.attributeColumns["name"]!), \(car.attributeColumns["doors"]!),
                    \(bike.attributeColumns["gears"]!))
                SELECT i, CASE i % 3 WHEN 0 THEN \(vehicle.number) WHEN 1 THEN \(car.number) ELSE \(bike.number) END, 1, 'vehicle ' || i,
                    CASE i % 3 WHEN 1 THEN i % 5 END, CASE i % 3 WHEN 2 THEN i % 21 END FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
                INSERT OR IGNORE INTO \(drives.table) (\(drives.sourceColumn), \(drives.destinationColumn))
                SELECT (i * 5) % 11 + 1, (i * 7) % 300 + 1 FROM n WHERE i % 13 != 0;
                UPDATE Z_PRIMARYKEY SET Z_MAX = 12 WHERE Z_ENT = \(driver.number);
                UPDATE Z_PRIMARYKEY SET Z_MAX = 300 WHERE Z_ENT = \(vehicle.number);
                \(Self.filling(odd, ["drives": drives.table, "driver": drives.sourceColumn, "vehicle": drives.destinationColumn]))
                """)
            return path
        }
        let clean = try makeSource("J1.sqlite")
        let dangling = try makeSource(
            "J1-dangling.sqlite", "INSERT INTO {drives} ({driver}, {vehicle}) VALUES (3, 977);")
        let lookup = { (relationship: String) in
            #"FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"\#(relationship)\", $source.\#(relationship))"#
        }
        let drivers =
            #"{"name": "DriverToDriver", "type": "transform", "sourceEntity": "Driver", "destinationEntity": "Driver", "relationshipMappings": {"vehicles": "\#(lookup("vehicles"))"}}"#
        let cars =
            #"{"name": "CarToCar", "type": "transform", "sourceEntity": "Car", "destinationEntity": "Car", "attributeMappings": {"doors": "$source.doors + 1"}, "relationshipMappings": {"drivers": "\#(lookup("drivers"))"}}"#
        let bikes =
            #"{"name": "BikeToBike", "type": "transform", "sourceEntity": "Bike", "destinationEntity": "Bike", "relationshipMappings": {"drivers": "\#(lookup("drivers"))"}"#
            + (policy ? #", "policy": "Shouting"}"# : "}")
        var policies = PolicyRegistry()
        policies.register("Shouting") { ShoutingPolicy() }
        var counts: [Int] = []
        let orders = [[drivers, cars, bikes], [cars, drivers, bikes], [cars, bikes, drivers]]
        for (n, (order, source)) in (orders.map { ($0, clean) } + [(orders[0], dangling)]).enumerated() {
            let mapping = try Self.mapping(from: "J1", to: "J2", order)
            let (interpreted, pushed, report) = try Self.bothWays(
                mapping, v1, v2, source: source, in: directory, name: "j\(n)", policies: policies)
            #expect(pushed == interpreted, "case \(n)")
            guard case .store(let tables, _) = pushed, let report else {
                // A pair naming no vehicle: the interpreter's error, both ways.
                #expect(source == dangling, "case \(n): the migration failed: \(pushed)")
                continue
            }
            #expect(source == clean, "case \(n) did not fail")
            let drives = tables.first { $0.key.hasPrefix("Z_") && $0.key.hasSuffix("VEHICLES") }?.value ?? []
            #expect(drives.count > 200, "case \(n): \(drives.count) pairs")
            let driver = report.entityMappings.first { $0.name == "DriverToDriver" }!
            #expect(driver.execution!.relationshipsAsSQL, "case \(n): \(driver.execution!)")
            counts.append(driver.relationshipsSet)
        }
        // Every driver gains vehicles when its link runs first; later, only from the
        // mappings whose links have not run.
        #expect(counts[0] == 11, "\(counts)")
        #expect(Set(counts).count > 1, "\(counts)")
    }

    /// A relationship read through a chain of the source's (a mood's continent is its
    /// country's, `$source.country.continent`; a continent's moods are its countries',
    /// `$source.countries.@distinctUnionOfSets.moods`), countries and continents sharing
    /// their parent's table: by SQL, the interpreter's rows and counts, in both orders of
    /// the mappings and with some continents not migrated; a key on the way that names no
    /// row, or a row of the other entity, is the interpreter's error, both ways.
    @Test func aRelationshipReadThroughAChainIsLinkedBySQL() throws {
        let regions = """
            "Region": {"abstract": true, "attributes": {"name": "string"}},
            "Country": {"parent": "Region",
                        "relationships": {"continent": {"destination": "Continent", "inverse": "countries"},
                                          "moods": {"destination": "Mood", "inverse": "country", "toMany": true}}},
            """
        let v1 = try model(
            """
            {"version": "C1", "entities": {\(regions)
              "Continent": {"parent": "Region",
                            "relationships": {"countries": {"destination": "Country", "inverse": "continent", "toMany": true}}},
              "Mood": {"attributes": {"score": "int32"},
                       "relationships": {"country": {"destination": "Country", "inverse": "moods"}}}}}
            """)
        let v2 = try model(
            """
            {"version": "C2", "entities": {\(regions)
              "Continent": {"parent": "Region",
                            "relationships": {"countries": {"destination": "Country", "inverse": "continent", "toMany": true},
                                              "moods": {"destination": "Mood", "inverse": "continent", "toMany": true}}},
              "Mood": {"attributes": {"score": "int32"},
                       "relationships": {"country": {"destination": "Country", "inverse": "moods"},
                                         "continent": {"destination": "Continent", "inverse": "moods"}}}}}
            """)
        let directory = try TemporaryDirectory()
        func makeSource(_ name: String, _ damage: String = "") throws -> String {
            let path = directory.path(name)
            let store = try Store.create(at: path, model: v1)
            let layout = store.layout.entities
            let region = layout["Region"]!, country = layout["Country"]!, continent = layout["Continent"]!
            let mood = layout["Mood"]!
            // Regions 1…6 are continents (6 named 'skip'), 7…40 countries; 300 moods.
            try store.database.execute(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)
                INSERT INTO \(region.table) (Z_PK, Z_ENT, Z_OPT, \(region.attributeColumns["name"]!), \(country.toOneColumns["continent"]!.key))
                SELECT i, CASE WHEN i <= 6 THEN \(continent.number) ELSE \(country.number) END, 1,
                    CASE WHEN i = 6 THEN 'skip' ELSE 'region ' || i END,
                    CASE WHEN i <= 6 OR i % 9 = 0 THEN NULL ELSE i % 6 + 1 END FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
                INSERT INTO \(mood.table) (Z_PK, Z_ENT, Z_OPT, \(mood.attributeColumns["score"]!), \(mood.toOneColumns["country"]!.key))
                SELECT i, \(mood.number), 1, i % 10, CASE WHEN i % 11 = 0 THEN NULL ELSE i % 34 + 7 END FROM n;
                UPDATE Z_PRIMARYKEY SET Z_MAX = 40 WHERE Z_ENT IN (\(region.number), \(country.number), \(continent.number));
                UPDATE Z_PRIMARYKEY SET Z_MAX = 300 WHERE Z_ENT = \(mood.number);
                \(Self.filling(damage, ["regions": region.table, "moods": mood.table, "country": mood.toOneColumns["country"]!.key, "continent": country.toOneColumns["continent"]!.key]))
                """)
            return path
        }
        let clean = try makeSource("C1.sqlite")
        let damaged = [
            try makeSource("C1-nocountry.sqlite", "UPDATE {moods} SET {country} = 99 WHERE Z_PK = 5"),
            try makeSource("C1-continent.sqlite", "UPDATE {moods} SET {country} = 2 WHERE Z_PK = 5"),
            try makeSource("C1-nocontinent.sqlite", "UPDATE {regions} SET {continent} = 77 WHERE Z_PK = 12")
        ]
        let lookup = { (mapping: String, path: String) in
            #"FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\#(mapping)\", $source.\#(path))"#
        }
        let moods =
            #"{"name": "MoodToMood", "type": "transform", "sourceEntity": "Mood", "destinationEntity": "Mood", "relationshipMappings": {"continent": "\#(lookup("ContinentToContinent", "country.continent"))"}}"#
        let countries =
            #"{"name": "CountryToCountry", "type": "copy", "sourceEntity": "Country", "destinationEntity": "Country"}"#
        let continents =
            #"{"name": "ContinentToContinent", "type": "transform", "sourceEntity": "Continent", "destinationEntity": "Continent", "sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Continent\", \"name != 'skip'\"), $manager.sourceContext, NO)", "relationshipMappings": {"moods": "\#(lookup("MoodToMood", "countries.@distinctUnionOfSets.moods"))"}}"#
        var counts: [[Int]] = []
        for (n, (order, source))
            in ([[moods, countries, continents], [continents, countries, moods]].map { ($0, clean) }
            + damaged.map { ([moods, countries, continents], $0) }).enumerated()
        {
            let mapping = try Self.mapping(from: "C1", to: "C2", order)
            let (interpreted, pushed, report) = try Self.bothWays(
                mapping, v1, v2, source: source, in: directory, name: "c\(n)")
            #expect(pushed == interpreted, "case \(n)")
            guard case .store(let tables, _) = pushed, let report else {
                #expect(source != clean, "case \(n): the migration failed: \(pushed)")
                continue
            }
            #expect(source == clean, "case \(n) did not fail")
            // Moods in a country of a migrated continent got it.
            #expect((tables["ZMOOD"] ?? []).filter { $0.last != "null" }.count > 100, "case \(n)")
            for name in ["MoodToMood", "ContinentToContinent"] {
                let execution = report.entityMappings.first { $0.name == name }!.execution!
                #expect(execution.relationshipsAsSQL, "case \(n): \(name): \(execution)")
            }
            counts.append(report.entityMappings.map(\.relationshipsSet))
        }
        // The first link of the relationship counts its changes, the second none (the
        // continents when they link first, every mood's to-one either way).
        #expect(counts.count == 2 && counts[0] != counts[1], "\(counts)")
    }

    /// A to-one whose target two entity mappings make (a review of a vehicle, cars and bikes
    /// each mapped on their own): one `UPDATE` per target mapping, each setting the key and
    /// its entity column, every review counted once, in every order; a review of a plain
    /// vehicle, which no mapping maps, has none. The keys are never written in stage 1
    /// (two mappings' keys would fill the same column).
    @Test func aToOneWhoseTargetSeveralMappingsMakeIsLinkedBySQL() throws {
        let models = ["R1", "R2"].map { version in
            """
            {"version": "\(version)", "entities": {
              "Vehicle": {"attributes": {"name": "string"},
                          "relationships": {"reviews": {"destination": "Review", "inverse": "vehicle", "toMany": true}}},
              "Car": {"parent": "Vehicle", "attributes": {"doors": "int16"}},
              "Bike": {"parent": "Vehicle", "attributes": {"gears": "int16"}},
              "Review": {"attributes": {"stars": "int16"},
                         "relationships": {"vehicle": {"destination": "Vehicle", "inverse": "reviews"}}}}}
            """
        }
        let v1 = try model(models[0]), v2 = try model(models[1])
        let directory = try TemporaryDirectory()
        let source = directory.path("R1.sqlite")
        do {
            let store = try Store.create(at: source, model: v1)
            let layout = store.layout.entities
            let vehicle = layout["Vehicle"]!, car = layout["Car"]!, bike = layout["Bike"]!, review = layout["Review"]!
            let key = review.toOneColumns["vehicle"]!
            #expect(key.entity != nil)
            try store.database.execute(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 90)
                INSERT INTO \(vehicle.table) (Z_PK, Z_ENT, Z_OPT, \(vehicle.attributeColumns["name"]!), \(car.attributeColumns["doors"]!),
                    \(bike.attributeColumns["gears"]!))
                SELECT i, CASE i % 3 WHEN 0 THEN \(vehicle.number) WHEN 1 THEN \(car.number) ELSE \(bike.number) END, 1, 'vehicle ' || i,
                    CASE i % 3 WHEN 1 THEN i % 5 END, CASE i % 3 WHEN 2 THEN i % 21 END FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 700)
                INSERT INTO \(review.table) (Z_PK, Z_ENT, Z_OPT, \(review.attributeColumns["stars"]!), \(key.key), \(key.entity!))
                SELECT i, \(review.number), 1, i % 6, CASE WHEN i % 5 = 0 THEN NULL ELSE i % 90 + 1 END,
                    CASE WHEN i % 5 = 0 THEN NULL ELSE CASE (i % 90 + 1) % 3 WHEN 0 THEN \(vehicle.number) WHEN 1 THEN \(car.number) ELSE \(bike.number) END END
                FROM n;
                UPDATE Z_PRIMARYKEY SET Z_MAX = 90 WHERE Z_ENT = \(vehicle.number);
                UPDATE Z_PRIMARYKEY SET Z_MAX = 700 WHERE Z_ENT = \(review.number);
                """)
        }
        let lookup =
            #"FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"vehicle\", $source.vehicle)"#
        let reviews =
            #"{"name": "ReviewToReview", "type": "transform", "sourceEntity": "Review", "destinationEntity": "Review", "relationshipMappings": {"vehicle": ""#
            + lookup + #""}}"#
        let cars = #"{"name": "CarToCar", "type": "copy", "sourceEntity": "Car", "destinationEntity": "Car"}"#
        let bikes = #"{"name": "BikeToBike", "type": "copy", "sourceEntity": "Bike", "destinationEntity": "Bike"}"#
        for (n, order) in [[reviews, cars, bikes], [cars, reviews, bikes], [cars, bikes, reviews]].enumerated() {
            let mapping = try Self.mapping(from: "R1", to: "R2", order)
            let (interpreted, pushed, report) = try Self.bothWays(
                mapping, v1, v2, source: source, in: directory, name: "\(n)")
            #expect(pushed == interpreted, "order \(n)")
            guard case .store(let tables, _) = pushed, let report else {
                Issue.record("order \(n): the migration failed: \(pushed)")
                continue
            }
            #expect(tables["ZREVIEW"]?.count == 700)
            let review = report.entityMappings.first { $0.name == "ReviewToReview" }!
            #expect(
                review.execution!.instancesAsSQL && review.execution!.relationshipsAsSQL,
                "order \(n): \(review.execution!)")
            #expect(review.relationshipsSet == 700, "order \(n)")
        }
    }

    /// The new store's indexes are made after stage 1 has written the rows
    /// (`Store.create(…, deferringIndexes: true)`), and it has each its layout has, as a
    /// store made whole has them, both ways.
    @Test(arguments: [false, true])
    func theNewStoreHasEveryIndexOfItsLayout(pushdown: Bool) throws {
        let v1 = try model(Self.source), v2 = try model(Self.destination)
        let directory = try TemporaryDirectory()
        let source = directory.path("D1.sqlite"), path = directory.path("D2.sqlite")
        try Self.makeSource(at: source, model: v1, rows: .clean)
        let manager = try MigrationManager(
            mapping: try Self.mapping("out64", "$source.count * 2"), source: v1, destination: v2,
            options: MigrationOptions(pushdown: pushdown))
        try manager.migrateStore(from: source, to: path)
        func indexes(_ path: String) throws -> [String] {
            let database = try Database(path: path, mode: .readOnly)
            let statement = try database.prepare(
                "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
            var result: [String] = []
            while try statement.step() { result.append(statement.string(at: 0)!) }
            return result
        }
        let whole = directory.path("whole.sqlite")
        _ = try Store.create(at: whole, model: v2)
        #expect(try indexes(path) == indexes(whole))
        #expect(try !indexes(path).isEmpty)
        // A store made with its indexes deferred has none until they are made.
        let deferred = try Store.create(at: directory.path("deferred.sqlite"), model: v2, deferringIndexes: true)
        #expect(try indexes(directory.path("deferred.sqlite")).isEmpty)
        try deferred.database.execute("PRAGMA cache_size = -12345")
        try deferred.createDeferredIndexes()
        #expect(try indexes(directory.path("deferred.sqlite")) == indexes(whole))
        // (Built with a small cache, which is then what it was.)
        let size = try deferred.database.prepare("PRAGMA cache_size")
        _ = try size.step()
        #expect(size.int64(at: 0) == -12345)
    }

    /// Names each group's copy in capitals, as a custom policy can.
    final class ShoutingPolicy: EntityMigrationPolicy {
        func createDestinationInstances(
            forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            for created in try defaultCreateDestinationInstances(forSource: source, in: mapping, manager: manager) {
                if case .string(let name) = try source.value(forKey: "name") {
                    try created.setValue(.string(name.uppercased()), forKey: "name")
                }
            }
        }
    }

    /// Makes a second copy of every tenth group.
    final class DoublingPolicy: EntityMigrationPolicy {
        func createDestinationInstances(
            forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            _ = try defaultCreateDestinationInstances(forSource: source, in: mapping, manager: manager)
            if source.objectID.primaryKey % 10 == 0 {
                _ = try defaultCreateDestinationInstances(forSource: source, in: mapping, manager: manager)
            }
        }
    }

    /// Makes the default copy of each group, then an object it deletes again: the key it
    /// took is left unused, as the interpreter leaves it.
    final class GappingPolicy: EntityMigrationPolicy {
        func createDestinationInstances(
            forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            _ = try defaultCreateDestinationInstances(forSource: source, in: mapping, manager: manager)
            try manager.destinationContext.delete(manager.destinationContext.insert(mapping.destinationEntity!))
        }
    }

    /// Rows written as SQL after keys the table left unused (an interpreted mapping of the
    /// same table took keys for objects it deleted) take the keys the interpreter gives
    /// them: after the gap, where SQLite would give the next rowid of the table. The rows
    /// of a filter (counted keys) and of every row (keys by an offset).
    @Test(arguments: [false, true])
    func rowsAfterUnusedKeysTakeTheInterpretersKeys(filtered: Bool) throws {
        let v1 = try model(Self.source), v2 = try model(Self.destination)
        let directory = try TemporaryDirectory()
        let source = directory.path("D1.sqlite")
        try Self.makeSource(at: source, model: v1, rows: .clean, contiguousKeys: true)
        var policies = PolicyRegistry()
        policies.register("Gapping") { GappingPolicy() }
        let filter =
            filtered
            ? #", "sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Group\", \"rank > 3\"), $manager.sourceContext, NO)""#
            : ""
        let mapping = try Migration.MappingModel(
            json: JSON.parse(
                """
                {"sourceModel": "D1", "destinationModel": "D2", "entityMappings": [
                  {"name": "GroupToGroup", "type": "copy", "sourceEntity": "Group", "destinationEntity": "Group", "policy": "Gapping"},
                  {"name": "GroupToGroupAgain", "type": "copy", "sourceEntity": "Group", "destinationEntity": "Group"\(filter)}]}
                """), file: "test.mapping.json")
        let (interpreted, _) = try Self.run(
            mapping, v1, v2, source: source, to: directory.path("i.sqlite"), pushdown: false, policies: policies)
        // Each statement that writes the rows: the one that checks each row, one for a
        // store whose values are known to be well typed, and those of chunks checked ahead.
        for (n, (wellTyped, chunkRows)) in [(false, nil), (true, nil), (false, 7)].enumerated() {
            let (pushed, report) = try Self.run(
                mapping, v1, v2, source: source, to: directory.path("s\(n).sqlite"), pushdown: true,
                policies: policies, sourceIsWellTyped: wellTyped, sqlChunkRows: chunkRows)
            #expect(pushed == interpreted, "well typed \(wellTyped), chunks of \(chunkRows ?? 0)")
            guard case .store(let tables, _) = pushed, let report else {
                Issue.record("the migration failed: \(pushed)")
                continue
            }
            let execution = report.entityMappings[1].execution!
            #expect(execution.instancesAsSQL, "\(execution)")
            // The second mapping's keys start after the 40 copies and the 40 keys left unused.
            let keys = (tables["ZGROUP"] ?? []).compactMap { Int($0[0].dropFirst(2)) }
            #expect(keys.count > 40 && keys.filter { $0 <= 80 }.count == 40 && keys.min() == 1)
            #expect(keys.filter { $0 > 80 }.min() == 81)
        }
    }

    /// A custom policy keeps its own entity mapping in the interpreter; the step's other
    /// mappings still run as SQL, and link to the objects the policy made (by SQL when the
    /// policy made one object per source object, as the links' keys table needs; by the
    /// interpreter, with its error, when it made two).
    @Test(arguments: ["Shouting", "Doubling"])
    func aCustomPolicyKeepsOnlyItsOwnMappingInterpreted(policy: String) throws {
        let v1 = try model(Self.source), v2 = try model(Self.destination)
        let directory = try TemporaryDirectory()
        let source = directory.path("D1.sqlite")
        try Self.makeSource(at: source, model: v1, rows: .clean)
        var policies = PolicyRegistry()
        policies.register("Shouting") { ShoutingPolicy() }
        policies.register("Doubling") { DoublingPolicy() }
        let mapping = try Migration.MappingModel(
            json: JSON.parse(
                """
                {"sourceModel": "D1", "destinationModel": "D2", "entityMappings": [
                  {"name": "GroupToGroup", "type": "copy", "sourceEntity": "Group", "destinationEntity": "Group", "policy": "\(policy)"},
                  {"name": "RowToRow", "type": "transform", "sourceEntity": "Row", "destinationEntity": "Row",
                   "attributeMappings": {"out64": "$source.count * 2", "label": "TERNARY($source.label == nil, '-', $source.label)"}}]}
                """), file: "test.mapping.json")
        let (interpreted, pushed, report) = try Self.bothWays(
            mapping, v1, v2, source: source, in: directory, name: "", policies: policies)
        #expect(pushed == interpreted)
        guard case .store(let tables, _) = pushed, let report else {
            // Two groups made from one: the rows' to-one cannot hold both, and the
            // interpreter says so on the first row that points to one.
            #expect(policy == "Doubling", "the migration failed: \(pushed)")
            #expect(
                pushed
                    == .failure(
                        "value: entity mapping \"RowToRow\", source Row Z_PK 26, 'group' = \"FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"GroupToGroup\", $source.group)\": More than one relationship destination for the to-one relationship 'group' (2 objects)"
                    ))
            return
        }
        #expect(policy == "Shouting")
        let executions = report.entityMappings.map { $0.execution! }
        #expect(!executions[0].instancesAsSQL && !executions[0].relationshipsAsSQL, "\(executions[0])")
        #expect(
            executions[1].instancesAsSQL && executions[1].relationshipsAsSQL,
            "\(executions[1].relationshipsReason ?? "")")
        #expect(tables["ZGROUP"]?.contains { $0.contains("t:GROUP 1") } == true)
    }

    /// A to-one key written with the row (the groups' keys are the source keys plus an
    /// offset, so it is arithmetic, not a lookup): the same links as the interpreter's,
    /// and odd keys in the source (a double, text, a key no group has, a negative one) end
    /// as the interpreter ends them (the link's check finds them first: the interpreter
    /// reads a double or a blob as no group, and fails on an integer that names none);
    /// with the rows' keys counted (they have gaps) and as an offset (renumbered without
    /// gaps: the check then reads the source rows, not the keys' view).
    @Test(arguments: [false, true])
    func oddToOneKeysAreLinkedAsTheInterpreterLinksThem(withoutGaps: Bool) throws {
        let v1 = try model(Self.source), v2 = try model(Self.destination)
        let directory = try TemporaryDirectory()
        for (n, key) in ["3.0", "5.5", "'abc'", "999", "-1", "0", "40", "41", "CAST('3' AS BLOB)"].enumerated() {
            let source = directory.path("D1-\(n).sqlite")
            try Self.makeSource(at: source, model: v1, rows: .clean)
            let store = try Store.open(at: source, model: v1)
            let row = store.layout.entities["Row"]!
            if withoutGaps {
                // 1, 2, 3, … in the same order (all negative first: no key is taken twice).
                try store.database.execute(
                    """
                    CREATE TEMP TABLE renumbered AS SELECT Z_PK AS old, row_number() OVER (ORDER BY Z_PK) AS new FROM \(row.table);
                    UPDATE \(row.table) SET Z_PK = -(SELECT new FROM renumbered WHERE old = Z_PK);
                    UPDATE \(row.table) SET Z_PK = -Z_PK;
                    UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT max(Z_PK) FROM \(row.table)) WHERE Z_ENT = \(row.number);
                    """)
            }
            // Two rows (the source keys have gaps: 2, 6, 8, 12, …).
            try store.database.execute(
                "UPDATE \(row.table) SET \(row.toOneColumns["group"]!.key) = \(key) WHERE Z_PK IN (6, 8)")
            #expect(store.database.changes == 2)
            let mapping = try Self.mapping("outText", "$source.text")
            let (interpreted, pushed, report) = try Self.bothWays(
                mapping, v1, v2, source: source, in: directory, name: "\(n)")
            #expect(pushed == interpreted, "group key \(key)")
            if case .store = pushed {
                #expect(report?.entityMappings.allSatisfy { $0.execution?.instancesAsSQL == true } == true)
                // A key that names no group row is found before the links run, and the
                // interpreter links the rows; one that names a group is linked by SQL.
                let namesAGroup = ["40", "3.0"].contains(key)
                #expect(report?.entityMappings[1].execution?.relationshipsAsSQL == namesAGroup, "group key \(key)")
                #expect(report?.entityMappings[1].execution?.relationshipsReason != nil || namesAGroup)
            }
        }
    }

    /// A string method an embedder registers over the standard one is what runs, also on
    /// plain ASCII text where SQLite has a function of its own: SQL leaves it to the
    /// interpreter.
    @Test func aStringMethodRegisteredOverTheStandardOneIsTheOneThatRuns() throws {
        let v1 = try model(Self.source), v2 = try model(Self.destination)
        let directory = try TemporaryDirectory()
        let source = directory.path("D1.sqlite")
        try Self.makeSource(at: source, model: v1, rows: .clean)
        var policies = PolicyRegistry()
        policies.registerFunction("uppercaseString", on: .string) { target, _ in
            guard case .string(let s) = target else { return target }
            return .string("<\(s)>")
        }
        let mapping = try Self.mapping("outText", "FUNCTION($source.text, 'uppercaseString')")
        let (interpreted, pushed, report) = try Self.bothWays(
            mapping, v1, v2, source: source, in: directory, name: "", policies: policies)
        #expect(pushed == interpreted)
        guard case .store(let tables, _) = pushed, let execution = report?.entityMappings[1].execution else {
            Issue.record("the migration failed: \(pushed)")
            return
        }
        #expect(execution.evaluated == ["outText"], "\(execution)")
        #expect(tables["ZROW"]?.contains { $0.contains("t:<row 6>") } == true)
    }

    /// The groups' policy: before its mapping runs, a trigger on the new store's rows that
    /// counts each row written and cancels the run at the tenth, from inside the
    /// statement that writes them (as another thread's `cancel` reaches a statement
    /// running long: a chunk, a link, an index).
    final class TickingPolicy: EntityMigrationPolicy {
        static let ticks = Mutex(0)

        func begin(_ mapping: EntityMapping, manager: MigrationManager) throws {
            let database = manager.destinationContext.database
            try database.registerFunction("test_tick", arity: 0) { _ in
                let count = Self.ticks.withLock { count in
                    count += 1
                    return count
                }
                if count == 10 { manager.cancel("stopped by the test") }
                return .null
            }
            try database.execute("CREATE TEMP TRIGGER tick AFTER INSERT ON ZROW BEGIN SELECT test_tick(); END")
        }
    }

    /// A cancellation stops the statement SQL is running where it is
    /// (`sqlite3_interrupt`), not once the statement ends: the rows' chunk of 5,000 stops
    /// at the row written when `cancel` was called. The run reports the cancellation, as
    /// the interpreter's hooks do, and leaves no new file.
    @Test func cancellingInterruptsTheStatementThatRuns() throws {
        let v1 = try model(Self.source), v2 = try model(Self.destination)
        let directory = try TemporaryDirectory()
        let source = directory.path("D1.sqlite"), destination = directory.path("D2.sqlite")
        try Self.makeSource(at: source, model: v1, rows: .clean)
        var policies = PolicyRegistry()
        policies.register("Ticking") { TickingPolicy() }
        let mapping = try Migration.MappingModel(
            json: JSON.parse(
                """
                {"sourceModel": "D1", "destinationModel": "D2", "entityMappings": [
                  {"name": "GroupToGroup", "type": "copy", "sourceEntity": "Group", "destinationEntity": "Group", "policy": "Ticking"},
                  {"name": "RowToRow", "type": "transform", "sourceEntity": "Row", "destinationEntity": "Row",
                   "attributeMappings": {"out64": "$source.count * 2"}}]}
                """), file: "test.mapping.json")
        let manager = try MigrationManager(
            mapping: mapping, source: v1, destination: v2, policies: policies,
            options: MigrationOptions(chunkSize: 5_000))
        TickingPolicy.ticks.withLock { $0 = 0 }
        let error = try #require(throws: MigrationError.self) {
            try manager.migrateStore(from: source, to: destination)
        }
        #expect(error.kind == .cancelled, "\(error)")
        #expect(error.message == "stopped by the test")
        #expect(error.entityMapping == "RowToRow")
        #expect(TickingPolicy.ticks.withLock { $0 } == 10)
        #expect(!FileManager.default.fileExists(atPath: destination))
    }

    /// A row with two to-ones, and a row that is the target of two relationships, linked
    /// in stage 1 or in stage 2 by the mapping order: the same rows, the same counts, and
    /// `Z_OPT` 1 (a migration's rows are new) however many links changed a row. The
    /// mapping of the targets runs first, to write the keys with the rows, where it
    /// cannot fail, or on trial where what the interpreter evaluates reads only the
    /// source; not where both call a registered function that counts its calls.
    @Test func rowsLinkedTwiceAreVersionedAsTheInterpreterVersionsThem() throws {
        let models = ["T1", "T2"].map { version in
            """
            {"version": "\(version)", "entities": {
              "Person": {"attributes": {"name": "string"},
                         "relationships": {"written": {"destination": "Letter", "inverse": "author", "toMany": true},
                                           "received": {"destination": "Letter", "inverse": "recipient", "toMany": true}}},
              "Letter": {"attributes": {"subject": "string"},
                         "relationships": {"author": {"destination": "Person", "inverse": "written"},
                                           "recipient": {"destination": "Person", "inverse": "received"}}}}}
            """
        }
        let v1 = try model(models[0]), v2 = try model(models[1])
        let directory = try TemporaryDirectory()
        let source = directory.path("T1.sqlite")
        do {
            let store = try Store.create(at: source, model: v1)
            let person = store.layout.entities["Person"]!, letter = store.layout.entities["Letter"]!
            try store.database.execute(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30)
                INSERT INTO \(person.table) (Z_PK, Z_ENT, Z_OPT, \(person.attributeColumns["name"]!)) SELECT i, \(person.number), 1, 'person ' || i FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
                INSERT INTO \(letter.table) (Z_PK, Z_ENT, Z_OPT, \(letter.attributeColumns["subject"]!), \(letter.toOneColumns["author"]!.key),
                    \(letter.toOneColumns["recipient"]!.key))
                SELECT i, \(letter.number), 1, 'letter ' || i, CASE WHEN i % 5 = 0 THEN NULL ELSE i % 30 + 1 END,
                    CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 7) % 30 + 1 END FROM n;
                UPDATE Z_PRIMARYKEY SET Z_MAX = 30 WHERE Z_ENT = \(person.number);
                UPDATE Z_PRIMARYKEY SET Z_MAX = 500 WHERE Z_ENT = \(letter.number);
                """)
        }
        // Letters after people: their keys to people are written with their rows (stage
        // 1). People after letters: made first all the same, as nothing can fail there;
        // or when their mapping asks the interpreter for a value, as the letters' cannot
        // fail (an error would be the people's either way); where both ask it (the
        // letters' could fail first), on trial, what they ask reading only their source.
        // A function registered with a count of its calls (`tally`) gives other values in
        // another order: where both call it, the letters are linked in stage 2.
        let tally = Mutex(0)
        var policies = PolicyRegistry()
        policies.registerFunction("tally", on: .string) { target, _ in
            guard case .string(let s) = target else { return target }
            return .string("\(s) \(tally.withLock { $0 += 1; return $0 })")
        }
        let cases: [(order: [String], personName: String?, subject: String?, inStage1: Bool)] = [
            (["Person", "Letter"], nil, nil, true), (["Letter", "Person"], nil, nil, true),
            (["Letter", "Person"], "$entityMapping.name", nil, true),
            (["Letter", "Person"], "$entityMapping.name", "$entityMapping.name", true),
            (["Letter", "Person"], "FUNCTION($source.name, 'tally')", "FUNCTION($source.subject, 'tally')", false)
        ]
        for (order, personName, subject, inStage1) in cases {
            let mappings = order.map { entity in
                let evaluated = entity == "Person" ? personName.map { ("name", $0) } : subject.map { ("subject", $0) }
                let name = evaluated.map { #", "attributeMappings": {"\#($0.0)": "\#($0.1)"}"# } ?? ""
                return
                    #"{"name": "\#(entity)To\#(entity)", "type": "transform", "sourceEntity": "\#(entity)", "destinationEntity": "\#(entity)"\#(name)}"#
            }
            let mapping = try Self.mapping(from: "T1", to: "T2", mappings)
            let name =
                order.joined() + (personName.map { "E\($0.count)" } ?? "") + (subject.map { "S\($0.count)" } ?? "")
            tally.withLock { $0 = 0 }
            let (interpreted, _) = try Self.run(
                mapping, v1, v2, source: source, to: directory.path("i\(name).sqlite"), pushdown: false,
                policies: policies)
            var written: Set<String> = []
            tally.withLock { $0 = 0 }
            let (pushed, report) = try Self.run(
                mapping, v1, v2, source: source, to: directory.path("s\(name).sqlite"), pushdown: true,
                policies: policies
            ) {
                written = Set($0.prelinked.map(\.column))
            }
            #expect(pushed == interpreted, "\(order), \(personName ?? ""), \(subject ?? "")")
            #expect(written == (inStage1 ? ["ZAUTHOR", "ZRECIPIENT"] : []), "\(order)")
            let executions = report?.entityMappings.map { $0.execution! } ?? []
            #expect(
                executions.count == 2 && executions.allSatisfy { $0.instancesAsSQL && $0.relationshipsAsSQL },
                "\(executions)")
        }
    }

    /// Letters before the people they name, both computing a number SQL guards (an
    /// overflow the interpreter reports): the people's stage 1 runs first on trial, so
    /// that the letters' keys to them are written with their rows; where stage 1 fails,
    /// the run starts again in the file's order and fails as the interpreter does, with
    /// the error of the first mapping that meets one (the letters', where both do). A
    /// failure after stage 1 (a person without the name the newer version requires) is
    /// the same in either order, and the run does not start again.
    @Test(arguments: [
        (false, false, false), (true, false, false), (false, true, false), (true, true, false), (false, false, true)
    ])
    func aMappingRunAheadOnTrialFailsWithTheErrorTheFilesOrderGives(
        _ personOverflows: Bool, _ letterOverflows: Bool, _ unnamed: Bool
    ) throws {
        let models = ["T1", "T2"].map { version in
            """
            {"version": "\(version)", "entities": {
              "Person": {"attributes": {"name": \(version == "T2" ? #"{"type": "string", "optional": false}"# : #""string""#), "n": "int64"},
                         "relationships": {"written": {"destination": "Letter", "inverse": "author", "toMany": true}}},
              "Letter": {"attributes": {"subject": "string", "n": "int64"},
                         "relationships": {"author": {"destination": "Person", "inverse": "written"}}}}}
            """
        }
        let v1 = try model(models[0]), v2 = try model(models[1])
        let directory = try TemporaryDirectory()
        let source = directory.path("T1.sqlite")
        do {
            let store = try Store.create(at: source, model: v1)
            let person = store.layout.entities["Person"]!, letter = store.layout.entities["Letter"]!
            let (pn, ln) = (person.attributeColumns["n"]!, letter.attributeColumns["n"]!)
            try store.database.execute(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20)
                INSERT INTO \(person.table) (Z_PK, Z_ENT, Z_OPT, \(person.attributeColumns["name"]!), \(pn))
                SELECT i, \(person.number), 1, 'person ' || i, i FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)
                INSERT INTO \(letter.table) (Z_PK, Z_ENT, Z_OPT, \(letter.attributeColumns["subject"]!), \(ln),
                    \(letter.toOneColumns["author"]!.key))
                SELECT i, \(letter.number), 1, 'letter ' || i, i, CASE WHEN i % 9 = 0 THEN NULL ELSE i % 20 + 1 END FROM n;
                UPDATE Z_PRIMARYKEY SET Z_MAX = 20 WHERE Z_ENT = \(person.number);
                UPDATE Z_PRIMARYKEY SET Z_MAX = 100 WHERE Z_ENT = \(letter.number);
                """)
            if personOverflows {
                try store.database.execute("UPDATE \(person.table) SET \(pn) = \(Int64.max) WHERE Z_PK = 12")
            }
            if letterOverflows {
                try store.database.execute("UPDATE \(letter.table) SET \(ln) = \(Int64.max) WHERE Z_PK = 70")
            }
            if unnamed {
                try store.database.execute(
                    "UPDATE \(person.table) SET \(person.attributeColumns["name"]!) = NULL WHERE Z_PK = 5")
            }
        }
        let mapping = try Self.mapping(
            from: "T1", to: "T2",
            ["Letter", "Person"].map { entity in
                #"{"name": "\#(entity)To\#(entity)", "type": "transform", "sourceEntity": "\#(entity)", "destinationEntity": "\#(entity)", "attributeMappings": {"n": "$source.n + 1"}}"#
            })
        let name = "\(personOverflows)\(letterOverflows)\(unnamed)"
        let (interpreted, _) = try Self.run(
            mapping, v1, v2, source: source, to: directory.path("i\(name).sqlite"), pushdown: false)
        // (Run here, to see the manager after a failure too: still on trial where the run
        // did not start again.)
        let manager = try MigrationManager(
            mapping: mapping, source: v1, destination: v2, options: MigrationOptions(chunkSize: 700))
        let pushed: Outcome
        do {
            let report = try manager.migrateStore(from: source, to: directory.path("s\(name).sqlite"))
            pushed = .store(
                try Self.dump(directory.path("s\(name).sqlite")),
                report.entityMappings.map { [$0.sourceInstances, $0.destinationInstances, $0.relationshipsSet] })
        } catch let error as MigrationError {
            pushed = .failure("\(error.kind.rawValue): \(error)")
        }
        #expect(pushed == interpreted, "\(name)")
        switch interpreted {
        case .store:
            #expect(!personOverflows && !letterOverflows && !unnamed)
            #expect(Set(manager.prelinked.map(\.column)) == ["ZAUTHOR"] && manager.reorderedOnTrial)
        case .failure(let message):
            if unnamed {
                #expect(message.hasPrefix("validation"), "\(message)")
                #expect(manager.reorderedOnTrial, "a failure after stage 1 started the run again")
            } else {
                #expect(message.contains(letterOverflows ? "LetterToLetter" : "PersonToPerson"), "\(message)")
                #expect(!manager.reorderedOnTrial, "a failure in stage 1 did not start the run again")
            }
        }
    }

    /// The rules of the destination's attributes (required, bounds) checked as SQL writes
    /// the rows: with none broken the validation leaves them out, and with one broken
    /// (a nil for a required string or double, a number out of bounds) the migration fails
    /// as the interpreter's does, naming the row. A bound on a string's length is checked
    /// as the text is read as it is; where a row's text is not well-formed, the statement
    /// that writes it reads it as the interpreter does, and its bound, which checking
    /// would compute from the text again, is left to the validation's scan.
    @Test(arguments: [false, true])
    func attributeRulesAreCheckedAsSQLWritesTheRows(lengthBound: Bool) throws {
        let v1 = try model(
            #"{"version": "V1", "entities": {"Thing": {"attributes": {"name": "string", "level": "int16", "weight": "double", "tag": "string"}}}}"#
        )
        let v2 = try model(
            """
            {"version": "V2", "entities": {"Thing": {"attributes": {
              "name": {"type": "string", "optional": false}, "level": {"type": "int16", "min": 0, "max": 10},
              "weight": {"type": "double", "optional": false}, "tag": {"type": "string"\(lengthBound ? #", "max": 20"# : "")},
              "kind": {"type": "string", "optional": false, "default": "plain"}}}}}
            """)
        let mapping = try Migration.MappingModel(
            json: JSON.parse(
                #"{"sourceModel": "V1", "destinationModel": "V2", "entityMappings": [{"name": "ThingToThing", "type": "transform", "sourceEntity": "Thing", "destinationEntity": "Thing", "attributeMappings": {"level": "$source.level + 0"}}]}"#
            ), file: "test.mapping.json")
        let directory = try TemporaryDirectory()
        let broken = [
            "": nil, "UPDATE ZTHING SET ZNAME = NULL WHERE Z_PK = 7": "Thing/7: 'name' is required but has no value",
            "UPDATE ZTHING SET ZLEVEL = 11 WHERE Z_PK = 8": "Thing/8: 'level' has value 11, above its maximum 10",
            "UPDATE ZTHING SET ZLEVEL = -1 WHERE Z_PK = 9": "Thing/9: 'level' has value -1, below its minimum 0",
            "UPDATE ZTHING SET ZWEIGHT = NULL WHERE Z_PK = 5": "Thing/5: 'weight' is required but has no value",
            "UPDATE ZTHING SET ZTAG = CAST(X'66C328' AS TEXT) WHERE Z_PK = 4": nil
        ]
        for (n, (change, failure)) in broken.sorted(by: { $0.key < $1.key }).enumerated() {
            let source = directory.path("V1-\(n).sqlite")
            let store = try Store.create(at: source, model: v1)
            try store.database.execute(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)
                INSERT INTO ZTHING (Z_PK, Z_ENT, Z_OPT, ZNAME, ZLEVEL, ZWEIGHT, ZTAG)
                SELECT i, 1, 1, 'thing ' || i, i % 11, i * 0.5, CASE WHEN i % 3 = 0 THEN NULL ELSE 'tag ' || i END FROM n;
                UPDATE Z_PRIMARYKEY SET Z_MAX = 50 WHERE Z_ENT = 1;
                \(change);
                """)
            let (interpreted, _) = try Self.run(
                mapping, v1, v2, source: source, to: directory.path("i\(n).sqlite"), pushdown: false)
            var checked: Set<String> = []
            let pushed: Outcome
            do {
                let manager = try MigrationManager(mapping: mapping, source: v1, destination: v2)
                let report = try manager.migrateStore(from: source, to: directory.path("s\(n).sqlite")) { progress in
                    // What the validation left out, asked once it has run.
                    if progress.stage == .validate { checked = manager.attributesCheckedAsWritten() }
                }
                #expect(report.entityMappings[0].execution?.instancesAsSQL == true, "\(change)")
                pushed = .store(
                    try Self.dump(directory.path("s\(n).sqlite")),
                    report.entityMappings.map { [$0.sourceInstances, $0.destinationInstances, $0.relationshipsSet] })
            } catch {
                pushed = .failure("\((error as? MigrationError)?.kind.rawValue ?? "?"): \(error)")
            }
            #expect(pushed == interpreted, "\(change)")
            if let failure {
                guard case .failure(let message) = pushed else {
                    Issue.record("\(change) did not fail")
                    continue
                }
                #expect(message.contains(failure), "\(change): \(message)")
            } else {
                #expect(checked == (lengthBound && change.contains("ZTAG") ? [] : ["Thing"]), "\(change)")
            }
        }
    }

    /// An ordered one-to-many linked by SQL, positions included: the interpreter's rows
    /// whichever side links first (the owners' side numbers the members as the source
    /// orders them, the members' side as they join, in key order), with source positions
    /// that tie, are missing, are not integers or are negative, members and owners not
    /// migrated, a source that is not ordered, and a destination that is not; and, when a
    /// link of the relationship has already run in the interpreter, the objects linked
    /// by SQL when it would change nothing (as the interpreter's merge would not), by the
    /// interpreter when it would.
    @Test func orderedOneToManyLinksAreTheInterpretersPositions() throws {
        func models(sourceOrdered: Bool, destinationOrdered: Bool) throws -> (ObjectModel, ObjectModel) {
            let v = ["O1": sourceOrdered, "O2": destinationOrdered].sorted { $0.key < $1.key }.map { version, ordered in
                """
                {"version": "\(version)", "entities": {
                  "Owner": {"attributes": {"name": "string"},
                            "relationships": {"items": {"destination": "Item", "inverse": "owner", "toMany": true, "ordered": \(ordered)}}},
                  "Item": {"attributes": {"title": "string"},
                           "relationships": {"owner": {"destination": "Owner", "inverse": "items"}}}}}
                """
            }
            return (try model(v[0]), try model(v[1]))
        }
        let directory = try TemporaryDirectory()
        func makeSource(_ name: String, _ v1: ObjectModel) throws -> String {
            let path = directory.path(name)
            let store = try Store.create(at: path, model: v1)
            let owner = store.layout.entities["Owner"]!, item = store.layout.entities["Item"]!
            let key = item.toOneColumns["owner"]!
            // Positions: mostly by a hash, so that they tie and disagree with the keys; some
            // missing, a double, text and negative ones.
            let position =
                key.order.map {
                    ", \($0)) SELECT i, \(item.number), 1, 'item ' || i, CASE WHEN i % 9 = 0 THEN NULL ELSE (i * 7) % 11 + 1 END, "
                        + "CASE i % 13 WHEN 0 THEN NULL WHEN 5 THEN 2.5 WHEN 6 THEN '3' WHEN 7 THEN -4 ELSE (i * 37) % 17 END FROM n"
                }
                ?? ") SELECT i, \(item.number), 1, 'item ' || i, CASE WHEN i % 9 = 0 THEN NULL ELSE (i * 7) % 11 + 1 END FROM n"
            try store.database.execute(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 12)
                INSERT INTO \(owner.table) (Z_PK, Z_ENT, Z_OPT, \(owner.attributeColumns["name"]!))
                SELECT i, \(owner.number), 1, CASE WHEN i = 4 THEN 'skip' ELSE 'owner ' || i END FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
                INSERT INTO \(item.table) (Z_PK, Z_ENT, Z_OPT, \(item.attributeColumns["title"]!), \(key.key)\(position);
                UPDATE \(item.table) SET \(item.attributeColumns["title"]!) = 'skip' WHERE Z_PK % 10 = 3;
                UPDATE Z_PRIMARYKEY SET Z_MAX = 12 WHERE Z_ENT = \(owner.number);
                UPDATE Z_PRIMARYKEY SET Z_MAX = 200 WHERE Z_ENT = \(item.number);
                """)
            return path
        }
        func filter(_ entity: String) -> String {
            #", "sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"\#(entity)\", \"\#(entity == "Item" ? "title" : "name") != 'skip'\"), $manager.sourceContext, NO)""#
        }
        var policies = PolicyRegistry()
        policies.register("Hooked") { LinksWithInstancesTests.Hooked() }
        policies.register("Unlinking") { Unlinking() }
        // (order of the mappings, filtered, source ordered, destination ordered, the
        // first mapping's policy, whether the second links by SQL: a first link in the
        // interpreter leaves the second nothing to change, unless it unlinks)
        let cases: [([String], Set<String>, Bool, Bool, String?, Bool)] = [
            (["Owner", "Item"], [], true, true, nil, true),
            (["Item", "Owner"], [], true, true, nil, true),
            (["Owner", "Item"], ["Item"], true, true, nil, true),
            (["Item", "Owner"], ["Item", "Owner"], true, true, nil, true),
            (["Owner", "Item"], ["Owner"], false, true, nil, true),
            (["Item", "Owner"], [], true, false, nil, true),
            (["Item", "Owner"], ["Item"], true, true, "Hooked", true),
            (["Item", "Owner"], [], true, true, "Hooked", true),
            (["Owner", "Item"], ["Owner"], true, true, "Hooked", true),
            (["Item", "Owner"], ["Item"], true, true, "Unlinking", false)
        ]
        for (n, (order, filtered, sourceOrdered, destinationOrdered, policy, secondBySQL)) in cases.enumerated() {
            let (v1, v2) = try models(sourceOrdered: sourceOrdered, destinationOrdered: destinationOrdered)
            let source = try makeSource("O1-\(n).sqlite", v1)
            let mappings = order.map { entity in
                let policy = entity == order[0] ? policy.map { #", "policy": "\#($0)""# } ?? "" : ""
                return
                    #"{"name": "\#(entity)To\#(entity)", "type": "transform", "sourceEntity": "\#(entity)", "destinationEntity": "\#(entity)"\#(filtered.contains(entity) ? filter(entity) : "")\#(policy)}"#
            }
            let mapping = try Self.mapping(from: "O1", to: "O2", mappings)
            let (interpreted, pushed, report) = try Self.bothWays(
                mapping, v1, v2, source: source, in: directory, name: "o\(n)", policies: policies)
            #expect(pushed == interpreted, "case \(n)")
            guard case .store(let tables, _) = pushed else {
                Issue.record("case \(n) failed: \(pushed)")
                continue
            }
            // Positions were written (and links made) at all.
            #expect(tables["ZITEM"]?.contains { $0.contains("i:2") } == true, "case \(n)")
            let second = report?.entityMappings.first { $0.name == "\(order[1])To\(order[1])" }?.execution
            #expect(second?.relationshipsAsSQL == secondBySQL, "case \(n): \(String(describing: second))")
        }
    }

    /// Links an item as the default policy does, then takes every fifth out of its owner:
    /// the owners' link, run after, would put them back.
    final class Unlinking: EntityMigrationPolicy {
        func createRelationships(
            forDestination destination: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            try defaultCreateRelationships(forDestination: destination, in: mapping, manager: manager)
            if destination.objectID.primaryKey % 5 == 0 { try destination.setValue(.null, forKey: "owner") }
        }
    }

    /// A one-to-one linked by SQL, both rows' keys: the interpreter's rows and counts in
    /// both orders of the mappings, with one side filtered, with only one side linked;
    /// and, in a damaged source, two people taking the same passport (the interpreter
    /// unlinks the first) or a passport naming another person than the one naming it
    /// (the second link would change keys): the interpreter links those. The same after
    /// a first link in the interpreter.
    @Test func oneToOneLinksAreTheInterpretersKeys() throws {
        let text = ["Q1", "Q2"].map { version in
            """
            {"version": "\(version)", "entities": {
              "Person": {"attributes": {"name": "string"},
                         "relationships": {"passport": {"destination": "Passport", "inverse": "person"}}},
              "Passport": {"attributes": {"number": "string"},
                           "relationships": {"person": {"destination": "Person", "inverse": "passport"}}}}}
            """
        }
        let v1 = try model(text[0]), v2 = try model(text[1])
        let directory = try TemporaryDirectory()
        func makeSource(_ name: String, _ damage: String = "") throws -> String {
            let path = directory.path(name)
            let store = try Store.create(at: path, model: v1)
            let person = store.layout.entities["Person"]!, passport = store.layout.entities["Passport"]!
            let toPassport = person.toOneColumns["passport"]!.key, toPerson = passport.toOneColumns["person"]!.key
            try store.database.execute(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)
                INSERT INTO \(person.table) (Z_PK, Z_ENT, Z_OPT, \(person.attributeColumns["name"]!), \(toPassport))
                SELECT i, \(person.number), 1, 'person ' || i, CASE WHEN i % 4 = 0 THEN NULL ELSE 41 - i END FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)
                INSERT INTO \(passport.table) (Z_PK, Z_ENT, Z_OPT, \(passport.attributeColumns["number"]!), \(toPerson))
                SELECT i, \(passport.number), 1, 'P-' || i, CASE WHEN (41 - i) % 4 = 0 THEN NULL ELSE 41 - i END FROM n;
                UPDATE Z_PRIMARYKEY SET Z_MAX = 40;
                \(Self.filling(damage, ["person": person.table, "toPassport": toPassport, "passport": passport.table, "toPerson": toPerson]))
                """)
            return path
        }
        let clean = try makeSource("Q1.sqlite")
        let twice = try makeSource("Q1-twice.sqlite", "UPDATE {person} SET {toPassport} = 30 WHERE Z_PK = 12;")
        let disagree = try makeSource("Q1-disagree.sqlite", "UPDATE {passport} SET {toPerson} = 6 WHERE Z_PK = 30;")
        let filter =
            #", "sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Passport\", \"number != 'P-7'\"), $manager.sourceContext, NO)""#
        // (order, source, passports filtered, passports link back, both link by SQL)
        let cases: [([String], String, Bool, Bool, Bool)] = [
            (["Person", "Passport"], clean, false, true, true), (["Passport", "Person"], clean, false, true, true),
            (["Person", "Passport"], clean, true, true, true), (["Passport", "Person"], clean, false, false, true),
            (["Person", "Passport"], twice, false, true, false), (["Person", "Passport"], twice, false, false, false),
            (["Person", "Passport"], disagree, false, true, false)
        ]
        for (n, (order, source, filtered, linksBack, bySQL)) in cases.enumerated() {
            let mappings = order.map { entity in
                let type = entity == "Passport" && !linksBack ? "custom" : "transform"
                let extra =
                    entity == "Passport"
                    ? (filtered ? filter : "")
                        + (linksBack ? "" : #", "attributeMappings": {"number": "$source.number"}"#)
                    : ""
                return
                    #"{"name": "\#(entity)To\#(entity)", "type": "\#(type)", "sourceEntity": "\#(entity)", "destinationEntity": "\#(entity)"\#(extra)}"#
            }
            let mapping = try Self.mapping(from: "Q1", to: "Q2", mappings)
            let (interpreted, pushed, report) = try Self.bothWays(
                mapping, v1, v2, source: source, in: directory, name: "q\(n)")
            #expect(pushed == interpreted, "case \(n)")
            guard case .store(let tables, _) = pushed else {
                Issue.record("case \(n) failed: \(pushed)")
                continue
            }
            #expect(tables["ZPASSPORT"]?.count == (filtered ? 39 : 40), "case \(n)")
            // The mappings that link: all by SQL, or (damaged) one left to the interpreter.
            let linking = (report?.entityMappings ?? []).filter { $0.name == "PersonToPerson" || linksBack }
            let asSQL = linking.map { $0.execution?.relationshipsAsSQL == true }
            #expect(bySQL ? asSQL.allSatisfy { $0 } : asSQL.contains(false), "case \(n): \(asSQL)")
        }
        // The people linked first by the interpreter (a policy's mapping): the passports'
        // link then finds its keys set, and by SQL changes nothing, unless the source's
        // two keys disagree (the interpreter moves that passport to another person).
        var policies = PolicyRegistry()
        policies.register("Hooked") { LinksWithInstancesTests.Hooked() }
        for (n, (source, bySQL)) in [(clean, true), (disagree, false)].enumerated() {
            let mapping = try Migration.MappingModel(
                json: JSON.parse(
                    #"{"sourceModel": "Q1", "destinationModel": "Q2", "entityMappings": [{"name": "PersonToPerson", "type": "transform", "sourceEntity": "Person", "destinationEntity": "Person", "policy": "Hooked"}, {"name": "PassportToPassport", "type": "transform", "sourceEntity": "Passport", "destinationEntity": "Passport"}]}"#
                ), file: "test.mapping.json")
            let (interpreted, pushed, report) = try Self.bothWays(
                mapping, v1, v2, source: source, in: directory, name: "qh\(n)", policies: policies)
            #expect(pushed == interpreted, "hooked case \(n)")
            let passports = report?.entityMappings.first { $0.name == "PassportToPassport" }?.execution
            #expect(passports?.relationshipsAsSQL == bySQL, "hooked case \(n): \(String(describing: passports))")
        }
    }

    /// An entity split in two, each side linked to the object made from the same source
    /// row (`FUNCTION($manager, "…EntityMappingNamed…", "M", $source)`): by SQL, the
    /// interpreter's rows and counts, for a one-to-one (both sides linked or one, both
    /// orders) and a to-one whose inverse is a to-many, with the addresses filtered.
    @Test func anEntitySplitInTwoIsLinkedByTheSameSourceRow() throws {
        let v1 = try model(
            #"{"version": "S1", "entities": {"Person": {"attributes": {"name": "string", "street": "string"}}}}"#)
        func v2(_ toMany: Bool) throws -> ObjectModel {
            try model(
                """
                {"version": "S2", "entities": {
                  "Person": {"attributes": {"name": "string"},
                             "relationships": {"\(toMany ? "addresses" : "address")": {"destination": "Address", "inverse": "person"\(toMany ? #", "toMany": true"# : "")}}},
                  "Address": {"attributes": {"street": "string"},
                              "relationships": {"person": {"destination": "Person", "inverse": "\(toMany ? "addresses" : "address")"}}}}}
                """)
        }
        let directory = try TemporaryDirectory()
        let source = directory.path("S1.sqlite")
        let store = try Store.create(at: source, model: v1)
        try store.database.execute(
            """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60)
            INSERT INTO ZPERSON (Z_PK, Z_ENT, Z_OPT, ZNAME, ZSTREET)
            SELECT i * 2, 1, 1, 'person ' || i, CASE WHEN i % 5 = 0 THEN NULL ELSE i || ' High Street' END FROM n;
            UPDATE Z_PRIMARYKEY SET Z_MAX = 120;
            """)
        let lookup = { (mapping: String) in
            #"FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\#(mapping)\", $source)"#
        }
        let filter =
            #", "sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Person\", \"street != nil\"), $manager.sourceContext, NO)""#
        // (to-many inverse, people first, people link, addresses link, addresses filtered)
        let cases: [(Bool, Bool, Bool, Bool, Bool)] = [
            (false, true, true, true, false), (false, false, true, true, false), (false, true, false, true, true),
            (false, true, true, false, true), (true, true, false, true, true), (true, false, false, true, false)
        ]
        for (n, (toMany, peopleFirst, peopleLink, addressesLink, filtered)) in cases.enumerated() {
            let people =
                #"{"name": "PersonToPerson", "type": "custom", "sourceEntity": "Person", "destinationEntity": "Person", "attributeMappings": {"name": "$source.name"}"#
                + (peopleLink ? #", "relationshipMappings": {"address": "\#(lookup("PersonToAddress"))"}"# : "") + "}"
            let addresses =
                #"{"name": "PersonToAddress", "type": "custom", "sourceEntity": "Person", "destinationEntity": "Address", "attributeMappings": {"street": "$source.street"}"#
                + (addressesLink ? #", "relationshipMappings": {"person": "\#(lookup("PersonToPerson"))"}"# : "")
                + (filtered ? filter : "") + "}"
            let mapping = try Self.mapping(
                from: "S1", to: "S2", peopleFirst ? [people, addresses] : [addresses, people])
            let destination = try v2(toMany)
            let (interpreted, pushed, report) = try Self.bothWays(
                mapping, v1, destination, source: source, in: directory, name: "split\(n)")
            #expect(pushed == interpreted, "case \(n)")
            guard case .store = pushed else {
                Issue.record("case \(n) failed: \(pushed)")
                continue
            }
            let executions = report?.entityMappings.map { $0.execution! } ?? []
            #expect(
                executions.allSatisfy { $0.instancesAsSQL && $0.relationshipsAsSQL }, "case \(n): \(executions)")
            let linked = try Database(path: directory.path("ssplit\(n).sqlite"), mode: .readOnly)
                .scalar("SELECT count(*) FROM ZADDRESS WHERE ZPERSON IS NOT NULL")
            #expect(linked == .integer(filtered ? 48 : 60), "case \(n)")
        }
    }

    /// Many-to-many relationships linked by SQL, as rows of the join table: the same rows
    /// and counts as the interpreter's whichever side's mapping runs first, with a filter
    /// (keys counted) on one side, a relationship between notes, and a to-one and its
    /// one-to-many inverse becoming a many-to-many, and a source whose join table is named
    /// after the other side (read under its name); and a source whose join table has a
    /// pair pointing to no tag, or whose note points to no folder: SQL leaves the links to
    /// the interpreter, which reports what it finds.
    @Test func manyToManyLinksAreTheInterpretersRows() throws {
        // A note's folder, a to-one, becomes its folders, a many-to-many: the pairs are
        // the notes' keys to folders.
        let folders = [
            #""folder": {"destination": "Folder", "inverse": "notes"}"#,
            #""folders": {"destination": "Folder", "inverse": "notes", "toMany": true, "renamingIdentifier": "folder"}"#
        ]
        let models = ["M1", "M2"].enumerated().map { i, version in
            """
            {"version": "\(version)", "entities": {
              "Note": {"attributes": {"title": "string", "hidden": "boolean"},
                       "relationships": {"tags": {"destination": "Tag", "inverse": "notes", "toMany": true},
                                         "related": {"destination": "Note", "inverse": "relatedBy", "toMany": true},
                                         "relatedBy": {"destination": "Note", "inverse": "related", "toMany": true},
                                         \(folders[i])}},
              "Folder": {"attributes": {"name": "string"},
                         "relationships": {"notes": {"destination": "Note", "inverse": "\(i == 0 ? "folder" : "folders")", "toMany": true}}},
              "Tag": {"attributes": {"name": "string"},
                      "relationships": {"notes": {"destination": "Note", "inverse": "tags", "toMany": true}}}}}
            """
        }
        let v1 = try model(models[0]), v2 = try model(models[1])
        let directory = try TemporaryDirectory()
        func makeSource(_ name: String, _ odd: String = "") throws -> String {
            let path = directory.path(name)
            let store = try Store.create(at: path, model: v1)
            let note = store.layout.entities["Note"]!, tag = store.layout.entities["Tag"]!
            let folder = store.layout.entities["Folder"]!
            let tags = note.joinTables["tags"]!, related = note.joinTables["related"]!
            try store.database.execute(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)
                INSERT INTO \(tag.table) (Z_PK, Z_ENT, Z_OPT, \(tag.attributeColumns["name"]!)) SELECT i, \(tag.number), 1, 'tag ' || i FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20)
                INSERT INTO \(folder.table) (Z_PK, Z_ENT, Z_OPT, \(folder.attributeColumns["name"]!)) SELECT i, \(folder.number), 1, 'folder ' || i FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
                INSERT INTO \(note.table) (Z_PK, Z_ENT, Z_OPT, \(note.attributeColumns["title"]!), \(note.attributeColumns["hidden"]!),
                    \(note.toOneColumns["folder"]!.key))
                SELECT i * 2, \(note.number), 1, 'note ' || i, i % 6 = 0, CASE WHEN i % 4 = 0 THEN NULL ELSE i % 20 + 1 END FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 900)
                INSERT OR IGNORE INTO \(tags.table) (\(tags.sourceColumn), \(tags.destinationColumn))
                SELECT (i % 300 + 1) * 2, (i * 7) % 40 + 1 FROM n WHERE i % 11 != 0;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400)
                INSERT OR IGNORE INTO \(related.table) (\(related.sourceColumn), \(related.destinationColumn))
                SELECT (i % 300 + 1) * 2, ((i * 13) % 300 + 1) * 2 FROM n;
                UPDATE Z_PRIMARYKEY SET Z_MAX = 40 WHERE Z_ENT = \(tag.number);
                UPDATE Z_PRIMARYKEY SET Z_MAX = 20 WHERE Z_ENT = \(folder.number);
                UPDATE Z_PRIMARYKEY SET Z_MAX = 600 WHERE Z_ENT = \(note.number);
                \(Self.filling(odd, ["tags": tags.table, "note": tags.sourceColumn, "tag": tags.destinationColumn, "notes": note.table, "folder": note.toOneColumns["folder"]!.key]))
                """)
            return path
        }
        let clean = try makeSource("M1.sqlite")
        let dangling = try makeSource("M1-dangling.sqlite", "INSERT INTO {tags} ({note}, {tag}) VALUES (8, 77);")
        let renamed = try makeSource("M1-renamed.sqlite", "ALTER TABLE {tags} RENAME TO Z_9OTHERNAME;")
        let noFolder = try makeSource("M1-nofolder.sqlite", "UPDATE {notes} SET {folder} = 99 WHERE Z_PK = 10;")
        let noteFilter =
            #", "sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Note\", \"hidden == NO\"), $manager.sourceContext, NO)""#
            + #", "relationshipMappings": {"folders": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"FolderToFolder\", $source.folder)"}"#
        let cases: [(order: [String], source: String, failure: String?)] = [
            (["Note", "Tag", "Folder"], clean, nil), (["Tag", "Folder", "Note"], clean, nil),
            (["Note", "Tag", "Folder"], dangling, "Tag/77: no such object"),
            (["Tag", "Note", "Folder"], renamed, nil), (["Folder", "Note", "Tag"], clean, nil),
            (["Note", "Folder", "Tag"], noFolder, "Folder/99: no such object")
        ]
        for (n, (order, source, failure)) in cases.enumerated() {
            let mappings = order.map { entity in
                #"{"name": "\#(entity)To\#(entity)", "type": "transform", "sourceEntity": "\#(entity)", "destinationEntity": "\#(entity)"\#(entity == "Note" ? noteFilter : "")}"#
            }
            let mapping = try Self.mapping(from: "M1", to: "M2", mappings)
            let (interpreted, pushed, report) = try Self.bothWays(
                mapping, v1, v2, source: source, in: directory, name: "\(n)")
            #expect(pushed == interpreted, "case \(n)")
            guard case .store(let tables, _) = pushed else {
                // The interpreter's error, for the row.
                #expect(failure.map { "\(pushed)".contains($0) } == true, "case \(n): \(pushed)")
                continue
            }
            #expect(failure == nil, "case \(n)")
            #expect(
                tables.filter { $0.key.hasPrefix("Z_") && $0.key != "Z_PRIMARYKEY" }.mapValues(\.count).values.sorted()
                    == [200, 250, 477], "case \(n): \(tables.mapValues(\.count))")
            let executions = report?.entityMappings.map { $0.execution! } ?? []
            #expect(executions.count == 3 && executions.allSatisfy { $0.instancesAsSQL }, "case \(n): \(executions)")
            #expect(executions.allSatisfy { $0.relationshipsAsSQL }, "case \(n): \(executions)")
        }
    }

    /// Many-to-many relationships with an ordered side, linked by SQL: the interpreter's
    /// rows, positions included, and its counts. The ordered side's first link numbers
    /// each owner's members as the source orders them (positions that tie, are missing,
    /// are not integers or are negative; or, unordered, by key); a link from the other
    /// side appends the new pairs of each member after its largest position, by owner key,
    /// as the interpreter's saves do (chunks of 700 objects here); filters on either side
    /// leave members and owners out. A second link of an ordered side that would add no
    /// pair changes nothing, in SQL as in the interpreter; one that would add pairs (read
    /// from another relationship) is left to the interpreter, which merges the positions.
    @Test func orderedManyToManyLinksAreTheInterpretersPositions() throws {
        /// `books` is Author's side, `authors` Book's; the source also has Book.reviewers.
        func models(source: (books: Bool, authors: Bool), destination: (books: Bool, authors: Bool)) throws -> (
            ObjectModel, ObjectModel
        ) {
            func text(_ version: String, _ ordered: (books: Bool, authors: Bool), reviewers: Bool) -> String {
                """
                {"version": "\(version)", "entities": {
                  "Author": {"attributes": {"name": "string"},
                             "relationships": {"books": {"destination": "Book", "inverse": "authors", "toMany": true, "ordered": \(ordered.books)}\(
                                reviewers ? #", "reviewed": {"destination": "Book", "inverse": "reviewers", "toMany": true}"# : "")}},
                  "Book": {"attributes": {"title": "string"},
                           "relationships": {"authors": {"destination": "Author", "inverse": "books", "toMany": true, "ordered": \(ordered.authors)}\(
                                reviewers ? #", "reviewers": {"destination": "Author", "inverse": "reviewed", "toMany": true}"# : "")}}}}
                """
            }
            return (
                try model(text("B1", source, reviewers: true)), try model(text("B2", destination, reviewers: false))
            )
        }
        let directory = try TemporaryDirectory()
        func makeSource(_ name: String, _ v1: ObjectModel) throws -> String {
            let path = directory.path(name)
            let store = try Store.create(at: path, model: v1)
            let author = store.layout.entities["Author"]!, book = store.layout.entities["Book"]!
            let books = author.joinTables["books"]!, authors = book.joinTables["authors"]!
            let reviewers = book.joinTables["reviewers"]!
            // A position for each side that is ordered: by a hash, so that they tie and
            // disagree with the keys; some missing, a double, text and negative ones.
            let positions = [books.orderColumn, authors.orderColumn].compactMap { $0 }
            let columns = positions.map { ", \($0)" }.joined()
            let values = positions.enumerated().map { n, _ in
                ", CASE (i + \(n)) % 13 WHEN 0 THEN NULL WHEN 5 THEN 2.5 WHEN 6 THEN '3' WHEN 7 THEN -4 ELSE (i * \(37 + n * 6)) % 17 END"
            }.joined()
            try store.database.execute(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60)
                INSERT INTO \(author.table) (Z_PK, Z_ENT, Z_OPT, \(author.attributeColumns["name"]!))
                SELECT i, \(author.number), 1, CASE WHEN i % 7 = 4 THEN 'skip' ELSE 'author ' || i END FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
                INSERT INTO \(book.table) (Z_PK, Z_ENT, Z_OPT, \(book.attributeColumns["title"]!))
                SELECT i, \(book.number), 1, CASE WHEN i % 10 = 3 THEN 'skip' ELSE 'book ' || i END FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1400)
                INSERT OR IGNORE INTO \(books.table) (\(books.sourceColumn), \(books.destinationColumn)\(columns))
                SELECT (i * 7) % 60 + 1, (i * 11) % 500 + 1\(values) FROM n WHERE i % 9 != 0;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
                INSERT OR IGNORE INTO \(reviewers.table) (\(reviewers.sourceColumn), \(reviewers.destinationColumn))
                SELECT (i * 13) % 500 + 1, (i * 3) % 60 + 1 FROM n;
                UPDATE Z_PRIMARYKEY SET Z_MAX = 60 WHERE Z_ENT = \(author.number);
                UPDATE Z_PRIMARYKEY SET Z_MAX = 500 WHERE Z_ENT = \(book.number);
                """)
            return path
        }
        func filter(_ entity: String) -> String {
            #", "sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"\#(entity)\", \"\#(entity == "Book" ? "title" : "name") != 'skip'\"), $manager.sourceContext, NO)""#
        }
        func link(_ relationship: String, _ target: String, from read: String) -> String {
            #"{"\#(relationship)": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\#(target)To\#(target)\", $source.\#(read))"}"#
        }
        typealias Sides = (books: Bool, authors: Bool)
        // (order of the mappings, filtered, source ordered, destination ordered, whether
        // Book's authors are read from its reviewers, whether the second link is SQL)
        let cases: [([String], Set<String>, Sides, Sides, Bool, Bool)] = [
            (["Author", "Book"], [], (false, false), (true, false), false, true),
            (["Book", "Author"], [], (false, false), (true, false), false, true),
            (["Author", "Book"], [], (false, false), (false, true), false, true),
            (["Author", "Book"], ["Book"], (true, true), (true, true), false, true),
            (["Book", "Author"], ["Book", "Author"], (true, true), (true, true), false, true),
            (["Book", "Author"], ["Author"], (true, false), (false, true), false, true),
            (["Author", "Book"], [], (true, true), (true, true), true, false),
            (["Author", "Book"], ["Author"], (true, false), (true, false), true, true)
        ]
        for (n, (order, filtered, sourceOrdered, destinationOrdered, reviewers, secondBySQL)) in cases.enumerated() {
            let (v1, v2) = try models(source: sourceOrdered, destination: destinationOrdered)
            let source = try makeSource("B1-\(n).sqlite", v1)
            let mappings = order.map { entity in
                let relationships =
                    entity == "Author"
                    ? link("books", "Book", from: "books")
                    : link("authors", "Author", from: reviewers ? "reviewers" : "authors")
                return
                    #"{"name": "\#(entity)To\#(entity)", "type": "transform", "sourceEntity": "\#(entity)", "destinationEntity": "\#(entity)", "relationshipMappings": \#(relationships)\#(filtered.contains(entity) ? filter(entity) : "")}"#
            }
            let mapping = try Self.mapping(from: "B1", to: "B2", mappings)
            let (interpreted, pushed, report) = try Self.bothWays(
                mapping, v1, v2, source: source, in: directory, name: "b\(n)")
            #expect(pushed == interpreted, "case \(n)")
            guard case .store(let tables, _) = pushed else {
                Issue.record("case \(n) failed: \(pushed)")
                continue
            }
            // Pairs, with positions, were written.
            let join = tables.first { $0.key.hasPrefix("Z_") && $0.key != "Z_PRIMARYKEY" && $0.key != "Z_METADATA" }
            #expect((join?.value.count ?? 0) > 500, "case \(n): \(tables.keys.sorted())")
            #expect(join?.value.contains { $0.count > 2 && $0[2...].contains { $0 != "null" } } == true, "case \(n)")
            let executions = order.map { entity in
                report?.entityMappings.first { $0.name == "\(entity)To\(entity)" }?.execution
            }
            #expect(executions[0]?.relationshipsAsSQL == true, "case \(n): \(String(describing: executions[0]))")
            #expect(
                executions[1]?.relationshipsAsSQL == secondBySQL, "case \(n): \(String(describing: executions[1]))")
        }
    }

    /// A relationship between a mapping's own objects whose inverse the mapping links too
    /// (a folder's parent and children; a folder's linked folders and the folders linking
    /// to it): the interpreter links each object's relationships in turn, so each side
    /// finds pairs the other made for objects before it, and counts an object only for
    /// the members from itself on, or after itself. By SQL, the interpreter's rows and
    /// counts, in both orders of the relationship mappings, with some folders not
    /// migrated and folders that are their own parent or link themselves. Ordered, or
    /// read from relationships that are not each other's inverse, the links are the
    /// interpreter's.
    @Test func bothSidesOfARelationshipBetweenTheMappingsOwnObjectsCountAsTheInterpreterCounts() throws {
        func models(ordered: Bool) throws -> (ObjectModel, ObjectModel) {
            let v = ["F1", "F2"].map { version in
                """
                {"version": "\(version)", "entities": {"Folder": {"attributes": {"name": "string"}, "relationships": {
                  "parent": {"destination": "Folder", "inverse": "children"},
                  "children": {"destination": "Folder", "inverse": "parent", "toMany": true},
                  "links": {"destination": "Folder", "inverse": "linkedBy", "toMany": true, "ordered": \(ordered && version == "F2")},
                  "linkedBy": {"destination": "Folder", "inverse": "links", "toMany": true}\(version == "F1" ? #", "seeAlso": {"destination": "Folder", "inverse": "seenBy", "toMany": true}, "seenBy": {"destination": "Folder", "inverse": "seeAlso", "toMany": true}"# : "")}}}}
                """
            }
            return (try model(v[0]), try model(v[1]))
        }
        let directory = try TemporaryDirectory()
        func makeSource(_ name: String, _ v1: ObjectModel) throws -> String {
            let path = directory.path(name)
            let store = try Store.create(at: path, model: v1)
            let folder = store.layout.entities["Folder"]!
            let links = folder.joinTables["links"]!, seeAlso = folder.joinTables["seeAlso"]!
            try store.database.execute(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400)
                INSERT INTO \(folder.table) (Z_PK, Z_ENT, Z_OPT, \(folder.attributeColumns["name"]!), \(folder.toOneColumns["parent"]!.key))
                SELECT i, \(folder.number), 1, CASE WHEN i % 9 = 4 THEN 'skip' ELSE 'folder ' || i END,
                    CASE WHEN i % 7 = 0 THEN NULL WHEN i % 50 = 1 THEN i ELSE (i * 37) % 400 + 1 END FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 900)
                INSERT OR IGNORE INTO \(links.table) (\(links.sourceColumn), \(links.destinationColumn))
                SELECT (i * 13) % 400 + 1, CASE WHEN i % 40 = 0 THEN (i * 13) % 400 + 1 ELSE (i * 29) % 400 + 1 END FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
                INSERT OR IGNORE INTO \(seeAlso.table) (\(seeAlso.sourceColumn), \(seeAlso.destinationColumn))
                SELECT (i * 17) % 400 + 1, (i * 3) % 400 + 1 FROM n;
                UPDATE Z_PRIMARYKEY SET Z_MAX = 400 WHERE Z_ENT = \(folder.number);
                """)
            return path
        }
        func lookup(_ relationship: String, _ read: String) -> String {
            #""\#(relationship)": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"FolderToFolder\", $source.\#(read))""#
        }
        let filter =
            #", "sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Folder\", \"name != 'skip'\"), $manager.sourceContext, NO)""#
        // (the relationship mappings in order, filtered, links ordered, linked by SQL)
        let cases: [([String], Bool, Bool, Bool)] = [
            ([lookup("parent", "parent"), lookup("children", "children")], false, false, true),
            ([lookup("children", "children"), lookup("parent", "parent")], true, false, true),
            ([lookup("links", "links"), lookup("linkedBy", "linkedBy")], false, false, true),
            ([lookup("linkedBy", "linkedBy"), lookup("links", "links")], true, false, true),
            (
                [
                    lookup("links", "links"), lookup("linkedBy", "linkedBy"), lookup("parent", "parent"),
                    lookup("children", "children")
                ], true, false, true
            ),
            ([lookup("links", "links"), lookup("linkedBy", "linkedBy")], false, true, false),
            ([lookup("links", "links"), lookup("linkedBy", "seenBy")], false, false, false)
        ]
        for (n, (relationships, filtered, ordered, bySQL)) in cases.enumerated() {
            let (v1, v2) = try models(ordered: ordered)
            let source = try makeSource("F1-\(n).sqlite", v1)
            let mapping = try Self.mapping(
                from: "F1", to: "F2",
                [
                    #"{"name": "FolderToFolder", "type": "transform", "sourceEntity": "Folder", "destinationEntity": "Folder", "relationshipMappings": {\#(relationships.joined(separator: ", "))}\#(filtered ? filter : "")}"#
                ])
            let (interpreted, pushed, report) = try Self.bothWays(
                mapping, v1, v2, source: source, in: directory, name: "f\(n)")
            #expect(pushed == interpreted, "case \(n)")
            guard case .store = pushed, let execution = report?.entityMappings.first?.execution else {
                Issue.record("case \(n) failed: \(pushed)")
                continue
            }
            #expect(execution.instancesAsSQL, "case \(n): \(execution)")
            #expect(execution.relationshipsAsSQL == bySQL, "case \(n): \(execution)")
            #expect((report?.entityMappings.first?.relationshipsSet ?? 0) > 0, "case \(n)")
        }
    }

    /// Keys at the ends of Int64 (a hostile or odd store): rows keyed -2⁶³ and 2⁶³ - 1, a
    /// group keyed 2⁶³ - 1 that rows point to, and groups whose keys run without a gap
    /// from -2⁶³ (an offset to 1 would overflow): the interpreter's rows, by SQL too,
    /// without overflowing or walking the keys in between.
    @Test func keysAtTheEndsOfInt64MigrateAsTheInterpreterMigratesThem() throws {
        let v1 = try model(Self.source), v2 = try model(Self.destination)
        let directory = try TemporaryDirectory()
        let shifts = [
            """
            UPDATE {row} SET Z_PK = -9223372036854775808 WHERE Z_PK = (SELECT min(Z_PK) FROM {row});
            UPDATE {row} SET Z_PK = 9223372036854775807 WHERE Z_PK = (SELECT max(Z_PK) FROM {row});
            UPDATE {group} SET Z_PK = 9223372036854775807 WHERE Z_PK = 40;
            UPDATE {row} SET {key} = 9223372036854775807 WHERE {key} = 40;
            """,
            """
            UPDATE {group} SET Z_PK = Z_PK - 9223372036854775807 - 1;
            UPDATE {row} SET {key} = {key} - 9223372036854775807 - 1;
            """
        ]
        for (n, shift) in shifts.enumerated() {
            let source = directory.path("E\(n).sqlite")
            try Self.makeSource(at: source, model: v1, rows: .clean)
            let store = try Store.open(at: source, model: v1)
            let row = store.layout.entities["Row"]!, group = store.layout.entities["Group"]!
            try store.database.execute(
                Self.filling(shift, ["row": row.table, "group": group.table, "key": row.toOneColumns["group"]!.key]))
            let mapping = try Self.mapping("outText", "$source.text")
            let (interpreted, pushed, report) = try Self.bothWays(
                mapping, v1, v2, source: source, in: directory, name: "\(n)")
            #expect(pushed == interpreted, "shift \(n)")
            guard case .store(let tables, _) = pushed else {
                Issue.record("shift \(n): \(pushed)")
                continue
            }
            #expect(tables["ZROW"]?.count == Self.rowCount && tables["ZGROUP"]?.count == 40, "shift \(n)")
            #expect(report?.entityMappings.allSatisfy { $0.execution?.instancesAsSQL == true } == true, "shift \(n)")
        }
    }

    /// A new store of `model` at `path` whose entity Item has the rows 1 to `count` (`i`),
    /// its `columns` holding `values`, each SQL over `i`; `Z_MAX` set to `count`.
    @discardableResult
    static func makeItems(at path: String, model: ObjectModel, count: Int, columns: String, values: String) throws
        -> Store
    {
        let store = try Store.create(at: path, model: model)
        try store.database.execute(
            """
            WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < \(count))
            INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, \(columns)) SELECT i, 1, 1, \(values) FROM k;
            UPDATE Z_PRIMARYKEY SET Z_MAX = \(count) WHERE Z_ENT = 1;
            """)
        return store
    }

    /// Text read as it is, every column of a row checked in one call: the rows where a text
    /// is not well-formed (ill-formed bytes, a number, a blob) are written by the
    /// statement that reads them as the interpreter does, in the same chunk, and the store
    /// is the interpreter's, all by SQL.
    @Test(arguments: [
        "CAST(X'66C328' AS TEXT)", "42", "X'00FF'", "CAST(X'EDA080' AS TEXT)", "'plain'", "NULL"
    ])
    func textThatIsNotWellFormedIsReadAsTheInterpreterReadsIt(odd: String) throws {
        let v1 = try model(
            #"{"version": "T1", "entities": {"Item": {"attributes": {"name": "string", "note": "string", "n": "int32"}}}}"#
        )
        let v2 = try model(
            #"{"version": "T2", "entities": {"Item": {"attributes": {"name": "string", "note": "string", "n": "int32", "shout": "string"}}}}"#
        )
        let directory = try TemporaryDirectory()
        let source = directory.path("T1.sqlite")
        // Rows 1 to 120 000 (three chunks), the odd value in a few of each.
        try Self.makeItems(
            at: source, model: v1, count: 120_000, columns: "ZNAME, ZNOTE, ZN",
            values: "CASE WHEN i % 37000 = 5 THEN \(odd) ELSE 'item ' || i END, "
                + "CASE WHEN i % 50000 = 7 THEN \(odd) ELSE NULL END, i")
        let mapping = try Self.mapping(
            from: "T1", to: "T2",
            [
                #"{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings": {"shout": "FUNCTION($source.name, 'uppercaseString')"}}"#
            ])
        let (interpreted, pushed, report) = try Self.bothWays(mapping, v1, v2, source: source, in: directory, name: "t")
        #expect(pushed == interpreted, "\(odd): \(RandomLinkDifferentialTests.difference(pushed, interpreted))")
        #expect(report?.entityMappings.first?.execution?.instancesAsSQL == true, "\(odd)")
        if case .store(let tables, _) = pushed { #expect(tables["ZITEM"]?.count == 120_000) }
    }

    /// With keys by an offset, a chunk is so many rows written from its first key: a run
    /// of rows that fail the check carries the first chunk past the key where it would
    /// have ended, the statement that reads them as the interpreter does writes them up to
    /// the last row the chunk wrote, and the next chunk starts after it. Keys from 101 (an
    /// offset of -100), text in an integer column in 5,000 rows across that key. With a
    /// key missing in a later chunk, or next to the last, the rows are numbered by
    /// counting, as the interpreter numbers them.
    @Test(arguments: [nil, 60_000, 70_099])
    func aChunkReachesPastTheRowsThatFailTheCheck(missing: Int?) throws {
        let v1 = try model(
            #"{"version": "L1", "entities": {"Item": {"attributes": {"name": "string", "n": "int32"}}}}"#)
        let v2 = try model(
            #"{"version": "L2", "entities": {"Item": {"attributes": {"name": "string", "n": "int32"}}}}"#)
        let directory = try TemporaryDirectory()
        let source = directory.path("L1.sqlite")
        let store = try Self.makeItems(
            at: source, model: v1, count: 70_100, columns: "ZNAME, ZN",
            values: "'item ' || i, CASE WHEN i BETWEEN 45101 AND 50100 THEN 'many' ELSE i END")
        try store.database.execute("DELETE FROM ZITEM WHERE Z_PK <= 100 OR Z_PK = \(missing ?? 0)")
        let mapping = try Self.mapping(
            from: "L1", to: "L2",
            [
                #"{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings": {"n": "$source.n + 1"}}"#
            ])
        let (interpreted, pushed, report) = try Self.bothWays(mapping, v1, v2, source: source, in: directory, name: "l")
        #expect(pushed == interpreted, "\(RandomLinkDifferentialTests.difference(pushed, interpreted))")
        #expect(report?.entityMappings.first?.execution?.instancesAsSQL == true)
        if case .store(let tables, _) = pushed { #expect(tables["ZITEM"]?.count == 70_000 - (missing == nil ? 0 : 1)) }
    }

    /// Columns read as they are where a row's columns hold what their types write
    /// (docs/pushdown.md, "Rows checked once"), in two chunks, with keys by an offset and,
    /// where a key is missing, counted in key order: a row where one does not
    /// (text or a real in an integer column, 2 in a boolean, a double a Float does not
    /// hold, a blob for text, nil in a required attribute) is written by the statement
    /// that reads it as the interpreter does, and the store is the interpreter's, all by
    /// SQL. Where the row then meets a guard the interpreter must see (a value out of the
    /// range the mapping writes, nil in arithmetic), it runs the mapping, and the outcome
    /// is the same.
    @Test(
        arguments: [
            ("ZCOUNT", "'12abc'", false), ("ZCOUNT", "3.5", false), ("ZCOUNT", "3000000000", true),
            ("ZFLAG", "2", false), ("ZFLAG", "'yes'", false), ("ZPRICE", "'abc'", false), ("ZPRICE", "NULL", true),
            ("ZWEIGHT", "0.1", false), ("ZWEIGHT", "X'01'", false), ("ZNAME", "X'00FF'", false),
            ("ZNAME", "NULL", false), ("ZSMALL", "40000", true), ("ZSMALL", "-7", false)
        ], [false, true])
    func rowsWhoseColumnsDoNotHoldWhatTheirTypesWriteAreReadAsTheInterpreterReadsThem(
        _ odd: (column: String, value: String, guarded: Bool), keyMissing: Bool
    ) throws {
        let (column, value, guarded) = odd
        let v1 = try model(
            #"{"version": "C1", "entities": {"Item": {"attributes": {"name": {"type": "string", "optional": false}, "count": "int64", "flag": "boolean", "price": "double", "weight": "float", "small": "int32", "added": "date"}}}}"#
        )
        let v2 = try model(
            #"{"version": "C2", "entities": {"Item": {"attributes": {"name": {"type": "string", "optional": false}, "count": "int32", "flag": "boolean", "price": "double", "weight": "float", "small": "int16", "added": "date"}}}}"#
        )
        let directory = try TemporaryDirectory()
        let source = directory.path("C1.sqlite")
        // Rows 1 to 55 000 (two chunks), the odd value in one row of each.
        let store = try Self.makeItems(
            at: source, model: v1, count: 55_000, columns: "ZNAME, ZCOUNT, ZFLAG, ZPRICE, ZWEIGHT, ZSMALL, ZADDED",
            values: "'item ' || i, i * 3, i % 2, i * 0.25, i * 0.5, i % 1000, i * 60.0")
        try store.database.execute("UPDATE ZITEM SET \(column) = \(value) WHERE Z_PK % 50000 = 3")
        if keyMissing { try store.database.execute("DELETE FROM ZITEM WHERE Z_PK = 2") }
        let mapping = try Self.mapping(
            from: "C1", to: "C2",
            [
                #"{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings": {"price": "$source.price * 2"}}"#
            ])
        let (interpreted, pushed, report) = try Self.bothWays(mapping, v1, v2, source: source, in: directory, name: "c")
        let name = "\(column) = \(value)\(keyMissing ? ", a key missing" : "")"
        #expect(pushed == interpreted, "\(name): \(RandomLinkDifferentialTests.difference(pushed, interpreted))")
        if let report { #expect(report.entityMappings.first?.execution?.instancesAsSQL == !guarded, "\(name)") }
        if case .store(let tables, _) = pushed { #expect(tables["ZITEM"]?.count == 55_000 - (keyMissing ? 1 : 0)) }
    }
}

extension PushdownDifferentialTests {
    /// Decimal and UUID attributes, which reading converts: a mapping that copies them,
    /// converts them or filters on them runs as SQL and gives the interpreter's store,
    /// from columns holding every storage class: decimals as integers (one beyond 2^53),
    /// doubles (one a Decimal holds, 19.99; one it does not, 1e300; the infinities; the
    /// smallest subnormal; -0), numeric and other text, blobs; UUIDs as 16 bytes and text,
    /// and (`oddUUIDs`) other bytes and numbers. A decimal copied to a Decimal or Double
    /// attribute is translated (its column as it is where the row's check finds it written
    /// back as itself, else `remodel_decimal`); what computes with one, and a UUID, the
    /// interpreter evaluates inside the statement (`evaluated`).
    @Test(
        arguments: [
            (#""amount": "decimal""#, #""amount": "$source.amount""#, nil, false),
            (#""amount": "double""#, #""amount": "$source.amount""#, nil, false),
            (
                #""amount": {"type": "decimal", "default": 2.5, "optional": false}"#,
                #""amount": "FUNCTION($entityPolicy, \"_nonNilValueOrDefaultValueForAttribute:source:destination:\", \"amount\", $source, $destination)""#,
                nil, false
            ),
            (#""amount": "decimal", "id": "uuid""#, #""amount": "$source.amount", "id": "$source.id""#, nil, false),
            (
                #""id": "uuid""#,
                #""id": "FUNCTION($entityPolicy, \"_nonNilValueOrDefaultValueForAttribute:source:destination:\", \"id\", $source, $destination)""#,
                nil, false
            ),
            (#""amount": "double", "id": "string""#, #""amount": "$source.amount", "id": "$source.id""#, nil, true),
            (
                #""amount": "decimal", "id": "uuid""#,
                #""amount": "TERNARY($source.amount == nil, 0, $source.amount * 2)""#, nil, true
            ),
            (#""amount": "decimal", "id": "uuid""#, #""amount": "$source.amount""#, "amount > 10 OR id == nil", true),
            // (A double written to a Decimal attribute: 1.03 times n, n / 7, and for the
            // last ten rows magnitudes no Decimal holds, finite and infinite.)
            (#""amount": "decimal""#, #""amount": "$source.n * 1.03""#, nil, false),
            (#""amount": "decimal""#, #""amount": "$source.n / 7.0""#, nil, false),
            (
                #""amount": "decimal""#,
                #""amount": "TERNARY($source.n > 590, $source.n * 1e306, $source.n * 0.1)""#, nil, false
            ),
            (
                #""amount": {"type": "decimal", "optional": false}"#,
                #""amount": "TERNARY($source.n > 590, $source.n * 1e306, $source.n * 0.1)""#, nil, false
            )
        ] as [(String, String, String?, Bool)], [false, true])
    func decimalsAndUUIDsAreReadAsTheInterpreterReadsThem(
        _ form: (attributes: String, mappings: String, predicate: String?, evaluated: Bool), oddUUIDs: Bool
    ) throws {
        let (attributes, mappings, predicate, evaluated) = form
        let v1 = try model(
            #"{"version": "U1", "entities": {"Item": {"attributes": {"amount": "decimal", "id": "uuid", "n": "int64"}}}}"#
        )
        let v2 = try model(#"{"version": "U2", "entities": {"Item": {"attributes": {\#(attributes), "n": "int64"}}}}"#)
        let directory = try TemporaryDirectory()
        let source = directory.path("U1.sqlite")
        let store = try Store.create(at: source, model: v1)
        let item = store.layout.entities["Item"]!
        let (amount, id, n) = (
            item.attributeColumns["amount"]!, item.attributeColumns["id"]!, item.attributeColumns["n"]!
        )
        try store.database.execute(
            """
            WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 600)
            INSERT INTO \(item.table) (Z_PK, Z_ENT, Z_OPT, \(amount), \(id), \(n))
            SELECT i, \(item.number), 1,
                CASE i % 14 WHEN 0 THEN NULL WHEN 1 THEN 19.99 WHEN 2 THEN 1e300 WHEN 3 THEN 9e999 WHEN 4 THEN -9e999
                    WHEN 5 THEN 5e-324 WHEN 6 THEN i * 1000000007 WHEN 7 THEN '12.50' WHEN 8 THEN 'twelve'
                    WHEN 9 THEN x'3132' WHEN 10 THEN -0.0 WHEN 11 THEN 9007199254740993 ELSE i * 0.37 END,
                CASE i % 6 WHEN 0 THEN NULL WHEN 1 THEN randomblob(16) WHEN 2 THEN 'c9f4a6e2-0b1d-4c3e-9f7a-12ab34cd56ef'
                    WHEN 3 THEN \(oddUUIDs ? "x'0102'" : "NULL") WHEN 4 THEN \(oddUUIDs ? "i" : "randomblob(16)")
                    ELSE zeroblob(16) END,
                i
            FROM k;
            UPDATE Z_PRIMARYKEY SET Z_MAX = 600 WHERE Z_ENT = \(item.number);
            """)
        let fetch = predicate.map {
            #", "sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Item\", \"\#($0)\"), $manager.sourceContext, NO)""#
        }
        let mapping = try Self.mapping(
            from: "U1", to: "U2",
            [
                #"{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item"\#(fetch ?? ""), "attributeMappings": {\#(mappings), "n": "$source.n"}}"#
            ])
        let (interpreted, pushed, report) = try Self.bothWays(mapping, v1, v2, source: source, in: directory, name: "")
        #expect(pushed == interpreted)
        // (Two bytes, or a number, are no UUID: the interpreter fails on the first.)
        guard !oddUUIDs || !attributes.contains("id") else {
            guard case .failure(let message) = interpreted else {
                Issue.record("the interpreter did not fail: \(interpreted)")
                return
            }
            #expect(message.contains("cannot hold data {length = 2, bytes = 0x0102}"), "\(message)")
            return
        }
        // (A required decimal given a double no Decimal holds fails both ways, with the
        // same error.)
        if case .failure(let message) = interpreted, !attributes.contains("default") {
            #expect(message.contains("Item/591: 'amount' is required but has no value"), "\(message)")
            return
        }
        let execution = try #require(report?.entityMappings.first?.execution)

        #expect(execution.instancesAsSQL && (execution.evaluations > 0) == evaluated, "\(execution)")
    }
}
