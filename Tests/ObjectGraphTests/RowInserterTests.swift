import ExpressionLanguage
import Foundation
import Testing
@testable import ObjectGraph

/// Rows written without objects: keys shared with inserted objects, visible at once,
/// committed by the next save.
@Suite struct RowInserterTests {
    @Test func rowsAndObjectsShareKeysAndASave() throws {
        let temporary = try TemporaryStore("disk", model: ObjectContextTests.model)
        let context = ObjectContext(store: temporary.store)
        let inserter = try context.makeRowInserter(for: "Book")
        let title = try context.attributeKey("title", of: "Book")
        let pages = try context.attributeKey("pages", of: "Book")
        try inserter.set("Emma", for: title)
        try inserter.set(.integer(474), for: pages)
        let first = try inserter.insert()
        let object = try context.insert("Book")
        try object.setValue("Persuasion", forKey: "title")
        try inserter.set("Sanditon", for: title)
        let second = try inserter.insert()
        #expect([first.primaryKey, object.objectID.primaryKey, second.primaryKey] == [1, 2, 3])
        // Seen by fetches before the save, as the database sees them.
        #expect(try context.count(FetchRequest(entityName: "Book")) == 3)
        #expect(throws: ContextError.self) {
            try inserter.set("x", for: try context.attributeKey("name", of: "Author"))
        }
        #expect(throws: ContextError.self) { try inserter.set("many", for: pages) }
        try context.save()

        let reopened = ObjectContext(store: try temporary.reopened())
        var request = FetchRequest(entityName: "Book")
        request.sortDescriptors = [SortDescriptor("title")]
        #expect(try reopened.fetch(request).map { $0["title"] } == ["Emma", "Persuasion", "Sanditon"])
        #expect(try reopened.object(with: first)["pages"] == .integer(474))
        #expect(try reopened.object(with: second)["pages"] == .null, "each row starts from the defaults")
        #expect(try reopened.database.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book'") == .integer(3))
        #expect(try reopened.insert("Book").objectID.primaryKey == 4)
    }

    @Test func rowsNotSavedAreRolledBack() throws {
        let temporary = try TemporaryStore("disk", model: ObjectContextTests.model)
        do {
            let context = ObjectContext(store: try temporary.reopened())
            let inserter = try context.makeRowInserter(for: "Book")
            try inserter.set("Lost", for: try context.attributeKey("title", of: "Book"))
            try inserter.insert()
        }
        let context = ObjectContext(store: try temporary.reopened())
        #expect(try context.count(FetchRequest(entityName: "Book")) == 0)
    }
}
