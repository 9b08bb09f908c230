import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// Attributes with external binary data storage as Core Data writes them: a marker byte,
/// then the bytes (`0x01`) or a file of `.<Store>_SUPPORT/_EXTERNAL_DATA/` (`0x02`).
@Suite struct ExternalBinaryDataTests {
    static func model(_ version: String, external: Bool) throws -> ObjectModel {
        try ObjectModel(
            json: JSON.parse(
                """
                {"version": "\(version)", "entities": {"Item": {"attributes": {
                  "name": "string",
                  "photo": {"type": "binary", "allowsExternalBinaryDataStorage": \(external)}}}}}
                """))
    }

    static let small = Data("a small photo".utf8)
    static let large = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    static let fileName = "0F2A3B4C-5D6E-4F70-8192-A3B4C5D6E7F8"

    /// A store written as Core Data writes one: Item/1 inline, Item/2 in a file, Item/3 a
    /// reference to a file that is not there.
    static func appleStyleStore(in directory: TemporaryDirectory, model: ObjectModel) throws -> String {
        let path = directory.path("Items.sqlite")
        let store = try Store.create(at: path, model: model)
        let insert = try store.database.prepare(
            "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZPHOTO) VALUES (?, 1, 1, ?, ?)")
        func row(_ key: Int64, _ name: String, _ stored: Data) throws {
            try insert.bind(key, at: 1)
            try insert.bind(name, at: 2)
            try insert.bind(stored, at: 3)
            try insert.run()
            insert.reset()
        }
        try row(1, "inline", Data([1]) + small)
        try row(2, "file", Data([2]) + Data(fileName.utf8) + Data([0]))
        try row(3, "missing", Data([2]) + Data("00000000-0000-0000-0000-000000000000".utf8) + Data([0]))
        try store.database.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = 3 WHERE Z_NAME = 'Item'")
        let folder = ExternalBinaryData.folder(ofStoreAt: path)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try large.write(to: folder.appendingPathComponent(fileName))
        return path
    }

