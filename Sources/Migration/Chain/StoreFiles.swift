import Foundation
import ObjectGraph

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Replacing a store file with a new one so that, whatever happens, the path holds either
/// the old store or the new one, complete.
enum StoreFiles {
    /// Writes a new store through `body` into a temporary file beside `path`, syncs it,
    /// and renames it over `path`, keeping the old file as `path + backupSuffix` (when
    /// given). The old store's WAL is folded into it first, so no data in a WAL is lost
    /// and no old WAL is ever paired with the new file.
    static func replace<T>(storeAt path: String, backupSuffix: String?,
                           _ body: (String) throws(MigrationError) -> T) throws(MigrationError) -> T {
        let temporary = path + ".remodel-new"
        MigrationManager.removeStoreFiles(at: temporary)
        try checkpoint(path)
        let result = try body(temporary)
        try sync(temporary)
        if let backupSuffix {
            let backup = path + backupSuffix
            MigrationManager.removeStoreFiles(at: backup)
            guard link(path, backup) == 0 || copy(path, backup) else {
                MigrationManager.removeStoreFiles(at: temporary)
                throw MigrationError(.destinationStore, "cannot keep a backup at \(backup): \(String(cString: strerror(errno)))")
            }
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            MigrationManager.removeStoreFiles(at: temporary)
            throw MigrationError(.destinationStore, "cannot put the new store in place of \(path): \(reason)")
        }
        // The old store had no WAL left (see checkpoint); stale side files must not be
        // paired with the new file.
        for suffix in ["-wal", "-shm", "-journal"] { unlink(path + suffix) }
        syncDirectory(of: path)
        return result
    }

    /// Folds a WAL into its database and leaves the database in rollback-journal mode, so
    /// that the file alone holds all its data.
    static func checkpoint(_ path: String) throws(MigrationError) {
        guard FileManager.default.fileExists(atPath: path + "-wal") else { return }
        do {
            let database = try Database(path: path, mode: .readWrite)
            try database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            try database.execute("PRAGMA journal_mode = DELETE")
        } catch {
            throw MigrationError(.sourceStore, "cannot fold the store's WAL into it before migrating: \(error)")
        }
    }

    static func sync(_ path: String) throws(MigrationError) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0, fsync(fd) == 0 else {
            if fd >= 0 { close(fd) }
            throw MigrationError(.destinationStore, "cannot sync the new store to disk: \(String(cString: strerror(errno)))")
        }
        close(fd)
    }

    static func syncDirectory(of path: String) {
        let directory = (path as NSString).deletingLastPathComponent
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }

    private static func copy(_ from: String, _ to: String) -> Bool {
        (try? FileManager.default.copyItem(atPath: from, toPath: to)) != nil
    }
}
