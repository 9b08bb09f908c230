import ExpressionLanguage
import Foundation
import Testing
@testable import ObjectGraph

/// A store with what predicates meet in practice: strings in mixed case, with accents,
/// composed and decomposed, empty and nil; integers near 2^53; doubles, floats, dates,
/// booleans, binary, UUID and decimal values; to-one, one-to-many, many-to-many and
/// inverse-less to-many relationships; an entity hierarchy (`Item`, `Book`, `Gadget`) whose
/// sub-entities both have a `label`; and a few rows written behind the context's back with
/// values of another storage class than their column's type.
enum ShopStore {
    static let model: ObjectModel = try! ObjectModel(
        json: JSON.parse(
            """
            {"version": "Shop1", "entities": {
              "Item": {"attributes": {"name": "string", "price": "double", "quantity": "int32", "big": "int64", "ratio": "float",
                                      "created": "date", "active": "boolean", "blob": "binary", "code": "uuid", "cost": "decimal"},
                       "relationships": {"maker": {"destination": "Maker", "inverse": "items"},
                                         "tags": {"destination": "Tag", "inverse": "items", "toMany": true},
                                         "reviews": {"destination": "Review", "inverse": "item", "toMany": true}}},
              "Book": {"parent": "Item", "attributes": {"pages": "int16", "label": "string"}},
              "Gadget": {"parent": "Item", "attributes": {"label": "string", "voltage": "double"}},
              "Maker": {"attributes": {"name": "string", "country": "string", "founded": "date"},
                        "relationships": {"items": {"destination": "Item", "inverse": "maker", "toMany": true},
                                          "parent": {"destination": "Maker", "inverse": "children"},
                                          "children": {"destination": "Maker", "inverse": "parent", "toMany": true},
                                          "favorites": {"destination": "Item", "toMany": true}}},
              "Tag": {"attributes": {"name": "string"},
                      "relationships": {"items": {"destination": "Item", "inverse": "tags", "toMany": true}}},
              "Review": {"attributes": {"stars": "int16", "text": "string"},
                         "relationships": {"item": {"destination": "Item", "inverse": "reviews"}}}
            }}
            """))

    static let names: [Value] = [
        "alpha", "Alpha", "ALPHA", "alphabet", "beta", "Béta", "Be\u{301}ta", "béta", "", "straße", "STRASSE",
        "Strasse",
        "\u{212A}elvin", "Kelvin", "kelvin", "a*b", "a?b", "a[b]", "a\\b", "line\r\nbreak", "tab\tin", "Ünïcødé",
        "ΟΔΟΣ",
        "οδος", "Zeta", "zeta", "100", "ﬁne", "fine", "Québec", "QUEBEC", "quebec", "ø", "o", "😀 smile", "e\u{301}",
        "e", "E",
        "Chloé", .null, .null, "abc"
    ]

    static func date(_ seconds: Double) -> Value { .date(Date(timeIntervalSinceReferenceDate: seconds)) }

