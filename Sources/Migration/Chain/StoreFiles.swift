import Foundation
import ObjectGraph

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Replacing a store file with a new one so that, whatever happens — a failure, a
/// cancellation, a crash, a power loss — the path holds either the old store or the new
/// one, complete, and never a store paired with another file's journal or WAL
/// (docs/engine.md, "Steps and safety").
enum StoreFiles {
    /// The file a step writes beside the store.
    static let temporarySuffix = ".remodel-new"

    /// The moments of a step between which the files beside the store change. A crash at
    /// any moment leaves what the files were at the last moment passed; tests stop a step
    /// at each to check that a second run continues from there.
    enum Moment: String, CaseIterable, Sendable {
        /// Checks passed, the WAL folded in, a new file of an earlier run removed.
        case prepared
        /// The new store is complete in `<store>.remodel-new`.
        case written
        /// … and synced to disk.
        case synced
        /// The old store is linked (or copied) to its backup.
        case backedUp
        /// The new store is in the store's place.
        case renamed
        /// The folder is synced: the step is done.
        case finished
    }

    /// Writes a new store through `body` into `<path>.remodel-new`, syncs it, and renames
    /// it over `path`, keeping the old file as `path + backupSuffix` (when given).
    ///
    /// Before anything is written: the folder must be writable and hold about the store's
    /// size; a new file left by a run that crashed is removed (never used); the store's
    /// WAL (or a hot journal) is folded into it, which fails if another process has it
    /// open in WAL mode. While the step runs, a read lock keeps other processes from
    /// committing to the store, and the new file is put in place only if no journal or
    /// WAL has appeared beside the store. On any failure, and when `beforeCommit` throws
    /// (a cancellation), the new file is removed (and `discard` called) and the store is as
    /// it was. `afterCommit` runs once the new file is in place.
    static func replace<T>(
        storeAt path: String, backupSuffix: String?,
        observe: ((Moment) -> Void)? = nil,
        beforeCommit: () throws(MigrationError) -> Void = {},
        discard: () -> Void = {},
        afterCommit: () -> Void = {},
        _ body: (String) throws(MigrationError) -> T
    ) throws(MigrationError) -> T {
        let temporary = path + temporarySuffix
        try checkWritable(folderOf: path)
        // A new file left by a run that crashed is discarded, never used.
        removeFiles(of: temporary)
        try checkSpace(forReplacing: path)
        try foldSideFiles(path)
        let reader = try ReadLock(path)
        observe?(.prepared)
        let result: T
        var storeDescriptor: Int32?
        defer { if let storeDescriptor { close(storeDescriptor) } }
        do throws(MigrationError) {
            result = try body(temporary)
            observe?(.written)
            try beforeCommit()
            try sync(temporary, what: "the new store")
            observe?(.synced)
            try checkNoSideFiles(path)
            // The new file has the store's permissions: a read-only store stays read-only.
            var original = stat()
            if stat(path, &original) == 0 { chmod(temporary, original.st_mode & 0o7777) }
            if let backupSuffix {
                // A copied backup's descriptor of the store stays open until the read lock
                // is released (closing it would release the lock: POSIX locks go with any
                // close of the file in the process).
                storeDescriptor = try keepBackup(of: path, at: path + backupSuffix)
                observe?(.backedUp)
            }
            guard rename(temporary, path) == 0 else {
                throw MigrationError(.destinationStore, "cannot put the new store in place of \(path): \(errorText())")
            }
        } catch {
            removeFiles(of: temporary)
            discard()
            throw explained(error, path: path)
        }
        observe?(.renamed)
        afterCommit()
        // None of these exist (checkNoSideFiles, with the read lock held); should one have
        // appeared since, it belongs to the old file and must not be paired with the new.
        for suffix in ["-journal", "-wal", "-shm"] { unlink(path + suffix) }
        syncDirectory(of: path)
        reader.release()
        observe?(.finished)
        return result
    }

    // MARK: - Before a step

