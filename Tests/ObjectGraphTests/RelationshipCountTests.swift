import ExpressionLanguage
import Foundation
import Testing
@testable import ObjectGraph

/// To-many relationships' minimum and maximum counts, and non-optional to-many
/// relationships, checked when saving, as Core Data validates them.
@Suite struct RelationshipCountTests {
    /// Shelf.books: optional, 2 to 3 books (one-to-many). Tag.books: required, at least 1
    /// (many-to-many with Book.tags, at most 2). Novel is a sub-entity of Book.
    static let model: ObjectModel = try! ObjectModel(
        json: JSON.parse(
            """
            {"version": "Counts1", "entities": {
              "Shelf": {"attributes": {"name": "string"},
                        "relationships": {"books": {"destination": "Book", "inverse": "shelf", "toMany": true, "minCount": 2, "maxCount": 3}}},
              "Book": {"attributes": {"title": "string"},
                       "relationships": {"shelf": {"destination": "Shelf", "inverse": "books"},
                                         "tags": {"destination": "Tag", "inverse": "books", "toMany": true, "maxCount": 2}}},
              "Novel": {"parent": "Book", "attributes": {"genre": "string"}},
              "Tag": {"attributes": {"name": "string"},
                      "relationships": {"books": {"destination": "Book", "inverse": "tags", "toMany": true, "optional": false, "minCount": 1}}}
            }}
            """))

    /// The objects as a value a to-many relationship takes.
    static func set(_ objects: [ManagedObject]) -> Value {
        .array(objects.map { .object(ObjectReference($0)) })
    }

    /// The message of the error `save()` throws, or nil when it saves.
    static func saveError(_ context: ObjectContext) -> String? {
        do {
            try context.save()
            return nil
        } catch {
            #expect(error.kind == .validation)
            #expect(context.hasChanges, "a failed save keeps the changes")
            return error.description
        }
    }

    @Test(arguments: ["memory", "disk"])
    func countsOfAnOptionalOneToMany(place: String) throws {
        let temp = try TemporaryStore(place, model: Self.model)
        let context = ObjectContext(store: temp.store)
        let shelf = try context.insert("Shelf")
        #expect(Self.saveError(context) == nil, "an optional relationship may be empty, whatever its minimum")
        let books = try (0..<4).map { _ in try context.insert("Book") }
        try shelf.setValue(Self.set([books[0]]), forKey: "books")
        #expect(
            Self.saveError(context)
                == "Shelf/1 .books: 'books' has 1 object; it needs at least 2 (or none, as it is optional)")
        try shelf.setValue(Self.set(books), forKey: "books")
        #expect(Self.saveError(context) == "Shelf/1 .books: 'books' has 4 objects; it allows at most 3")
        try books[3].setValue(.null, forKey: "shelf")
        #expect(Self.saveError(context) == nil)
        #expect(try temp.store.database.scalar("SELECT count(*) FROM ZBOOK WHERE ZSHELF = 1") == .integer(3))