    /// Builds the store: 72 items (every third a Book, every third a Gadget), 10 makers,
    /// 7 tags, 40 reviews; then rewrites a few rows with raw SQL.
    static func fill(_ store: Store) throws {
        let context = ObjectContext(store: store)
        func pick(_ values: [Value], _ i: Int) -> Value { values[i % values.count] }
        let makers = try (0..<10).map { i in
            let maker = try context.insert("Maker")
            try maker.setValue(
                pick(["Acme", "acme", "ACME Corp", "Böhm", "Bo\u{308}hm", .null, "Zenith", "", "Acme", "Beta"], i),
                forKey: "name")
            try maker.setValue(pick(["FR", "DE", "fr", .null, "UK"], i), forKey: "country")
            try maker.setValue(pick([date(0), date(172_800), .null], i), forKey: "founded")
            return maker
        }
        for (i, maker) in makers.enumerated().dropFirst() {
            try maker.setValue(.object(ObjectReference(makers[(i - 1) / 2])), forKey: "parent")
        }
        let tags = try ["red", "Red", "blue", "green", .null, "bleu", "RED"].map { (name: Value) in
            let tag = try context.insert("Tag")
            try tag.setValue(name, forKey: "name")
            return tag
        }
        var items: [ManagedObject] = []
        for i in 0..<72 {
            let entity = ["Item", "Book", "Gadget"][i % 3]
            let item = try context.insert(entity)
            try item.setValue(pick(names, i), forKey: "name")
            try item.setValue(
                pick([10.0, 1.5, 0.0, 10.5, -3.25, 1e10, .null, 100.0, 9.999, 0.5, 10.000001], i * 7), forKey: "price")
            try item.setValue(pick([0, 1, 10, 11, -5, .null, 42, 2, 3], i * 5), forKey: "quantity")
            try item.setValue(
                pick([9_007_199_254_740_993, 9_007_199_254_740_992, -1, .null, 0, .integer(Int64.max)], i),
                forKey: "big")
            try item.setValue(pick([0.25, 0.5, 0.75, .null], i), forKey: "ratio")
            try item.setValue(
                pick([date(0), date(86_400), date(-86_400), date(700_000_000.5), .null, date(1), date(0.5)], i * 3),
                forKey: "created")
            try item.setValue(pick([true, false, .null], i + i / 3), forKey: "active")
            try item.setValue(pick([.data(Data([1, 2, 3])), .data(Data()), .null, .data(Data([0]))], i), forKey: "blob")
            try item.setValue(pick(["E621E1F8-C36C-495A-93FC-0C247A3E6E5F", .null], i), forKey: "code")
            try item.setValue(pick([.decimal(Decimal(string: "1.5")!), .null, .decimal(2)], i), forKey: "cost")
            if entity == "Book" {
                try item.setValue(pick([50, 150, .null, 300], i / 3), forKey: "pages")
                try item.setValue(pick(["first", "First", .null, "second"], i / 3), forKey: "label")
            } else if entity == "Gadget" {
                try item.setValue(pick(["first", "FIRST", .null], i / 3), forKey: "label")
                try item.setValue(pick([5.0, 230.0, .null], i / 3), forKey: "voltage")
            }
            if i % 11 != 10 { try item.setValue(.object(ObjectReference(makers[i % 11])), forKey: "maker") }
            let itemTags = tags.indices.filter { t in i % 6 != 5 && ((i * 3 + t) % 5 == 0 || (i + t * 2) % 7 == 0) }
            try item.setValue(.array(itemTags.map { .object(ObjectReference(tags[$0])) }), forKey: "tags")
            items.append(item)
        }
        for (i, maker) in makers.enumerated() where i % 2 == 0 {
            try maker.setValue(
                .set([.object(ObjectReference(items[i * 3])), .object(ObjectReference(items[i * 3 + 1]))]),
                forKey: "favorites")
        }
        for j in 0..<40 {
            let review = try context.insert("Review")
            try review.setValue(pick([5, 4, 3, 1, .null, 2], j), forKey: "stars")
            try review.setValue(pick(["good", "Very GOOD", "bad", .null, "goød", "GOOD!"], j * 5), forKey: "text")
            if j % 9 != 8 { try review.setValue(.object(ObjectReference(items[(j * 7) % 72])), forKey: "item") }
        }
        try context.save()
        // Values of another storage class than the column's type, as another writer might
        // leave them; the context reads them as its types say (`'cheap'` is 0.0).
        try store.database.execute(
            """
            UPDATE ZITEM SET ZPRICE = 'cheap' WHERE Z_PK = 61;
            UPDATE ZITEM SET ZQUANTITY = 2.5 WHERE Z_PK = 62;
            UPDATE ZITEM SET ZACTIVE = 2 WHERE Z_PK = 63;
            UPDATE ZITEM SET ZNAME = x'414243' WHERE Z_PK = 64;
            UPDATE ZITEM SET ZNAME = CAST(x'616C00706861' AS TEXT) WHERE Z_PK = 65;
            UPDATE ZITEM SET ZNAME = CAST(x'C061' AS TEXT) WHERE Z_PK = 66;
            UPDATE ZITEM SET ZCREATED = 'yesterday' WHERE Z_PK = 67;
            UPDATE ZITEM SET ZBIG = 'x' WHERE Z_PK = 68;
            UPDATE ZITEM SET ZBLOB = 'AQID' WHERE Z_PK = 69;
            UPDATE ZMAKER SET ZNAME = 5 WHERE Z_PK = 10;
            """)
    }

