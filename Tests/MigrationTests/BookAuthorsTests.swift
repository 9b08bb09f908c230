import BookMigrationPolicies
import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// mappings/book-authors: the objc.io article's store, written by Apple's Core Data,
/// migrated Model1 → Model2 → Model3 with the article's policies in Swift.
@Suite(.enabled(if: SharedFixtures.isAvailable, SharedFixtures.missingMessage))
struct BookAuthorsTests {
    static let folder = Repository.root.appendingPathComponent("mappings/book-authors")
    static let fixtureStore = SharedFixtures.bookMigration.appendingPathComponent("Model1.sqlite")

    static func migrator() throws -> StoreMigrator {
        StoreMigrator(
            models: try ObjectModel.loadVersions(at: folder), mappings: try MappingModel.loadAll(in: folder),
            policies: .bookMigration)
    }

    /// A copy of the fixture store in a temporary folder.
    static func copyOfFixture(in directory: TemporaryDirectory) throws -> String {
        let path = directory.path("Books.sqlite")
        try FileManager.default.copyItem(atPath: fixtureStore.path, toPath: path)
        return path
    }

    static func context(_ path: String, _ version: String) throws -> ObjectContext {
        let model = try migrator().models.first { $0.version == version }!
        return ObjectContext(store: try Store.open(at: path, model: model, mode: .readOnly))
    }

    @Test func theExampleModelsAreTheFixturesModels() throws {
        let ours = try ObjectModel.loadVersions(at: Self.folder)
        let imported = try XcodeModelImporter.importVersions(
            at: SharedFixtures.bookMigration.appendingPathComponent("Model.xcdatamodeld"))
        #expect(ours.map(\.version) == imported.versions.map(\.version))
        for (a, b) in zip(ours, imported.versions) {
            #expect(a.json == b.json, "\(a.version): ours \(a.json.serialized()) vs imported \(b.json.serialized())")
            #expect(a == b)
            #expect(a.entityVersionHashes == b.entityVersionHashes)
            #expect(a.appleVersionHashes == b.appleVersionHashes)
        }
    }

