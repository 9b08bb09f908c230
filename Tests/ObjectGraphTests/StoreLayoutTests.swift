import ExpressionLanguage
import Foundation
import Testing
import TestSupport
@testable import ObjectGraph

@Suite struct StoreLayoutTests {
    static let model: ObjectModel = try! ObjectModel(
        json: JSON.parse(
            """
            {"version": "Library1", "entities": {
              "Item": {"abstract": true, "attributes": {"name": "string"},
                       "relationships": {"shelf": {"destination": "Shelf", "inverse": "items"}}},
              "Book": {"parent": "Item", "attributes": {"pages": "int32", "price": "double", "published": "date", "cover": "binary"},
                       "relationships": {"authors": {"destination": "Author", "inverse": "books", "toMany": true}}},
              "Magazine": {"parent": "Item", "attributes": {"issue": "int16", "name2": "string"}},
              "Shelf": {"relationships": {"items": {"destination": "Item", "inverse": "shelf", "toMany": true}}},
              "Author": {"attributes": {"name": "string"},
                         "relationships": {"books": {"destination": "Book", "inverse": "authors", "toMany": true},
                                           "favourite": {"destination": "Item"}}}
            }}
            """))

    @Test func createStatementsArePinned() throws {
        try Self.model.validate()
        let layout = StoreLayout(model: Self.model)
        #expect(
            layout.createStatements == [
                "CREATE TABLE ZAUTHOR ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZFAVOURITE INTEGER, Z2_FAVOURITE INTEGER, ZNAME VARCHAR )",
                "CREATE INDEX ZAUTHOR_ZFAVOURITE_INDEX ON ZAUTHOR (ZFAVOURITE)",
                "CREATE TABLE ZITEM ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZSHELF INTEGER, ZNAME VARCHAR, ZPAGES INTEGER, ZPRICE FLOAT, ZPUBLISHED TIMESTAMP, ZCOVER BLOB, ZISSUE INTEGER, ZNAME2 VARCHAR )",
                "CREATE INDEX ZITEM_ZSHELF_INDEX ON ZITEM (ZSHELF)",
                "CREATE TABLE ZSHELF ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER )",
                "CREATE TABLE Z_1BOOKS ( Z_1AUTHORS INTEGER, Z_3BOOKS INTEGER, PRIMARY KEY (Z_1AUTHORS, Z_3BOOKS) )",
                "CREATE INDEX Z_1BOOKS_Z_3BOOKS_INDEX ON Z_1BOOKS (Z_3BOOKS, Z_1AUTHORS)",
                "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
                "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
                "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)"
            ])
        let book = try #require(layout.entities["Book"])
        // Core Data numbers a sub-entity right after its parent: Author 1, Item 2, Book 3, Magazine 4, Shelf 5.
        #expect(book.number == 3 && book.superNumber == 2 && book.table == "ZITEM" && book.numbers == [3])
        #expect(layout.entities["Item"]?.numbers == [2, 3, 4])
        #expect(
            book.attributeColumns == [
                "name": "ZNAME", "pages": "ZPAGES", "price": "ZPRICE", "published": "ZPUBLISHED", "cover": "ZCOVER"
            ])
        #expect(book.toOneColumns["shelf"] == StoreLayout.ToOneColumns(key: "ZSHELF", entity: nil))
        // The destination's Z_ENT goes in a column named for the destination's number (Item
        // is 2), as in Apple-written stores (CoreDataPlus's ZPAGE.Z1_BOOK, Book being 1).
        #expect(
            layout.entities["Author"]?.toOneColumns["favourite"]
                == StoreLayout.ToOneColumns(key: "ZFAVOURITE", entity: "Z2_FAVOURITE"))
        #expect(
            book.joinTables["authors"]
                == .init(table: "Z_1BOOKS", sourceColumn: "Z_3BOOKS", destinationColumn: "Z_1AUTHORS", orderColumn: nil)
        )
        #expect(
            layout.entities["Author"]?.joinTables["books"]
                == .init(table: "Z_1BOOKS", sourceColumn: "Z_1AUTHORS", destinationColumn: "Z_3BOOKS", orderColumn: nil)
        )
    }

    @Test(arguments: [":memory:", "disk"])
    func createAndReopen(where place: String) throws {
        let path =
            place == "disk"
            ? FileManager.default.temporaryDirectory.appendingPathComponent("layout-\(UUID()).sqlite").path : ":memory:"
        defer { if place == "disk" { try? FileManager.default.removeItem(atPath: path) } }
        let store = try Store.create(at: path, model: Self.model)
        #expect(store.metadata.remodelVersion == "Library1")
        let rows = try store.database.prepare("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        var found: [String] = []
        while try rows.step() {
            found.append("\(rows.int64(at: 0)) \(rows.string(at: 1)!) \(rows.int64(at: 2)) \(rows.int64(at: 3))")
        }
        #expect(found == ["1 Author 0 0", "2 Item 0 0", "3 Book 2 0", "4 Magazine 2 0", "5 Shelf 0 0"])
        guard place == "disk" else { return }
        let metadata = try Store.metadata(at: path)
        #expect(metadata == store.metadata)
        #expect(metadata.versionHashes == Self.model.appleVersionHashes)
        #expect(metadata.versionHashesDigest == Self.model.appleStoreDigest)
        #expect(metadata.versionChecksum == Self.model.appleVersionChecksum)
        let reopened = try Store.open(at: path, model: Self.model, mode: .readOnly)
        #expect(reopened.metadata.uuid == store.metadata.uuid)
        #expect(try StoreMatcher.identify(storeAt: path, among: [Self.model]).version == "Library1")
    }

    /// Stores written by earlier Remodel versions carry Remodel's own hashes: still told.
    @Test func storesWithEarlierRemodelHashes() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("earlier-\(UUID()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try Store.create(at: path, model: Self.model)
        var metadata = store.metadata
        metadata.versionHashes = Self.model.entityVersionHashes
        metadata.versionHashesDigest = nil
        try store.setMetadata(metadata)
        let found = try StoreMatcher.identification(storeAt: path, among: [Self.model])
        #expect(found.model.version == "Library1")
        #expect(found.method == .remodelHashes)
        #expect(try Store.metadata(at: path) == metadata)
    }

    @Test func createRefusesAnExistingFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("exists-\(UUID()).sqlite").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = #expect(throws: StoreError.self) { try Store.create(at: path, model: Self.model) }
        #expect(error?.description == "\(path): a file already exists here; a new store needs a new file")
    }

    @Test func identifiesAppleStoresBySchema() throws {
        try SharedFixtures.require()
        let fixture = SharedFixtures.bookMigration
        let (versions, _) = try XcodeModelImporter.importVersions(
            at: fixture.appendingPathComponent("Model.xcdatamodeld"))
        let store = fixture.appendingPathComponent("Model1.sqlite").path
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        #expect(try StoreMatcher.identify(storeAt: store, among: versions).version == "Model1")
        let metadata = try Store.metadata(at: store)
        #expect(metadata.remodelVersion == nil)
        #expect(Set(metadata.versionHashes.keys) == ["Book", "User"])
        #expect(metadata.versionHashes.values.allSatisfy { $0.count == 32 })
        // Apple's hash bytes are not ours; the schema decided.
        #expect(metadata.versionHashes != versions[0].entityVersionHashes)
        _ = try Store.open(at: store, model: versions[0], mode: .readOnly)
        let error = #expect(throws: StoreError.self) { try Store.open(at: store, model: versions[2], mode: .readOnly) }
        #expect(error?.kind == .modelMismatch)
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: store)) == before,
            "identifying and opening must not change the file")
    }

    @Test func unknownVersionListsWhatDidNotFit() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("unknown-\(UUID()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try Store.create(at: path, model: Self.model)
        let other = try ObjectModel(
            json: JSON.parse(#"{"version": "Other", "entities": {"Thing": {"attributes": {"x": "string"}}}}"#))
        let error = #expect(throws: StoreError.self) { try StoreMatcher.identify(storeAt: path, among: [other]) }
        #expect(error?.kind == .unknownVersion)
        #expect(
            error?.message == """
                the store matches none of the model versions Other by its version hashes or by its tables and columns:
                  Other: Author, Book, Item, Magazine, Shelf only in the store; Thing only in the model; schema: no table ZTHING
                """)
    }
}

