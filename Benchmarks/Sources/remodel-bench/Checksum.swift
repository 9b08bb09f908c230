import CSQLiteBaseline
import Foundation
import Remodel

/// An order-dependent 64-bit checksum of values: what the variants of a benchmark must
/// agree on before anything is reported. Values are mixed by what they mean, not by how
/// SQLite happens to store them (a TIMESTAMP column keeps a whole number of seconds as an
/// INTEGER), so that a checksum computed from generated values, from objects and from
/// raw columns can be compared.
struct Checksum: Equatable {
    private(set) var state: UInt64 = 0xCBF2_9CE4_8422_2325

    @inline(__always)
    mutating func add(_ word: UInt64) {
        state = (state ^ word) &* 0x0000_0100_0000_01B3
        state ^= state >> 29
    }

    mutating func addNull() { add(0x6E75_6C6C_6E75_6C6C) }

    mutating func add(integer: Int64) { add(UInt64(bitPattern: integer)) }

    mutating func add(real: Double) { add(real.bitPattern) }

    /// The length, then the bytes eight at a time.
    mutating func add(bytes: UnsafeRawBufferPointer) {
        add(UInt64(bytes.count))
        var offset = 0
        while offset + 8 <= bytes.count {
            add(bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            tail |= UInt64(bytes[offset]) << shift
            shift += 8
            offset += 1
        }
        add(tail)
    }

    mutating func add(string: String) {
        var string = string
        string.withUTF8 { add(bytes: UnsafeRawBufferPointer($0)) }
    }

    mutating func add(data: Data) {
        data.withUnsafeBytes { add(bytes: $0) }
    }

    /// A value as an object gives it: dates as seconds since 2001, booleans as 0 and 1.
    mutating func add(value: Value) {
        switch value {
        case .null: addNull()
        case .integer(let i): add(integer: i)
        case .bool(let b): add(integer: b ? 1 : 0)
        case .double(let d): add(real: d)
        case .date(let d): add(real: d.timeIntervalSinceReferenceDate)
        case .string(let s): add(string: s)
        case .data(let d): add(data: d)
        default: die("no checksum for \(value.kind.rawValue) values")
        }
    }

    var hex: String { String(state, radix: 16) }
}

/// How a column's values are mixed into a checksum.
enum ColumnKind {
    case integer, real, text, blob
}

/// Count and checksum of the columns of a table, in primary-key order, read with the C API.
/// What the benchmarks compare the destinations of their variants with.
func tableChecksum(_ path: String, table: String, columns: [(String, ColumnKind)], where condition: String = "1")
    -> (rows: Int, checksum: Checksum)
{
    let db = RawSQLite.open(path, readOnly: true)
    defer { RawSQLite.close(db) }
    let statement = RawSQLite.prepare(
        db, "SELECT \(columns.map(\.0).joined(separator: ", ")) FROM \(table) WHERE \(condition) ORDER BY Z_PK")
    defer { sqlite3_finalize(statement) }
    var checksum = Checksum()
    var rows = 0
    while true {
        let rc = sqlite3_step(statement)
        if rc == SQLITE_DONE { break }
        guard rc == SQLITE_ROW else { die("\(path): \(RawSQLite.message(db))") }
        rows += 1
        for (i, (_, kind)) in columns.enumerated() {
            checksum.addColumn(statement, Int32(i), kind)
        }
    }
    return (rows, checksum)
}

extension Checksum {
    /// A column of the current row, read as `kind`.
    @inline(__always)
    mutating func addColumn(_ statement: OpaquePointer, _ index: Int32, _ kind: ColumnKind) {
        if sqlite3_column_type(statement, index) == SQLITE_NULL {
            addNull()
            return
        }
        switch kind {
        case .integer: add(integer: sqlite3_column_int64(statement, index))
        case .real: add(real: sqlite3_column_double(statement, index))
        case .text:
            let text = sqlite3_column_text(statement, index)
            add(bytes: UnsafeRawBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, index))))
        case .blob:
            let blob = sqlite3_column_blob(statement, index)
            add(bytes: UnsafeRawBufferPointer(start: blob, count: Int(sqlite3_column_bytes(statement, index))))
        }
    }
}
