import Foundation
import Remodel
import Testing

@testable import Migration

#if canImport(Glibc)
    import Glibc
    import TestSupport
#endif

/// mappings/item-images with external storage on both sides: items whose images Core Data
/// keeps in files of `.Items_SUPPORT/_EXTERNAL_DATA`, moved to an Image entity whose data
/// also allows external storage. `mapping-migrate run` is killed with SIGKILL at random
/// moments; after each kill the store is at a version whose every reference names a file
/// that is there, with every byte of every image, and a second run finishes the job, its
/// backup still opening with every image (docs/store-format.md, "External binary data").
///
/// `REMODEL_EXTERNAL_CRASH_TRIALS` (default 6), `REMODEL_EXTERNAL_CRASH_ITEMS` (default 150),
/// `REMODEL_EXTERNAL_CRASH_SIZE` (bytes of the large images; default 110,000 to 200,000)
/// and `REMODEL_CRASH_SEED` make it a soak.
@Suite(.serialized) struct ExternalDataCrashTests {
    struct Fixture {
        let directory: URL
        let models: URL
        let v1: ObjectModel
        let v2: ObjectModel
        /// Each item's image by name; items without one are absent.
        var images: [String: Data] = [:]
        let items: Int
        /// The large images' sizes.
        let sizes: ClosedRange<Int>

        init(items: Int, sizes: ClosedRange<Int> = 110_000...200_000) throws {
            self.items = items
            self.sizes = sizes
            directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "remodel-external-\(UUID().uuidString)")
            models = directory.appendingPathComponent("models")
            try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
            let example = Repository.root.appendingPathComponent("mappings/item-images")
            for name in ["Items1.model.json", "Items1_to_Items2.mapping.json"] {
                try FileManager.default.copyItem(
                    at: example.appendingPathComponent(name), to: models.appendingPathComponent(name))
            }
            // Items2 with the image data in external storage too.
            let items2 = try String(contentsOf: example.appendingPathComponent("Items2.model.json"), encoding: .utf8)
            let external = items2.replacingOccurrences(
                of: #""data": {"type": "binary", "optional": false}"#,
                with: #""data": {"type": "binary", "optional": false, "allowsExternalBinaryDataStorage": true}"#)
            try #require(external != items2, "Items2.model.json no longer declares Image.data as expected")
            try Data(external.utf8).write(to: models.appendingPathComponent("Items2.model.json"))
            let versions = try ObjectModel.loadVersions(at: models)
            v1 = versions[0]
            v2 = versions[1]
        }

        /// An Items1 store: every fifth item without an image, every seventh a small one
        /// (inline), the others 110–200 KB, in files.
        mutating func makeStore(at path: String, seed: UInt64) throws {
            var generator = SeededGenerator(seed: seed)
            let context = ObjectContext(store: try Store.create(at: path, model: v1))
            for i in 0..<items {
                let item = try context.insert("Item")
                let name = "item \(i)"
                try item.setValue(.string(name), forKey: "name")
                guard i % 5 != 4 else { continue }
                let size = i % 7 == 6 ? 2_000 : Int.random(in: sizes, using: &generator)
                var data = Data(count: size)
                data.withUnsafeMutableBytes { bytes in
                    for i in stride(from: 0, to: size - 7, by: 8) {
                        bytes.storeBytes(of: generator.next(), toByteOffset: i, as: UInt64.self)
                    }
                }
                images[name] = data
                try item.setValue(.data(data), forKey: "image")
            }
            try context.save()
        }