    @Test func objectsAndRowsReadTheData() throws {
        let directory = try TemporaryDirectory()
        let model = try Self.model("V1", external: true)
        let path = try Self.appleStyleStore(in: directory, model: model)
        let context = ObjectContext(store: try Store.open(at: path, model: model, mode: .readOnly))
        #expect(try context.object(entityName: "Item", primaryKey: 1).value(forKey: "photo") == .data(Self.small))
        #expect(try context.object(entityName: "Item", primaryKey: 2).value(forKey: "photo") == .data(Self.large))
        let error = #expect(throws: ContextError.self) {
            try context.object(entityName: "Item", primaryKey: 3).value(forKey: "photo")
        }
        #expect(error?.kind == .externalData)
        #expect(error?.description.contains("Item/3") == true)
        #expect(
            error?.description.contains(
                ExternalBinaryData.folder(ofStoreAt: path).appendingPathComponent(
                    "00000000-0000-0000-0000-000000000000"
                ).path) == true)
        let reader = try context.makeRowReader(for: "Item", attributes: ["photo"])
        let photo = try context.attributeKey("photo", of: "Item")
        #expect(try reader.next())
        #expect(try reader.value(for: photo) == .data(Self.small))
        #expect(try reader.next())
        #expect(try reader.value(for: photo) == .data(Self.large))
    }

    /// Values of more than 100 KB go to a file of the support folder, smaller ones inline.
    @Test func largeValuesAreWrittenToFiles() throws {
        let directory = try TemporaryDirectory()
        let model = try Self.model("V1", external: true)
        let path = directory.path("New.sqlite")
        let context = ObjectContext(store: try Store.create(at: path, model: model))
        let threshold = Data(repeating: 7, count: ExternalDataFiles.defaultThreshold)
        for photo in [Self.large, Self.small, threshold] {
            let item = try context.insert("Item")
            try item.setValue(.data(photo), forKey: "photo")
        }
        try context.save()
        let folder = ExternalBinaryData.folder(ofStoreAt: path)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(files.count == 1)
        let name = try #require(files.first)
        #expect(try Data(contentsOf: folder.appendingPathComponent(name)) == Self.large)
        let stored = try context.store.database.scalar("SELECT ZPHOTO FROM ZITEM WHERE Z_PK = 1")
        #expect(stored == SQLiteValue.blob(Data([2]) + Data(name.utf8) + Data([0])))
        #expect(
            try context.store.database.scalar("SELECT ZPHOTO FROM ZITEM WHERE Z_PK = 3")
                == SQLiteValue.blob(Data([1]) + threshold))
        #expect(try ExternalBinaryData.references(inStoreAt: path, model: model) == [name])
        let reread = ObjectContext(store: try Store.open(at: path, model: model, mode: .readOnly))
        #expect(try reread.object(entityName: "Item", primaryKey: 1).value(forKey: "photo") == .data(Self.large))
        #expect(try reread.object(entityName: "Item", primaryKey: 2).value(forKey: "photo") == .data(Self.small))
    }

    /// A save that fails removes the files it wrote: nothing refers to them.
    @Test func aFailedSaveRemovesItsFiles() throws {
        let directory = try TemporaryDirectory()
        let model = try Self.model("V1", external: true)
        let path = directory.path("New.sqlite")
        let store = try Store.create(at: path, model: model)
        let context = ObjectContext(store: store)
        let item = try context.insert("Item")
        try item.setValue(.data(Self.large), forKey: "photo")
        try store.database.execute("CREATE TRIGGER refuse BEFORE INSERT ON ZITEM BEGIN SELECT RAISE(ABORT, 'no'); END")
        #expect(throws: ContextError.self) { try context.save() }
        let folder = ExternalBinaryData.folder(ofStoreAt: path)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).isEmpty)
        #expect(store.externalData.written.isEmpty)
    }

    /// A migration carries every byte: into an attribute without external storage as the
    /// data itself; between external-storage attributes as Core Data stored it (the file
    /// reference kept, its file in place). A reference to a missing file stops the
    /// migration, naming it, and changes nothing. A file the new version no longer refers
    /// to leaves the store's folder, and stays in the backup's.
    @Test(arguments: [false, true])
    func migrationsCarryEveryByte(destinationExternal: Bool) throws {
        let directory = try TemporaryDirectory()
        let v1 = try Self.model("V1", external: true)
        var v2 = try Self.model("V2", external: destinationExternal)
        v2.entities[0].versionHashModifier = "2"
        let path = try Self.appleStyleStore(in: directory, model: v1)
        let migrator = StoreMigrator(models: [v1, v2], mappings: [])

        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let error = #expect(throws: MigrationError.self) { try migrator.migrate(storeAt: path) }
        #expect(error?.description.contains("Item Z_PK 3") == true, "\(error?.description ?? "no error")")
        #expect(
            error?.description.contains("_EXTERNAL_DATA/00000000-0000-0000-0000-000000000000, which is missing") == true
        )
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)

        // Without the broken row, the migration goes through.
        try Database(path: path, mode: .readWrite).execute("DELETE FROM ZITEM WHERE Z_PK = 3")
        try migrator.migrate(storeAt: path)
        let context = ObjectContext(store: try Store.open(at: path, model: v2, mode: .readOnly))
        #expect(try context.object(entityName: "Item", primaryKey: 1).value(forKey: "photo") == .data(Self.small))
        #expect(try context.object(entityName: "Item", primaryKey: 2).value(forKey: "photo") == .data(Self.large))
        let raw = try context.store.database.scalar("SELECT ZPHOTO FROM ZITEM WHERE Z_PK = 2")
        let reference: Data = Data([2]) + Data(Self.fileName.utf8) + Data([0])
        #expect(raw == SQLiteValue.blob(destinationExternal ? reference : Self.large))
        #expect(
            FileManager.default.fileExists(
                atPath: ExternalBinaryData.folder(ofStoreAt: path).appendingPathComponent(Self.fileName).path)
                == destinationExternal)
        let backup = path + ".V1.bak"
        #expect(
            try Data(
                contentsOf: ExternalBinaryData.folder(ofStoreAt: backup).appendingPathComponent(Self.fileName))
                == Self.large)
        let old = ObjectContext(store: try Store.open(at: backup, model: v1, mode: .readOnly))
        #expect(try old.object(entityName: "Item", primaryKey: 2).value(forKey: "photo") == .data(Self.large))
    }
}
