import FaultVFS
import Foundation
import Remodel
import Testing
import TestSupport

/// Every I/O operation SQLite makes during the notes chain (Notes1 → Notes4, three steps),
/// failed in turn through a fault-injecting VFS (Tests/FaultVFS): a read, a write (as a
/// full disk), a sync, a lock (as another process holding it) or a truncate. After each
/// failure the store is the original, byte for byte, or a complete store at a version of
/// the chain; the error says what failed; and a rerun finishes with the right contents.
///
/// Every operation is failed in turn (about four seconds); `REMODEL_FAULT_STRIDE=N` fails
/// every Nth only.
@Suite(.serialized) struct FaultInjectionTests {
    static let stride = Int(ProcessInfo.processInfo.environment["REMODEL_FAULT_STRIDE"] ?? "") ?? 1

    /// A fresh copy of the notes store in a folder of its own, whose path the VFS is armed
    /// with.
    typealias Scratch = NotesChainTests.Scratch

    static func migrator() throws -> StoreMigrator {
        try StoreMigrator(models: URL(fileURLWithPath: NotesChainTests.xcode))
    }

    /// The chain under one armed fault: nil when it finished, else its error.
    static func run(failing operation: Int64, in scratch: Scratch) throws -> MigrationError? {
        let migrator = try migrator()
        remodel_fault_vfs_arm(scratch.url.path, operation)
        defer { remodel_fault_vfs_disarm() }
        do {
            try migrator.migrate(storeAt: scratch.store, to: "Notes4")
            return nil
        } catch {
            return error
        }
    }

    @Test func everyOperationOfAChainFailsCleanly() throws {
        remodel_fault_vfs_install()
        let original = try Data(contentsOf: URL(fileURLWithPath: NotesChainTests.fixture))
        // How many operations a chain makes: none failed.
        let counting = try Scratch()
        #expect(try Self.run(failing: -1, in: counting) == nil)
        let total = remodel_fault_vfs_count()
        #expect(total > 100, "the VFS saw \(total) operations")
        #expect(try NotesChainTests.dump(counting.store, version: "Notes4") == NotesChainTests.notes4)

        var injected: [String: Int] = [:]
        var failures: [String: Int] = [:]
        var versionsLeft: [String: Int] = [:]
        // (Past the count too: the check made ahead of the statements reads on a thread of
        // its own, so a run may make a few more operations than the count, its last syncs
        // among them. It ends after 20 runs in a row that made fewer.)
        var operation: Int64 = 0, beyond = 0
        while operation < total || beyond < 20 {
            defer { operation += Int64(Self.stride) }
            let scratch = try Scratch()
            let error = try Self.run(failing: operation, in: scratch)
            let kind = String(cString: remodel_fault_vfs_failed())
            let place = "operation \(operation) (\(kind.isEmpty ? "none" : kind))"
            injected[kind, default: 0] += 1
            beyond = kind.isEmpty ? beyond + 1 : 0
            if let error {
                failures[kind, default: 0] += 1
                // The error says what failed: SQLite's own code, or the file it could not use.
                #expect(
                    error.sqlite != nil || error.description.contains("disk") || error.description.contains("lock"),
                    "\(place): \(error)")
                // The store is the original, or a complete store at a version of the chain.
                let version = try Self.migrator().version(ofStoreAt: scratch.store).version
                versionsLeft[version, default: 0] += 1
                if version == "Notes1" {
                    #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.store)) == original, "\(place)")
                }
            }
            // A rerun finishes, with the right contents.
            try Self.migrator().migrate(storeAt: scratch.store, to: "Notes4")
            #expect(try NotesChainTests.dump(scratch.store, version: "Notes4") == NotesChainTests.notes4, "\(place)")
        }
        // Each kind of operation was failed somewhere (a lock refused once is waited for and
        // taken again: the busy handler's job), and every failure left a valid store.
        #expect(Set(injected.keys).isSuperset(of: ["read", "write", "sync", "lock"]), "\(injected)")
        #expect(Set(failures.keys).isSuperset(of: ["read", "write", "sync"]), "\(failures)")
        #expect(versionsLeft.keys.allSatisfy { ["Notes1", "Notes2", "Notes3", "Notes4"].contains($0) })
        print(
            "fault injection: \(total) operations, every \(Self.stride): injected \(injected), failed runs \(failures), "
                + "stores left at \(versionsLeft)")
    }
}
