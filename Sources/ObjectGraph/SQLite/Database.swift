import CSQLite
import Foundation

/// A connection to one SQLite database: the thin, owned boundary between Remodel and the
/// C API. Statements are prepared once and reused; errors carry the SQL and SQLite's code
/// and message. A connection is used from one thread at a time.
public final class Database {
    /// How a database is opened.
    public enum Mode: Sendable {
        /// Read only; the file must exist and is never changed (the source of a migration).
        case readOnly
        /// Read and write an existing file.
        case readWrite
        /// Read and write, creating the file if needed.
        case create
    }

    let handle: OpaquePointer
    /// The file, or `:memory:`.
    public let path: String
    /// Whether the file is read as immutable: a read-only open of a WAL database that no
    /// other connection had open (see ``init(path:mode:)``).
    public let isImmutable: Bool

    /// Opens `path` (`:memory:` for an in-memory database).
    ///
    /// A read-only open changes nothing beside the file either: a WAL database that no
    /// other connection has open (no `-wal` or `-shm` file) is read as immutable, because
    /// SQLite would otherwise create `-wal` and `-shm` files that a read-only connection
    /// cannot remove. Do not write to such a database while it is open read-only.
    public init(path: String, mode: Mode = .create) throws(SQLiteError) {
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        var filename = path
        switch mode {
        case .readOnly:
            flags |= SQLITE_OPEN_READONLY
            // A read-only connection to a WAL database that nobody has open would create
            // -wal and -shm files it cannot remove when it closes. With no -wal file the
            // log is empty and the main file is the whole database: read it as immutable.
            if Self.isWALWithoutLog(path) {
                filename = Self.immutableURI(path)
                flags |= SQLITE_OPEN_URI
            }
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .create: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        let rc = sqlite3_open_v2(filename, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc & 0xFF, extendedCode: rc, message: "cannot open \(path): \(message)")
        }
        self.handle = db
        self.path = path
        self.isImmutable = filename != path
        sqlite3_busy_timeout(db, 5_000)
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// Whether the file at `path` is a database in WAL mode (bytes 18 and 19 of its header
    /// are 2) with neither a `-wal` nor a `-shm` file beside it: a WAL database that no
    /// connection has open and whose log is checkpointed.
    static func isWALWithoutLog(_ path: String) -> Bool {
        guard path != ":memory:", !path.hasPrefix("file:"),
            !FileManager.default.fileExists(atPath: path + "-wal"),
            !FileManager.default.fileExists(atPath: path + "-shm"),
            let handle = FileHandle(forReadingAtPath: path)
        else { return false }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 20), header.count == 20 else { return false }
        return header.starts(with: Array("SQLite format 3\0".utf8)) && header[header.startIndex + 18] == 2
            && header[header.startIndex + 19] == 2
    }

    /// `file:<path>?immutable=1`, with the characters a URI reserves (and non-ASCII bytes)
    /// escaped as `%HH`.
    static func immutableURI(_ path: String) -> String {
        var escaped = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), 0..<0x20, 0x7F...:
                escaped += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            default: escaped.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return "file:" + escaped + "?immutable=1"
    }

    func error(_ rc: Int32, sql: String? = nil) -> SQLiteError {
        SQLiteError(
            code: rc & 0xFF, extendedCode: sqlite3_extended_errcode(handle),
            message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }

    /// Stops the statement running on this connection, from any thread: it fails with
    /// SQLITE_INTERRUPT (`sqlite3_interrupt`).
    public func interrupt() {
        sqlite3_interrupt(handle)
    }

    /// ``interrupt()`` for another thread to call; the connection stays open while it is
    /// held.
    public var interrupter: Interrupter { Interrupter(database: self) }

    public struct Interrupter: @unchecked Sendable {
        // Only `interrupt`, which SQLite allows from any thread, is reached through it.
        fileprivate let database: Database

        public func interrupt() { database.interrupt() }
    }

    /// Runs one or more statements that return no rows of interest.
    public func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(message)
            throw SQLiteError(code: rc & 0xFF, extendedCode: sqlite3_extended_errcode(handle), message: text, sql: sql)
        }
    }

    /// Prepares a statement; keep it and rebind it rather than preparing again.
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try Statement(database: self, sql: sql)
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// The rowid of the last inserted row.
    public var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// The rows changed by the last statement.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// Whether a transaction is open.
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// The first column of the first row of `sql`, or nil.
    public func scalar(_ sql: String) throws(SQLiteError) -> SQLiteValue? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.value(at: 0)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
