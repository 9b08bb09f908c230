import Foundation
import Remodel
import RemodelTesting
import Testing
import TestSupport

/// The library's one-call migration, its dry run, and `MigrationTestHelper` for users'
/// own test suites, on the notes-chain example (mappings/notes-chain).
@Suite struct MigrationTestHelperTests {
    static let fixtures = Repository.root.appendingPathComponent("mappings/notes-chain")
    static let fixture = fixtures.appendingPathComponent("Notes1.sqlite")
    static let xcode = fixtures.appendingPathComponent("Notes.xcdatamodeld")
    let fixtures = Self.fixtures

    /// The bytes of the fixture and of every file beside it, to show that nothing changed.
    static func snapshot() throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: fixtures.path)
        where name.hasPrefix("Notes1.sqlite") {
            files[name] = try Data(contentsOf: fixtures.appendingPathComponent(name))
        }
        return files
    }

    // The example of docs/testing-migrations.md, as it is there.
    // docs:testing-migrations begin
    @Test func notesKeepTheirNotebooksThroughNotes3() throws {
        let context = try MigrationTestHelper.migratedCopy(
            of: fixtures.appendingPathComponent("Notes1.sqlite"),
            models: fixtures.appendingPathComponent("Notes.xcdatamodeld"),
            to: "Notes3")
        // The trashed note is gone, the others have titles and priorities as words.
        #expect(try context.count(FetchRequest(entityName: "Note")) == 5)
        let untitled = try context.fetch(FetchRequest(entityName: "Note", predicate: "title == 'Untitled'"))
        #expect(untitled.count == 2)
        let work = try context.fetch(FetchRequest(entityName: "Notebook", predicate: "name == 'Work'"))[0]
        let notes = try work.value(forKey: "notes").collectionElements ?? []
        #expect(notes.count == 2)
        let urgent = try context.fetch(
            FetchRequest(entityName: "Note", predicate: "priority == 'high' AND notebook.name == 'Work'"))
        #expect(urgent.map { $0["title"] } == ["Quarterly report", "Team offsite"])
    }
    // docs:testing-migrations end

    @Test func theFixtureIsNeverTouched() throws {
        let before = try Self.snapshot()
        let context = try MigrationTestHelper.migratedCopy(of: Self.fixture, models: Self.xcode)
        #expect(context.store.model.version == "Notes4")
        #expect(context.store.path != Self.fixture.path)
        #expect(try context.count(FetchRequest(entityName: "Note", predicate: "archived == NO")) == 5)
        // The copy can be written to, as a test may go on to do.
        let attachment = try context.insert("Attachment")
        try attachment.setValue("plan.pdf", forKey: "fileName")
        try context.save()
        #expect(try Self.snapshot() == before)
        try? FileManager.default.removeItem(at: URL(fileURLWithPath: context.store.path).deletingLastPathComponent())
    }

    /// A fixture whose images are files of its support folder is copied with them, and
    /// migrates (mappings/item-images, the images moved to their own entity).
    @Test func aFixtureWithExternalDataIsCopiedWithItsFiles() throws {
        let folder = try TemporaryDirectory()
        let example = Repository.root.appendingPathComponent("mappings/item-images")
        let models = try ObjectModel.loadVersions(at: example)
        let fixture = folder.url.appendingPathComponent("Items.sqlite")
        let image = Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let context = ObjectContext(store: try Store.create(at: fixture.path, model: models[0]))
        let item = try context.insert("Item")
        try item.setValue("photo", forKey: "name")
        try item.setValue(.data(image), forKey: "image")
        try context.save()
        #expect(try ExternalBinaryData.references(inStoreAt: fixture.path, model: models[0]).count == 1)

        let migrated = try MigrationTestHelper.migratedCopy(
            of: fixture, models: models, mappings: try MappingModel.loadAll(in: example), in: folder.url)
        let moved = try migrated.fetch(FetchRequest(entityName: "Image"))
        #expect(moved.map { $0["data"] } == [.data(image)])
    }

    @Test func withMigratedCopyRemovesTheCopy() throws {
        let folder = try TemporaryDirectory()
        let path = try MigrationTestHelper.withMigratedCopy(
            of: Self.fixture, models: Self.fixtures, to: "Notes2", in: folder.url
        ) { (context: ObjectContext) throws -> String in
            #expect(context.store.model.version == "Notes2")
            #expect(try context.count(FetchRequest(entityName: "Notebook")) == 3)
            return context.store.path
        }
        #expect(path.hasPrefix(folder.url.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == [])
    }

    @Test func loadedModelsAndMappings() throws {
        let models = try ObjectModel.loadVersions(at: Self.fixtures)
        let mappings = try MappingModel.loadAll(in: Self.fixtures)
        let context = try MigrationTestHelper.migratedCopy(
            of: Self.fixture, models: models, mappings: mappings, to: "Notes2")
        #expect(try context.fetch(FetchRequest(entityName: "Note", predicate: "text == 'milk eggs bread'")).count == 1)
        try? FileManager.default.removeItem(at: URL(fileURLWithPath: context.store.path).deletingLastPathComponent())
    }

    @Test func aMissingFixtureIsAnError() throws {
        #expect(throws: MigrationError(.sourceStore, "no such fixture store: /nonexistent/Notes1.sqlite")) {
            try MigrationTestHelper.migratedCopy(
                of: URL(fileURLWithPath: "/nonexistent/Notes1.sqlite"), models: Self.xcode)
        }
    }

    /// `StoreMigrator.migrateStore(at:models:…)`: one call, with progress.
    @Test func oneCallMigratesInPlace() throws {
        let folder = try TemporaryDirectory()
        let store = folder.url.appendingPathComponent("Notes.sqlite")
        try FileManager.default.copyItem(at: Self.fixture, to: store)
        var reports: [MigrationProgress] = []
        var versions: Set<String> = []
        let steps = try StoreMigrator.migrateStore(at: store, models: Self.xcode, to: "Notes3") { step, progress in
            versions.insert(step.destination.version)
            reports.append(progress)
        }
        #expect(steps.map(\.destination) == ["Notes2", "Notes3"])
        #expect(versions == ["Notes2", "Notes3"])
        #expect(reports.filter { $0.stage == .validate && $0.fraction == 1 }.count == 2)
        #expect(FileManager.default.fileExists(atPath: store.path + ".Notes1.bak"))
        let again = try StoreMigrator.migrateStore(at: store, models: Self.xcode, keepsBackup: false)
        #expect(again.map(\.destination) == ["Notes4"])
        #expect(!FileManager.default.fileExists(atPath: store.path + ".Notes3.bak"))
    }

    @Test func theDefaultTargetOfAnXcodeModelIsItsCurrentVersion() throws {
        #expect(StoreMigrator.currentVersion(ofModelsAt: Self.xcode) == "Notes4")
        #expect(StoreMigrator.currentVersion(ofModelsAt: Self.fixtures) == nil)
        #expect(StoreMigrator.defaultMappingsFolder(forModels: Self.xcode).path == Self.fixtures.path)
        #expect(StoreMigrator.defaultMappingsFolder(forModels: Self.fixtures).path == Self.fixtures.path)
    }

    @Test func dryRunReportsAndChangesNothing() throws {
        let before = try Self.snapshot()
        let migrator = try StoreMigrator(models: Self.xcode)
        let steps = try migrator.dryRun(storeAt: Self.fixture.path, samples: 2)
        #expect(try Self.snapshot() == before)
        #expect(steps.map(\.step.destination.version) == ["Notes2", "Notes3", "Notes4"])
        #expect(steps[1].report.entityMappings.map(\.destinationInstances) == [3, 5])
        #expect(steps[2].entities.map { "\($0.entity) \($0.count)" } == ["Attachment 0", "Note 5", "Notebook 3"])
        #expect(
            steps[2].entities[1].samples.map(\.description) == [
                #"Note/1 archived=NO created=2024-09-02T09:00:00Z priority="high" text="Draft the numbers for Q3" title="Quarterly report" wordCount=5 attachments=[] notebook=Notebook/1"#,
                #"Note/2 archived=NO created=2024-09-03T18:30:00Z priority="low" text="milk eggs bread" title="Groceries" wordCount=3 attachments=[] notebook=Notebook/2"#
            ])
        #expect(try migrator.dryRun(storeAt: Self.fixture.path, to: "Notes1").isEmpty)
    }

    @Test func samplesAreShort() throws {
        let sample = ObjectSample(
            object: "Item/1",
            attributes: [
                "name": "a", "blob": ["$dataLength": 4096], "when": ["$date": "2001-01-01T00:00:00Z"],
                "flag": true, "none": nil, "tags": ["$set": ["x"]]
            ],
            relationships: ["owner": .toOne(nil), "parts": .toMany(count: 7, first: ["Part/1", "Part/2"])])
        #expect(
            sample.description
                == #"Item/1 name="a" blob=<4096 bytes> when=2001-01-01T00:00:00Z flag=YES none=nil tags={"x"} owner=nil parts=[Part/1, Part/2, … 7 in all]"#
        )
    }

    /// An Xcode mapping model in the folder is read against the model versions, and
    /// combined with a JSON file of the same step; without the versions it is an error,
    /// never skipped.
    @Test func xcodeMappingModelsAreReadWithTheModels() throws {
        let folder = try TemporaryDirectory()
        let xcmapping = folder.url.appendingPathComponent("V1_to_V2.xcmappingmodel")
        try FileManager.default.createDirectory(at: xcmapping, withIntermediateDirectories: true)
        try Data(
            """
            <database><object type="XDDEVMAPPINGMODEL" id="z1">
            <attribute name="sourcemodelpath" type="string">App/Model.xcdatamodeld/V1.xcdatamodel</attribute>
            <attribute name="destinationmodelpath" type="string">App/Model.xcdatamodeld/V2.xcdatamodel</attribute>
            </object></database>
            """.utf8
        ).write(to: xcmapping.appendingPathComponent("xcmapping.xml"))
        #expect(
            throws: MappingErrors([
                MappingError(
                    file: xcmapping.path, path: "",
                    message:
                        "an Xcode mapping model is read against the model versions it maps; pass them (MappingModel.loadAll(in:models:), or --models)"
                )
            ])
        ) {
            try MappingModel.loadAll(in: folder.url)
        }
        let models = [ObjectModel(version: "V1", entities: []), ObjectModel(version: "V2", entities: [])]
        #expect(try MappingModel.loadAll(in: folder.url, models: models).map(\.file) == [xcmapping.path])
        // A JSON file of the same step: one mapping, the files in natural order.
        let json = folder.url.appendingPathComponent("V1_to_V2.mapping.json")
        try Data(#"{"sourceModel": "V1", "destinationModel": "V2", "entityMappings": []}"#.utf8).write(to: json)
        let mappings = try MappingModel.loadAll(in: folder.url, models: models)
        #expect(mappings.map(\.file) == ["\(json.path) + \(xcmapping.path)"])
    }
}

/// docs/testing-migrations.md shows the test between the `docs:testing-migrations`
/// markers above, as it is.
@Suite struct TestingMigrationsGuideTests {
    @Test func theGuideShowsTheTest() throws {
        let guide = try String(
            contentsOf: Repository.root.appendingPathComponent("docs/testing-migrations.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let begin = try #require(source.range(of: "// docs:testing-migrations begin\n"))
        let end = try #require(source.range(of: "    // docs:testing-migrations end"))
        let test = source[begin.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("    ") ? $0.dropFirst(4) : $0 }.joined(separator: "\n")
        #expect(guide.contains("```swift\n" + test + "```\n"))
    }
}
