import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// Steps that compute values run with the step after them (docs/engine.md, "Steps that
/// compute"): the step after reads each computed attribute as the expression that computes
/// it, and the chain ends with the same store, the same counts and the same errors as when
/// each step runs on its own.
@Suite struct ComputingStepFusionTests {
    /// C2: D2 (``PushdownDifferentialTests/destination``) with `label` as D1 has it, so
    /// that the first step copies it, and without `flt`, which it drops: a float is
    /// rounded as it is read, so a step after could not read D1's in its place.
    static let middle = PushdownDifferentialTests.destination.replacingOccurrences(of: "\"D2\"", with: "\"C2\"")
        .replacingOccurrences(of: #"{"type": "string", "optional": false, "default": "(none)"}"#, with: #""string""#)
        .replacingOccurrences(of: #""flt": "float", "#, with: "")

    /// What the second step computes from each attribute the first step computes: each
    /// reads it more than once, through `valueForKey:` too.
    static let after: [String: String] = [
        "out16": "TERNARY($source.out16 == nil, -1, $source.out16 / 2)",
        "out64": "TERNARY($source.out64 == nil, 0, $source.out64 / 7 - FUNCTION($source, 'valueForKey:', 'out64'))",
        "outFlag": "TERNARY($source.outFlag == YES, NO, YES)",
        "outDouble": "TERNARY($source.outDouble == nil, 0.5, $source.outDouble * 2)",
        "outFloat": "$source.outFloat",
        "outText":
            "TERNARY($source.outText == nil, '-', FUNCTION($source.outText, 'stringByAppendingString:', $source.outText))",
        "outDate": "$source.outDate",
        "outData": "FUNCTION($source, 'valueForKey:', 'outData')"
    ]

    /// `source` → `destination` (versions of D1's entities) computing `attribute` by
    /// `expression`, everything else copied; the rows of `Row` fetched by `predicate`, where
    /// one is given.
    static func mapping(
        _ source: String, _ destination: String, _ attribute: String, _ expression: String,
        predicate: String? = nil
    ) throws -> MappingModel {
        let fetch = predicate.map {
            #""sourceExpression": "\#(escaped(#"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Row", "\#($0)"), $manager.sourceContext, NO)"#))", "#
        }
        return try PushdownDifferentialTests.mapping(
            from: source, to: destination,
            [
                #"{"name": "GroupToGroup", "type": "copy", "sourceEntity": "Group", "destinationEntity": "Group"}"#,
                #"{"name": "RowToRow", "type": "transform", "sourceEntity": "Row", "destinationEntity": "Row", \#(fetch ?? "")"attributeMappings": {"\#(attribute)": "\#(escaped(expression))"}}"#
            ])
    }

    /// D1 → C2 computing `attribute` by `expression`, everything else copied.
    static func first(_ attribute: String, _ expression: String) throws -> MappingModel {
        try mapping("D1", "C2", attribute, expression)
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }

    /// The second step.
    enum Second: CaseIterable {
        /// A mapping file that computes from what the first step computed (``after``).
        case file
        /// Inferred: it widens out16 and renames outText.
        case inferred
        /// Inferred: it drops what the first step computed, which it then never reads;
        /// the first step's errors must still be met.
        case dropping
    }

    /// Each translated form of the pushdown's differential test as the first step's value,
    /// and a second step that computes from it (a mapping file), converts it or drops it
    /// (inferred): one step at a time and in one pass, the same store or error. Where the
    /// first step writes each row's value as it is read back, the two run in one pass.
    @Test(arguments: [PushdownDifferentialTests.Rows.clean, .oddText], Second.allCases)
    func aStepThatComputesRunsWithTheStepAfterIt(rows: PushdownDifferentialTests.Rows, second: Second) throws {
        let v1 = try model(PushdownDifferentialTests.source), v2 = try model(Self.middle)
        let d3 = Self.middle.replacingOccurrences(of: "\"C2\"", with: "\"D3\"")
        let v3: ObjectModel
        switch second {
        case .file: v3 = try model(d3)
        case .inferred:
            v3 = try model(
                d3.replacingOccurrences(of: #""out16": "int16""#, with: #""out16": "int64""#)
                    .replacingOccurrences(
                        of: #""outText": "string""#,
                        with: #""shouted": {"type": "string", "renamingIdentifier": "outText"}"#))
        case .dropping:
            v3 = try model(d3.replacingOccurrences(of: #""out\w+": "\w+",\s*"#, with: "", options: .regularExpression))
            #expect(v3.entity(named: "Row").map { v3.allAttributes(of: $0).count } == 12)
        }
        let directory = try TemporaryDirectory()
        let source = directory.path("D1.sqlite")
        try PushdownDifferentialTests.makeSource(at: source, model: v1, rows: rows)
        var fused: Set<String> = [], failed = 0
        for (n, form) in PushdownDifferentialTests.forms.enumerated()
        where [.sql, .guarded, .fails, .partly].contains(form.expected) {
            var mappings = [try Self.first(form.attribute, form.expression)]
            if second == .file {
                mappings.append(try Self.mapping("C2", "D3", form.attribute, Self.after[form.attribute]!))
            }
            let (oneByOne, together) = try StepFusionTests.bothWays(
                [v1, v2, v3], mappings, source: source, at: directory.path("chain\(n).sqlite"),
                "\(form.attribute) = \(form.expression)")
            if together.fused.first == true { fused.insert("\(form.attribute) = \(form.expression)") }
            if case .failure = oneByOne.outcome { failed += 1 }
        }
        // What the first step writes as it is read back joins the pass (where the store
        // holds what its types write: an odd row keeps some steps apart) …
        for form in [
            "outDouble = $source.price * 1.03", "out64 = $source.i32", "outText = $source.text",
            "outDouble = $source.price - 0.1 * $source.count", "out64 = $source.count / 3",
            "outText = TERNARY($source.flag == YES, 'y', 'n')", "outFlag = YES", "outText = nil",
            "outDate = $source.when", "outData = $source.blob", "outText = $source.group.name",
            // (Written converted, read back as the conversion: FUNCTION(…, 'doubleValue').)
            "outDouble = $source.count", "outFloat = $source.dbl", "outFloat = $source.i32", "out64 = $source.flag",
            "outDouble = FUNCTION($source.count, 'doubleValue')", "outFlag = FUNCTION($source.i16, 'boolValue')"
        ] where rows == .clean {
            #expect(fused.contains(form), "\(form) ran on its own")
        }
        // (The odd rows hold what the copied attributes' types never do: a pass that never
        // writes the version in between would not convert it.)
        #expect(rows == .clean ? fused.count > 20 : fused.isEmpty, "\(fused.count) forms ran in one pass")
        // … but not a value the store would keep otherwise (a NaN made nil), an error the
        // first step would meet (an integer out of range, a division by zero, a nil
        // operand, a number other than 0 or 1 for a boolean), or what SQL cannot tell (a
        // TERNARY's condition on text that is not plain ASCII).
        for form in [
            "outDouble = $source.price * 0", "outFlag = $source.i16",
            "outDouble = $source.dbl * 1.03", "out64 = $source.count / ($source.count - 1)",
            "out16 = $source.group.rank", "outText = TERNARY($source.text BEGINSWITH 'row', 'r', 'o')"
        ] {
            #expect(!fused.contains(form), "\(form) ran in one pass")
        }
        #expect(failed > 0)
    }

    /// A step that computes after a step that does more than copy (here a filter): each
    /// translated form as the first step's value, the second computing from it or dropping
    /// it, in one pass where the first step writes each value as it is read back and
    /// without fail; the same stores, counts and errors as step by step.
    @Test(arguments: [Second.file, .dropping])
    func aStepThatComputesAfterTheStepWhoseMappingRunsJoinsItsPass(second: Second) throws {
        let v1 = try model(PushdownDifferentialTests.source), v2 = try model(Self.middle)
        let d3 = Self.middle.replacingOccurrences(of: "\"C2\"", with: "\"D3\"")
        let v3 = try model(
            second == .file
                ? d3 : d3.replacingOccurrences(of: #""out\w+": "\w+",\s*"#, with: "", options: .regularExpression))
        let directory = try TemporaryDirectory()
        let source = directory.path("D1.sqlite")
        try PushdownDifferentialTests.makeSource(at: source, model: v1, rows: .clean)
        var fused: Set<String> = []
        for (n, form) in PushdownDifferentialTests.forms.enumerated()
        where [.sql, .guarded, .fails].contains(form.expected) {
            var mappings = [try Self.mapping("D1", "C2", form.attribute, form.expression, predicate: "i32 > 0")]
            if second == .file {
                mappings.append(try Self.mapping("C2", "D3", form.attribute, Self.after[form.attribute]!))
            }
            let (_, together) = try StepFusionTests.bothWays(
                [v1, v2, v3], mappings, source: source, at: directory.path("chain\(n).sqlite"),
                "\(form.attribute) = \(form.expression)")
            if together.fused == [false, true] { fused.insert("\(form.attribute) = \(form.expression)") }
        }
        // (The second step's text is computed by a method SQL does not say: no pass.)
        for form in [
            "outDouble = $source.price * 1.03", "out64 = $source.i32", "outFlag = $source.flag",
            "outDate = $source.when", "outDouble = $source.count", "outFloat = $source.price * 1.1",
            "outDouble = $source.group.weight", "out64 = $source.count / 3"
        ] {
            #expect(fused.contains(form), "\(form) ran on its own")
        }
        for form in [
            "outDouble = $source.price * 0", "out64 = $source.count / ($source.count - 1)",
            "outDouble = $source.dbl * 1.03"
        ] {
            #expect(!fused.contains(form), "\(form) ran in one pass")
        }
    }

    /// The check of what a step with a filter writes leaves out the rows SQL knows the
    /// filter rejects: `$source.i32 * 2` meets a nil operand only on rows whose i32 is nil,
    /// which `i32 > 0` rejects (one pass) and `i32 != 5` does not (the first step's error,
    /// step by step both ways; the second step reads it only where i32 > 5, so the pass
    /// would not meet the error itself).
    @Test(arguments: [("i32 > 0", true), ("i32 != 5", false)])
    func aFilterLeavesTheRowsItRejectsOutOfTheCheck(_ predicate: String, _ fuses: Bool) throws {
        let v1 = try model(PushdownDifferentialTests.source), v2 = try model(Self.middle)
        let v3 = try model(Self.middle.replacingOccurrences(of: "\"C2\"", with: "\"D3\""))
        let mappings = [
            try Self.mapping("D1", "C2", "out64", "$source.i32 * 2", predicate: predicate),
            try Self.mapping("C2", "D3", "out64", "TERNARY($source.i32 > 5, $source.out64, 0)")
        ]
        let directory = try TemporaryDirectory()
        let source = directory.path("D1.sqlite")
        try PushdownDifferentialTests.makeSource(at: source, model: v1, rows: .clean)
        let (oneByOne, together) = try StepFusionTests.bothWays(
            [v1, v2, v3], mappings, source: source, at: directory.path("chain.sqlite"), predicate)
        #expect(together.fused == (fuses ? [false, true] : []), "\(oneByOne.outcome)")
    }

    /// Two steps that compute, the second from what the first computed, before a third
    /// that computes from what the second did: one pass, whose check reads the second
    /// step's expressions through the first's; the same stores, counts and errors as step
    /// by step. (`$source.out64 + $source.i32` meets a nil operand, doubling out16 a value
    /// out of range: the second step's errors, so no pass; the third step's reading would
    /// hide the second, which only the check finds.) The versions in between have no float
    /// attribute, which a step would round as it copies it.
    @Test(arguments: [
        ("outDouble", "$source.price * 1.03", "$source.outDouble * 2", true),
        ("outText", "$source.text", "TERNARY($source.outText == nil, 'none', $source.outText)", true),
        ("out64", "$source.count * 2 - 7", "$source.out64 * 3", true),
        ("out16", "$source.i16", "TERNARY($source.out16 > 0, $source.out16, 0)", true),
        ("out64", "$source.count * 2 - 7", "$source.out64 + $source.i32", false),
        ("out16", "$source.i16", "TERNARY($source.out16 == nil, 0, $source.out16 * 2)", false)
    ])
    func twoStepsThatComputeRunWithTheStepAfterThem(
        _ attribute: String, _ first: String, _ second: String, _ fuses: Bool
    ) throws {
        let middle = Self.middle.replacingOccurrences(of: #""outFloat": "float", "#, with: "")
        let v1 = try model(PushdownDifferentialTests.source), v2 = try model(middle)
        let v3 = try model(middle.replacingOccurrences(of: "\"C2\"", with: "\"C3\""))
        let v4 = try model(middle.replacingOccurrences(of: "\"C2\"", with: "\"D4\""))
        #expect(!middle.contains("float"))
        let mappings = [
            try Self.first(attribute, first), try Self.mapping("C2", "C3", attribute, second),
            try Self.mapping("C3", "D4", attribute, Self.after[attribute]!)
        ]
        let directory = try TemporaryDirectory()
        let source = directory.path("D1.sqlite")
        try PushdownDifferentialTests.makeSource(at: source, model: v1, rows: .clean)
        let (oneByOne, together) = try StepFusionTests.bothWays(
            [v1, v2, v3, v4], mappings, source: source, at: directory.path("chain.sqlite"), "\(attribute) = \(first)")
        if fuses {
            #expect(together.fused == [true, true, false])
        } else {
            #expect(together.fused == [] && oneByOne.fused == [], "\(oneByOne.outcome)")
        }
        var migrator = StoreMigrator(models: [v1, v2, v3, v4], mappings: mappings)
        migrator.fusesSteps = true
        let passes = migrator.passes(of: try migrator.plan(from: "D1", to: "D4"))
        #expect(passes.map(\.computing) == [[0, 1]])
    }

    /// A float the first step carries is read by the next as the store holds it, where a
    /// 32-bit float holds every value (quarters): the first step renames, before the
    /// second's mapping. From the generated rows (thirds), the first step would round
    /// them: its mapping runs, and the second reads what it writes, each float rounded
    /// (`FUNCTION($source.flt, 'floatValue')`). One pass both ways, with the same stores
    /// as step by step.
    @Test(arguments: [false, true])
    func aFloatIsCarriedWhereA32BitFloatHoldsIt(quarters: Bool) throws {
        let middle = PushdownDifferentialTests.destination.replacingOccurrences(of: "\"D2\"", with: "\"F2\"")
            .replacingOccurrences(
                of: #"{"type": "string", "optional": false, "default": "(none)"}"#, with: #""string""#)
        let v1 = try model(PushdownDifferentialTests.source), v2 = try model(middle)
        let v3 = try model(middle.replacingOccurrences(of: "\"F2\"", with: "\"F3\""))
        let second = try Self.mapping("F2", "F3", "outDouble", "TERNARY($source.flt == nil, 0.0, $source.flt * 2)")
        let directory = try TemporaryDirectory()
        let source = directory.path("D1.sqlite")
        try PushdownDifferentialTests.makeSource(at: source, model: v1, rows: .clean)
        if quarters { try Database(path: source).execute("UPDATE ZROW SET ZFLT = Z_PK * 0.25 WHERE ZFLT IS NOT NULL") }
        let (_, together) = try StepFusionTests.bothWays(
            [v1, v2, v3], [second], source: source, at: directory.path("chain.sqlite"), "quarters: \(quarters)")
        #expect(together.fused == (quarters ? [true, false] : [false, true]))
    }

    /// A computed attribute the step after reads any way but `$source.<attribute>` (here
    /// through a relationship) keeps the steps apart; a copied one read so does not.
    @Test(arguments: [("price", [true, false]), ("outDouble", [false, false])])
    func aComputedAttributeReadThroughARelationshipKeepsTheStepsApart(_ attribute: String, _ fused: [Bool]) throws {
        let v1 = try model(PushdownDifferentialTests.source), v2 = try model(Self.middle)
        let v3 = try model(Self.middle.replacingOccurrences(of: "\"C2\"", with: "\"D3\""))
        let first = try Self.first("outDouble", "$source.price * 2")
        let second = try PushdownDifferentialTests.mapping(
            from: "C2", to: "D3",
            [
                #"{"name": "GroupToGroup", "type": "copy", "sourceEntity": "Group", "destinationEntity": "Group", "attributeMappings": {"weight": "$source.members.@sum.\#(attribute)"}}"#,
                #"{"name": "RowToRow", "type": "copy", "sourceEntity": "Row", "destinationEntity": "Row"}"#
            ])
        let directory = try TemporaryDirectory()
        let source = directory.path("D1.sqlite")
        try PushdownDifferentialTests.makeSource(at: source, model: v1, rows: .clean)
        let (_, together) = try StepFusionTests.bothWays(
            [v1, v2, v3], [first, second], source: source, at: directory.path("chain.sqlite"))
        #expect(together.fused == fused)
        var migrator = StoreMigrator(models: [v1, v2, v3], mappings: [first, second])
        migrator.fusesSteps = true
        #expect(try migrator.passes(of: migrator.plan(from: "D1", to: "D3")).count == (fused[0] ? 1 : 2))
    }
}

extension ComputingStepFusionTests {
    /// An inferred step that changes a number's type, as lightweight migration allows
    /// (Integer 32 to Double, Double to Float, Boolean to Integer 64), before or after a
    /// step whose mapping computes from it: the step after reads each value as writing
    /// converts it (`FUNCTION($source.count, 'doubleValue')`), and the steps run in one
    /// pass, with the same stores and counts as step by step. An Integer 16 made a Boolean
    /// holds numbers other than 0 and 1, which the inferred step fails on: the same error
    /// both ways, and no pass.
    @Test(arguments: [
        ("count", "double", "$source.count / 2", true),
        ("dbl", "float", "TERNARY($source.dbl == nil, 0.25, $source.dbl * 3)", true),
        ("flag", "int64", "TERNARY($source.flag == nil, -1, $source.flag + 10)", true),
        ("i16", "boolean", "TERNARY($source.i16 == YES, 1.0, 0.0)", false)
    ])
    func anInferredTypeChangeRunsWithTheStepBesideIt(
        _ attribute: String, _ type: String, _ reading: String, _ fuses: Bool
    ) throws {
        let v1 = try model(PushdownDifferentialTests.source)
        // (The version in between keeps the attribute with its new type.)
        let changed = try Regex(#""\#(attribute)": "\w+""#)
        let v2 = try model(
            Self.middle.replacingOccurrences(of: "\"C2\"", with: "\"T2\"").replacing(
                changed, with: #""\#(attribute)": "\#(type)""#))
        #expect(
            v2.entity(named: "Row")?.attribute(named: attribute)?.type
                != v1.entity(named: "Row")?.attribute(named: attribute)?.type)
        let v3 = try model(
            Self.middle.replacingOccurrences(of: "\"C2\"", with: "\"T3\"").replacing(
                changed, with: #""\#(attribute)": "\#(type)""#))
        let directory = try TemporaryDirectory()
        let source = directory.path("D1.sqlite")
        try PushdownDifferentialTests.makeSource(at: source, model: v1, rows: .clean)
        // The inferred step first, then a mapping that reads what it converted …
        let after = try Self.mapping("T2", "T3", "outDouble", reading)
        let (first, firstFused) = try StepFusionTests.bothWays(
            [v1, v2, v3], [after], source: source, at: directory.path("before.sqlite"), "\(attribute) first")
        #expect(firstFused.fused == (fuses ? [true, false] : []), "\(first.outcome)")
        // … and a mapping that filters first, then the inferred step, composed with what
        // it writes.
        let w1 = try model(Self.middle.replacingOccurrences(of: "\"C2\"", with: "\"W1\""))
        let w2 = try model(
            Self.middle.replacingOccurrences(of: "\"C2\"", with: "\"W2\"").replacing(
                changed, with: #""\#(attribute)": "\#(type)""#))
        let mapping = try Self.mapping("D1", "W1", "outDouble", "$source.price * 2", predicate: "i32 > 0")
        let (second, secondFused) = try StepFusionTests.bothWays(
            [v1, w1, w2], [mapping], source: source, at: directory.path("after.sqlite"), "\(attribute) second")
        #expect(secondFused.fused == (fuses ? [false, true] : []), "\(second.outcome)")
    }
}

extension ComputingStepFusionTests {
    /// An inferred step that widens numbers (Integer 32 and 64 to Double, Integer 16 to
    /// Integer 64) before a mapping whose fetch's predicate reads them: a comparison of a
    /// widened attribute with numbers reads the older attribute (every Integer 32 is
    /// exactly a double, and numbers compare by value), so the steps run in one pass, the
    /// fetch still said in SQL (`inSQL`); a comparison with anything else, or of an
    /// Integer 64 made a double (not every one is exactly a double), reads the value as it
    /// is written, `FUNCTION(i64, 'doubleValue')`: one pass too, the interpreter deciding
    /// the rows. The same stores and counts both ways.
    @Test(arguments: [
        ("count >= 100 AND i16 != 7", true),
        ("count IN {1, 500, 2147483647} OR i16 BETWEEN {-5, 5} OR 3 > count", true),
        ("count == 2.5 OR count BETWEEN {-1.5, 10}", true),
        ("count > i32", false),
        // (2^53 + 1, which a generated row holds, is no double: its double is 2^53.)
        ("i64 == 9007199254740993 OR count > 5", false)
    ])
    func aFetchReadsWhatAnInferredStepWidened(_ predicate: String, _ inSQL: Bool) throws {
        let v1 = try model(PushdownDifferentialTests.source)
        let widened = Self.middle.replacingOccurrences(of: #""count": "int32""#, with: #""count": "double""#)
            .replacingOccurrences(of: #""i16": "int16""#, with: #""i16": "int64""#)
            .replacingOccurrences(of: #""i64": "int64""#, with: #""i64": "double""#)
        let v2 = try model(widened.replacingOccurrences(of: "\"C2\"", with: "\"T2\""))
        let v3 = try model(widened.replacingOccurrences(of: "\"C2\"", with: "\"T3\""))
        #expect(v2.entity(named: "Row")?.attribute(named: "count")?.type == .double)
        let mapping = try Self.mapping("T2", "T3", "outDouble", "$source.count * 2", predicate: predicate)
        let directory = try TemporaryDirectory()
        let source = directory.path("D1.sqlite")
        try PushdownDifferentialTests.makeSource(at: source, model: v1, rows: .clean)
        let (oneByOne, fused) = try StepFusionTests.bothWays(
            [v1, v2, v3], [mapping], source: source, at: directory.path("chain.sqlite"), predicate)
        if case .failure = oneByOne.outcome { Issue.record("step by step failed: \(oneByOne.outcome)") }
        #expect(fused.fused == [true, false], "\(predicate)")
        if case .store(_, let counts) = fused.outcome {
            #expect(counts.last?[1] ?? 0 > 0, "\(predicate) kept no row")
        }
        // (The pass's fetch said in SQL: the interpreter asked about no row.)
        guard inSQL else { return }
        var migrator = StoreMigrator(models: [v1, v2, v3], mappings: [mapping])
        migrator.keepsBackup = false
        let reports = try migrator.migrate(storeAt: source)
        let rows = reports.last?.report.entityMappings.first { $0.name == "RowToRow" }?.execution
        #expect(reports.map(\.isFused) == [true, false] && rows?.instancesAsSQL == true && rows?.evaluations == 0)
    }
}
