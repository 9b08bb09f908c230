import Foundation
import ObjectGraph
import Testing

/// Files that are not stores, in the store's place: every command that reads a store
/// fails the same way, with the store's path and what is wrong, and changes nothing.
@Suite struct HostileStoreTests {
    let cli = MappingMigrateBinaryTests()
    static let models = "mappings/product-price"

    /// Each case: how to make the file at a path, and the message after the path.
    static let cases: [(name: String, message: String)] = [
        ("empty", "not a Core Data store: it has no Z_METADATA and Z_PRIMARYKEY tables"),
        ("truncated", "the file is damaged or truncated: SQLite cannot read it (database disk image is malformed)"),
        ("text", "not a Core Data store: it is not a SQLite database file"),
        ("plain SQLite", "not a Core Data store: it has no Z_METADATA and Z_PRIMARYKEY tables"),
        ("folder", "is a folder, not a store file; give the .sqlite file inside it")
    ]

    static func make(_ name: String, at path: String) throws {
        switch name {
        case "empty": #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        case "truncated":
            let store = try Data(
                contentsOf: MappingMigrateBinaryTests.root.appendingPathComponent(
                    "mappings/product-price/Products1.sqlite"))
            try store.prefix(5000).write(to: URL(fileURLWithPath: path))
        case "text": try Data("hello\n".utf8).write(to: URL(fileURLWithPath: path))
        case "plain SQLite": try Database(path: path, mode: .create).execute("CREATE TABLE t (x)")
        case "folder": try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        default: Issue.record("no such case \(name)")
        }
    }

    @Test func everyCommandSaysTheSame() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, message) in Self.cases {
            let path = directory.appendingPathComponent(name.replacingOccurrences(of: " ", with: "-") + ".sqlite").path
            try Self.make(name, at: path)
            let before = try SideFileTests.files(directory)
            for command in ["inspect", "plan", "run"] {
                let result = try cli.run([command, path, "--models", Self.models])
                #expect(result.status == 2, "\(name), \(command)")
                let separator = name == "folder" ? " " : ": "
                #expect(result.stderr == "mapping-migrate: \(path)\(separator)\(message)\n", "\(name), \(command)")
                #expect(try SideFileTests.files(directory) == before, "\(name), \(command) changed the folder")
            }
        }
    }

    /// A read-only store stays read-only after a run (and its backup too).
    @Test func aReadOnlyStoreStaysReadOnly() throws {
        let (directory, store) = try cli.temporaryCopy(of: "mappings/product-price/Products1.sqlite")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.setAttributes([.posixPermissions: 0o440], ofItemAtPath: store)
        let run = try cli.run("run", store, "--models", Self.models, "--quiet")
        #expect(run.status == 0, "\(run.stderr)")
        let permissions = try FileManager.default.attributesOfItem(atPath: store)[.posixPermissions] as? Int
        #expect(permissions == 0o440)
        let backup =
            try FileManager.default.attributesOfItem(atPath: store + ".Products1.bak")[.posixPermissions] as? Int
        #expect(backup == 0o440)
    }
}

/// The rest of the hostile-store catalogue (docs/store-format.md, "Hostile stores"): each
/// handled as documented, never changing what it must not.
@Suite struct HostileStoreCatalogueTests {
    let cli = MappingMigrateBinaryTests()
    let models = HostileStoreTests.models

