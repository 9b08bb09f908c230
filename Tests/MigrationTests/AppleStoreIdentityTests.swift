import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// Stores as Core Data tells their version (by the entity version hashes in their
/// metadata), and stores Remodel writes as Core Data writes them: Apple's hashes, digest,
/// checksum, and the source store's UUID and app keys kept.
@Suite(.enabled(if: SharedFixtures.isAvailable, SharedFixtures.missingMessage))
struct AppleStoreIdentityTests {
    static let realworld = SharedFixtures.root.appendingPathComponent("realworld")
    static let coreDataPlus = realworld.appendingPathComponent("alemar11+CoreDataPlus/Tests/Resources")
    static let bookStore = SharedFixtures.bookMigration.appendingPathComponent("Model1.sqlite").path

    /// Every Apple-written store whose model is in the fixtures, and its version.
    static let stores: [(store: String, models: String, version: String)] = [
        ("coredata/objcio-bookmigration/Model1.sqlite", "coredata/objcio-bookmigration/Model.xcdatamodeld", "Model1"),
        (
            "realworld/alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite",
            "realworld/alemar11+CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld", "SampleModel"
        ),
        (
            "realworld/alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite",
            "realworld/alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd", "SampleModel2"
        ),
        (
            "realworld/alemar11+CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite",
            "realworld/alemar11+CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3.momd", "SampleModel3"
        ),
        (
            "realworld/mwkirk+MWKCoreData/Tests/Stores/MWKCoreDataTests.sqlite",
            "realworld/mwkirk+MWKCoreData/Tests/Model/MWKCoreDataTests.xcdatamodeld", "MWKCoreDataTests"
        ),
        (
            "realworld/mwkirk+MWKCoreData/Tests/Stores/MWKCoreDataTests2.sqlite",
            "realworld/mwkirk+MWKCoreData/Tests/Model/MWKCoreDataTests.xcdatamodeld", "MWKCoreDataTests2"
        )
    ]

    @Test func appleStoresAreIdentifiedByTheirHashes() throws {
        for (store, models, version) in Self.stores {
            let versions = try ObjectModel.loadVersions(at: SharedFixtures.root.appendingPathComponent(models))
            let found = try StoreMatcher.identification(
                storeAt: SharedFixtures.root.appendingPathComponent(store).path, among: versions)
            #expect(found.model.version == version, "\(store)")
            #expect(found.method == .versionHashes, "\(store)")
        }
    }

