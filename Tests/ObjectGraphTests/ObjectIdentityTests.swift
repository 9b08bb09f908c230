import ExpressionLanguage
import Foundation
import Testing
@testable import ObjectGraph

/// One object per row while anyone holds it; nothing kept once nobody does.
@Suite struct ObjectIdentityTests {
    @Test func aSavedObjectSomeoneHoldsIsTheOneTheContextGivesBack() throws {
        let store = try TemporaryStore("memory", model: ObjectContextTests.model)
        let context = ObjectContext(store: store.store)
        let book = try context.insert("Book")
        try book.setValue("Emma", forKey: "title")
        try context.save()
        #expect(try context.object(with: book.objectID) === book)
        let found = try context.fetch(FetchRequest(entityName: "Book", predicate: "title == 'Emma'"))
        #expect(found.count == 1 && found[0] === book)
    }

    @Test func aSavedObjectNobodyHoldsIsReleased() throws {
        let store = try TemporaryStore("memory", model: ObjectContextTests.model)
        let context = ObjectContext(store: store.store)
        weak var released: ManagedObject?
        var id: ObjectID?
        do {
            let book = try context.insert("Book")
            try book.setValue("Emma", forKey: "title")
            released = book
            id = book.objectID
        }
        #expect(released != nil, "pending objects are kept until saved")
        try context.save()
        #expect(released == nil, "a saved object nobody holds is let go")
        #expect(try context.object(with: id!)["title"] == "Emma")
    }
}

extension ObjectIdentityTests {
    /// The registry lists exactly the objects someone holds: a lookup gives the held
    /// object, an object leaves as it goes, and objects may outlive their context.
    @Test func theRegistryListsTheObjectsSomeoneHolds() throws {
        let temporary = try TemporaryStore("memory", model: ObjectContextTests.model)
        let writer = ObjectContext(store: temporary.store)
        for i in 1...3 {
            let book = try writer.insert("Book")
            try book.setValue(.string("book \(i)"), forKey: "title")
        }
        try writer.save()
        var context: ObjectContext? = ObjectContext(store: temporary.store)
        var held = try context!.fetch(FetchRequest(entityName: "Book"))
        #expect(context!.registeredObjectCount == 3)
        #expect(try context!.object(with: held[1].objectID) === held[1])
        let second = ObjectIdentifier(held[1])
        held.removeLast()
        #expect(context!.registeredObjectCount == 2, "Book/3 left as it went")
        let again = try context!.object(
            with: ObjectID(entityName: "Book", primaryKey: 3, table: held[0].objectID.table))
        #expect(again["title"] == "book 3")
        #expect(context!.registeredObjectCount == 3)
        #expect(ObjectIdentifier(try context!.object(with: held[1].objectID)) == second)
        held.removeAll()
        #expect(context!.registeredObjectCount == 1, "only the object still held, Book/3")
        context = nil
        #expect(again.managedObjectContext == nil, "an object may outlive its context")
    }

    /// Reading many objects one at a time, holding none, keeps the registry small.
    @Test func theRegistryForgetsObjectsNobodyHolds() throws {
        let temporary = try TemporaryStore("memory", model: ObjectContextTests.model)
        let writer = ObjectContext(store: temporary.store)
        let inserter = try writer.makeRowInserter(for: "Book")
        let title = try writer.attributeKey("title", of: "Book")
        for i in 0..<5_000 {
            try inserter.set(.string("book \(i)"), for: title)
            try inserter.insert()
        }
        try writer.save()
        let context = ObjectContext(store: temporary.store)
        for key in 1...5_000 {
            _ = try context.object(with: context.objectID(entityName: "Book", primaryKey: Int64(key)))["title"]
        }
        #expect(
            context.registeredObjectCount < 2_100,
            "the registry holds \(context.registeredObjectCount) entries for no live object")
    }
}