    /// Changes a context without saving, in one of two ways: `items` changes, inserts
    /// and deletes items and their join rows; `related` changes makers, reviews and tags
    /// but no item.
    static func change(_ context: ObjectContext, _ scenario: String) throws {
        func object(_ reference: String) throws -> ManagedObject { try ShopStore.object(reference, in: context) }
        switch scenario {
        case "items":
            let item = try context.insert("Item")
            try item.setValue("alpha", forKey: "name")
            try item.setValue(11.0, forKey: "price")
            try item.setValue(.object(ObjectReference(try object("Maker/2"))), forKey: "maker")
            try item.setValue(.set([.object(ObjectReference(try object("Tag/1")))]), forKey: "tags")
            let book = try object("Book/2")
            try book.setValue(1000.0, forKey: "price")
            try book.setValue(.null, forKey: "name")
            try object("Gadget/3").setValue(.object(ObjectReference(try object("Maker/3"))), forKey: "maker")
            try context.delete(try object("Gadget/9"))
            try object("Item/4").setValue(.set([]), forKey: "tags")
        case "related":
            try object("Maker/1").setValue("renamed", forKey: "name")
            try object("Maker/4").setValue(.null, forKey: "parent")
            try object("Review/1").setValue(1, forKey: "stars")
            try context.delete(try object("Tag/6"))
            let review = try context.insert("Review")
            try review.setValue(5, forKey: "stars")
            try review.setValue(.object(ObjectReference(try object("Item/7"))), forKey: "item")
        default:
            break
        }
    }

    /// `Maker/2`: the object of that entity and primary key.
    static func object(_ reference: String, in context: ObjectContext) throws -> ManagedObject {
        let parts = reference.split(separator: "/")
        let binding = try context.binding(String(parts[0]))
        return try context.object(
            with: ObjectID(entityName: String(parts[0]), primaryKey: Int64(parts[1])!, table: binding.layout.table))
    }

    static func request(_ c: PredicateCorpus.Case, in context: ObjectContext) throws -> FetchRequest {
        var arguments: [Value] = []
        if let json = c.arguments {
            arguments = try JSON.parse(json).arrayValue!.map { element in
                try Value(json: element) { .object(ObjectReference(try object($0, in: context))) }
            }
        }
        return try FetchRequest(entityName: c.entity, predicate: c.predicate, arguments: arguments)
    }
}

@Suite struct PredicateSQLTests {
    static func ids(_ objects: [ManagedObject]) -> [String] { objects.map(\.objectID.description).sorted() }

    /// What the predicate selects, evaluated on every object of the entity.
    static func evaluatingEveryObject(
        _ request: FetchRequest, _ context: ObjectContext, among objects: [ManagedObject]? = nil
    ) throws -> [String] {
        let compiled = try ExpressionCompiler(functions: context.functions).compile(request.predicate!)
        let all = try objects ?? context.fetch(FetchRequest(entityName: request.entityName))
        return ids(try all.filter { try compiled.evaluate(with: .object(ObjectReference($0))) })
    }

