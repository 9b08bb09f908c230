import ExpressionLanguage
import Foundation
import Testing
import TestSupport
@testable import ObjectGraph

/// Stores in both of SQLite's journal modes that Core Data uses: the rollback journal
/// (`DELETE`, stores of older systems such as the fixture) and the write-ahead log (`WAL`,
/// Core Data's default since iOS 7). Stores are created, saved, reopened and read in each;
/// opening and reading never changes the file nor leaves a side file behind.
@Suite struct JournalModeTests {
    static let model: ObjectModel = try! ObjectModel(
        json: JSON.parse(
            """
            {"version": "Journal1", "entities": {
              "Book": {"attributes": {"title": "string", "cover": "binary"},
                       "relationships": {"user": {"destination": "User", "inverse": "books"},
                                         "tags": {"destination": "Tag", "inverse": "books", "toMany": true}}},
              "User": {"attributes": {"userId": "int32"},
                       "relationships": {"books": {"destination": "Book", "inverse": "user", "toMany": true}}},
              "Tag": {"attributes": {"name": "string"},
                      "relationships": {"books": {"destination": "Book", "inverse": "tags", "toMany": true}}}
            }}
            """))

    /// A scratch folder, removed when released.
    final class Folder {
        let url: URL
        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
        var path: String { url.appendingPathComponent("Library.sqlite").path }
        /// The names in the folder, sorted.
        var contents: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted() }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    /// Fills a new store: 2 users, 3 books with covers, 2 tags.
    static func fill(_ store: Store) throws {
        let context = ObjectContext(store: store)
        let ada = try context.insert("User"), alan = try context.insert("User")
        try ada.setValue(1, forKey: "userId")
        try alan.setValue(2, forKey: "userId")
        let fiction = try context.insert("Tag"), classic = try context.insert("Tag")
        try fiction.setValue("fiction", forKey: "name")
        try classic.setValue("classic", forKey: "name")
        for (i, title) in ["Dune", "Emma", "Ulysses"].enumerated() {
            let book = try context.insert("Book")
            try book.setValue(.string(title), forKey: "title")
            try book.setValue(.data(Data(repeating: UInt8(i), count: 10_000)), forKey: "cover")
            try book.setValue(.object(ObjectReference(i == 0 ? ada : alan)), forKey: "user")
            try book.setValue(
                .set(
                    i == 0
                        ? [.object(ObjectReference(fiction))]
                        : [.object(ObjectReference(fiction)), .object(ObjectReference(classic))]), forKey: "tags")
        }
        try context.save()
    }

    /// Reads everything there is to read in `store`, the way a migration's source is read.
    static func readAll(_ store: Store) throws -> [String] {
        let context = ObjectContext(store: store)
        var request = FetchRequest(entityName: "Book")
        request.sortDescriptors = [SortDescriptor("title")]
        var seen: [String] = []
        for book in try context.fetch(request) {
            let cover = try #require(book["cover"].dataValue)
            let tags = try #require(book["tags"].collectionElements).count
            guard case .object(let user) = book["user"], let owner = user.object as? ManagedObject else { continue }
            seen.append(
                "\(book["title"].stringValue ?? "?") \(owner["userId"].json.serialized()) \(tags) \(cover.count)")
        }
        let cursor = try context.makeCursor(try FetchRequest(entityName: "User", predicate: "books.@count > 0"))
        while let user = try cursor.next() { seen.append("user \(user["userId"].json.serialized())") }
        seen.append("tags \(try context.count(FetchRequest(entityName: "Tag")))")
        return seen
    }

    static let expected = ["Dune 1 1 10000", "Emma 2 2 10000", "Ulysses 2 2 10000", "user 1", "user 2", "tags 2"]

