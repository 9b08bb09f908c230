import CSQLite
import Foundation

/// A prepared statement. Bind parameters (1-based, as SQLite counts them), step through
/// rows, read columns by 0-based index; reset to run it again with new bindings.
/// Finalized when released.
public final class Statement {
    let handle: OpaquePointer
    public let sql: String
    /// Kept so the connection outlives its statements.
    let database: Database

    init(database: Database, sql: String) throws(SQLiteError) {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(database.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw database.error(rc, sql: sql) }
        self.handle = statement
        self.sql = sql
        self.database = database
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Advances to the next row: true when there is one, false when done.
    @discardableResult
    public func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let rc: throw database.error(rc, sql: sql)
        }
    }

    /// Makes the statement ready to run again; bindings are kept.
    public func reset() {
        sqlite3_reset(handle)
    }

    public func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    /// Runs the statement to completion (an INSERT, UPDATE, DELETE) and resets it.
    public func run() throws(SQLiteError) {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    // MARK: Binding (1-based)

    public func bind(_ value: Int64, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    public func bind(_ value: Double, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_double(handle, index, value))
    }

    public func bind(_ value: String, at index: Int32) throws(SQLiteError) {
        // The string's own UTF-8 bytes with their length: no NUL-terminated copy (which
        // the implicit String-to-pointer conversion makes), and NULs inside survive.
        // SQLITE_TRANSIENT: SQLite copies the bytes, which live only for this call.
        var value = value
        let rc = value.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { text in
                // A NULL pointer would bind NULL, so "" gets a pointer of its own.
                sqlite3_bind_text(
                    handle, index, text.baseAddress ?? Statement.emptyText, Int32(text.count), Statement.transient)
            }
        }
        try check(rc)
    }

    // Never written after it is made: one NUL byte, for empty text and blobs, which a NULL
    // pointer would bind as NULL.
    nonisolated(unsafe) static let emptyText: UnsafePointer<CChar> = {
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
        pointer.initialize(to: 0)
        return UnsafePointer(pointer)
    }()

    public func bind(_ value: Data, at index: Int32) throws(SQLiteError) {
        let rc = value.withUnsafeBytes { bytes in
            sqlite3_bind_blob64(
                handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), sqlite3_uint64(bytes.count),
                Statement.transient)
        }
        try check(rc)
    }

    /// The number of parameters: the largest `?NNN` the statement uses.
    public var parameterCount: Int32 { sqlite3_bind_parameter_count(handle) }

    public func bindNull(at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_null(handle, index))
    }

    /// Binds `values` to `?1`, `?2`, … in order, up to the last parameter the statement
    /// names: a condition built with others may use only some of their constants
    /// (`whenTrue` without those of `whenFalse`).
    public func bind(upTo values: [SQLiteValue]) throws(SQLiteError) {
        for (i, value) in values.prefix(Int(parameterCount)).enumerated() {
            try bind(value, at: Int32(i + 1))
        }
    }

    public func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        switch value {
        case .null: try bindNull(at: index)
        case .integer(let i): try bind(i, at: index)
        case .real(let d): try bind(d, at: index)
        case .text(let s): try bind(s, at: index)
        case .blob(let d): try bind(d, at: index)
        }
    }

    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private func check(_ rc: Int32) throws(SQLiteError) {
        if rc != SQLITE_OK { throw database.error(rc, sql: sql) }
    }

    // MARK: Columns (0-based)

    public var columnCount: Int32 { sqlite3_column_count(handle) }

    public func columnName(_ index: Int32) -> String { String(cString: sqlite3_column_name(handle, index)) }

    public func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    public func int64(at index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    public func double(at index: Int32) -> Double { sqlite3_column_double(handle, index) }

    /// The column as an integer, nil when it is NULL: one lookup of the column where
    /// `isNull` and `int64(at:)` make two. (It reads the column's unprotected
    /// `sqlite3_value`, which SQLite documents as safe only on the statement's own thread;
    /// a statement is used from one thread.)
    public func int64OrNil(at index: Int32) -> Int64? {
        let value = sqlite3_column_value(handle, index)
        return sqlite3_value_type(value) == SQLITE_NULL ? nil : sqlite3_value_int64(value)
    }

    /// The column as a double, nil when it is NULL (see ``int64OrNil(at:)``).
    public func doubleOrNil(at index: Int32) -> Double? {
        let value = sqlite3_column_value(handle, index)
        return sqlite3_value_type(value) == SQLITE_NULL ? nil : sqlite3_value_double(value)
    }

    /// The column as text, nil when it is NULL: one lookup of the column for its bytes and
    /// their length (see ``int64OrNil(at:)``).
    public func string(at index: Int32) -> String? {
        let value = sqlite3_column_value(handle, index)
        guard let text = sqlite3_value_text(value) else { return nil }
        let count = Int(sqlite3_value_bytes(value))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    public func data(at index: Int32) -> Data? {
        let count = Int(sqlite3_column_bytes(handle, index))
        guard let bytes = sqlite3_column_blob(handle, index) else {
            return sqlite3_column_type(handle, index) == SQLITE_NULL ? nil : Data()
        }
        return Data(bytes: bytes, count: count)
    }

    /// The column as SQLite stores it in this row.
    public func value(at index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: .integer(int64(at: index))
        case SQLITE_FLOAT: .real(double(at: index))
        case SQLITE_TEXT: .text(string(at: index) ?? "")
        case SQLITE_BLOB: .blob(data(at: index) ?? Data())
        default: .null
        }
    }
}

/// A value as SQLite stores it.
public enum SQLiteValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}