    /// Every predicate of the corpus, fetched through SQL, counted and read with a cursor,
    /// selects exactly the objects that evaluating it on every object selects: in a context
    /// without changes (where the corpus says what SQL takes on), and in contexts with
    /// unsaved changes to the fetched objects or to the objects they relate to.
    @Test(arguments: ["memory", "disk"])
    func corpusAgreesWithEvaluatingEveryObject(place: String) throws {
        #expect(PredicateCorpus.cases.count >= 150)
        let temp = try TemporaryStore(place, model: ShopStore.model)
        try ShopStore.fill(temp.store)
        var exactCases: Set<String> = []
        for scenario in ["saved", "items", "related"] {
            let context = ObjectContext(store: temp.store)
            try ShopStore.change(context, scenario)
            var everything: [String: [ManagedObject]] = [:]
            for c in PredicateCorpus.cases {
                let request = try ShopStore.request(c, in: context)
                let all = try everything[c.entity] ?? context.fetch(FetchRequest(entityName: c.entity))
                everything[c.entity] = all
                let expected = try Self.evaluatingEveryObject(request, context, among: all)

                #expect(Self.ids(try context.fetch(request)) == expected, "\(scenario) \(c)")
                #expect(try context.count(request) == expected.count, "count, \(scenario) \(c)")
                let cursor = try context.makeCursor(request)
                var seen: [ManagedObject] = []
                while let object = try cursor.next() { seen.append(object) }
                #expect(Self.ids(seen) == expected, "cursor, \(scenario) \(c)")

                let plan = try FetchPlan(request, context: context)
                var translator = PredicateTranslator(
                    bindings: context.bindings, unsavedTables: context.tablesWithUnsavedChanges)
                #expect(
                    plan.narrowing == translator.translate(request.predicate!, on: try context.binding(c.entity)),
                    "SQLite refused the translation: \(scenario) \(c)")
                if scenario == "saved" {
                    #expect(
                        (plan.sqlWhere != nil) == c.pushed,
                        "\(c) is \(c.pushed ? "" : "not ")expected in SQL: \(plan.sqlWhere ?? "nil")")
                }
                if scenario == "saved", plan.narrowing.isExact {
                    // SQL alone selects exactly what the predicate accepts (the fetches above
                    // took its answer without evaluating the predicate).
                    exactCases.insert("\(c)")
                    var selected: [String] = []
                    while try plan.rows.step() {
                        selected.append(
                            "\(context.binding(number: plan.rows.int64(at: 1))!.entity.name)/\(plan.rows.int64(at: 0))")
                    }
                    #expect(selected.sorted() == expected, "exact: \(c)")
                }
            }
        }
        #expect(exactCases.count >= 20, "nil tests and their combinations are decided by SQL: \(exactCases.count)")
    }

    /// The SQL a few predicates become: constants are parameters, never text.
    @Test(
        arguments: [
            (
                "Item", "price > 10", "(t0.ZPRICE > ?1 OR typeof(t0.ZPRICE) NOT IN ('real', 'null'))",
                [SQLiteValue.integer(10)]
            ),
            (
                "Item", "NOT (quantity IN {1, 2.5, 'x'})",
                "(NOT (t0.ZQUANTITY IN (?1, ?2)) OR typeof(t0.ZQUANTITY) NOT IN ('integer', 'null') OR t0.ZQUANTITY IS NULL)",
                [.integer(1), .real(2.5)]
            ),
            (
                "Item", "active == YES", "((t0.ZACTIVE <> 0) = ?1 OR typeof(t0.ZACTIVE) NOT IN ('integer', 'null'))",
                [.integer(1)]
            ),
            ("Item", "created < CAST(0, 'NSDate')", nil, []),
            ("Item", "maker == nil AND blob != nil", "(t0.ZMAKER IS NULL AND t0.ZBLOB IS NOT NULL)", []),
            (
                "Item", "name ==[cd] 'Québec'",
                "(lower(t0.ZNAME) = ?1 OR typeof(t0.ZNAME) NOT IN ('text', 'null') OR t0.ZNAME GLOB ?2 OR length(t0.ZNAME) <> length(CAST(t0.ZNAME AS BLOB)))",
                [.text("quebec"), .text(PredicateTranslator.notPlainText)]
            ),
            (
                "Item", "name LIKE 'a?\\\\*b*'",
                "(t0.ZNAME COLLATE BINARY GLOB ?1 OR typeof(t0.ZNAME) NOT IN ('text', 'null') OR t0.ZNAME GLOB ?2 OR length(t0.ZNAME) <> length(CAST(t0.ZNAME AS BLOB)))",
                [.text("a?[*]b*"), .text(PredicateTranslator.notPlainText)]
            ),
            ("Item", "name MATCHES 'a.*'", nil, []),
            (
                "Item", "maker.founded > CAST(0, 'NSDate') AND maker.country == 'FR'",
                "EXISTS (SELECT 1 FROM ZMAKER t1 WHERE t1.Z_PK = t0.ZMAKER AND "
                    + "(t1.ZCOUNTRY COLLATE BINARY = ?1 OR typeof(t1.ZCOUNTRY) NOT IN ('text', 'null') OR t1.ZCOUNTRY GLOB ?2 OR length(t1.ZCOUNTRY) <> length(CAST(t1.ZCOUNTRY AS BLOB))))",
                [.text("FR"), .text(PredicateTranslator.notPlainText)]
            ),
            (
                "Item", "maker.parent.name != nil",
                "EXISTS (SELECT 1 FROM ZMAKER t1 WHERE t1.Z_PK = t0.ZMAKER AND EXISTS (SELECT 1 FROM ZMAKER t2 WHERE t2.Z_PK = t1.ZPARENT AND t2.ZNAME IS NOT NULL))",
                []
            ),
            (
                "Item", "ANY tags.name == nil",
                "EXISTS (SELECT 1 FROM Z_1TAGS t1j JOIN ZTAG t1 ON t1.Z_PK = t1j.Z_6TAGS WHERE t1j.Z_1ITEMS = t0.Z_PK AND t1.ZNAME IS NULL)",
                []
            ),
            (
                "Item", "ALL reviews.stars > 2",
                "NOT (EXISTS (SELECT 1 FROM ZREVIEW t1 WHERE t1.ZITEM = t0.Z_PK AND t1.Z_ENT IN (5) AND "
                    + "NOT ((t1.ZSTARS > ?1 OR typeof(t1.ZSTARS) NOT IN ('integer', 'null')))))", [.integer(2)]
            ),
            (
                "Maker", "items.@count >= 5",
                "(SELECT count(*) FROM ZITEM t1 WHERE t1.ZMAKER = t0.Z_PK AND t1.Z_ENT IN (1, 2, 3)) >= ?1",
                [.integer(5)]
            ),
            ("Review", "item == %@ OR item == nil", "(t0.ZITEM = ?1 OR t0.ZITEM IS NULL)", [.integer(5)]),
            ("Item", "SELF IN %@", "t0.Z_PK IN (?1, ?2)", [.integer(5), .integer(1)])
        ] as [(String, String, String?, [SQLiteValue])])
    func predicatesBecomeSQL(entity: String, predicate: String, sql: String?, parameters: [SQLiteValue]) throws {
        let temp = try TemporaryStore("memory", model: ShopStore.model)
        try ShopStore.fill(temp.store)
        let context = ObjectContext(store: temp.store)
        let objects: [Value] = try ["Book/5", "Item/1"].map {
            .object(ObjectReference(try ShopStore.object($0, in: context)))
        }
        let arguments: [Value] = predicate.contains("SELF") ? [.array(objects)] : [objects[0]]
        let plan = try FetchPlan(
            FetchRequest(entityName: entity, predicate: predicate, arguments: arguments), context: context)
        #expect(plan.sqlWhere == sql)
        #expect(plan.parameters == parameters)
        #expect(plan.rows.sql.contains("FROM \(try context.binding(entity).layout.table) t0 WHERE "))
    }

    /// Unsaved changes to related objects keep those relationships out of SQL, which would
    /// read them as saved; the fetched objects' own columns still narrow.
    @Test func unsavedRelatedObjectsAreMatchedInMemory() throws {
        let temp = try TemporaryStore("memory", model: ShopStore.model)
        try ShopStore.fill(temp.store)
        let context = ObjectContext(store: temp.store)
        let request = try FetchRequest(entityName: "Item", predicate: "maker.name == 'renamed' AND price > 0")
        #expect(try FetchPlan(request, context: context).sqlWhere?.contains("ZMAKER") == true)
        #expect(try context.count(request) == 0)

        try ShopStore.object("Maker/1", in: context).setValue("renamed", forKey: "name")
        let plan = try FetchPlan(request, context: context)
        #expect(plan.sqlWhere == "(t0.ZPRICE > ?1 OR typeof(t0.ZPRICE) NOT IN ('real', 'null'))")
        let expected = ["Book/23", "Book/56", "Gadget/12", "Gadget/45", "Item/1", "Item/34", "Item/67"]
        #expect(try Self.evaluatingEveryObject(request, context) == expected)
        #expect(Self.ids(try context.fetch(request)) == expected)
        #expect(try context.count(request) == expected.count)
    }

    /// A part of a predicate that would fail (`text < 5`: a string ordered against a
    /// number) is not evaluated on the rows SQL has already excluded by another part, as
    /// Core Data, which runs fetch predicates in SQL, never meets it either: stored rows
    /// decide by SQL first. An object matched in memory (unsaved) evaluates in order, and
    /// the error is raised (docs/object-context.md).
    @Test func aFailingPartIsNotEvaluatedOnRowsSQLExcluded() throws {
        let temp = try TemporaryStore("memory", model: ShopStore.model)
        try ShopStore.fill(temp.store)
        let context = ObjectContext(store: temp.store)
        let request = try FetchRequest(entityName: "Review", predicate: "text < 5 AND stars > 100")
        #expect(try FetchPlan(request, context: context).sqlWhere?.contains("ZSTARS") == true)
        #expect(try context.fetch(request).isEmpty)
        #expect(try context.count(request) == 0)
        // The same predicate on an unsaved object: evaluated in memory, it fails.
        try ShopStore.object("Review/1", in: context).setValue(200, forKey: "stars")
        #expect(throws: ContextError.self) { try context.fetch(request) }
    }

    /// Statements SQLite will not take (nested too deeply for its parser) fall back to
    /// narrowing by entity; long ORs are nested in halves so that SQLite takes them.
    @Test func statementsSQLiteRefusesFallBackToEntities() throws {
        let temp = try TemporaryStore("memory", model: ShopStore.model)
        try ShopStore.fill(temp.store)
        let context = ObjectContext(store: temp.store)
        var nested = "price > 50"
        for level in 0..<60 {
            nested = level % 2 == 0 ? "(quantity > \(level - 30) OR \(nested))" : "(price > \(-level) AND \(nested))"
        }
        let deep = try FetchRequest(entityName: "Item", predicate: nested)
        var translator = PredicateTranslator(bindings: context.bindings, unsavedTables: [])
        #expect(translator.translate(deep.predicate!, on: try context.binding("Item")).whenTrue != "1")
        #expect(try FetchPlan(deep, context: context).sqlWhere == nil)
        let expected = try Self.evaluatingEveryObject(deep, context)
        #expect(expected.count > 10 && expected.count < 72)
        #expect(Self.ids(try context.fetch(deep)) == expected)
        #expect(try context.count(deep) == expected.count)

        let long = try FetchRequest(
            entityName: "Item", predicate: (0..<3_000).map { "quantity == \($0)" }.joined(separator: " OR "))
        #expect(try FetchPlan(long, context: context).sqlWhere != nil)
        #expect(Self.ids(try context.fetch(long)) == (try Self.evaluatingEveryObject(long, context)))
    }
}
