import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// A step that filters right after the step whose mapping runs (docs/engine.md, "Steps
/// that filter"): the pass fetches the rows both filters select, and counts and checks
/// what the step before makes of the rows the second filter leaves behind; the chain ends
/// with the same store, the same counts and the same errors as when each step runs on its
/// own.
@Suite struct FilteringStepFusionTests {
    /// F1: items with no relationships beside shelves and their boxes.
    static let v1 = """
        {"version": "F1", "entities": {
          "Item": {"attributes": {"name": "string", "qty": "int32", "price": "double", "code": "string",
                                  "flag": "boolean", "big": "int64"}},
          "Shelf": {"attributes": {"label": "string"},
                    "relationships": {"boxes": {"destination": "Box", "inverse": "shelf", "toMany": true}}},
          "Box": {"attributes": {"size": "int16"},
                  "relationships": {"shelf": {"destination": "Shelf", "inverse": "boxes"}}}}}
        """

    /// F2: the items' quantity widened, a total and a doubled `big` computed; `code`
    /// required where `requiredCode`.
    static func v2(requiredCode: Bool = false) -> String {
        v1.replacingOccurrences(of: "\"F1\"", with: "\"F2\"")
            .replacingOccurrences(of: #""qty": "int32""#, with: #""qty": "int64", "total": "double", "twice": "int64""#)
            .replacingOccurrences(
                of: #""code": "string""#,
                with: requiredCode ? #""code": {"type": "string", "optional": false}"# : #""code": "string""#)
    }

    /// F3: items renamed articles, their quantity renamed, their flag dropped.
    static func v3(requiredCode: Bool = false) -> String {
        v2(requiredCode: requiredCode).replacingOccurrences(of: "\"F2\"", with: "\"F3\"")
            .replacingOccurrences(
                of: #""Item": {"attributes""#, with: #""Article": {"renamingIdentifier": "Item", "attributes""#
            )
            .replacingOccurrences(
                of: #""qty": "int64""#, with: #""quantity": {"type": "int64", "renamingIdentifier": "qty"}"#
            )
            .replacingOccurrences(of: #""flag": "boolean", "#, with: "")
    }

    /// The standard fetch of `entity` with `predicate`, as JSON's `sourceExpression`.
    static func fetch(_ entity: String, _ predicate: String?) -> String {
        guard let predicate else { return "" }
        return
            #""sourceExpression": "\#(ComputingStepFusionTests.escaped(#"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "\#(entity)", "\#(predicate)"), $manager.sourceContext, NO)"#))", "#
    }

    /// F1 → F2: the items `first` selects, their total and `twice` computed; F2 → F3: the
    /// articles `second` selects.
    static func mappings(_ first: String?, _ second: String?, twice: String = "$source.big / 2") throws
        -> [MappingModel]
    {
        let shelves = [
            #"{"name": "ShelfToShelf", "type": "copy", "sourceEntity": "Shelf", "destinationEntity": "Shelf"}"#,
            #"{"name": "BoxToBox", "type": "copy", "sourceEntity": "Box", "destinationEntity": "Box"}"#
        ]
        return [
            try PushdownDifferentialTests.mapping(
                from: "F1", to: "F2",
                shelves + [
                    #"{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", \#(fetch("Item", first))"attributeMappings": {"total": "TERNARY($source.price == nil OR $source.qty == nil, -1.0, $source.price * $source.qty)", "twice": "\#(twice)"}}"#
                ]),
            try PushdownDifferentialTests.mapping(
                from: "F2", to: "F3",
                [
                    #"{"name": "ItemToArticle", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Article", \#(fetch("Item", second))"attributeMappings": {"quantity": "$source.qty"}}"#
                ] + shelves)
        ]
    }

    /// An F1 store: 3,000 items with nils, extremes, text that is not plain ASCII, and
    /// `code` nil on the items whose quantity ends in 7; 20 shelves and 200 boxes.
    static func makeSource(at path: String, oddText: Bool = false) throws {
        let store = try Store.create(at: path, model: try model(v1))
        let item = store.layout.entities["Item"]!, shelf = store.layout.entities["Shelf"]!
        let box = store.layout.entities["Box"]!
        let c = item.attributeColumns
        try store.database.execute(
            """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
            INSERT INTO \(item.table) (Z_PK, Z_ENT, Z_OPT, \(c["name"]!), \(c["qty"]!), \(c["price"]!), \(c["code"]!),
                \(c["flag"]!), \(c["big"]!))
            SELECT i, \(item.number), 1,
                CASE i % 9 WHEN 0 THEN NULL WHEN 1 THEN '' WHEN 2 THEN \(oddText ? "'Zoë ' || i" : "'zoe ' || i")
                    ELSE 'item ' || i END,
                CASE i % 11 WHEN 0 THEN NULL WHEN 1 THEN 2147483647 WHEN 2 THEN -2147483648 ELSE (i * 7919) % 1000 END,
                CASE i % 10 WHEN 0 THEN NULL WHEN 1 THEN 0.0 WHEN 2 THEN 1e308 ELSE i * 0.37 END,
                CASE WHEN (i * 7919) % 1000 % 10 = 7 THEN NULL ELSE 'c' || i END,
                CASE i % 3 WHEN 0 THEN NULL ELSE i % 2 END,
                CASE WHEN i % 500 = 3 THEN 9223372036854775807 ELSE i * 104729 END
            FROM n;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20)
            INSERT INTO \(shelf.table) (Z_PK, Z_ENT, Z_OPT, \(shelf.attributeColumns["label"]!))
            SELECT i, \(shelf.number), 1, 'shelf ' || i FROM n;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
            INSERT INTO \(box.table) (Z_PK, Z_ENT, Z_OPT, \(box.attributeColumns["size"]!), \(box.toOneColumns["shelf"]!.key))
            SELECT i, \(box.number), 1, i % 7, CASE WHEN i % 6 = 0 THEN NULL ELSE i % 20 + 1 END FROM n;
            UPDATE Z_PRIMARYKEY SET Z_MAX = 3000 WHERE Z_ENT = \(item.number);
            UPDATE Z_PRIMARYKEY SET Z_MAX = 20 WHERE Z_ENT = \(shelf.number);
            UPDATE Z_PRIMARYKEY SET Z_MAX = 200 WHERE Z_ENT = \(box.number);
            """)
    }

    /// Two steps that each filter: one pass where SQL tells which rows the first filter
    /// selects and the second reads what the first copies; the same stores, counts and
    /// errors either way (`fused`: each step's report's ``StoreMigrator/StepReport/isFused``;
    /// `[false, false]`, two passes). The first step's errors on rows the second filter
    /// leaves behind (`twice` out of range where `big` is Int64's largest; a nil `code`
    /// where F2 requires one) keep the steps apart, each reporting its own.
    @Test(
        arguments: [
            // (Both filters, the second through what the first copies: one pass.)
            ("qty > 10", "price < 500", "$source.big / 2", false, [false, true]),
            ("qty > 10 AND price > 1.5", "qty <= 900 OR flag == YES", "$source.big / 2", false, [false, true]),
            // (The second's filter on text SQL cannot tell, evaluated in the pass.)
            ("qty > 10", "NOT (name BEGINSWITH 'Zo')", "$source.big / 2", false, [false, true]),
            // (Only the second filters: the first, which only computes, read through.)
            (nil, "NOT (name CONTAINS 'item 1')", "$source.big / 2", false, [true, false]),
            // (The second reads what the first computes, as its expression on the row.)
            ("qty > 10", "total > 100 OR twice < 1000", "$source.big / 2", false, [false, true]),
            // (The second reads past an attribute: apart.)
            ("qty > 10", "name.length > 6", "$source.big / 2", false, [false, false]),
            // (Rows the second leaves behind the first cannot write: apart, with its errors.)
            ("qty > 10", "big < 9000000000000000000", "$source.big * 2", false, []),
            ("qty > 10", "code != nil", "$source.big / 2", true, []),
            // (SQL cannot tell which rows the first selects, and so cannot count them: apart.)
            ("name CONTAINS[cd] 'ë'", "price < 500", "$source.big / 2", false, [false, false]),
            ("qty > 10 AND name BEGINSWITH 'item'", "price < 500", "$source.big / 2", false, [false, false])
        ] as [(String?, String, String, Bool, [Bool])])
    func twoStepsThatFilterRunInOnePass(
        first: String?, second: String, twice: String, requiredCode: Bool, fused: [Bool]
    ) throws {
        let models = [
            try model(Self.v1), try model(Self.v2(requiredCode: requiredCode)),
            try model(Self.v3(requiredCode: requiredCode))
        ]
        let directory = try TemporaryDirectory()
        let source = directory.path("F1.sqlite")
        try Self.makeSource(at: source, oddText: true)
        let mappings = try Self.mappings(first, second, twice: twice)
        let (oneByOne, together) = try StepFusionTests.bothWays(
            models, mappings, source: source, at: directory.path("chain.sqlite"),
            "\(first ?? "every item"), then \(second)")
        let migrator = StoreMigrator(models: models, mappings: mappings)
        let passes = migrator.passes(of: try migrator.plan(from: "F1", to: "F3"))
        #expect(
            together.fused == fused,
            "\(passes.compactMap(\.apart)); step by step: \(String(describing: oneByOne.outcome).prefix(300))")
        if fused == [false, true] {
            #expect(passes.map(\.filtering) == [[1]])
            // (Step one's items, then step two's articles: the second keeps fewer.)
            if case .store(_, let counts) = oneByOne.outcome {
                #expect(counts.count == 6 && counts[2][1] > counts[3][1], "\(counts)")
            }
        }
    }

    /// A step after the filtering one joins the pass as any step after does; a second
    /// step that filters does not (the steps between would count the rows it leaves
    /// behind), and runs on its own.
    @Test(arguments: [(nil, [false, true, true]), ("name != nil", [false, true, false])] as [(String?, [Bool])])
    func aStepAfterTheFilteringOneJoinsThePassUnlessItFiltersToo(third: String?, fused: [Bool]) throws {
        let v4 = Self.v3().replacingOccurrences(of: "\"F3\"", with: "\"F4\"")
            .replacingOccurrences(
                of: #""name": "string", "quantity""#,
                with: #""title": {"type": "string", "renamingIdentifier": "name"}, "quantity""#)
        let models = [try model(Self.v1), try model(Self.v2()), try model(Self.v3()), try model(v4)]
        #expect(
            models[3].entity(named: "Article").map { models[3].allAttributes(of: $0).map(\.name) }?.first == "title")
        var mappings = try Self.mappings("qty > 10", "price < 500")
        if let third {
            mappings.append(
                try PushdownDifferentialTests.mapping(
                    from: "F3", to: "F4",
                    [
                        #"{"name": "ArticleToArticle", "type": "copy", "sourceEntity": "Article", "destinationEntity": "Article", \#(Self.fetch("Article", third))"attributeMappings": {"title": "$source.name"}}"#,
                        #"{"name": "ShelfToShelf", "type": "copy", "sourceEntity": "Shelf", "destinationEntity": "Shelf"}"#,
                        #"{"name": "BoxToBox", "type": "copy", "sourceEntity": "Box", "destinationEntity": "Box"}"#
                    ]))
        }
        let directory = try TemporaryDirectory()
        let source = directory.path("F1.sqlite")
        try Self.makeSource(at: source)
        let (_, together) = try StepFusionTests.bothWays(
            models, mappings, source: source, at: directory.path("chain.sqlite"), third ?? "inferred")
        #expect(together.fused == fused, "\(String(describing: together.outcome).prefix(400))")
    }

    /// An attribute the first step leaves to a default that breaks a rule fails that step
    /// on every row it makes; the pass, which makes only the rows the second filter keeps
    /// (here none), would not: the steps run apart, with the first step's error.
    @Test func anAttributeLeftToADefaultThatBreaksARuleKeepsTheStepsApart() throws {
        let required = #""level": {"type": "int16", "default": 5, "max": 3}, "code""#
        let v2 = Self.v2().replacingOccurrences(of: #""code""#, with: required)
        let v3 = Self.v3().replacingOccurrences(of: #""code""#, with: required)
        let models = [try model(Self.v1), try model(v2), try model(v3)]
        let directory = try TemporaryDirectory()
        let source = directory.path("F1.sqlite")
        try Self.makeSource(at: source)
        let (oneByOne, together) = try StepFusionTests.bothWays(
            models, try Self.mappings("qty > 10", "qty < -2147483648"), source: source,
            at: directory.path("chain.sqlite"))
        guard case .failure(let error) = oneByOne.outcome else {
            Issue.record("the first step made items with a level out of its bounds")
            return
        }
        #expect(error.contains("level"), "\(error)")
        #expect(together.fused == [])
        let migrator = StoreMigrator(models: models, mappings: try Self.mappings("qty > 10", "qty < -2147483648"))
        let passes = migrator.passes(of: try migrator.plan(from: "F1", to: "F3"))
        #expect(passes.count == 2 && passes[1].apart?.after.contains("level") == true, "\(passes)")
    }

    /// What the step before reads of what its filtered mappings make (a lookup, the
    /// destination context) keeps the steps apart; a fetch from the source context, a
    /// relationship's lookup and a lookup of another mapping do not.
    @Test(arguments: [
        (
            #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ShelfToShelf", $source.shelf)"#,
            true
        ),
        (
            #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "shelf", $source.shelf)"#,
            true
        ),
        (
            #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ItemToItem", $source.shelf)"#,
            false
        ),
        (
            #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", $source.name, $source.shelf)"#,
            false
        ),
        (
            #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Item", "TRUEPREDICATE"), $manager.destinationContext, NO)"#,
            false
        ),
        (#"FUNCTION($source.size, "stringValue")"#, true)
    ])
    func whatTheStepBeforeReadsOfWhatItFiltersKeepsTheStepsApart(_ expression: String, _ readsNothing: Bool) throws {
        let mapping = try PushdownDifferentialTests.mapping(
            from: "F1", to: "F2",
            [
                #"{"name": "ItemToItem", "type": "copy", "sourceEntity": "Item", "destinationEntity": "Item", \#(Self.fetch("Item", "TRUEPREDICATE"))"attributeMappings": {}}"#,
                #"{"name": "BoxToBox", "type": "copy", "sourceEntity": "Box", "destinationEntity": "Box", "relationshipMappings": {"shelf": "\#(ComputingStepFusionTests.escaped(expression))"}}"#
            ])
        #expect(Relabeling.readsNothingMadeBy(["ItemToItem"], in: mapping) == readsNothing)
    }
}