/// ``StoreValidator/damage(limit:)``: what a store should not hold, found with SQL.
@Suite struct StoreDamageTests {
    /// A double in a Decimal attribute's column that no Decimal holds (an infinity, a
    /// magnitude beyond a Decimal's exponents) reads as 0: the store is damaged there, and
    /// says so, where a double a Decimal holds, an integer or NULL is not.
    @Test func findsDecimalsNoDecimalHolds() throws {
        let model = try ObjectModel(
            json: JSON.parse(#"{"version": "V", "entities": {"Item": {"attributes": {"price": "decimal"}}}}"#))
        let store = try Store.create(at: ":memory:", model: model)
        let item = try #require(store.layout.entities["Item"])
        try store.database.execute(
            """
            INSERT INTO \(item.table) (Z_PK, Z_ENT, Z_OPT, ZPRICE) VALUES (1, \(item.number), 1, 19.99),
                (2, \(item.number), 1, 1e300), (3, \(item.number), 1, 12), (4, \(item.number), 1, -9e999),
                (5, \(item.number), 1, NULL), (6, \(item.number), 1, 1e-130), (7, \(item.number), 1, 1e-100)
            """)
        let damage = try StoreValidator(store: store).damage().map(\.description)
        #expect(
            damage == [
                "Item/2: 'price' holds 1e+300, which no Decimal holds; it reads as 0",
                "Item/4: 'price' holds -inf, which no Decimal holds; it reads as 0",
                "Item/6: 'price' holds 1e-130, which no Decimal holds; it reads as 0"
            ])
        for (key, read) in [(2, Decimal(0)), (4, 0), (6, 0), (7, Decimal(string: "1e-100")!)] {
            let statement = try store.database.prepare("SELECT ZPRICE FROM \(item.table) WHERE Z_PK = \(key)")
            _ = try statement.step()
            #expect(EntityBinding.read(statement, 0, as: .decimal) == .decimal(read), "\(key)")
        }
    }

    @Test func findsRowsOfNoEntityValuesOfTheWrongClassAndDanglingKeys() throws {
        let model = try ObjectModel(
            json: JSON.parse(
                """
                {"version": "V", "entities": {
                  "Shelf": {"attributes": {"label": "string"}, "relationships": {"books": {"destination": "Book", "inverse": "shelf", "toMany": true}}},
                  "Book": {"attributes": {"title": "string", "pages": "int32", "read": "date", "cover": "binary"},
                           "relationships": {"shelf": {"destination": "Shelf", "inverse": "books"}}}}}
                """))
        let store = try Store.create(at: ":memory:", model: model)
        #expect(try StoreValidator(store: store).damage().isEmpty)
        let shelf = try #require(store.layout.entities["Shelf"]?.number),
            book = try #require(store.layout.entities["Book"]?.number)
        for sql in [
            "INSERT INTO ZSHELF (Z_PK, Z_ENT, Z_OPT, ZLABEL) VALUES (1, \(shelf), 1, 'A')",
            "INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZPAGES, ZREAD, ZCOVER, ZSHELF) VALUES (1, \(book), 1, 'fine', 10, 1.5, x'00', 1)",
            "INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZPAGES, ZREAD, ZCOVER, ZSHELF) VALUES (2, \(book), 1, 'bad', 'ten', 'yesterday', 'text', 7)",
            "INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES (3, 42, 1, 'nobody')"
        ] { try store.database.execute(sql) }
        #expect(
            try StoreValidator(store: store).damage().map(\.description) == [
                "ZBOOK row 3: its Z_ENT, 42, is no entity of ZBOOK in V (\(book)); no command reads the row",
                "Book/2: 'pages' holds text where int32 values are stored; it reads converted, as SQLite converts it",
                "Book/2: 'read' holds text where date values are stored; it reads converted, as SQLite converts it",
                "Book/2: 'cover' holds text where binary values are stored; it reads converted, as SQLite converts it",
                "Book/2: 'shelf' points at Shelf 7, which is not in the store; it reads as no destination"
            ])
        #expect(try StoreValidator(store: store).damage(limit: 2).count == 2)
        // Keys of a table whose keys run without a gap are told without a lookup, except
        // a key that is not an integer among them; and not when a row there is of no
        // entity the key may point to.
        try store.database.execute(
            "INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZSHELF) VALUES (4, \(book), 1, 'half', 1.5), (5, \(book), 1, 'two', 2)"
        )
        #expect(
            try StoreValidator(store: store).damage().suffix(3).map(\.description) == [
                "Book/2: 'shelf' points at Shelf 7, which is not in the store; it reads as no destination",
                "Book/4: 'shelf' points at Shelf 1.5, which is not in the store; it reads as no destination",
                "Book/5: 'shelf' points at Shelf 2, which is not in the store; it reads as no destination"
            ])
        try store.database.execute("INSERT INTO ZSHELF (Z_PK, Z_ENT, Z_OPT, ZLABEL) VALUES (2, 99, 1, 'odd')")
        #expect(
            try StoreValidator(store: store).damage().filter { $0.description.contains("'shelf'") }.map(\.object) == [
                "Book/2", "Book/4", "Book/5"
            ])
    }
}
