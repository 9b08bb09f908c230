import CSQLiteBaseline
import Foundation

// The few helpers the raw baselines share: opening, running SQL and preparing, each
// stopping the benchmark on an error. The measured loops call sqlite3_* directly.

/// `SQLITE_STATIC`: SQLite uses the bytes where they are, for as long as the binding.
let sqliteStatic: sqlite3_destructor_type? = nil
/// `SQLITE_TRANSIENT`: SQLite copies the bytes at once.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

enum RawSQLite {
    static func open(_ path: String, readOnly: Bool = false, uri: Bool = false) -> OpaquePointer {
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX | (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE)
        if uri { flags |= SQLITE_OPEN_URI }
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else { die("cannot open \(path): SQLite error \(rc)") }
        return db
    }

    /// Binds a generated product to the raw loops' `INSERT INTO ZPRODUCT (Z_PK, Z_ENT,
    /// Z_OPT, ZNAME, ZSKU, ZPRICE, ZQUANTITY, ZWEIGHT, ZADDED, ZACTIVE, ZNOTES) VALUES (?, ?,
    /// 1, ?, …)`.
    @inline(__always)
    static func bindProduct(_ row: ProductRow, key: Int64, entity: Int64, to insert: OpaquePointer) {
        sqlite3_bind_int64(insert, 1, key)
        sqlite3_bind_int64(insert, 2, entity)
        sqlite3_bind_text(insert, 3, row.name, -1, sqliteTransient)
        if let sku = row.sku {
            sqlite3_bind_text(insert, 4, sku, -1, sqliteTransient)
        } else {
            sqlite3_bind_null(insert, 4)
        }
        sqlite3_bind_double(insert, 5, row.price)
        sqlite3_bind_int64(insert, 6, row.quantity)
        if let weight = row.weight { sqlite3_bind_double(insert, 7, weight) } else { sqlite3_bind_null(insert, 7) }
        if let added = row.added { sqlite3_bind_double(insert, 8, added) } else { sqlite3_bind_null(insert, 8) }
        sqlite3_bind_int64(insert, 9, row.active ? 1 : 0)
        if let notes = row.notes {
            sqlite3_bind_text(insert, 10, notes, -1, sqliteTransient)
        } else {
            sqlite3_bind_null(insert, 10)
        }
    }

    static func close(_ db: OpaquePointer) {
        let rc = sqlite3_close(db)
        if rc != SQLITE_OK { die("cannot close: \(message(db))") }
    }

    static func exec(_ db: OpaquePointer, _ sql: String) {
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        if rc != SQLITE_OK { die("\(sql): \(message(db))") }
    }

    static func prepare(_ db: OpaquePointer, _ sql: String) -> OpaquePointer {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else { die("\(sql): \(message(db))") }
        return statement
    }

    /// Steps an INSERT or UPDATE to completion and resets it.
    @inline(__always)
    static func run(_ statement: OpaquePointer, _ db: OpaquePointer) {
        if sqlite3_step(statement) != SQLITE_DONE { die("step: \(message(db))") }
        sqlite3_reset(statement)
    }

    /// The first column of the first row, as an integer.
    static func integer(_ db: OpaquePointer, _ sql: String) -> Int64 {
        let statement = prepare(db, sql)
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { die("\(sql): no row") }
        return sqlite3_column_int64(statement, 0)
    }

    /// The first column of the first row, as text.
    static func text(_ db: OpaquePointer, _ sql: String) -> String {
        let statement = prepare(db, sql)
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else {
            die("\(sql): no row")
        }
        return String(cString: text)
    }

    static func message(_ db: OpaquePointer) -> String { String(cString: sqlite3_errmsg(db)) }

    /// `Z_ENT` of an entity, as the store's Z_PRIMARYKEY table has it.
    static func entityNumber(_ db: OpaquePointer, _ entity: String) -> Int64 {
        integer(db, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = '\(entity)'")
    }

    /// `journal_mode`, `synchronous` and `cache_size` of a connection, for the report.
    static func pragmas(_ db: OpaquePointer) -> String {
        let synchronous = ["OFF", "NORMAL", "FULL", "EXTRA"]
        let s = Int(integer(db, "PRAGMA synchronous"))
        return
            "journal_mode \(text(db, "PRAGMA journal_mode").uppercased()), synchronous \(s < synchronous.count ? synchronous[s] : "\(s)"), "
            + "cache_size \(integer(db, "PRAGMA cache_size"))"
    }
}

/// Stops the benchmark with a message, removing its temporary stores (in a variant's child
/// process, which has none, the parent reports the failure and removes them).
func die(_ message: String) -> Never {
    FileHandle.standardError.write(Data("remodel-bench: \(message)\n".utf8))
    removeTemporaryDirectory()
    exit(1)
}