        /// The version the store at `path` is at, and what is wrong with it: a reference to
        /// a file that is not there, an image that is not its item's, bytes that differ.
        func check(_ path: String) -> (version: String?, problems: [String]) {
            let migrator = StoreMigrator(models: [v1, v2], mappings: [])
            guard let model = try? migrator.version(ofStoreAt: path) else { return (nil, ["no version"]) }
            var problems: [String] = []
            do {
                let folder = ExternalBinaryData.folder(ofStoreAt: path)
                for name in try ExternalBinaryData.references(inStoreAt: path, model: model)
                where !FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path) {
                    problems.append("\(model.version): refers to \(name), which is not in \(folder.path)")
                }
                let context = ObjectContext(store: try Store.open(at: path, model: model, mode: .readOnly))
                var found: [String: Data] = [:]
                for item in try context.fetch(FetchRequest(entityName: "Item")) {
                    guard case .string(let name) = item["name"] else { continue }
                    let value = model.version == "Items1" ? try item.value(forKey: "image") : try image(of: item)
                    if case .data(let data) = value { found[name] = data }
                }
                let differing = images.keys.filter { found[$0] != images[$0] }.sorted()
                if !differing.isEmpty || found.count != images.count {
                    problems.append(
                        "\(model.version): \(found.count) images, \(images.count) expected; differing: \(differing.prefix(3))"
                    )
                }
            } catch {
                problems.append("\(model.version): \(error)")
            }
            return (model.version, problems)
        }

