import CSQLite

/// An error from SQLite, with the statement it came from.
public struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// SQLite's primary result code (`SQLITE_CONSTRAINT`, …).
    public var code: Int32
    /// SQLite's extended result code (`SQLITE_CONSTRAINT_UNIQUE`, …).
    public var extendedCode: Int32
    /// SQLite's message.
    public var message: String
    /// The SQL that failed, when a statement was involved.
    public var sql: String?

    public init(code: Int32, extendedCode: Int32? = nil, message: String, sql: String? = nil) {
        self.code = code
        self.extendedCode = extendedCode ?? code
        self.message = message
        self.sql = sql
    }

    /// `SQLite error 19 (constraint failed): UNIQUE constraint failed: ZBOOK.Z_PK — in INSERT …`
    public var description: String {
        var text = "SQLite error \(extendedCode) (\(String(cString: sqlite3_errstr(code)))): \(message)"
        if let sql { text += " — in \(sql)" }
        return text
    }
}
