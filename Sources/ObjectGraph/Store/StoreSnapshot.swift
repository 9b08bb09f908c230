import Foundation

/// A store as it reads with its WAL or hot journal folded in, without changing a byte of
/// its files: the store itself when it has neither, else a private copy of the store and
/// its side file in a folder of the temporary directory, with the side file folded into
/// the copy.
///
/// Reading a store in place would fold a WAL into it (a checkpoint when the last
/// connection closes) or roll a hot journal back into it, changing the file, and with a
/// side file left by another database, destroying it. Read-only commands read a snapshot;
/// a migration reads one to check that what its side file holds is still a Core Data
/// store at a known version before it folds the side file in.
///
///     let snapshot = try StoreSnapshot(of: "Notes.sqlite")
///     defer { snapshot.remove() }
///     let store = try Store.open(at: snapshot.path, model: model, mode: .readOnly)
public final class StoreSnapshot {
    /// The store, as given.
    public let store: String
    /// The file to read: ``store`` itself, or the folded copy.
    public let path: String
    /// The side files folded into the copy (`-wal`, `-journal`); empty when ``path`` is the
    /// store itself.
    public let foldedSideFiles: [String]
    private var folder: URL?

    public init(of store: String) throws(StoreError) {
        self.store = store
        let sides = ["-wal", "-journal"].filter { FileManager.default.fileExists(atPath: store + $0) }
        foldedSideFiles = sides
        guard !sides.isEmpty else {
            path = store
            return
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "remodel-snapshot-\(UUID().uuidString)")
        let copy = folder.appendingPathComponent((store as NSString).lastPathComponent).path
        path = copy
        self.folder = folder
        let named = sides.map { (store as NSString).lastPathComponent + $0 }.joined(separator: " and ")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for suffix in [""] + sides {
                try FileManager.default.copyItem(atPath: store + suffix, toPath: copy + suffix)
            }
            ExternalBinaryData.share(of: store, with: copy)
        } catch {
            remove()
            throw StoreError(
                .cannotOpen,
                "cannot copy the store with its \(named) to read it without changing it: \(error.localizedDescription)",
                path: store)
        }
        do {
            try Self.fold(copy)
            let database = try Database(path: copy, mode: .readOnly)
            let check = try database.prepare("PRAGMA quick_check")
            var problems: [String] = []
            while try check.step(), problems.count < 3 {
                if let line = check.string(at: 0), line != "ok" { problems.append(line) }
            }
            if !problems.isEmpty {
                throw StoreError(.notAStore, "SQLite's check fails: \(problems.joined(separator: "; "))")
            }
        } catch {
            remove()
            let found = (error as? StoreError)?.message ?? "\(error)"
            throw StoreError(
                .notAStore,
                "with its \(named) folded in, the store is damaged (\(found)); the side file may belong to another database. "
                    + "Nothing was changed: if \(named) is not this store's, move it away and try again", path: store)
        }
    }

    /// A message about what was read from the snapshot, as one about the store: its path
    /// in place of the copy's, and, when side files were folded in, that they may be what
    /// does not fit.
    public func explaining(_ message: String) -> String {
        var message = message.replacingOccurrences(of: path, with: store)
        if !foldedSideFiles.isEmpty {
            let named = foldedSideFiles.map { (store as NSString).lastPathComponent + $0 }.joined(separator: " and ")
            message +=
                "\n(read with its \(named) folded in; if \(named) is not this store's, it may be what does not fit: move it away and try again. Nothing was changed)"
        }
        return message
    }

    /// Removes the copy, if there is one.
    public func remove() {
        if let folder { try? FileManager.default.removeItem(at: folder) }
        folder = nil
    }

    deinit { remove() }

    /// Folds the WAL into the database at `path`, or rolls its hot journal back, leaving it
    /// in rollback-journal mode with no side file; this changes the file.
    static func fold(_ path: String) throws {
        let database = try Database(path: path, mode: .readWrite)
        // Reading recovers a WAL and rolls back a hot journal.
        _ = try database.scalar("SELECT count(*) FROM sqlite_master")
        _ = try database.scalar("PRAGMA wal_checkpoint(TRUNCATE)")
        try database.setJournalMode(.delete)
    }
}
