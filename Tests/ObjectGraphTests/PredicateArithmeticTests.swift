import ExpressionLanguage
import Foundation
import Testing

@testable import ObjectGraph

/// Comparisons of a double's arithmetic with a constant (`price * 1.03 > 50`) said in SQL:
/// on every row, SQL's two conditions agree with what the language makes of the row —
/// the row's answer holds, and a row the language reports an error on (a nil operand) is
/// one SQL leaves undecided — and SQL decides every row that holds what its types write,
/// with no nil operand and no NaN.
@Suite struct PredicateArithmeticTests {
    static let model = try! ObjectModel(
        json: JSON.parse(
            #"{"version": "A1", "entities": {"Item": {"attributes": {"price": "double", "count": "int32", "big": "int64", "ratio": "float"}}}}"#
        ))

    /// Prices with nil, zeros, infinities, extremes and fractions; counts and bigs with
    /// nil, extremes and 2^53 + 1 (no double of its own); a few rows written behind the
    /// context's back with text or a real in a number column.
    static func makeStore() throws -> Store {
        let store = try Store.create(at: ":memory:", model: model)
        let context = ObjectContext(store: store)
        let prices: [Value] = [
            .null, .double(0), .double(-0.0), .double(1.5), .double(-2.5), .double(48.6), .double(48.54368932038835),
            .double(1e308), .double(.infinity), .double(-.infinity), .double(5e-324), .double(50)
        ]
        let counts: [Value] = [.null, .integer(0), .integer(1), .integer(-7), .integer(2_147_483_647), .integer(49)]
        let bigs: [Value] = [
            .null, .integer(9_007_199_254_740_993), .integer(.max), .integer(.min), .integer(3), .integer(-1)
        ]
        for i in 0..<72 {
            let item = try context.insert("Item")
            try item.setValue(prices[i % prices.count], forKey: "price")
            try item.setValue(counts[(i / 2) % counts.count], forKey: "count")
            try item.setValue(bigs[(i / 3) % bigs.count], forKey: "big")
        }
        try context.save()
        let table = store.layout.entities["Item"]!
        let c = table.attributeColumns
        try store.database.execute(
            """
            UPDATE \(table.table) SET \(c["price"]!) = 'cheap' WHERE Z_PK = 70;
            UPDATE \(table.table) SET \(c["count"]!) = 2.5 WHERE Z_PK = 71;
            UPDATE \(table.table) SET \(c["big"]!) = '12' WHERE Z_PK = 72;
            """)
        return store
    }

    @Test(arguments: [
        "price * 1.03 > 50", "price * 1.03 <= 50", "50 < price * 1.03", "price / 2.0 == 0.75", "price - 1 != 0.5",
        "price + 0.5 BETWEEN {1, 3}", "price * 2 IN {3, 0, -5}", "-price > 0", "price * 0.0 == 0",
        "count * 1.5 > 70", "1.5 * count >= 1.5", "count + 0.5 == 49.5", "big * 1.0 == 9007199254740992",
        "big / 2.0 < 0", "(price + count) * 1.0 > 50", "price * count > 0", "price * 1.03 * 1.2 > 60",
        "price * 1.03 == 'fifty'", "price * 1.03 != 'fifty'",
        // (The rows written behind the context's back: SQLite reads 'cheap' as 0 and 2.5
        // as 2.5 in an integer column.)
        "price * 1.0 == 0", "count * 1.0 == 2.5", "big * 1.0 == 12",
        // (A division by zero is NULL in SQLite and infinity in the language: every row
        // is left to the predicate.)
        "price / 0.0 > 1"
    ])
    func sqlAgreesWithTheLanguageOnEveryRow(_ text: String) throws {
        let store = try Self.makeStore()
        let predicate = try FormatPredicate(parsing: text)
        let conditions = try #require(store.layout.rowConditions(of: predicate, on: "Item"))
        #expect(conditions.whenTrue != "1" || conditions.whenFalse != "1", "\(text) is not said in SQL")
        let statement = try store.database.prepare(
            "SELECT Z_PK, coalesce((\(conditions.whenTrue)), 0), coalesce((\(conditions.whenFalse)), 0) FROM ZITEM AS t0"
        )
        try statement.bind(upTo: conditions.parameters)
        var sql: [Int64: (Bool, Bool)] = [:]
        while try statement.step() {
            sql[statement.int64(at: 0)] = (statement.int64(at: 1) != 0, statement.int64(at: 2) != 0)
        }
        let context = ObjectContext(store: store)
        let compiled = try ExpressionCompiler(functions: context.functions).compile(predicate)
        var decided = 0
        for object in try context.fetch(FetchRequest(entityName: "Item")) {
            let key = object.objectID.primaryKey
            let (accepts, rejects) = try #require(sql[key])
            switch Result(catching: { try compiled.evaluate(with: .object(ObjectReference(object))) }) {
            case .success(true): #expect(accepts, "\(text): row \(key) is accepted, SQL says it is not")
            case .success(false): #expect(rejects, "\(text): row \(key) is rejected, SQL says it is not")
            case .failure(let error):
                #expect(accepts && rejects, "\(text): row \(key) is an error (\(error)), SQL decided it")
            }
            if accepts != rejects { decided += 1 }
        }
        // (The rows without a nil operand, a NaN or an odd storage class: most of them.)
        #expect(text.contains("/ 0.0") ? decided == 0 : decided >= 30, "\(text): SQL decided \(decided) rows of 72")
    }

    /// Integer arithmetic (which the language reports on overflow, and SQLite turns to
    /// REAL), `**`, a float (which the context rounds as it reads it) and a relationship
    /// are left to the predicate.
    @Test(arguments: ["count * 2 > 10", "big + 1 > 0", "price ** 2.0 > 10", "ratio * 1.5 > 1", "-count > 0"])
    func leavesOtherArithmeticToThePredicate(_ text: String) throws {
        let layout = StoreLayout(model: Self.model)
        let conditions = try #require(layout.rowConditions(of: try FormatPredicate(parsing: text), on: "Item"))
        #expect(conditions.whenTrue == "1" && conditions.whenFalse == "1", "\(text): \(conditions.whenTrue)")
    }
}
