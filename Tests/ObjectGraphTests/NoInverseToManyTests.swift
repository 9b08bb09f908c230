import ExpressionLanguage
import Foundation
import Testing
@testable import ObjectGraph

/// A to-many relationship without an inverse, stored as Core Data stores it: no join table,
/// but hidden columns in the destination's table that hold the owner's key (`Z<n><NAME>`),
/// its `Z_ENT` when the owner has sub-entities, and the position when the relationship is
/// ordered (`Z_FOK_<n><NAME>`).
@Suite struct NoInverseToManyTests {
    /// Folder(1).items and Folder(1).pinned (ordered) point at Item(3), and Folder.children
    /// at Folder itself, none with an inverse; SmartFolder(2) is a sub-entity of Folder.
    static let model: ObjectModel = try! ObjectModel(
        json: JSON.parse(
            """
            {"version": "Folders1", "entities": {
              "Folder": {"attributes": {"name": "string"},
                         "relationships": {"items": {"destination": "Item", "toMany": true, "maxCount": 3},
                                           "pinned": {"destination": "Item", "toMany": true, "ordered": true},
                                           "children": {"destination": "Folder", "toMany": true}}},
              "SmartFolder": {"parent": "Folder", "attributes": {"query": "string"}},
              "Item": {"attributes": {"title": "string"}}
            }}
            """))

    static func objects(_ objects: [ManagedObject]) -> Value {
        .array(objects.map { .object(ObjectReference($0)) })
    }

    /// The `key` of each object in `value`, sorted unless the value is an array of an
    /// ordered relationship (`sorted: false`).
    static func names(_ value: Value, _ key: String = "title", sorted: Bool = true) -> [String] {
        let names = (value.collectionElements ?? []).map { element -> String in
            guard case .object(let reference) = element, let object = reference.object as? ManagedObject,
                case .string(let name) = object[key]
            else { return "?" }
            return name
        }
        return sorted ? names.sorted() : names
    }

    static func rows(_ store: Store, _ sql: String) throws -> [String] { try store.database.rows(sql) }

