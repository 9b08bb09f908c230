import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// To-many relationships without an inverse, kept in Core Data's hidden columns of the
/// destination's table, carried through inferred and mapped steps, as SQL and interpreted.
@Suite struct NoInverseMigrationTests {
    static let v1 = try! model(
        """
        {"version": "Shelf1", "entities": {
          "Shelf": {"attributes": {"name": "string"},
                    "relationships": {"books": {"destination": "Book", "toMany": true},
                                      "favourites": {"destination": "Book", "toMany": true, "ordered": true}}},
          "Book": {"attributes": {"title": "string"}}
        }}
        """)
    /// Adds an attribute to Book and a sub-entity of Shelf; the relationships stay.
    static let v2 = try! model(
        """
        {"version": "Shelf2", "entities": {
          "Shelf": {"attributes": {"name": "string"},
                    "relationships": {"books": {"destination": "Book", "toMany": true},
                                      "favourites": {"destination": "Book", "toMany": true, "ordered": true}}},
          "Wall": {"parent": "Shelf", "attributes": {"colour": "string"}},
          "Book": {"attributes": {"title": "string", "pages": {"type": "int32", "default": 0}}}
        }}
        """)
    /// Shelf2 without the favourites: a step whose relationships SQL can link.
    static let v2Unordered = try! model(
        """
        {"version": "Shelf2", "entities": {
          "Shelf": {"attributes": {"name": "string"},
                    "relationships": {"books": {"destination": "Book", "toMany": true}}},
          "Wall": {"parent": "Shelf", "attributes": {"colour": "string"}},
          "Book": {"attributes": {"title": "string", "pages": {"type": "int32", "default": 0}}}
        }}
        """)
    static let seed = """
        {"Book": [{"$id": "a", "title": "A"}, {"$id": "b", "title": "B"}, {"$id": "c", "title": "C"}, {"title": "loose"}],
         "Shelf": [{"name": "top", "books": [{"$ref": "a"}, {"$ref": "b"}], "favourites": [{"$ref": "c"}, {"$ref": "a"}]},
                   {"name": "bottom", "books": [{"$ref": "c"}]}]}
        """

    /// Each shelf's books (sorted) and favourites (in order), by title.
    static func shelves(at path: String, model: ObjectModel) throws -> [String] {
        let store = try Store.open(at: path, model: model, mode: .readOnly)
        let context = ObjectContext(store: store)
        func titles(_ value: Value) -> [String] {
            (value.collectionElements ?? []).map { element in
                guard case .object(let reference) = element, let book = reference.object as? ManagedObject,
                    case .string(let title) = book["title"]
                else { return "?" }
                return title
            }
        }
        return try context.fetch(FetchRequest(entityName: "Shelf")).map { shelf in
            let favourites =
                shelf.entity.relationship(named: "favourites") == nil ? "" : " \(titles(shelf["favourites"]))"
            return "\(shelf["name"].formatDescription): \(titles(shelf["books"]).sorted())\(favourites)"
        }.sorted()
    }

    static let expected = [#"bottom: ["C"] []"#, #"top: ["A", "B"] ["C", "A"]"#]

    @Test(arguments: [true, false])
    func anInferredStepKeepsTheMembers(pushdown: Bool) throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("shelf.sqlite"), destination = directory.path("shelf-2.sqlite")
        try seededStore(at: source, model: Self.v1, seed: Self.seed)
        #expect(try Self.shelves(at: source, model: Self.v1) == Self.expected)
        let manager = try MigrationManager(
            mapping: MappingModel.inferred(from: Self.v1, to: Self.v2), source: Self.v1, destination: Self.v2,
            policies: PolicyRegistry(), options: MigrationOptions(pushdown: pushdown))
        try manager.migrateStore(from: source, to: destination)
        #expect(try Self.shelves(at: destination, model: Self.v2) == Self.expected)
    }

    /// A mapping that links books through the manager's lookup, as Xcode's default
    /// relationship mappings do, into a version without the favourites: with pushdown, SQL
    /// writes the books' hidden column.
    @Test(arguments: [true, false])
    func aMappedStepLinksThroughTheLookup(pushdown: Bool) throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("shelf.sqlite"), destination = directory.path("shelf-2.sqlite")
        try seededStore(at: source, model: Self.v1, seed: Self.seed)
        let m = try mapping(
            """
            {"sourceModel": "Shelf1", "destinationModel": "Shelf2", "entityMappings": [
              {"name": "ShelfToShelf", "type": "transform", "sourceEntity": "Shelf", "destinationEntity": "Shelf",
               "attributeMappings": {"name": "$source.name"},
               "relationshipMappings": {
                 "books": "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'BookToBook', $source.books)"}},
              {"name": "BookToBook", "type": "transform", "sourceEntity": "Book", "destinationEntity": "Book",
               "attributeMappings": {"title": "$source.title", "pages": "$source.title.length"}}]}
            """)
        let manager = try MigrationManager(
            mapping: m, source: Self.v1, destination: Self.v2Unordered, policies: PolicyRegistry(),
            options: MigrationOptions(pushdown: pushdown))
        let report = try manager.migrateStore(from: source, to: destination)
        #expect(
            try Self.shelves(at: destination, model: Self.v2Unordered) == [#"bottom: ["C"]"#, #"top: ["A", "B"]"#])
        let shelf = try #require(report.entityMappings.first { $0.name == "ShelfToShelf" })
        #expect(shelf.execution?.relationshipsAsSQL == pushdown, "\(String(describing: shelf.execution))")
    }
}
