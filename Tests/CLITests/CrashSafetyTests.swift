import Foundation
import Remodel
import Testing

@testable import Migration

#if canImport(Glibc)
    import Glibc
    import TestSupport
#endif

/// `mapping-migrate run` killed with SIGKILL at random moments, stopped with SIGINT and
/// SIGTERM, run out of disk space, in a read-only folder, and on a store another process
/// has open: each time the store is at a version of the chain, intact, with the rows of
/// that version, and a second run goes on to the end (docs/engine.md, "Steps and safety").
///
/// `scripts/crash-soak` runs ``killedAtRandomMoments()`` with many more trials:
/// `REMODEL_CRASH_TRIALS` (default 8), `REMODEL_CRASH_SEED`, `REMODEL_CRASH_NOTES`.
@Suite(.serialized) struct CrashSafetyTests {
    struct Result {
        var status: Int32
        /// Ended by a signal rather than exiting.
        var signalled: Bool
        var stderr: String
    }

    static let executable: URL? = MappingEvalProcess.executable.map {
        $0.deletingLastPathComponent().appendingPathComponent("mapping-migrate")
    }.flatMap { FileManager.default.isExecutableFile(atPath: $0.path) ? $0 : nil }

    /// Starts `mapping-migrate arguments…`, through `wrapper` (a command line that ends
    /// with the executable's path) when given; standard error goes to `stderr`.
    static func start(_ arguments: [String], wrapper: [String] = [], stderr: URL) throws -> Process {
        let executable = try #require(
            Self.executable, "mapping-migrate was not built; run `swift build --product mapping-migrate`")
        let process = Process()
        let command = wrapper + [executable.path] + arguments
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.standardOutput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: stderr)
        try process.run()
        return process
    }

    static func finish(_ process: Process, stderr: URL) -> Result {
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, signalled: process.terminationReason == .uncaughtSignal,
            stderr: (try? String(contentsOf: stderr, encoding: .utf8)) ?? "")
    }

    static func run(_ arguments: [String], wrapper: [String] = [], in folder: URL) throws -> Result {
        let stderr = folder.appendingPathComponent("stderr-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: stderr) }
        return finish(try start(arguments, wrapper: wrapper, stderr: stderr), stderr: stderr)
    }

    static func environment(_ name: String) -> String? { ProcessInfo.processInfo.environment[name] }

    /// SIGKILL at a random moment of a run, then the checks, then a second run to the end;
    /// `REMODEL_CRASH_TRIALS` times. The moments are uniform over most of the time an
    /// uninterrupted run takes, so they fall mostly inside steps; the moments between a step's file
    /// operations are each covered by StoreMigratorSafetyTests.
    @Test func killedAtRandomMoments() throws {
        let trials = Self.environment("REMODEL_CRASH_TRIALS").flatMap(Int.init) ?? 8
        let seed = Self.environment("REMODEL_CRASH_SEED").flatMap(UInt64.init) ?? 20_261_121
        let notes = Self.environment("REMODEL_CRASH_NOTES").flatMap(Int.init) ?? 800
        let fixture = try ChainFixture(notes: notes)
        var keep = false
        defer { if !keep { fixture.remove() } }
        let pristine = fixture.path("pristine.sqlite")
        try fixture.makeStore(at: pristine)
        let models = ["--models", fixture.models.path]

        // An uninterrupted run, timed: the kills fall within as long.
        let clean = try fixture.folder("clean")
        let cleanStore = clean.appendingPathComponent("Chain.sqlite").path
        try FileManager.default.copyItem(atPath: pristine, toPath: cleanStore)
        let started = Date()
        let uninterrupted = try Self.run(["run", cleanStore] + models, in: clean)
        let duration = Date().timeIntervalSince(started)
        try #require(uninterrupted.status == 0, "\(uninterrupted.stderr)")
        try #require(fixture.checkCompleted(cleanStore) == [])

        var generator = SeededGenerator(seed: seed)
        var reached: [String: Int] = [:]
        var failures: [String] = []
        for trial in 0..<trials {
            let folder = try fixture.folder("trial-\(trial)")
            let store = folder.appendingPathComponent("Chain.sqlite").path
            try FileManager.default.copyItem(atPath: pristine, toPath: store)
            // The first run of the binary is the slowest (cold caches): a little less than it.
            let delay = Double.random(in: 0..<(0.85 * duration), using: &generator)
            let stderr = folder.appendingPathComponent("stderr")
            let process = try Self.start(["run", store] + models, stderr: stderr)
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGKILL)
            let killed = Self.finish(process, stderr: stderr)
            let (version, problems) = fixture.check(store)
            let label = "trial \(trial) (seed \(seed), killed after \(String(format: "%.3f", delay)) s)"
            reached[killed.signalled ? version ?? "no version" : "completed before the kill", default: 0] += 1
            if !killed.signalled && killed.status != 0 {
                failures.append("\(label): status \(killed.status): \(killed.stderr)")
            }
            failures += problems.map { "\(label): \($0)" }
            // The second run goes on to the end.
            let again = try Self.run(["run", store] + models, in: folder)
            if again.status != 0 {
                failures.append("\(label), then a second run: status \(again.status): \(again.stderr)")
            }
            failures += fixture.checkCompleted(store).map { "\(label), then a second run: \($0)" }
            if failures.isEmpty { try? FileManager.default.removeItem(at: folder) }
        }
        keep = !failures.isEmpty
        let counts = (ChainFixture.versions + ["completed before the kill"]).compactMap { key in
            reached[key].map { "\(key) \($0)" }
        }
        print(
            "crash-safety: \(trials) kills (seed \(seed), \(notes) notes, an uninterrupted run \(String(format: "%.2f", duration)) s): "
                + "\(counts.joined(separator: ", ")); \(failures.count) failures\(keep ? " (kept in \(fixture.directory.path))" : "")"
        )
        for failure in failures { print("crash-safety failure: \(failure)") }
        #expect(failures == [])
    }

    /// SIGINT or SIGTERM stops the run at the next hook: the new file is removed, the
    /// tool says where the store is and exits with 1; a second signal stops it at once.
    @Test(arguments: [("SIGINT", [SIGINT]), ("SIGTERM", [SIGTERM]), ("SIGINT then SIGTERM", [SIGINT, SIGTERM])])
    func aSignalStopsTheRun(_ name: String, _ signals: [Int32]) throws {
        let fixture = try ChainFixture(notes: 600)
        defer { fixture.remove() }
        let store = fixture.path("Chain.sqlite")
        try fixture.makeStore(at: store)
        let stderr = fixture.directory.appendingPathComponent("stderr")
        let process = try Self.start(["run", store, "--models", fixture.models.path], stderr: stderr)
        // The handlers are installed before the first step writes its new file.
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: store + ".remodel-new"), process.isRunning, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.002)
        }
        for signal in signals { kill(process.processIdentifier, signal) }
        let result = Self.finish(process, stderr: stderr)
        #expect(result.status == 1 && !result.signalled, "\(result)")
        let (version, problems) = fixture.check(store)
        #expect(problems == [])
        if signals.count == 1 {
            let at = version ?? "?"
            #expect(result.stderr.contains("mapping-migrate: interrupted by \(name): \(at) → "), "\(result.stderr)")
            #expect(
                result.stderr.contains(" was stopped and its new file removed; \(store) is at \(at)"),
                "\(result.stderr)")
        } else {
            // The kernel hands over the two in either order.
            #expect(
                result.stderr.contains(
                    " while stopping: stopped at once; the new file was removed, and the store is at the last completed version\n"
                ), "\(result.stderr)")
        }
        #expect(!ChainFixture.files(besides: store).contains { $0.contains(".remodel-") })

        let again = try Self.run(["run", store, "--models", fixture.models.path], in: fixture.directory)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(fixture.checkCompleted(store) == [])
    }

    /// A run killed after its last step, before removing its lock file: the next run has
    /// nothing to do and removes the lock file (a dry run leaves it, changing nothing).
    @Test func aLockFileLeftAfterTheLastStepIsRemoved() throws {
        let fixture = try ChainFixture(notes: 40, folders: 2)
        defer { fixture.remove() }
        let store = fixture.path("Chain.sqlite")
        try fixture.makeStore(at: store)
        let models = ["--models", fixture.models.path]
        #expect(try Self.run(["run", store, "--quiet"] + models, in: fixture.directory).status == 0)
        try Data().write(to: URL(fileURLWithPath: store + ".remodel-lock"))
        let dry = try Self.run(["run", store, "--dry-run"] + models, in: fixture.directory)
        #expect(dry.status == 0)
        #expect(FileManager.default.fileExists(atPath: store + ".remodel-lock"))
        let again = try Self.run(["run", store] + models, in: fixture.directory)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(fixture.checkCompleted(store) == [])
    }

    /// The store before each pass is kept; Chain2 → Chain3 → Chain4 is one pass, unless
    /// --step-by-step runs each step on its own.
    @Test(arguments: [false, true]) func backupsAreKeptUnlessDeclined(stepByStep: Bool) throws {
        let fixture = try ChainFixture(notes: 100)
        defer { fixture.remove() }
        for backups in [true, false] {
            let folder = try fixture.folder(backups ? "kept" : "declined")
            let store = folder.appendingPathComponent("Chain.sqlite").path
            try fixture.makeStore(at: store)
            let result = try Self.run(
                ["run", store, "--models", fixture.models.path] + (backups ? [] : ["--no-backup"])
                    + (stepByStep ? ["--step-by-step"] : []), in: folder)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(fixture.checkCompleted(store, backups: backups) == [])
            let kept = stepByStep ? ChainFixture.versions.dropLast() : ChainFixture.backedUp[...]
            #expect(
                ChainFixture.files(besides: store)
                    == ["Chain.sqlite"] + (backups ? kept.map { "Chain.sqlite.\($0).bak" } : []))
        }
    }

    /// The size of the store at each version, from an uninterrupted run.
    static func sizes(_ fixture: ChainFixture) throws -> [Int64] {
        let folder = try fixture.folder("sizes")
        let store = folder.appendingPathComponent("Chain.sqlite").path
        try fixture.makeStore(at: store)
        let result = try run(["run", store, "--models", fixture.models.path, "--step-by-step"], in: folder)
        try #require(result.status == 0, "\(result.stderr)")
        return (ChainFixture.versions.dropLast().map { "\(store).\($0).bak" } + [store]).map {
            ((try? FileManager.default.attributesOfItem(atPath: $0)[.size]) as? NSNumber)?.int64Value ?? 0
        }
    }

    /// A file size limit (`ulimit -f`) below the store's size fails before anything is
    /// written; one the last step's larger store exceeds fails that step, which leaves
    /// the store at the version before it and no partial file. A second run without the
    /// limit goes on to the end.
    @Test func aFileSizeLimit() throws {
        let bash = "/bin/bash"
        try #require(FileManager.default.isExecutableFile(atPath: bash), "needs \(bash) for ulimit")
        let fixture = try ChainFixture(notes: 600)
        defer { fixture.remove() }
        let sizes = try Self.sizes(fixture)
        try #require(sizes[3] > sizes[0...2].max()! + 64 * 1024, "the last step makes the store larger: \(sizes)")
        func limited(_ kilobytes: Int64) -> [String] { [bash, "-c", "ulimit -f \(kilobytes) && exec \"$0\" \"$@\""] }

        // Below the store's size: nothing is touched.
        let folder = try fixture.folder("below")
        let store = folder.appendingPathComponent("Chain.sqlite").path
        try fixture.makeStore(at: store)
        let before = StoreMigratorSafetyTests.snapshot(folder)
        let refused = try Self.run(
            ["run", store, "--models", fixture.models.path], wrapper: limited(sizes[0] / 2048), in: folder)
        #expect(refused.status == 1)
        #expect(
            refused.stderr.hasPrefix("mapping-migrate: this process may not write files larger than "),
            "\(refused.stderr)")
        #expect(refused.stderr.hasSuffix("(the size of the store). Nothing was changed\n"), "\(refused.stderr)")
        #expect(StoreMigratorSafetyTests.snapshot(folder) == before)

        // Room for the first steps, not for the last. Run as one pass (the first and last
        // steps only rename), the pass fails whole: the store is as it was.
        let limit = (sizes[0...2].max()! + 32 * 1024) / 1024
        let pass = try Self.run(["run", store, "--models", fixture.models.path], wrapper: limited(limit), in: folder)
        #expect(pass.status == 1)
        #expect(
            pass.stderr.contains(
                "this process may not write files larger than \(StoreFiles.bytes(limit * 1024)) (ulimit -f). The new file was removed; the store is as it was"
            ), "\(pass.stderr)")
        #expect(fixture.check(store).version == "Chain1")
        #expect(ChainFixture.files(besides: store) == ["Chain.sqlite"])
        // Step by step, the steps before the last are done.
        let failed = try Self.run(
            ["run", store, "--models", fixture.models.path, "--step-by-step"], wrapper: limited(limit), in: folder)
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("cannot write to the new store"), "\(failed.stderr)")
        #expect(
            failed.stderr.contains(
                "this process may not write files larger than \(StoreFiles.bytes(limit * 1024)) (ulimit -f). The new file was removed; the store is as it was"
            ), "\(failed.stderr)")
        let (version, problems) = fixture.check(store)
        #expect(version == "Chain3")
        #expect(problems == [])
        #expect(
            ChainFixture.files(besides: store) == ["Chain.sqlite", "Chain.sqlite.Chain1.bak", "Chain.sqlite.Chain2.bak"]
        )

        let again = try Self.run(["run", store, "--models", fixture.models.path], in: folder)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(fixture.checkCompleted(store) == [])
    }

    /// A full disk (a small tmpfs, mounted in a user and mount namespace): the step that
    /// does not fit fails with the disk named, leaving the store at the version before it
    /// and no partial file (step by step: each step needs room for its own file); with
    /// room, a second run goes on to the end.
    @Test func aFullDisk() throws {
        let unshare = "/usr/bin/unshare"
        let probeMount = FileManager.default.temporaryDirectory.appendingPathComponent(
            "remodel-probe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: probeMount, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: probeMount) }
        let probe =
            FileManager.default.isExecutableFile(atPath: unshare)
            ? try Self.run(
                ["--help"],
                wrapper: [
                    unshare, "-r", "-m", "/bin/sh", "-c",
                    "mount -t tmpfs -o size=64k none \"\(probeMount.path)\" && exec \"$0\" \"$@\""
                ],
                in: probeMount.deletingLastPathComponent())
            : Result(status: -1, signalled: false, stderr: "no \(unshare)")
        guard probe.status == 0 else {
            try Test.cancel(
                "skipped: needs `unshare -r -m` to mount a small tmpfs, which is not allowed here (\(probe.stderr.prefix(200)))"
            )
        }
        let fixture = try ChainFixture(notes: 600)
        defer { fixture.remove() }
        let sizes = try Self.sizes(fixture)
        // With --no-backup a step needs its store and the new one; the free-space check
        // before a step asks for the store's size.
        let needed = max(sizes[0] + sizes[1], sizes[1] + sizes[2], 2 * sizes[2]) + 96 * 1024
        try #require(sizes[2] + sizes[3] > needed + 64 * 1024, "the last step makes the store larger: \(sizes)")
        let mount = try fixture.folder("mount"), first = try fixture.folder("first"),
            second = try fixture.folder("second")
        let tool = try #require(Self.executable).path
        let script = """
            set -e
            mount -t tmpfs -o size=\(needed / 1024)k remodel "\(mount.path)"
            cp "\(fixture.path("pristine.sqlite"))" "\(mount.path)/Chain.sqlite"
            set +e
            "\(tool)" run "\(mount.path)/Chain.sqlite" --models "\(fixture.models.path)" --no-backup --step-by-step 2> "\(first.path)/stderr"
            echo $? > "\(first.path)/status"
            cp -a "\(mount.path)/." "\(first.path)/"
            mount -o remount,size=64m "\(mount.path)"
            "\(tool)" run "\(mount.path)/Chain.sqlite" --models "\(fixture.models.path)" --no-backup 2> "\(second.path)/stderr"
            echo $? > "\(second.path)/status"
            cp -a "\(mount.path)/." "\(second.path)/"
            """
        try fixture.makeStore(at: fixture.path("pristine.sqlite"))
        let result = try Self.run([], wrapper: [unshare, "-r", "-m", "/bin/sh", "-c", script], in: fixture.directory)
        try #require(result.status == 0, "\(result.stderr)")
        func read(_ folder: URL, _ name: String) -> String {
            (try? String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)) ?? ""
        }
        let stderr = read(first, "stderr")
        #expect(read(first, "status") == "1\n", "\(stderr)")
        #expect(stderr.contains("database or disk is full"), "\(stderr)")
        #expect(stderr.contains("the disk is full ("), "\(stderr)")
        let store = first.appendingPathComponent("Chain.sqlite").path
        #expect(fixture.check(store).version == "Chain3")
        #expect(fixture.check(store).problems == [])
        #expect(ChainFixture.files(besides: store) == ["Chain.sqlite", "status", "stderr"])

        #expect(read(second, "status") == "0\n", "\(read(second, "stderr"))")
        #expect(fixture.checkCompleted(second.appendingPathComponent("Chain.sqlite").path, backups: false) == [])
    }

    /// A folder the tool cannot write to: a clear message, status 1, nothing changed; a
    /// second run where it can goes to the end. Root writes anywhere, so as root the tool
    /// runs as `nobody` (setpriv).
    @Test func aReadOnlyFolder() throws {
        let fixture = try ChainFixture(notes: 60)
        defer { fixture.remove() }
        let folder = try fixture.folder("store")
        let store = folder.appendingPathComponent("Chain.sqlite").path
        try fixture.makeStore(at: store)
        var wrapper: [String] = []
        if getuid() == 0 {
            let setpriv = "/usr/bin/setpriv"
            guard FileManager.default.isExecutableFile(atPath: setpriv) else {
                try Test.cancel(
                    "skipped: as root every folder is writable, and \(setpriv) is not there to run the tool as nobody")
            }
            wrapper = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
            // nobody reads the store and the models, and cannot write in the folder.
            for path in [fixture.directory.path, folder.path, fixture.models.path] { chmod(path, 0o755) }
            for name in try FileManager.default.contentsOfDirectory(atPath: fixture.models.path) {
                chmod(fixture.models.appendingPathComponent(name).path, 0o644)
            }
            chmod(store, 0o644)
        } else {
            chmod(folder.path, 0o555)
        }
        let before = StoreMigratorSafetyTests.snapshot(folder)
        let refused = try Self.run(
            ["run", store, "--models", fixture.models.path], wrapper: wrapper, in: fixture.directory)
        chmod(folder.path, 0o755)
        #expect(refused.status == 1)
        #expect(
            refused.stderr
                == "mapping-migrate: cannot migrate \(store): its folder \(folder.path) is not writable (Permission denied); each step writes the new store beside the old one. Nothing was changed\n"
        )
        #expect(StoreMigratorSafetyTests.snapshot(folder) == before)

        let again = try Self.run(["run", store, "--models", fixture.models.path], in: fixture.directory)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(fixture.checkCompleted(store) == [])
    }

    /// A store another process has open in WAL mode (an app that is running) is not
    /// migrated: the tool says so and changes nothing; once it is closed, a run migrates
    /// it with what was in its WAL.
    @Test func aStoreOpenInAnotherProcess() throws {
        let fixture = try ChainFixture(notes: 60)
        defer { fixture.remove() }
        let store = fixture.path("Chain.sqlite")
        var open: ObjectContext? = ObjectContext(
            store: try Store.create(at: store, model: try #require(try fixture.loadModels().first), journalMode: .wal))
        try open?.insertSeed(JSON.parse(fixture.seed))
        try open?.save()
        #expect(FileManager.default.fileExists(atPath: store + "-wal"))
        let refused = try Self.run(["run", store, "--models", fixture.models.path], in: fixture.directory)
        #expect(refused.status == 1)
        #expect(
            refused.stderr
                == "mapping-migrate: \(store) is open in another process (SQLite: database is locked); close the app or tool using it and run again. Nothing was changed\n"
        )
        #expect(
            ChainFixture.files(besides: store) == ["Chain.sqlite", "Chain.sqlite-shm", "Chain.sqlite-wal", "models"])

        open = nil
        let again = try Self.run(["run", store, "--models", fixture.models.path], in: fixture.directory)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(fixture.checkCompleted(store) == [])
    }
}