    /// The folder must let us create, rename and remove files.
    static func checkWritable(folderOf path: String) throws(MigrationError) {
        let folder = directory(of: path)
        guard access(folder, W_OK | X_OK) == 0 else {
            throw MigrationError(
                .destinationStore,
                "cannot migrate \(path): its folder \(folder) is not writable (\(errorText())); "
                    + "each step writes the new store beside the old one. Nothing was changed")
        }
    }

    /// The folder must have room for a new file about the size of the store, and the
    /// process must be allowed to write a file that large (`ulimit -f`).
    static func checkSpace(forReplacing path: String) throws(MigrationError) {
        let needed = fileSize(path) + fileSize(path + "-wal")
        if let free = freeSpace(inFolderOf: path), free < needed {
            throw MigrationError(
                .destinationStore,
                "not enough free space for the new store in \(directory(of: path)): it needs about \(bytes(needed)) "
                    + "(the size of the store), and \(bytes(free)) is free. Nothing was changed")
        }
        if let limit = fileSizeLimit(), limit < needed {
            throw MigrationError(
                .destinationStore,
                "this process may not write files larger than \(bytes(limit)) (ulimit -f), and the new store needs about "
                    + "\(bytes(needed)) (the size of the store). Nothing was changed")
        }
    }

    /// Folds a WAL (or rolls back a hot journal) into the store so that the file alone holds
    /// all its data, and leaves it in rollback-journal mode. Fails, changing nothing, if
    /// another process has the store open in WAL mode.
    static func foldSideFiles(_ path: String) throws(MigrationError) {
        guard ["-wal", "-shm", "-journal"].contains(where: { FileManager.default.fileExists(atPath: path + $0) }) else {
            return
        }
        do {
            let database = try Database(path: path, mode: .readWrite)
            try database.execute("PRAGMA busy_timeout = 500")
            // Reading recovers a WAL and rolls back a hot journal.
            _ = try database.scalar("SELECT count(*) FROM sqlite_master")
            // The first column is 1 when the checkpoint could not complete.
            if case .integer(let busy)? = try database.scalar("PRAGMA wal_checkpoint(TRUNCATE)"), busy != 0 {
                throw MigrationError(.sourceStore, openElsewhere(path))
            }
            try database.setJournalMode(.delete)
            guard try database.journalMode() == .delete else { throw MigrationError(.sourceStore, openElsewhere(path)) }
        } catch let error as MigrationError {
            throw error
        } catch let error as SQLiteError where error.code == 5 || error.code == 6 {  // SQLITE_BUSY, SQLITE_LOCKED
            throw MigrationError(.sourceStore, openElsewhere(path))
        } catch {
            throw MigrationError(
                .sourceStore, "cannot fold the store's WAL into it before migrating: \(error). Nothing was changed",
                underlying: error)
        }
        // Closing the last connection in rollback mode removes the WAL and the shared memory.
        unlink(path + "-shm")
        if let left = ["-wal", "-journal"].first(where: { FileManager.default.fileExists(atPath: path + $0) }) {
            throw MigrationError(
                .sourceStore,
                "\(path + left) is beside the store, but SQLite does not fold it in: it is not this store's "
                    + "\(left == "-wal" ? "WAL" : "hot journal") (it may belong to another database, or be left from a finished transaction). "
                    + "The store itself is as it was; move \(path + left) away and run again")
        }
    }

    /// The file a symbolic link at `path` names (relative links are relative to the link's
    /// folder); `path` itself when it is not a link.
    static func followingLink(_ path: String) -> String {
        var path = path
        for _ in 0..<32 {  // SQLite's limit too; a loop ends as a missing store
            guard let target = linkTarget(path) else { break }
            path = target.hasPrefix("/") ? target : (directory(of: path) as NSString).appendingPathComponent(target)
        }
        return path
    }

