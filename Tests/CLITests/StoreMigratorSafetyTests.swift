import Foundation
import Remodel
import Testing

@testable import Migration

/// What a failure, a cancellation or a crash at each moment of a step leaves, through the
/// library: the store at the version it was at or at a completed later one, intact, and a
/// second run that continues to the end (docs/engine.md, "Steps and safety"). The binary's
/// side — SIGKILL at random moments, signals, a full disk, a read-only folder — is in
/// CrashSafetyTests.
@Suite struct StoreMigratorSafetyTests {
    /// The files of a folder, as a crash would leave them on disk.
    typealias Snapshot = [String: Data]

    static func snapshot(_ folder: URL) -> Snapshot {
        var files: Snapshot = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] {
            files[name] = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path)
        }
        return files
    }

    static func restore(_ snapshot: Snapshot, into folder: URL) throws {
        for (name, data) in snapshot { try data.write(to: folder.appendingPathComponent(name)) }
    }

    /// A crash at each moment of each step (the files as they are then) leaves the store
    /// at the step's source version before the rename and at its destination from the
    /// rename on; a second run continues to the end from every one of them. Run as one
    /// pass (the whole chain: its first and last steps only rename), the store is
    /// replaced once, and is never at Chain2 or Chain3.
    @Test(arguments: [true, false]) func aCrashAtEveryMomentOfEveryStepResumes(inOnePass: Bool) throws {
        let fixture = try ChainFixture(notes: 120, folders: 6)
        defer { fixture.remove() }
        let folder = try fixture.folder("run")
        let store = folder.appendingPathComponent("Chain.sqlite").path
        try fixture.makeStore(at: store)
        var migrator = try fixture.migrator()
        migrator.fusesSteps = inOnePass
        var snapshots: [(step: StoreMigrator.Step, moment: StoreFiles.Moment, files: Snapshot)] = []
        migrator.stepObserver = { step, moment in snapshots.append((step, moment, Self.snapshot(folder))) }
        #expect(try migrator.migrate(storeAt: store).count == 3)
        #expect(fixture.checkCompleted(store) == [])
        let passes = inOnePass ? ChainFixture.backedUp : Array(ChainFixture.versions.dropLast())
        #expect(
            snapshots.map { "\($0.step.source.version) \($0.moment)" }
                == passes.flatMap { version in StoreFiles.Moment.allCases.map { "\(version) \($0)" } })
        #expect(
            Set(snapshots.map(\.step.destination.version))
                == Set(inOnePass ? ["Chain4"] : ChainFixture.versions.dropFirst()))

        for (index, snapshot) in snapshots.enumerated() {
            let crashed = try fixture.folder("crash-\(index)")
            try Self.restore(snapshot.files, into: crashed)
            let path = crashed.appendingPathComponent("Chain.sqlite").path
            let (version, problems) = fixture.check(path)
            let expected =
                [.renamed, .finished].contains(snapshot.moment)
                ? snapshot.step.destination.version : snapshot.step.source.version
            let label =
                "a crash when \(snapshot.step.source.version) → \(snapshot.step.destination.version) is \(snapshot.moment)"
            #expect(problems == [], "\(label)")
            #expect(version == expected, "\(label)")
            _ = try fixture.migrator().migrate(storeAt: path)
            #expect(fixture.checkCompleted(path) == [], "\(label), then a second run")
        }
    }

    /// A new file left by a crashed run is discarded (never put in place), and a backup
    /// left by an earlier run is replaced.
    @Test func leftoversOfAnEarlierRunAreDiscarded() throws {
        let fixture = try ChainFixture(notes: 60, folders: 3)
        defer { fixture.remove() }
        let store = fixture.path("Chain.sqlite")
        try fixture.makeStore(at: store)
        // A complete store at the last version as the leftover: using it would show.
        try fixture.makeStore(at: fixture.path("other.sqlite"))
        let migrator = try fixture.migrator()
        _ = try migrator.migrate(storeAt: fixture.path("other.sqlite"))
        try FileManager.default.moveItem(atPath: fixture.path("other.sqlite"), toPath: store + ".remodel-new")
        try Data("not a store".utf8).write(to: URL(fileURLWithPath: store + ".remodel-new-journal"))
        try Data("a stale backup".utf8).write(to: URL(fileURLWithPath: store + ".Chain1.bak"))
        try Data().write(to: URL(fileURLWithPath: store + ".remodel-lock"))
        _ = try fixture.migrator().migrate(storeAt: store)
        #expect(fixture.checkCompleted(store) == [])
    }

    /// A store in WAL mode whose latest objects are only in its -wal (an app that was
    /// killed): they are folded into the store and migrated, and no -wal is left.
    @Test func dataInTheWALSurvives() throws {
        let fixture = try ChainFixture(notes: 90, folders: 3)
        defer { fixture.remove() }
        let original = fixture.path("original.sqlite"), store = fixture.path("Chain.sqlite")
        let model = try #require(try fixture.loadModels().first)
        do {
            let created = try Store.create(at: original, model: model, journalMode: .wal)
            try created.database.execute("PRAGMA wal_autocheckpoint = 0")
            let context = ObjectContext(store: created)
            try context.insertSeed(JSON.parse(fixture.seed))
            try context.save()
            // The files as a crash would leave them, while the connection is open.
            try FileManager.default.copyItem(atPath: original, toPath: store)
            try FileManager.default.copyItem(atPath: original + "-wal", toPath: store + "-wal")
        }
        // The main file alone holds no note.
        let alone = try fixture.folder("alone").appendingPathComponent("Chain.sqlite").path
        try FileManager.default.copyItem(atPath: store, toPath: alone)
        #expect(
            try Database(path: alone, mode: .readOnly).scalar("SELECT count(*) FROM sqlite_master WHERE name = 'ZNOTE'")
                == .integer(0))
        #expect(FileManager.default.fileExists(atPath: store + "-wal"))

        _ = try fixture.migrator().migrate(storeAt: store)
        #expect(fixture.checkCompleted(store) == [])
    }

    /// A store with a hot journal (a writer stopped in the middle of a transaction, some
    /// of its pages already in the file): the transaction is rolled back, and the store
    /// migrated as it was before it.
    @Test func aHotJournalIsRolledBack() throws {
        let fixture = try ChainFixture(notes: 300, folders: 3)
        defer { fixture.remove() }
        let original = fixture.path("original.sqlite"), store = fixture.path("Chain.sqlite")
        try fixture.makeStore(at: original)
        let pristine = try Data(contentsOf: URL(fileURLWithPath: original))
        do {
            let writer = try Database(path: original, mode: .readWrite)
            try writer.execute("PRAGMA cache_size = 1")
            try writer.execute("BEGIN")
            try writer.execute("UPDATE ZNOTE SET ZBODY = 'changed ' || ZBODY")
            // The files as a crash would leave them, with the transaction open.
            try FileManager.default.copyItem(atPath: original, toPath: store)
            try FileManager.default.copyItem(atPath: original + "-journal", toPath: store + "-journal")
            try writer.execute("ROLLBACK")
        }
        // Changed pages were written to the file before the crash.
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) != pristine)

        let migrator = try fixture.migrator()
        #expect(try migrator.version(ofStoreAt: store).version == "Chain1")
        _ = try migrator.migrate(storeAt: store)
        #expect(fixture.checkCompleted(store) == [])
    }

    /// A store named through a symbolic link: the file it names is migrated, and the link
    /// still names it.
    @Test func aLinkToTheStoreIsFollowed() throws {
        let fixture = try ChainFixture(notes: 30, folders: 3)
        defer { fixture.remove() }
        let folder = try fixture.folder("real")
        let store = folder.appendingPathComponent("Chain.sqlite").path, link = fixture.path("Link.sqlite")
        try fixture.makeStore(at: store)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real/Chain.sqlite")
        _ = try fixture.migrator().migrate(storeAt: link)
        #expect(fixture.checkCompleted(store) == [])
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "real/Chain.sqlite")
    }

    /// Every step's mapping is compiled before the first step runs: a broken last step
    /// fails before the store is touched.
    @Test func aBrokenLaterMappingFailsBeforeAnythingIsWritten() throws {
        let fixture = try ChainFixture(notes: 30, folders: 3)
        defer { fixture.remove() }
        try Data(
            #"""
            {"sourceModel": "Chain3", "destinationModel": "Chain4", "entityMappings": [
              {"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note",
               "attributeMappings": {"summary": "$source.nosuch"}}]}
            """#.utf8
        ).write(to: fixture.models.appendingPathComponent("Chain3_to_Chain4.mapping.json"))
        let folder = try fixture.folder("run")
        let store = folder.appendingPathComponent("Chain.sqlite").path
        try fixture.makeStore(at: store)
        let before = Self.snapshot(folder)
        let error = try #require(throws: MigrationError.self) { try fixture.migrator().migrate(storeAt: store) }
        #expect(error.kind == .invalidMapping)
        #expect(error.message.hasPrefix("the mapping Chain3 → Chain4 has problems:\n"), "\(error)")
        #expect(Self.snapshot(folder) == before)
    }

    /// `cancellation.cancel` stops the step at its next hook; the store is at the last
    /// completed version, and a migrator with a new cancellation continues. (Step by
    /// step, so that there is a completed step; a pass run as one is stopped the same
    /// way, in `aPassRunAsOneIsCancelledWhole`.)
    @Test func cancellingStopsAtTheNextHook() throws {
        let fixture = try ChainFixture(notes: 60, folders: 3)
        defer { fixture.remove() }
        let store = fixture.path("Chain.sqlite")
        try fixture.makeStore(at: store)
        var migrator = try fixture.migrator()
        migrator.fusesSteps = false
        let first = migrator.cancellation
        let error = try #require(throws: MigrationError.self) {
            try migrator.migrate(storeAt: store) { step, _ in
                if step.source.version == "Chain2" { first.cancel("stopped by the test") }
            }
        }
        #expect(error.kind == .cancelled)
        #expect(
            error.description
                == "stopped by the test: Chain2 → Chain3 was stopped and its new file removed; \(store) is at Chain2 (Chain1 → Chain2 done). Run again to continue"
        )
        #expect(fixture.check(store).version == "Chain2")
        #expect(fixture.check(store).problems == [])
        #expect(ChainFixture.files(besides: store) == ["Chain.sqlite", "Chain.sqlite.Chain1.bak", "models"])
        // Cancelled stays cancelled.
        #expect(throws: MigrationError.self) { try migrator.migrate(storeAt: store) }

        // From another thread, while a step runs.
        migrator.cancellation = MigrationCancellation()
        let cancellation = migrator.cancellation
        let cancelled = try #require(throws: MigrationError.self) {
            try migrator.migrate(storeAt: store) { _, _ in
                let done = DispatchSemaphore(value: 0)
                DispatchQueue.global().async {
                    cancellation.cancel()
                    done.signal()
                }
                done.wait()
            }
        }
        #expect(cancelled.kind == .cancelled)
        #expect(cancelled.message.hasPrefix("the migration was cancelled: Chain2 → Chain3 was stopped"), "\(cancelled)")
        #expect(fixture.check(store).version == "Chain2")
        #expect(fixture.check(store).problems == [])

        migrator.cancellation = MigrationCancellation()
        _ = try migrator.migrate(storeAt: store)
        #expect(fixture.checkCompleted(store) == [])
    }

    /// Cancelled in the middle of a pass run as one, the whole pass is stopped: the store
    /// is at the version before it, with no backup and no new file, and a new run
    /// completes it.
    @Test func aPassRunAsOneIsCancelledWhole() throws {
        let fixture = try ChainFixture(notes: 60, folders: 3)
        defer { fixture.remove() }
        let store = fixture.path("Chain.sqlite")
        try fixture.makeStore(at: store)
        var migrator = try fixture.migrator()
        let cancellation = migrator.cancellation
        let error = try #require(throws: MigrationError.self) {
            try migrator.migrate(storeAt: store) { step, progress in
                if step.source.version == "Chain2", progress.stage == .createRelationships {
                    cancellation.cancel("stopped by the test")
                }
            }
        }
        #expect(
            error.description
                == "stopped by the test: Chain1 → Chain4 was stopped and its new file removed; \(store) is at Chain1. Run again to continue"
        )
        #expect(fixture.check(store).version == "Chain1")
        #expect(ChainFixture.files(besides: store) == ["Chain.sqlite", "models"])
        migrator.cancellation = MigrationCancellation()
        let reports = try migrator.migrate(storeAt: store)
        #expect(reports.map(\.isFused) == [true, false, true])
        #expect(reports.map(\.pass) == [0, 0, 0])
        #expect(fixture.checkCompleted(store) == [])
    }

    /// One migration of a store at a time: a second one fails at once, changing nothing.
    /// Where a backup must be copied (no hard links), it is copied through a descriptor the
    /// step keeps open until its read lock is released: every byte, over several buffers.
    @Test func aCopiedBackupHasEveryByte() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("backup-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SystemRandomNumberGenerator()
        let bytes = Data((0..<(3 << 20) + 12345).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let original = directory.appendingPathComponent("store.sqlite")
        try bytes.write(to: original)
        let source = open(original.path, O_RDONLY)
        defer { close(source) }
        try StoreFiles.copy(from: source, to: directory.appendingPathComponent("copy").path)
        #expect(try Data(contentsOf: directory.appendingPathComponent("copy")) == bytes)
        #expect(throws: MigrationError.self) {
            try StoreFiles.copy(from: source, to: directory.appendingPathComponent("copy").path)
        }
    }

    @Test func oneMigrationOfAStoreAtATime() throws {
        let fixture = try ChainFixture(notes: 30, folders: 3)
        defer { fixture.remove() }
        let store = fixture.path("Chain.sqlite")
        try fixture.makeStore(at: store)
        let lock = try StoreFiles.Lock(storeAt: store)
        let error = try #require(throws: MigrationError.self) { try fixture.migrator().migrate(storeAt: store) }
        #expect(
            error.description
                == "another migration of \(store) is running (it holds \(store).remodel-lock); wait for it to end. Nothing was changed"
        )
        #expect(fixture.check(store).version == "Chain1")
        lock.release()
        _ = try fixture.migrator().migrate(storeAt: store)
        #expect(fixture.checkCompleted(store) == [])
    }
}