        func image(of item: ManagedObject) throws -> Value {
            guard case .object(let reference) = try item.value(forKey: "image"),
                let image = reference.object as? ManagedObject
            else { return .null }
            return try image.value(forKey: "data")
        }
    }

    /// At every moment of the step at which the files change, the store in place (old or
    /// new) finds every file it refers to, and so does the backup once it is made; the
    /// old version's files leave the store's folder only after the rename.
    @Test func atEveryMomentEveryReferenceHasItsFile() throws {
        var fixture = try Fixture(items: 30)
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let store = fixture.directory.appendingPathComponent("Items.sqlite").path
        try fixture.makeStore(at: store, seed: 7)
        let old = try ExternalBinaryData.references(inStoreAt: store, model: fixture.v1)
        var migrator = StoreMigrator(
            models: [fixture.v1, fixture.v2], mappings: try MappingModel.loadAll(in: fixture.models))
        var seen: [StoreFiles.Moment] = []
        var problems: [String] = []
        migrator.stepObserver = { _, moment in
            seen.append(moment)
            let (version, found) = fixture.check(store)
            let expected = [.renamed, .finished].contains(moment) ? "Items2" : "Items1"
            if version != expected { problems.append("\(moment): at \(version ?? "no version")") }
            problems += found.map { "\(moment): \($0)" }
            let present = Set(
                (try? FileManager.default.contentsOfDirectory(atPath: ExternalBinaryData.folder(ofStoreAt: store).path))
                    ?? [])
            if moment != .finished, !old.isSubset(of: present) {
                problems.append("\(moment): an old file left before the step finished")
            }
            if moment == .finished, !old.isDisjoint(with: present) {
                problems.append("finished: old files still in the store's folder")
            }
            if [.backedUp, .renamed, .finished].contains(moment) {
                let (at, backup) = fixture.check(store + ".Items1.bak")
                if at != "Items1" { problems.append("\(moment): the backup is at \(at ?? "no version")") }
                problems += backup.map { "\(moment): the backup: \($0)" }
            }
        }
        try migrator.migrate(storeAt: store)
        #expect(seen == StoreFiles.Moment.allCases)
        #expect(problems == [])
    }

    @Test func killedWhileMovingFiles() throws {
        let environment = ProcessInfo.processInfo.environment
        let trials = environment["REMODEL_EXTERNAL_CRASH_TRIALS"].flatMap(Int.init) ?? 6
        let items = environment["REMODEL_EXTERNAL_CRASH_ITEMS"].flatMap(Int.init) ?? 150
        let seed = environment["REMODEL_CRASH_SEED"].flatMap(UInt64.init) ?? 20_261_126
        let size = environment["REMODEL_EXTERNAL_CRASH_SIZE"].flatMap(Int.init)
        var fixture = try Fixture(items: items, sizes: size.map { $0...$0 } ?? 110_000...200_000)
        var keep = false
        defer { if !keep { try? FileManager.default.removeItem(at: fixture.directory) } }
        let models = ["--models", fixture.models.path]

        // The store and its support folder, copied for each run.
        let pristine = fixture.directory.appendingPathComponent("pristine")
        try FileManager.default.createDirectory(at: pristine, withIntermediateDirectories: true)
        try fixture.makeStore(at: pristine.appendingPathComponent("Items.sqlite").path, seed: seed)
        func copy(into folder: URL) throws -> String {
            try FileManager.default.copyItem(at: pristine, to: folder)
            return folder.appendingPathComponent("Items.sqlite").path
        }

        // An uninterrupted run, timed: the kills fall within as long.
        let clean = fixture.directory.appendingPathComponent("clean")
        let cleanStore = try copy(into: clean)
        let original = try ExternalBinaryData.references(inStoreAt: cleanStore, model: fixture.v1)
        #expect(original.count == fixture.images.values.filter { $0.count > 100 * 1024 }.count)
        let started = Date()
        let uninterrupted = try CrashSafetyTests.run(["run", cleanStore] + models, in: clean)
        let duration = Date().timeIntervalSince(started)
        try #require(uninterrupted.status == 0, "\(uninterrupted.stderr)")
        let (version, problems) = fixture.check(cleanStore)
        #expect(version == "Items2")
        #expect(problems == [])
        // The old version's files left the store's folder for the backup's.
        let folder = ExternalBinaryData.folder(ofStoreAt: cleanStore)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        #expect(left == (try ExternalBinaryData.references(inStoreAt: cleanStore, model: fixture.v2)))
        #expect(left.isDisjoint(with: original))
        #expect(fixture.check(cleanStore + ".Items1.bak") == ("Items1", []))

        var generator = SeededGenerator(seed: seed)
        var reached: [String: Int] = [:]
        var failures: [String] = []
        for trial in 0..<trials {
            let folder = fixture.directory.appendingPathComponent("trial-\(trial)")
            let store = try copy(into: folder)
            // Most of a run is starting up and writing the new store; the moments about its
            // end (the rename, the old files' removal) get their share from 0.3 to 1.1 runs.
            let delay = Double.random(in: (0.3 * duration)..<(1.1 * duration), using: &generator)
            let stderr = folder.appendingPathComponent("stderr")
            let process = try CrashSafetyTests.start(["run", store] + models, stderr: stderr)
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGKILL)
            let killed = CrashSafetyTests.finish(process, stderr: stderr)
            let label = "trial \(trial) (seed \(seed), killed after \(String(format: "%.3f", delay)) s)"
            let (version, problems) = fixture.check(store)
            reached[killed.signalled ? version ?? "no version" : "completed before the kill", default: 0] += 1
            failures += problems.map { "\(label): \($0)" }
            let again = try CrashSafetyTests.run(["run", store] + models, in: folder)
            if again.status != 0 { failures.append("\(label), then a second run: \(again.stderr)") }
            let (final, after) = fixture.check(store)
            if final != "Items2" { failures.append("\(label), then a second run: at \(final ?? "no version")") }
            failures += after.map { "\(label), then a second run: \($0)" }
            let (backup, old) = fixture.check(store + ".Items1.bak")
            if backup != "Items1" || !old.isEmpty {
                failures.append("\(label): the backup: \(backup ?? "none") \(old)")
            }
            if failures.isEmpty { try? FileManager.default.removeItem(at: folder) }
        }
        keep = !failures.isEmpty
        print(
            "external-data crash safety: \(trials) kills (seed \(seed), \(items) items, images of "
                + "\(size.map { "\($0) bytes" } ?? "110-200 kB"), an uninterrupted run "
                + "\(String(format: "%.2f", duration)) s): "
                + reached.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                + "; \(failures.count) failures\(keep ? " (kept in \(fixture.directory.path))" : "")")
        for failure in failures { print("external-data crash failure: \(failure)") }
        #expect(failures == [])
    }
}