    @Test(arguments: JournalMode.allCases)
    func storesWorkInEachJournalMode(_ mode: JournalMode) throws {
        let folder = try Folder()
        do {
            let store = try Store.create(at: folder.path, model: Self.model, journalMode: mode)
            #expect(try store.database.journalMode() == mode)
            try Self.fill(store)
            #expect(try Self.readAll(store) == Self.expected)
        }
        // Closed: no side file is left, and the mode is the file's (WAL is kept in its header).
        #expect(folder.contents == ["Library.sqlite"])
        let header = try Data(contentsOf: URL(fileURLWithPath: folder.path)).prefix(20)
        #expect(Array(header[18...19]) == (mode == .wal ? [2, 2] : [1, 1]))

        do {
            let store = try Store.open(at: folder.path, model: Self.model)
            #expect(try store.database.journalMode() == mode, "reopening keeps the mode")
            #expect(try Self.readAll(store) == Self.expected)
            let context = ObjectContext(store: store)
            let user = try context.insert("User")
            try user.setValue(3, forKey: "userId")
            let book = try #require(
                try context.fetch(FetchRequest(entityName: "Book", predicate: "title == 'Emma'")).first)
            try book.setValue(.object(ObjectReference(user)), forKey: "user")
            try context.save()
        }
        #expect(folder.contents == ["Library.sqlite"])
        do {
            let store = try Store.open(at: folder.path, model: Self.model, mode: .readOnly)
            #expect(try store.database.journalMode() == mode)
            #expect(
                try Self.readAll(store) == [
                    "Dune 1 1 10000", "Emma 3 2 10000", "Ulysses 2 2 10000", "user 1", "user 2", "user 3", "tags 2"
                ])
        }
        #expect(folder.contents == ["Library.sqlite"])
    }

    @Test(arguments: JournalMode.allCases, [Database.Mode.readOnly, .readWrite])
    func openingAndReadingNeverChangesTheFile(_ journal: JournalMode, _ mode: Database.Mode) throws {
        let folder = try Folder()
        do { try Self.fill(try Store.create(at: folder.path, model: Self.model, journalMode: journal)) }
        let before = try Data(contentsOf: URL(fileURLWithPath: folder.path))
        let modified = try FileManager.default.attributesOfItem(atPath: folder.path)[.modificationDate] as? Date
        do {
            #expect(try StoreMatcher.identify(storeAt: folder.path, among: [Self.model]).version == "Journal1")
            #expect(try Store.metadata(at: folder.path).versionHashes == Self.model.appleVersionHashes)
            let store = try Store.open(at: folder.path, model: Self.model, mode: mode)
            #expect(try Self.readAll(store) == Self.expected)
            if mode == .readOnly {
                #expect(folder.contents == ["Library.sqlite"], "a read-only open makes no side file, even while open")
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.path)) == before)
        #expect(try FileManager.default.attributesOfItem(atPath: folder.path)[.modificationDate] as? Date == modified)
        #expect(folder.contents == ["Library.sqlite"])
    }

    /// Read as immutable through a `file:` URI: characters URIs reserve are escaped.
    @Test func readOnlyOpenOfAnOddlyNamedWALStore() throws {
        let folder = try Folder()
        let odd = folder.url.appendingPathComponent("Bücher 100% #1?.sqlite").path
        do { try Self.fill(try Store.create(at: odd, model: Self.model, journalMode: .wal)) }
        #expect(Database.immutableURI("/a b/ü%?#.sqlite") == "file:/a b/%C3%BC%25%3F%23.sqlite?immutable=1")
        do {
            let store = try Store.open(at: odd, model: Self.model, mode: .readOnly)
            #expect(store.database.isImmutable)
            #expect(try Self.readAll(store) == Self.expected)
        }
        #expect(folder.contents == ["Bücher 100% #1?.sqlite"])
    }

    /// A store another connection is writing (its WAL holds committed changes not yet
    /// checkpointed): a read-only open sees them, and leaves the writer's files alone.
    @Test func readOnlyOpenSeesAWritersLog() throws {
        let folder = try Folder()
        let writer = try Store.create(at: folder.path, model: Self.model, journalMode: .wal)
        try Self.fill(writer)
        #expect(folder.contents == ["Library.sqlite", "Library.sqlite-shm", "Library.sqlite-wal"])
        do {
            let reader = try Store.open(at: folder.path, model: Self.model, mode: .readOnly)
            #expect(try Self.readAll(reader) == Self.expected)
            // The reader's view stays consistent while the writer goes on.
            let context = ObjectContext(store: writer)
            try context.insert("Tag").setValue("new", forKey: "name")
            try context.save()
            #expect(try ObjectContext(store: reader).count(FetchRequest(entityName: "Tag")) == 3)
        }
        #expect(folder.contents == ["Library.sqlite", "Library.sqlite-shm", "Library.sqlite-wal"])
        #expect(try ObjectContext(store: writer).count(FetchRequest(entityName: "Tag")) == 3)
    }

    /// The store written by Apple's Core Data (rollback journal), copied, opened both ways.
    @Test(arguments: [Database.Mode.readOnly, .readWrite])
    func anAppleStoreIsLeftAsItWas(_ mode: Database.Mode) throws {
        try SharedFixtures.require()
        let fixture = SharedFixtures.bookMigration
        let model = try XcodeModelImporter.importModel(
            at: fixture.appendingPathComponent("Model.xcdatamodeld/Model1.xcdatamodel"))
        let folder = try Folder()
        try FileManager.default.copyItem(
            atPath: fixture.appendingPathComponent("Model1.sqlite").path, toPath: folder.path)
        let before = try Data(contentsOf: URL(fileURLWithPath: folder.path))
        do {
            let store = try Store.open(at: folder.path, model: model, mode: mode)
            #expect(try store.database.journalMode() == .delete)
            let context = ObjectContext(store: store)
            #expect(
                try context.fetch(FetchRequest(entityName: "Book")).compactMap { $0["fileURL"].dataValue?.count }
                    .sorted() == [149, 152, 155, 158])
            #expect(try context.count(FetchRequest(entityName: "User", predicate: "books.@count > 0")) == 1)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.path)) == before)
        #expect(folder.contents == ["Library.sqlite"])
    }
}

extension Value {
    fileprivate var dataValue: Data? { if case .data(let d) = self { d } else { nil } }
    fileprivate var stringValue: String? { if case .string(let s) = self { s } else { nil } }
}