    /// Two versions with the same tables and columns (an attribute made optional): the
    /// schema cannot tell them apart, the hashes do.
    @Test func versionsWithTheSameTablesAreToldApartByHashes() throws {
        let models = SharedFixtures.bookMigration.appendingPathComponent("Model.xcdatamodeld")
        var versions = try ObjectModel.loadVersions(at: models)
        var variant = versions[0]
        variant.version = "Model1b"
        variant.entities[0].attributes[0].isOptional.toggle()
        #expect(StoreLayout(model: variant).createStatements == StoreLayout(model: versions[0]).createStatements)
        versions.insert(variant, at: 1)
        let found = try StoreMatcher.identification(storeAt: Self.bookStore, among: versions)
        #expect(found.model.version == "Model1")
        #expect(found.method == .versionHashes)
        // Without the right version, the hashes say which entity differs, and the schema,
        // which fits the variant, decides, saying so.
        let bySchema = try StoreMatcher.identification(storeAt: Self.bookStore, among: Array(versions[1...]))
        #expect(bySchema.model.version == "Model1b")
        #expect(bySchema.method == .schema)
        #expect(
            bySchema.notes == [
                "the store's version hashes match no version (closest: Model1b, where \(variant.entities[0].name) differ); identified by its tables and columns, which only Model1b has"
            ])
    }

    /// Versions whose hashes are equal (a default value changed): Core Data opens the
    /// store with either; the one the store records, else the newest.
    @Test func versionsWithTheSameHashes() throws {
        let models = SharedFixtures.bookMigration.appendingPathComponent("Model.xcdatamodeld")
        var versions = try ObjectModel.loadVersions(at: models)
        var variant = versions[0]
        variant.version = "Model1b"
        variant.entities[0].attributes[0].renamingIdentifier = "renamed"
        versions.insert(variant, at: 1)
        let found = try StoreMatcher.identification(storeAt: Self.bookStore, among: versions)
        #expect(found.model.version == "Model1b")
        #expect(
            found.notes == [
                "the versions Model1, Model1b have the same version hashes, so Core Data opens the store with any of them; taken as the newest, Model1b"
            ])
    }

    /// CoreDataPlus V1 → V3 from its build products, with an app's own key added to the
    /// store: the new store carries the hashes Xcode wrote for SampleModel3, their digest
    /// and checksum, the identifier, the source's UUID and the app's key.
    @Test func aMigratedStoreCarriesApplesHashesAndTheAppsKeys() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("SampleModel.sqlite")
        try FileManager.default.copyItem(
            atPath: Self.coreDataPlus.appendingPathComponent("SampleModel/Fixtures/SampleModel_V1.sqlite").path,
            toPath: path)
        let before = try Store.metadata(at: path)
        try Self.addMetadata(["com.example.syncToken": "t-42", "com.example.counts": ["cars": 125]], to: path)

        let momd = Self.coreDataPlus.appendingPathComponent("SampleModel/Fixtures/SampleModel.momd")
        var policies = PolicyRegistry()
        policies.register("V2to3MakerPolicy") { MakerPolicy() }
        try StoreMigrator.migrateStore(
            at: URL(fileURLWithPath: path), models: momd, to: "SampleModel3", policies: policies)

        let after = try Store.metadata(at: path)
        let info = try #require(try CompiledModelReader.versionInfo(ofModelAt: momd))
        #expect(after.versionHashes == info.versionHashes["SampleModel3"])
        #expect(after.versionHashesDigest == ObjectModel.appleStoreDigest(of: after.versionHashes))
        #expect(after.versionChecksum == ObjectModel.appleVersionChecksum(of: after.versionHashes))
        #expect(after.versionIdentifiers == ["3"])
        #expect(after.uuid == before.uuid)
        #expect(after.remodelVersion == "SampleModel3")
        let plist = try Self.metadataPlist(at: path)
        #expect(plist["com.example.syncToken"] as? String == "t-42")
        #expect((plist["com.example.counts"] as? [String: Any])?["cars"] as? Int == 125)
        #expect(plist["NSStoreModelVersionHashesVersion"] as? Int == 3)
        #expect(plist["NSStoreType"] as? String == "SQLite")
        #expect(
            try StoreMatcher.identification(storeAt: path, among: ObjectModel.loadVersions(at: momd)).method
                == .versionHashes)
    }

    /// A compiled model's declared hashes are used as given; a disagreement is a warning.
    @Test func declaredHashesWinAndDisagreementsAreWarned() throws {
        let momd = Self.coreDataPlus.appendingPathComponent("SampleModel3/Fixtures/SampleModel3.momd")
        var model = try ObjectModel.loadVersions(at: momd)[0]
        #expect(model.warnings().isEmpty)
        let name = try #require(model.entities.first?.name)
        let given = Data(repeating: 7, count: 32)
        model.declaredVersionHashes?[name] = given
        #expect(model.storeVersionHashes[name] == given)
        #expect(model.appleVersionHashes[name] != given)
        let warnings = model.warnings(file: "SampleModel3.mom").map(\.description)
        #expect(warnings.count == 1)
        #expect(
            warnings.first?.hasPrefix("SampleModel3.mom: versionHashes: \(name): VersionInfo.plist gives 0707") == true)
    }

    static func metadataPlist(at path: String) throws -> [String: Any] {
        let database = try Database(path: path, mode: .readOnly)
        let statement = try database.prepare("SELECT Z_PLIST FROM Z_METADATA")
        _ = try statement.step()
        let data = try #require(statement.data(at: 0))
        return try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
    }

    /// Adds `entries` to the store's metadata, as an app does with `setMetadata`.
    static func addMetadata(_ entries: [String: Any], to path: String) throws {
        var plist = try metadataPlist(at: path)
        for (key, value) in entries { plist[key] = value }
        let database = try Database(path: path, mode: .readWrite)
        let update = try database.prepare("UPDATE Z_METADATA SET Z_PLIST = ?")
        try update.bind(try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0), at: 1)
        try update.run()
    }
}