    /// NULL in a required column: listed as damage, warned by `run`, whose new store then
    /// fails validation naming the object; refused by `--strict`. The store is unchanged.
    @Test func nullInARequiredColumn() throws {
        let (directory, store) = try cli.temporaryCopy(of: "mappings/product-price/Products1.sqlite")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Database(path: store, mode: .readWrite).execute("UPDATE ZPRODUCT SET ZNAME = NULL WHERE Z_PK = 2")
        let damage =
            "Product/2: 'name' is required but holds no value (NULL); it reads as nil, and a new store that keeps it fails validation"
        let inspect = try cli.run("inspect", store, "--models", models)
        #expect(inspect.stdout.contains("  damaged row: \(damage)\n"), "\(inspect.stdout)")
        let before = try SideFileTests.files(directory)
        let run = try cli.run("run", store, "--models", models, "--quiet")
        #expect(run.status == 1)
        #expect(
            run.stderr == "mapping-migrate: warning: damaged row: \(damage)\n"
                + "mapping-migrate: entity mapping \"ProductToProduct\": the new store fails validation: Product/2: 'name' is required but has no value\n"
        )
        let strict = try cli.run("run", store, "--models", models, "--strict")
        #expect(strict.status == 1)
        #expect(
            strict.stderr.hasPrefix(
                "mapping-migrate: \(store) has damaged rows, and damaged rows are refused:\n  \(damage)\n"))
        #expect(try SideFileTests.files(directory) == before)
    }

    /// A `-wal` without its `-shm` (a crash after the last write): read as SQLite reads it,
    /// without creating a `-shm`; a run folds it in and carries its rows.
    @Test func aWALWithoutItsSHM() throws {
        let (directory, store) = try cli.temporaryCopy(of: "mappings/product-price/Products1.sqlite")
        defer { try? FileManager.default.removeItem(at: directory) }
        var writer: Database? = try Database(path: store, mode: .readWrite)
        try writer?.execute("PRAGMA journal_mode = WAL")
        try writer?.execute("PRAGMA wal_autocheckpoint = 0")
        try writer?.execute("UPDATE ZPRODUCT SET ZNAME = 'Walled' WHERE Z_PK = 1")
        let database = try Data(contentsOf: URL(fileURLWithPath: store))
        let wal = try Data(contentsOf: URL(fileURLWithPath: store + "-wal"))
        writer = nil  // checkpoints and removes the WAL: put the crash's files back
        try? FileManager.default.removeItem(atPath: store + "-shm")
        try database.write(to: URL(fileURLWithPath: store))
        try wal.write(to: URL(fileURLWithPath: store + "-wal"))
        let before = try SideFileTests.files(directory)
        #expect(Set(before.keys) == ["Products.sqlite", "Products.sqlite-wal"])
        let inspect = try cli.run("inspect", store, "--models", models)
        #expect(inspect.status == 0, "\(inspect.stderr)")
        #expect(inspect.stdout.hasPrefix("\(store): model version Products1"))
        #expect(try SideFileTests.files(directory) == before, "inspect changed the folder")
        let run = try cli.run("run", store, "--models", models, "--quiet")
        #expect(run.status == 0, "\(run.stderr)")
        let migrated = try Database(path: store, mode: .readOnly)
        #expect(try migrated.scalar("SELECT ZNAME FROM ZPRODUCT WHERE Z_PK = 1") == .text("Walled"))
    }

    /// A store another process is writing: `inspect` reads what is committed, `run` stops
    /// with nothing changed and says why; once the writer is done, a run finishes. (Nothing
    /// in this process may open the store's file while the writer holds its lock: closing
    /// any descriptor of a file drops every POSIX lock the process holds on it.)
    @Test func aStoreLockedByAnotherWriter() throws {
        let (directory, store) = try cli.temporaryCopy(of: "mappings/product-price/Products1.sqlite")
        defer { try? FileManager.default.removeItem(at: directory) }
        let original = try Data(contentsOf: URL(fileURLWithPath: store))
        var writer: Database? = try Database(path: store, mode: .readWrite)
        try writer?.execute("BEGIN EXCLUSIVE")
        try writer?.execute("UPDATE ZPRODUCT SET ZNAME = 'Uncommitted' WHERE Z_PK = 1")
        let inspect = try cli.run("inspect", store, "--models", models)
        let run = try cli.run("run", store, "--models", models, "--quiet")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        try writer?.execute("ROLLBACK")
        writer = nil
        #expect(inspect.status == 0, "\(inspect.stderr)")
        #expect(inspect.stdout == "\(store): model version Products1 (by its version hashes)\n  Product: 4\n")
        #expect(run.status == 1)
        #expect(
            run.stderr == "mapping-migrate: \(store) is open in another process (SQLite: database is locked); "
                + "close the app or tool using it and run again. Nothing was changed\n")
        #expect(names == ["Products.sqlite", "Products.sqlite-journal"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == original)
        let again = try cli.run("run", store, "--models", models, "--quiet")
        #expect(again.status == 0, "\(again.stderr)")
    }
}

/// `Z_PRIMARYKEY` without its primary key, holding two rows for one entity, one of them a
/// stale counter below the table's keys: the counters are not read for a migration (the
/// new store counts its own keys), and a context inserting into such a store takes the
/// largest of the counters and the table's keys, so it never reuses a key.
@Suite struct PrimaryKeyTableTests {
    let cli = MappingMigrateBinaryTests()

    static func damage(_ store: String) throws {
        try Database(path: store, mode: .readWrite).execute(
            """
            ALTER TABLE Z_PRIMARYKEY RENAME TO OLD;
            CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
            INSERT INTO Z_PRIMARYKEY SELECT * FROM OLD;
            INSERT INTO Z_PRIMARYKEY SELECT Z_ENT, Z_NAME, Z_SUPER, 1 FROM OLD;
            DROP TABLE OLD;
            """)
    }