        // Changes elsewhere that leave the shelf with too few books: moving books away,
        // deleting them. The shelf itself is unchanged, and still checked.
        let context2 = ObjectContext(store: place == "disk" ? try temp.reopened() : temp.store)
        let other = try context2.insert("Shelf")
        let saved = try context2.fetch(FetchRequest(entityName: "Book", predicate: "shelf != nil"))
        try saved[0].setValue(.object(ObjectReference(other)), forKey: "shelf")
        try saved[1].setValue(.object(ObjectReference(other)), forKey: "shelf")
        #expect(
            Self.saveError(context2)
                == "Shelf/1 .books: 'books' has 1 object; it needs at least 2 (or none, as it is optional)")
        try context2.delete(saved[2])
        #expect(Self.saveError(context2) == nil, "the shelf is empty now, and may be")
        let context3 = ObjectContext(store: temp.store)
        let shelves = try context3.fetch(FetchRequest(entityName: "Shelf", predicate: "books.@count == 2"))
        #expect(shelves.map(\.objectID.description) == ["Shelf/2"])
        let book = try #require(shelves.first?["books"].collectionElements?.first)
        guard case .object(let reference) = book, let first = reference.object as? ManagedObject else {
            Issue.record("not an object"); return
        }
        try context3.delete(first)
        #expect(
            Self.saveError(context3)
                == "Shelf/2 .books: 'books' has 1 object; it needs at least 2 (or none, as it is optional)")
        // Deleting the owner too: nothing is left to check.
        try context3.delete(shelves[0])
        #expect(Self.saveError(context3) == nil)
    }

    @Test(arguments: ["memory", "disk"])
    func countsOfManyToMany(place: String) throws {
        let temp = try TemporaryStore(place, model: Self.model)
        let context = ObjectContext(store: temp.store)
        let tag = try context.insert("Tag")
        try tag.setValue("classic", forKey: "name")
        #expect(Self.saveError(context) == "Tag/1 .books: 'books' is required: it needs at least 1 object and has none")
        let book = try context.insert("Book")
        try book.setValue(Self.set([tag]), forKey: "tags")
        #expect(Self.saveError(context) == nil)

        // The book lets go of the tag: the tag, not changed itself, is left with none.
        let context2 = ObjectContext(store: place == "disk" ? try temp.reopened() : temp.store)
        let savedBook = try #require(try context2.fetch(FetchRequest(entityName: "Book")).first)
        try savedBook.setValue(.set([]), forKey: "tags")
        #expect(
            Self.saveError(context2) == "Tag/1 .books: 'books' is required: it needs at least 1 object and has none")
        // Deleting the book removes its join rows: the same.
        let context3 = ObjectContext(store: temp.store)
        try context3.delete(try #require(try context3.fetch(FetchRequest(entityName: "Book")).first))
        #expect(
            Self.saveError(context3) == "Tag/1 .books: 'books' is required: it needs at least 1 object and has none")

        // The maximum, on an object of a sub-entity: the error names it as what it is.
        let context4 = ObjectContext(store: temp.store)
        let novel = try context4.insert("Novel")
        var tags = [try #require(try context4.fetch(FetchRequest(entityName: "Tag")).first)]
        for name in ["gothic", "epistolary"] {
            let t = try context4.insert("Tag")
            try t.setValue(.string(name), forKey: "name")
            tags.append(t)
        }
        try novel.setValue(Self.set(tags), forKey: "tags")
        #expect(Self.saveError(context4) == "Novel/2 .tags: 'tags' has 3 objects; it allows at most 2")
        try novel.setValue(Self.set(Array(tags.prefix(2))), forKey: "tags")
        #expect(
            Self.saveError(context4) == "Tag/3 .books: 'books' is required: it needs at least 1 object and has none")
        try context4.delete(tags[2])
        #expect(Self.saveError(context4) == nil)
        #expect(try temp.store.database.scalar("SELECT count(*) FROM Z_1TAGS") == .integer(3))
    }

    @Test(
        arguments: [
            (0, true, 2, 3, nil),
            (1, true, 2, 0, "'r' has 1 object; it needs at least 2 (or none, as it is optional)"),
            // Required without a minimum: may be empty, as in Core Data.
            (0, false, 0, 0, nil),
            (0, false, 1, 0, "'r' is required: it needs at least 1 object and has none"),
            (0, false, 3, 0, "'r' is required: it needs at least 3 objects and has none"),
            (2, false, 3, 0, "'r' has 2 objects; it needs at least 3"),
            (1, false, 0, 0, nil),
            (4, true, 0, 3, "'r' has 4 objects; it allows at most 3"),
            (3, false, 1, 3, nil)
        ] as [(Int, Bool, Int, Int, String?)])
    func countProblems(count: Int, optional: Bool, minCount: Int, maxCount: Int, message: String?) {
        var relationship = RelationshipDescription(name: "r", destination: "D", isToMany: true)
        relationship.isOptional = optional
        relationship.minCount = minCount
        relationship.maxCount = maxCount
        #expect(ObjectContext.countProblem(count, relationship) == message)
    }
}