    /// What the symbolic link at `path` names, or nil where `path` is not one (most
    /// stores: `readlink` answers without an error thrown for each).
    private static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink(path, &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func openElsewhere(_ path: String) -> String {
        "\(path) is open in another process (SQLite: database is locked); close the app or tool using it and run again. Nothing was changed"
    }

    /// A transaction on the store held for the length of a step: another process can
    /// read the store but cannot commit to it, so no write can be lost when the new file
    /// replaces it.
    final class ReadLock {
        private var database: Database?

        init(_ path: String) throws(MigrationError) {
            do {
                let database = try Database(path: path, mode: .readOnly)
                try database.execute("BEGIN")
                _ = try database.scalar("SELECT count(*) FROM sqlite_master")
                self.database = database
            } catch {
                throw MigrationError(.sourceStore, "cannot open the store: \(error)", underlying: error)
            }
        }

        func release() {
            try? database?.execute("COMMIT")
            database = nil
        }

        deinit { release() }
    }

    /// No journal or WAL beside the store: nobody began writing to it while the step ran
    /// (they would pair their journal with the new file).
    static func checkNoSideFiles(_ path: String) throws(MigrationError) {
        if let side = ["-journal", "-wal"].first(where: { FileManager.default.fileExists(atPath: path + $0) }) {
            throw MigrationError(
                .sourceStore,
                "another process began writing to \(path) during the migration (\(path + side) appeared); "
                    + "the new store was not put in place. Close the app or tool using the store and run again")
        }
    }

    /// Only one migration of a store at a time: an exclusive `flock` on
    /// `<store>.remodel-lock`, held from planning to the last step and removed at the end.
    /// A lock file left by a run that was killed holds no lock, and the next run takes it.
    final class Lock {
        static let suffix = ".remodel-lock"
        private let path: String
        private var descriptor: Int32

        init(storeAt store: String) throws(MigrationError) {
            path = store + Self.suffix
            while true {
                let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
                guard fd >= 0 else {
                    throw MigrationError(
                        .destinationStore, "cannot create the lock file \(path): \(errorText()). Nothing was changed")
                }
                guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                    let reason = errno
                    close(fd)
                    if reason == EWOULDBLOCK {
                        throw MigrationError(
                            .destinationStore,
                            "another migration of \(store) is running (it holds \(path)); wait for it to end. Nothing was changed"
                        )
                    }
                    throw MigrationError(
                        .destinationStore, "cannot lock \(path): \(errorText(reason)). Nothing was changed")
                }
                // The run that held it may have removed it before we locked it: lock the file
                // that is there now.
                var locked = stat(), current = stat()
                if fstat(fd, &locked) == 0, stat(path, &current) == 0, locked.st_ino == current.st_ino,
                    locked.st_dev == current.st_dev
                {
                    descriptor = fd
                    return
                }
                close(fd)
            }
        }

        /// Removes the lock file, then unlocks it.
        func release() {
            guard descriptor >= 0 else { return }
            unlink(path)
            close(descriptor)
            descriptor = -1
        }

        deinit { release() }
    }

    /// Removes the new file and the lock file a killed run left beside a store that needs
    /// no step, when no other run holds the lock.
    static func removeLeftovers(of path: String) {
        let leftovers = [temporarySuffix, Lock.suffix].contains { FileManager.default.fileExists(atPath: path + $0) }
        guard leftovers, access(directory(of: path), W_OK | X_OK) == 0, let lock = try? Lock(storeAt: path) else {
            return
        }
        removeFiles(of: path + temporarySuffix)
        lock.release()
    }

    // MARK: - Files

    /// Keeps the store as it is at `backup`: a hard link (no copy, no space), or a synced
    /// copy where the file system has no hard links. A backup already there (of an earlier
    /// run) is replaced. A copy returns its open descriptor of the store, for the caller to
    /// close once it no longer holds a lock on the store: closing any descriptor of a file
    /// releases every POSIX lock the process holds on it, SQLite's included.
    static func keepBackup(of path: String, at backup: String) throws(MigrationError) -> Int32? {
        removeFiles(of: backup)
        if link(path, backup) == 0 { return nil }
        let reason = errno
        guard [EPERM, EXDEV, EMLINK, ENOTSUP, EOPNOTSUPP, ENOSYS].contains(reason) else {
            throw MigrationError(.destinationStore, "cannot keep a backup at \(backup): \(errorText(reason))")
        }
        let source = open(path, O_RDONLY)
        guard source >= 0 else {
            throw MigrationError(.destinationStore, "cannot keep a backup at \(backup): \(errorText())")
        }
        do throws(MigrationError) {
            try copy(from: source, to: backup)
            try sync(backup, what: "the backup")
            return source
        } catch {
            // (The caller's lock is gone with this close; the step stops anyway.)
            close(source)
            unlink(backup)
            throw error
        }
    }