    @Test func duplicateAndStaleCountersAreHarmless() throws {
        let (directory, store) = try cli.temporaryCopy(of: "mappings/product-price/Products1.sqlite")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.damage(store)
        let inspect = try cli.run("inspect", store, "--models", HostileStoreTests.models)
        #expect(inspect.stdout == "\(store): model version Products1 (by its version hashes)\n  Product: 4\n")

        // A context inserting into the damaged store takes a key no row has.
        let models = try ObjectModel.loadVersions(
            at: MappingMigrateBinaryTests.root.appendingPathComponent("mappings/product-price"))
        let copy = directory.appendingPathComponent("copy.sqlite").path
        try FileManager.default.copyItem(atPath: store, toPath: copy)
        let context = ObjectContext(store: try Store.open(at: copy, model: models[0]))
        let product = try context.insert("Product")
        try product.setValue("new", forKey: "name")
        try context.save()
        #expect(product.objectID.primaryKey == 5)

        let run = try cli.run("run", store, "--models", HostileStoreTests.models, "--quiet")
        #expect(run.status == 0, "\(run.stderr)")
        let database = try Database(path: store, mode: .readOnly)
        #expect(try database.scalar("SELECT group_concat(Z_ENT || ':' || Z_MAX) FROM Z_PRIMARYKEY") == .text("1:4"))
    }
}

/// Damaged rows (docs/store-format.md, "Damaged rows"): `inspect` lists them, `run` warns
/// and reads them as `inspect` does, `run --strict` refuses the store and changes nothing.
@Suite struct DamagedRowTests {
    let cli = MappingMigrateBinaryTests()

    @Test(arguments: [
        (
            "INSERT INTO ZPRODUCT (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (99, 7, 1, 'ghost')",
            "ZPRODUCT row 99: its Z_ENT, 7, is no entity of ZPRODUCT in Products1 (1); no command reads the row"
        ),
        (
            "UPDATE ZPRODUCT SET ZQUANTITY = 'many' WHERE Z_PK = 2",
            "Product/2: 'quantity' holds text where int32 values are stored; it reads converted, as SQLite converts it"
        )
    ])
    func damagedRowsAreListedWarnedOrRefused(damage sql: String, message: String) throws {
        let (directory, store) = try cli.temporaryCopy(of: "mappings/product-price/Products1.sqlite")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Database(path: store, mode: .readWrite).execute(sql)
        let inspect = try cli.run("inspect", store, "--models", HostileStoreTests.models)
        #expect(inspect.status == 0)
        #expect(
            inspect.stdout
                == "\(store): model version Products1 (by its version hashes)\n  damaged row: \(message)\n  Product: 4\n"
        )
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        for arguments in [["run", store, "--strict"], ["run", store, "--strict", "--dry-run"]] {
            let strict = try cli.run(arguments + ["--models", HostileStoreTests.models])
            #expect(strict.status == 1, "\(arguments)")
            // (A dry run adds that it is one.)
            #expect(
                strict.stderr.hasPrefix(
                    "mapping-migrate: \(store) has damaged rows, and damaged rows are refused:\n  \(message)\n"
                        + "repair them or run without refusing them (they are then read converted, or not read). Nothing was changed\n"
                ), "\(arguments)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        }
        let run = try cli.run("run", store, "--models", HostileStoreTests.models, "--quiet")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr == "mapping-migrate: warning: damaged row: \(message)\n")
    }
}

/// Tables the model does not describe (Core Data's persistent history): said, not carried.
@Suite struct TablesOutsideTheModelTests {
    let cli = MappingMigrateBinaryTests()

    @Test func persistentHistoryIsNamedByInspectAndRun() throws {
        let (directory, store) = try cli.temporaryCopy(of: "mappings/product-price/Products1.sqlite")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try Database(path: store, mode: .readWrite)
        try database.execute(
            "CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTIMESTAMP FLOAT )")
        try database.execute(
            "CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER )")
        try database.execute("INSERT INTO ATRANSACTION VALUES (1, 16001, 1, 7.0)")
        try database.execute("INSERT INTO ACHANGE VALUES (1, 16002, 1, 0), (2, 16002, 1, 1)")
        let note =
            "the store has tables its model does not describe: ACHANGE (2 rows), ATRANSACTION (1 row) (Core Data's persistent history); a migration writes a new store without them"
        let inspect = try cli.run("inspect", store, "--models", HostileStoreTests.models)
        #expect(
            inspect.stdout
                == "\(store): model version Products1 (by its version hashes)\n  note: \(note)\n  Product: 4\n")
        let run = try cli.run("run", store, "--models", HostileStoreTests.models, "--quiet")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr == "mapping-migrate: note: \(note)\n")
    }
}