    @Test func theStoreReachesModel3AsTheArticlesTestsExpect() throws {
        let directory = try TemporaryDirectory()
        let path = try Self.copyOfFixture(in: directory)
        let before = try Self.context(path, "Model1")
        let users = try before.fetch(FetchRequest(entityName: "User")).map { $0["userId"] }
        let books = try before.fetch(FetchRequest(entityName: "Book"))
        let titles = books.map { $0["title"] }
        let files = Dictionary(uniqueKeysWithValues: books.map { ($0["title"], $0["fileURL"]) })

        let reports = try Self.migrator().migrate(storeAt: path, to: "Model3")
        #expect(reports.map(\.destination) == ["Model2", "Model3"])

        let after = try Self.context(path, "Model3")
        // What the original project's tests assert.
        #expect(try after.count(FetchRequest(entityName: "User")) > 0)
        for book in try after.fetch(FetchRequest(entityName: "Book")) {
            #expect(
                try book.value(forKey: "authors").collectionElements?.isEmpty == false,
                "\(book.objectID) has no authors")
        }
        #expect(try after.count(FetchRequest(entityName: "Author", predicate: "name == 'Franz Kafka'")) == 1)
        #expect(
            try after.count(FetchRequest(entityName: "Book", predicate: "ANY authors.name LIKE 'Franz Kafka'")) == 2)
        // And more: nothing lost, every file linked to its book and to the migrated user.
        #expect(
            try after.fetch(FetchRequest(entityName: "User")).map { $0["userId"] }.sorted(by: Self.order)
                == users.sorted(by: Self.order))
        #expect(
            try after.fetch(FetchRequest(entityName: "Book")).map { $0["title"] }.sorted(by: Self.order)
                == titles.sorted(by: Self.order))
        let migratedFiles = try after.fetch(FetchRequest(entityName: "File"))
        #expect(migratedFiles.count == 4)  // one per (book, user) pair: each of the 4 books has one user
        for file in migratedFiles {
            let book = try #require(file["book"].managedObject)
            let user = try #require(file["user"].managedObject)
            #expect(file["fileURL"] == files[book["title"]]!, "the file keeps its book's fileURL bytes")
            #expect(user["userId"] != .null)
        }
        let distinctAuthors = Set(try before.fetch(FetchRequest(entityName: "Book")).map { $0["authorName"] })
        #expect(try after.count(FetchRequest(entityName: "Author")) == distinctAuthors.count)
        #expect(try StoreValidator(store: after.store).failures().isEmpty)
    }

    @Test func modelTwoHasOneAuthorPerNameAndBooksWithUsers() throws {
        let directory = try TemporaryDirectory()
        let path = try Self.copyOfFixture(in: directory)
        let original = try Self.context(path, "Model1")
        let ownerOfTitle = Dictionary(
            uniqueKeysWithValues: try original.fetch(FetchRequest(entityName: "Book")).map {
                ($0["title"], $0["user"].managedObject?["userId"] ?? .null)
            })
        try Self.migrator().migrate(storeAt: path, to: "Model2")
        let context = try Self.context(path, "Model2")
        for book in try context.fetch(FetchRequest(entityName: "Book")) {
            let users = try book.value(forKey: "users").collectionElements ?? []
            #expect(users.count == 1)
            #expect(users.first?.managedObject?["userId"] == ownerOfTitle[book["title"]]!)
            let authors = try book.value(forKey: "authors").collectionElements ?? []
            #expect(authors.count == 1)
        }
        // Both sides of the many-to-many agree.
        for user in try context.fetch(FetchRequest(entityName: "User")) {
            for book in try user.value(forKey: "books").collectionElements ?? [] {
                let owners = try book.managedObject!.value(forKey: "users").collectionElements ?? []
                #expect(owners.contains { $0.managedObject?.objectID == user.objectID })
            }
        }
        // The fixture itself was copied, never touched; the backup is the original store.
        #expect(FileManager.default.contentsEqual(atPath: path + ".Model1.bak", andPath: Self.fixtureStore.path))
    }

    @Test func bookMigrationRunsFromTheRepositoryRoot() throws {
        let directory = try TemporaryDirectory()
        let path = try Self.copyOfFixture(in: directory)
        let text = try Self.bookMigration(["run", path, "--to", "Model3"])
        #expect(text.contains("Model1 → Model2"))
        #expect(text.contains("Model2 → Model3"))
        #expect(try Self.migrator().version(ofStoreAt: path).version == "Model3")
    }

    /// The article's own three Xcode mapping models, run by the tool (which registers the
    /// policies under the article's class names too), give the store the JSON mappings give.
    @Test func bookMigrationRunsTheArticlesXcodeMappingModels() throws {
        let directory = try TemporaryDirectory()
        let json = try Self.copyOfFixture(in: directory)
        let xcode = directory.path("Xcode.sqlite")
        try FileManager.default.copyItem(atPath: json, toPath: xcode)
        _ = try Self.bookMigration(["run", json, "--to", "Model3", "--quiet"])
        let text = try Self.bookMigration([
            "run", xcode, "--to", "Model3", "--models",
            SharedFixtures.bookMigration.appendingPathComponent("Model.xcdatamodeld").path,
            "--mappings", SharedFixtures.bookMigration.path
        ])
        #expect(text.contains("\nModel1 → Model2 (Model1_to_Model2.xcmappingmodel): "), "\(text)")
        #expect(
            text.contains(
                "\nModel2 → Model3 (Model2_to_Model3_User.xcmappingmodel + Model2_to_Model3.xcmappingmodel): "),
            "\(text)")
        let model = try #require(try Self.migrator().models.last)
        let dump = try InferenceTests.dump(json, model)
        #expect(dump.count == 14)
        #expect(try InferenceTests.dump(xcode, model) == dump)
    }

    /// Runs the book-migration tool from the repository's root; its output.
    static func bookMigration(_ arguments: [String]) throws -> String {
        let executable = try #require(
            Self.executable, "book-migration was not built; run `swift build --product book-migration`")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = Repository.root
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        return text
    }

    static let executable: URL? = {
        let candidates = [
            Bundle.main.executableURL?.deletingLastPathComponent(),
            Repository.root.appendingPathComponent(".build/debug")
        ]
        return candidates.compactMap { $0?.appendingPathComponent("book-migration") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    static func order(_ a: Value, _ b: Value) -> Bool { (try? Value.sortOrder(a, b)) == .orderedAscending }
}

extension Value {
    /// The store object this value holds, if any.
    var managedObject: ManagedObject? {
        if case .object(let reference) = self { return reference.object as? ManagedObject }
        return nil
    }
}