    /// Copies what `source` reads into a new file at `path`.
    static func copy(from source: Int32, to path: String) throws(MigrationError) {
        let target = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard target >= 0 else {
            throw MigrationError(.destinationStore, "cannot keep a backup at \(path): \(errorText())")
        }
        defer { close(target) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: off_t = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(source, $0.baseAddress, $0.count, offset) }
            if count == 0 { return }
            guard count > 0 else {
                throw MigrationError(.destinationStore, "cannot keep a backup at \(path): \(errorText())")
            }
            var written = 0
            while written < count {
                let n = buffer.withUnsafeBytes { write(target, $0.baseAddress! + written, count - written) }
                guard n > 0 else {
                    throw MigrationError(.destinationStore, "cannot keep a backup at \(path): \(errorText())")
                }
                written += n
            }
            offset += off_t(count)
        }
    }

    /// Removes a store file and its side files (journal, WAL, shared memory).
    static func removeFiles(of path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] { unlink(path + suffix) }
    }

    static func sync(_ path: String, what: String) throws(MigrationError) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0, fsync(fd) == 0 else {
            let reason = errorText()
            if fd >= 0 { close(fd) }
            throw MigrationError(.destinationStore, "cannot sync \(what) to disk: \(reason)")
        }
        close(fd)
    }

    /// Makes a rename in the folder durable.
    static func syncDirectory(of path: String) {
        let fd = open(directory(of: path), O_RDONLY)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }

    static func directory(of path: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        return folder.isEmpty ? "." : folder
    }

    static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }

    static func freeSpace(inFolderOf path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(directory(of: path), &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// The largest file this process may write (`ulimit -f`), or nil when unlimited.
    static func fileSizeLimit() -> Int64? {
        var limit = rlimit()
        #if canImport(Glibc)
            guard getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit) == 0 else { return nil }
        #else
            guard getrlimit(RLIMIT_FSIZE, &limit) == 0 else { return nil }
        #endif
        return limit.rlim_cur > rlim_t(Int64.max) ? nil : Int64(limit.rlim_cur)  // RLIM_INFINITY is all ones
    }

    /// A failure to write, with what explains it when the disk is full or a file size
    /// limit is reached (SQLite reports the latter only as a disk I/O error).
    static func explained(_ error: MigrationError, path: String) -> MigrationError {
        guard error.kind == .destinationStore else { return error }
        let needed = fileSize(path)
        var reasons: [String] = []
        // By now the new file is removed and its space free again: SQLite's own words
        // (SQLITE_FULL) tell, or a disk that has little room even so.
        if let free = freeSpace(inFolderOf: path), error.message.contains("disk is full") || free < max(needed, 1 << 20)
        {
            reasons.append("the disk is full (\(bytes(free)) free in \(directory(of: path)) with the new file removed)")
        }
        if let limit = fileSizeLimit() {
            reasons.append("this process may not write files larger than \(bytes(limit)) (ulimit -f)")
        }
        guard !reasons.isEmpty else { return error }
        var explained = error
        explained.message +=
            "; " + reasons.joined(separator: ", and ") + ". The new file was removed; the store is as it was"
        return explained
    }

    static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    /// `1.5 MB`.
    static func bytes(_ count: Int64) -> String {
        let units = ["bytes", "KB", "MB", "GB", "TB"]
        var value = Double(count), unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(count) bytes" : String(format: "%.1f", value) + " " + units[unit]
    }
}
