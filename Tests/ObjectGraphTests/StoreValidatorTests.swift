import ExpressionLanguage
import Foundation
import Testing
@testable import ObjectGraph

/// The validation of a whole store, as a migration runs it on its new store: every rule
/// of the model, failures in a fixed order, up to a limit.
@Suite struct StoreValidatorTests {
    /// Item: two required attributes, bounds on a number and on a string's length, a
    /// required to-one, and a to-many with a minimum (Box.items).
    static let model: ObjectModel = try! ObjectModel(
        json: JSON.parse(
            """
            {"version": "Checks1", "entities": {
              "Item": {"attributes": {"name": {"type": "string", "optional": false, "max": 5},
                                      "size": {"type": "int32", "min": 1, "max": 10},
                                      "code": {"type": "string", "optional": false}},
                       "relationships": {"box": {"destination": "Box", "inverse": "items", "optional": false}}},
              "Box": {"attributes": {"label": "string"},
                      "relationships": {"items": {"destination": "Item", "inverse": "box", "toMany": true, "minCount": 2}}}
            }}
            """))

    /// A store whose items break the rules in several ways each, written without the
    /// context's own checks (as a migration writes, validating at the end).
    static func brokenStore() throws -> TemporaryStore {
        let temporary = try TemporaryStore("memory", model: model)
        let context = ObjectContext(store: temporary.store)
        context.validatesOnSave = false
        let box = try context.insert("Box")  // Box/1 gets one item: below its minimum of 2
        let rows: [(name: Value, size: Value, code: Value, boxed: Bool)] = [
            ("ok", 5, "a", true),  // Item/1: fine
            (.null, 0, "b", false),  // Item/2: no name, size below 1, no box
            ("toolong", 11, .null, false),  // Item/3: name too long, size above 10, no code, no box
            (.null, 5, .null, false)  // Item/4: no name, no code, no box
        ]
        for row in rows {
            let item = try context.insert("Item")
            try item.setValue(row.name, forKey: "name")
            try item.setValue(row.size, forKey: "size")
            try item.setValue(row.code, forKey: "code")
            if row.boxed { try item.setValue(.object(ObjectReference(box)), forKey: "box") }
        }
        try context.save()
        return temporary
    }

    /// (object, message) of every failure of the broken store, in the order they are reported.
    static let everyFailure: [(String, String)] = [
        ("Item/2", "'name' is required but has no value"),
        ("Item/4", "'name' is required but has no value"),
        ("Item/3", "'name' has length 7, above its maximum 5"),
        ("Item/2", "'size' has value 0, below its minimum 1"),
        ("Item/3", "'size' has value 11, above its maximum 10"),
        ("Item/3", "'code' is required but has no value"),
        ("Item/4", "'code' is required but has no value"),
        ("Item/2", "'box' is required but has no destination"),
        ("Item/3", "'box' is required but has no destination"),
        ("Item/4", "'box' is required but has no destination"),
        ("Box/1", "'items' has 1 destinations; it needs at least 2 (or none, as it is optional)")
    ]

    /// Entity by entity, each entity's checks in the order of its properties, each check's
    /// failures in key order, whatever the limit: a limit keeps the first failures of that
    /// order, whichever checks they come from.
    @Test(arguments: [1, 2, 3, 6, 10, 11, 100])
    func reportsFailuresInPropertyOrderUpToTheLimit(limit: Int) throws {
        let temporary = try Self.brokenStore()
        let failures = try StoreValidator(store: temporary.store).failures(limit: limit)
        let expected = Self.everyFailure.prefix(limit)
        #expect(failures.map { $0.object ?? "" } == expected.map(\.0))
        #expect(failures.map(\.message) == expected.map(\.1))
        #expect(failures.allSatisfy { $0.kind == .validation })
    }

    @Test func aValidStoreHasNoFailures() throws {
        let temporary = try TemporaryStore("memory", model: Self.model)
        let context = ObjectContext(store: temporary.store)
        let box = try context.insert("Box")
        for i in 1...2 {
            let item = try context.insert("Item")
            try item.setValue(.string("i\(i)"), forKey: "name")
            try item.setValue(.string("c"), forKey: "code")
            try item.setValue(.object(ObjectReference(box)), forKey: "box")
        }
        try context.save()
        #expect(try StoreValidator(store: temporary.store).failures().isEmpty)
    }
}
