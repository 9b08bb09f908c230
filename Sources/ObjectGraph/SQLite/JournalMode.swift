/// How SQLite keeps a database consistent while writing: a rollback journal beside the
/// file while a transaction runs (`DELETE`, the stores of older systems), or a write-ahead
/// log (`WAL`, Core Data's default since iOS 7 and macOS 10.9), with `-wal` and `-shm`
/// files while the database is open. The mode is kept in the file: WAL in its header.
public enum JournalMode: String, CaseIterable, Sendable {
    case delete
    case wal
}

extension Database {
    /// The connection's journal mode. Modes other than `DELETE` and `WAL` (`TRUNCATE`,
    /// `PERSIST`, `MEMORY`, `OFF`) are rollback journals too and read as ``JournalMode/delete``.
    public func journalMode() throws(SQLiteError) -> JournalMode {
        // An immutable connection reads a WAL file without its log (see Database.init).
        if isImmutable { return .wal }
        guard case .text(let mode)? = try scalar("PRAGMA journal_mode") else { return .delete }
        return mode.lowercased() == "wal" ? .wal : .delete
    }

    /// Switches the database to `mode`; outside a transaction. An in-memory database keeps
    /// its `MEMORY` journal.
    public func setJournalMode(_ mode: JournalMode) throws(SQLiteError) {
        _ = try scalar("PRAGMA journal_mode = \(mode.rawValue.uppercased())")
    }
}
