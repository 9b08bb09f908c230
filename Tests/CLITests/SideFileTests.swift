import Foundation
import ObjectGraph
import RemodelCLI
import Testing

/// A WAL or journal beside a store: the store's own is read (folded into a copy, the files
/// untouched) and folded in before a migration; one left by another database is found
/// before anything is changed, by every command, and nothing on disk changes.
@Suite struct SideFileTests {
    let cli = MappingMigrateBinaryTests()
    static let models = "mappings/product-price"

    /// A folder with `Products.sqlite` (the product-price fixture), in WAL mode when `wal`.
    func folder(wal: Bool) throws -> (URL, String) {
        let (directory, store) = try cli.temporaryCopy(of: "mappings/product-price/Products1.sqlite")
        if wal { try Database(path: store, mode: .readWrite).execute("PRAGMA journal_mode = WAL") }
        return (directory, store)
    }

    /// The side file `suffix` another database leaves while a transaction changes it:
    /// its WAL before a checkpoint, or its hot journal (a cache too small for the change
    /// spills it, so the journal is complete on disk).
    static func foreignSideFile(_ suffix: String, in directory: URL) throws -> Data {
        let other = directory.appendingPathComponent("other.sqlite").path
        let database = try Database(path: other, mode: .create)
        try database.execute("CREATE TABLE t (x)")
        try database.execute(
            "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 50) INSERT INTO t SELECT randomblob(3000) FROM c"
        )
        if suffix == "-wal" {
            try database.execute("PRAGMA journal_mode = WAL")
            try database.execute("PRAGMA wal_autocheckpoint = 0")
            try database.execute("UPDATE t SET x = randomblob(3000)")
        } else {
            try database.execute("PRAGMA cache_size = 2")
            try database.execute("BEGIN")
            try database.execute("UPDATE t SET x = randomblob(3000)")
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: other + suffix))
        if suffix == "-journal" { try database.execute("ROLLBACK") }
        return data
    }

    /// Every file in `directory` and its bytes (a folder as such).
    static func files(_ directory: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let url = directory.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
            files[name] = isDirectory.boolValue ? Data("a folder".utf8) : try Data(contentsOf: url)
        }
        return files
    }

    @Test(arguments: ["-wal", "-journal"])
    func aSideFileOfAnotherDatabaseChangesNothing(suffix: String) throws {
        let (directory, store) = try folder(wal: suffix == "-wal")
        defer { try? FileManager.default.removeItem(at: directory) }
        let foreign = try Self.foreignSideFile(suffix, in: directory)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path)
        where name.hasPrefix("other.sqlite") {
            try FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
        try foreign.write(to: URL(fileURLWithPath: store + suffix))
        let before = try Self.files(directory)
        for arguments in [["inspect", store], ["plan", store], ["run", store, "--dry-run"], ["run", store]] {
            let result = try cli.run(arguments + ["--models", Self.models])
            #expect(result.status == 2, "\(arguments[0]): \(result.stdout)")
            #expect(
                result.stderr.contains(
                    "(read with its Products.sqlite\(suffix) folded in; if Products.sqlite\(suffix) is not this store's, it may be what does not fit: move it away and try again. Nothing was changed)"
                ),
                "\(arguments): \(result.stderr)")
            #expect(try Self.files(directory) == before, "\(arguments) changed the folder")
        }
    }

    /// mapping-eval's :open reads a snapshot too: another database's WAL is found, and the
    /// store's own is read; the folder never changes.
    @Test func theREPLOpensASnapshot() throws {
        let (directory, store) = try folder(wal: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let foreign = try Self.foreignSideFile("-wal", in: directory)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path)
        where name.hasPrefix("other.sqlite") {
            try FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
        try foreign.write(to: URL(fileURLWithPath: store + "-wal"))
        let before = try Self.files(directory)
        let session = EvalSession()
        let models = MappingMigrateBinaryTests.root.appendingPathComponent(Self.models).path
        let opened = session.execute(":open \(store) --models \(models)")
        #expect(
            opened.diagnostics.contains(
                "(read with its Products.sqlite-wal folded in; if Products.sqlite-wal is not this store's"),
            "\(opened.diagnostics)")
        #expect(try Self.files(directory) == before)
    }

    /// The store's own WAL, with a change not yet checkpointed: read without changing a
    /// file (no -shm either), and carried into the migrated store.
    @Test func theStoresOwnWALIsReadAndCarried() throws {
        let (directory, store) = try folder(wal: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let copy = directory.appendingPathComponent("copy")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        do {
            let database = try Database(path: store, mode: .readWrite)
            try database.execute("PRAGMA wal_autocheckpoint = 0")
            try database.execute("UPDATE ZPRODUCT SET ZNAME = 'Changed in the WAL' WHERE Z_PK = 1")
            // The store and its WAL as the app left them (copied while it is open).
            for suffix in ["", "-wal"] {
                try FileManager.default.copyItem(
                    atPath: store + suffix, toPath: copy.appendingPathComponent("Products.sqlite" + suffix).path)
            }
        }
        let copied = copy.appendingPathComponent("Products.sqlite").path
        let before = try Self.files(copy)
        #expect(before.keys.sorted() == ["Products.sqlite", "Products.sqlite-wal"])
        let inspect = try cli.run("inspect", copied, "--models", Self.models)
        #expect(inspect.status == 0, "\(inspect.stderr)")
        #expect(inspect.stdout == "\(copied): model version Products1 (by its version hashes)\n  Product: 4\n")
        #expect(try Self.files(copy) == before, "inspect changed the folder")
        let run = try cli.run("run", copied, "--models", Self.models, "--quiet")
        #expect(run.status == 0, "\(run.stderr)")
        let model = try #require(try ObjectModel.loadVersions(at: URL(fileURLWithPath: Self.models)).last)
        let context = ObjectContext(store: try Store.open(at: copied, model: model, mode: .readOnly))
        #expect(try context.object(entityName: "Product", primaryKey: 1)["name"] == .string("Changed in the WAL"))
    }
}