    static func find(_ context: ObjectContext, _ entity: String, _ key: String, _ name: String) throws -> ManagedObject
    {
        try #require(
            try context.fetch(FetchRequest(entityName: entity, predicate: "\(key) == %@", arguments: [.string(name)]))
                .first)
    }

    @Test func layoutHasHiddenColumnsAndNoJoinTables() throws {
        let layout = StoreLayout(model: Self.model)
        #expect(layout.joinTables.isEmpty)
        let item = try #require(layout.tables["ZITEM"]).columns.map(\.name)
        #expect(
            item == [
                "Z_PK", "Z_ENT", "Z_OPT", "Z1ITEMS", "Z1_1ITEMS", "Z1PINNED", "Z1_1PINNED", "Z_FOK_1PINNED", "ZTITLE"
            ])
        let folder = try #require(layout.tables["ZFOLDER"]).columns.map(\.name)
        #expect(folder == ["Z_PK", "Z_ENT", "Z_OPT", "Z1CHILDREN", "Z1_1CHILDREN", "ZNAME", "ZQUERY"])
        #expect(layout.tables["ZITEM"]?.indexes.map(\.name) == ["ZITEM_Z1ITEMS_INDEX", "ZITEM_Z1PINNED_INDEX"])
        // The sub-entity inherits the relationships, held by the same columns.
        #expect(layout.entities["SmartFolder"]?.toManyInverses["items"] == "Folder.items")
        #expect(
            layout.entities["Item"]?.toOneColumns["Folder.pinned"]
                == .init(key: "Z1PINNED", entity: "Z1_1PINNED", order: "Z_FOK_1PINNED"))
        #expect(layout.entities["Item"]?.hiddenToOnes.map(\.name) == ["Folder.items", "Folder.pinned"])
    }

    @Test(arguments: [":memory:", "disk"])
    func membersAreSavedInTheDestinationsRows(where place: String) throws {
        let temp = try TemporaryStore(place, model: Self.model)
        let context = ObjectContext(store: temp.store)
        let inbox = try context.insert("Folder")
        try inbox.setValue("Inbox", forKey: "name")
        let smart = try context.insert("SmartFolder")
        try smart.setValue("Recent", forKey: "name")
        let items = try ["a", "b", "c", "d"].map { title in
            let item = try context.insert("Item")
            try item.setValue(.string(title), forKey: "title")
            return item
        }
        try inbox.setValue(Self.objects([items[0], items[1]]), forKey: "items")
        try smart.setValue(Self.objects([items[2]]), forKey: "items")
        try smart.setValue(Self.objects([items[3], items[0]]), forKey: "pinned")
        try inbox.setValue(Self.objects([smart]), forKey: "children")
        #expect(Self.names(inbox["items"]) == ["a", "b"])
        try context.save()

        // Each item holds its folder's key, and the folder's Z_ENT (Folder 1, SmartFolder 2).
        #expect(
            try Self.rows(
                temp.store, "SELECT ZTITLE, Z1ITEMS, Z1_1ITEMS, Z1PINNED, Z_FOK_1PINNED FROM ZITEM ORDER BY ZTITLE")
                == ["a 1 1 2 2", "b 1 1 nil nil", "c 2 2 nil nil", "d nil nil 2 1"])
        #expect(
            try Self.rows(temp.store, "SELECT ZNAME, Z1CHILDREN, Z1_1CHILDREN FROM ZFOLDER ORDER BY Z_PK") == [
                "Inbox nil nil", "Recent 1 1"
            ])

        let reread = ObjectContext(store: place == "disk" ? try temp.reopened() : temp.store)
        let inbox2 = try Self.find(reread, "Folder", "name", "Inbox")
        let smart2 = try Self.find(reread, "Folder", "name", "Recent")
        #expect(smart2.entity.name == "SmartFolder")
        #expect(Self.names(inbox2["items"]) == ["a", "b"])
        #expect(Self.names(smart2["items"]) == ["c"])
        #expect(Self.names(smart2["pinned"], sorted: false) == ["d", "a"])
        #expect(Self.names(inbox2["children"], "name") == ["Recent"])
        #expect(Self.names(smart2["children"], "name") == [])
    }

    /// The destination's column holds one owner: an item put in a second folder's items
    /// leaves the first (Core Data stores the relationship so, and behaves so).
    @Test func anItemBelongsToOneFolderPerRelationship() throws {
        let temp = try TemporaryStore(":memory:", model: Self.model)
        let context = ObjectContext(store: temp.store)
        let first = try context.insert("Folder")
        try first.setValue("first", forKey: "name")
        let second = try context.insert("Folder")
        try second.setValue("second", forKey: "name")
        let item = try context.insert("Item")
        try item.setValue("x", forKey: "title")
        try first.setValue(Self.objects([item]), forKey: "items")
        try context.save()
        try second.setValue(Self.objects([item]), forKey: "items")
        #expect(Self.names(first["items"]) == [])
        #expect(Self.names(second["items"]) == ["x"])
        // Pinned is another relationship, with columns of its own.
        try first.setValue(Self.objects([item]), forKey: "pinned")
        try context.save()
        #expect(try Self.rows(temp.store, "SELECT Z1ITEMS, Z1PINNED FROM ZITEM") == ["2 1"])
    }

    @Test func deletingTheOwnerNullifiesItsMembersColumns() throws {
        let temp = try TemporaryStore(":memory:", model: Self.model)
        let context = ObjectContext(store: temp.store)
        let folder = try context.insert("Folder")
        let item = try context.insert("Item")
        try item.setValue("kept", forKey: "title")
        try folder.setValue(Self.objects([item]), forKey: "items")
        try context.save()
        try context.delete(folder)
        try context.save()
        #expect(try Self.rows(temp.store, "SELECT ZTITLE, Z1ITEMS, Z1_1ITEMS FROM ZITEM") == ["kept nil nil"])
        #expect(try context.count(FetchRequest(entityName: "Folder")) == 0)
    }

    @Test func predicatesAndCountsFollowTheHiddenColumn() throws {
        let temp = try TemporaryStore(":memory:", model: Self.model)
        let context = ObjectContext(store: temp.store)
        for (name, titles) in [("one", ["a"]), ("two", ["b", "c"]), ("none", [])] {
            let folder = try context.insert("Folder")
            try folder.setValue(.string(name), forKey: "name")
            let items = try titles.map { title in
                let item = try context.insert("Item")
                try item.setValue(.string(title), forKey: "title")
                return item
            }
            try folder.setValue(Self.objects(items), forKey: "items")
        }
        try context.save()
        let fresh = ObjectContext(store: temp.store)
        func names(_ predicate: String) throws -> [String] {
            try Self.names(Self.objects(fresh.fetch(FetchRequest(entityName: "Folder", predicate: predicate))), "name")
        }
        #expect(try names("ANY items.title == 'c'") == ["two"])
        #expect(try names("items.@count == 0") == ["none"])
        #expect(try names("SUBQUERY(items, $i, $i.title BEGINSWITH 'b').@count > 0") == ["two"])
        // The maximum count (3) is checked through the same column.
        let two = try Self.find(fresh, "Folder", "name", "two")
        let members = try ["b", "c"].map { try Self.find(fresh, "Item", "title", $0) }
        let more = try (0..<2).map { _ in try fresh.insert("Item") }
        try two.setValue(Self.objects(members + more), forKey: "items")
        #expect(throws: ContextError.self) { try fresh.save() }
    }

    /// The hidden to-one is no property: its name is no key.
    @Test func theHiddenToOneIsNoKey() throws {
        let temp = try TemporaryStore(":memory:", model: Self.model)
        let context = ObjectContext(store: temp.store)
        let item = try context.insert("Item")
        let error = try #require(throws: ContextError.self) { try item.setValue(.null, forKey: "Folder.items") }
        #expect(error.kind == .unknownKey)
        #expect(throws: (any Error).self) { try item.value(forKey: "Folder.items") }
    }
}
