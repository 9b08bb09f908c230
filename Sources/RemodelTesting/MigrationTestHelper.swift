import Foundation
@_exported import Remodel

/// Migrations in your own test suite: "migrate this fixture store to version N and give
/// me a context on the result", without ever touching the fixture.
///
///     import RemodelTesting
///     import Testing
///
///     @Test func notesKeepTheirNotebooks() throws {
///         let context = try MigrationTestHelper.migratedCopy(
///             of: fixtures.appendingPathComponent("Notes1.sqlite"),
///             models: fixtures.appendingPathComponent("Notes.xcdatamodeld"), to: "Notes3")
///         let work = try context.fetch(FetchRequest(entityName: "Notebook", predicate: "name == 'Work'"))
///         #expect(try work[0].value(forKey: "notes").collectionElements?.count == 2)
///     }
///
/// The fixture is copied (with its `-wal` and `-shm` files, if it has them) into a new
/// folder of the temporary directory, or of `directory`, and the copy is migrated there
/// through ``StoreMigrator``: the mapping files where there are some, inferred mappings
/// for the other steps, the policies you register. The fixture is only read. The copy is
/// left for the system to clean up (or in `directory`); ``withMigratedCopy(of:models:mappings:to:policies:in:_:)``
/// removes it when its body returns.
///
/// It is a separate module so that only test targets link it: add
/// `.product(name: "RemodelTesting", package: "Remodel")` to a test target's dependencies
/// (docs/testing-migrations.md).
public enum MigrationTestHelper {
    /// Migrates a copy of `fixture` to `version` and opens it.
    ///
    /// - Parameters:
    ///   - fixture: a store at any version of `models`; it is never changed.
    ///   - models: an `.xcdatamodeld` folder, a folder of `*.model.json` files, or one model file.
    ///   - mappings: the folder of `*.mapping.json` files; by default the models folder, or
    ///     the folder that holds the `.xcdatamodeld`.
    ///   - version: the version to migrate to; by default the `.xcdatamodeld`'s current
    ///     version, or the newest.
    ///   - policies: the policies the mapping files name.
    ///   - directory: where to make the copy's folder (default: the temporary directory).
    /// - Returns: a context on the migrated copy, at `version` (read and write: a test may
    ///   go on to insert and save).
    /// - Throws: ``ModelErrors``, ``MappingErrors`` or ``MigrationError``, as
    ///   ``StoreMigrator/migrateStore(at:models:mappings:to:policies:options:keepsBackup:progress:)`` throws them.
    public static func migratedCopy(
        of fixture: URL, models: URL, mappings: URL? = nil, to version: String? = nil,
        policies: PolicyRegistry = PolicyRegistry(), in directory: URL? = nil
    ) throws -> ObjectContext {
        let migrator = try StoreMigrator(models: models, mappings: mappings, policies: policies)
        return try migratedCopy(
            of: fixture, migrator: migrator, to: version ?? StoreMigrator.currentVersion(ofModelsAt: models),
            in: directory)
    }

    /// Migrates a copy of `fixture` to `version` (default: the newest) through models and
    /// mappings already loaded, and opens it.
    public static func migratedCopy(
        of fixture: URL, models: [ObjectModel], mappings: [MappingModel], to version: String? = nil,
        policies: PolicyRegistry = PolicyRegistry(), in directory: URL? = nil
    ) throws -> ObjectContext {
        try migratedCopy(
            of: fixture, migrator: StoreMigrator(models: models, mappings: mappings, policies: policies), to: version,
            in: directory)
    }

    /// Runs `body` with a context on a migrated copy of `fixture` (see
    /// ``migratedCopy(of:models:mappings:to:policies:in:)``), then removes the copy.
    public static func withMigratedCopy<T>(
        of fixture: URL, models: URL, mappings: URL? = nil, to version: String? = nil,
        policies: PolicyRegistry = PolicyRegistry(), in directory: URL? = nil,
        _ body: (ObjectContext) throws -> T
    ) throws -> T {
        let folder = try makeFolder(in: directory)
        defer { try? FileManager.default.removeItem(at: folder) }
        let context = try migratedCopy(
            of: fixture, models: models, mappings: mappings, to: version, policies: policies, in: folder)
        return try body(context)
    }

    /// Copies `fixture`, its side files and its external binary data (the
    /// `.<name>_SUPPORT` folder beside it) into a new folder of `directory` (default: the
    /// temporary directory) and returns the copy's URL. The fixture is only read.
    public static func copy(of fixture: URL, in directory: URL? = nil) throws -> URL {
        guard FileManager.default.fileExists(atPath: fixture.path) else {
            throw MigrationError(.sourceStore, "no such fixture store: \(fixture.path)")
        }
        let folder = try makeFolder(in: directory)
        let copy = folder.appendingPathComponent(fixture.lastPathComponent)
        // A WAL store's recent transactions are in its -wal file: copy them together.
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: fixture.path + suffix) {
            try FileManager.default.copyItem(atPath: fixture.path + suffix, toPath: copy.path + suffix)
        }
        let support = ExternalBinaryData.folder(ofStoreAt: fixture.path).deletingLastPathComponent()
        if FileManager.default.fileExists(atPath: support.path) {
            try FileManager.default.copyItem(
                at: support, to: ExternalBinaryData.folder(ofStoreAt: copy.path).deletingLastPathComponent())
        }
        return copy
    }

    private static func migratedCopy(of fixture: URL, migrator: StoreMigrator, to version: String?, in directory: URL?)
        throws -> ObjectContext
    {
        var migrator = migrator
        migrator.keepsBackup = false
        let copy = try copy(of: fixture, in: directory)
        let target = version ?? migrator.models.last!.version
        try migrator.migrate(storeAt: copy.path, to: target)
        guard let model = migrator.models.first(where: { $0.version == target }) else {
            throw MigrationError(
                .invalidMapping,
                "no model version '\(target)'; the versions are \(migrator.models.map(\.version).joined(separator: ", "))"
            )
        }
        return ObjectContext(
            store: try Store.open(at: copy.path, model: model, mode: .readWrite), functions: migrator.policies.functions
        )
    }

    private static func makeFolder(in directory: URL?) throws -> URL {
        let folder = (directory ?? FileManager.default.temporaryDirectory).appendingPathComponent(
            "remodel-migrated-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}
