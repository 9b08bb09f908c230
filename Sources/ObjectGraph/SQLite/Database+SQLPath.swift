import CSQLite
import ExpressionLanguage
import Foundation

/// What a migration's SQL path needs of a connection: another store attached read-only,
/// and the SQL functions that convert values exactly as Remodel's readers and writers do
/// (docs/pushdown.md).
extension Database {
    /// Attaches the database at `path`, read-only, as `schema` (`src` in `src.ZNOTE`).
    /// A WAL database that no connection has open is attached as immutable, as
    /// ``init(path:mode:)`` opens it; nothing beside the file is created or changed.
    public func attachReadOnly(_ path: String, as schema: String) throws(SQLiteError) {
        let uri = Self.isWALWithoutLog(path) ? Self.immutableURI(path) : Self.uri(path, query: "mode=ro")
        let statement = try prepare("ATTACH DATABASE ?1 AS \(schema)")
        try statement.bind(uri, at: 1)
        try statement.run()
    }

    /// Detaches what ``attachReadOnly(_:as:)`` attached.
    public func detach(_ schema: String) throws(SQLiteError) {
        try execute("DETACH DATABASE \(schema)")
    }

    /// Registers the functions SQL written by Remodel may call on this connection:
    ///
    /// - `remodel_text(x)`: `x` as reading a text attribute gives it and binding writes
    ///   it back: NULL stays NULL, well-formed UTF-8 text is returned as it is, and
    ///   anything else is read as text with ill-formed bytes repaired (U+FFFD), as
    ///   `String(decoding:as:)` does.
    /// - `remodel_float(x)`: a number rounded to a 32-bit float and widened again, as a
    ///   Float attribute stores it; NULL stays NULL.
    /// - `remodel_decimal(x)`: a Decimal attribute's column `x` read as a context reads it
    ///   (``EntityBinding/read(_:as:)``) and written back: the double a Decimal or Double
    ///   attribute then holds; NULL stays NULL.
    /// - `remodel_decimal_written(x)`: a double `x` written to a Decimal attribute, as
    ///   the interpreter converts it (``Value/decimal(_:)``) and a store holds the decimal
    ///   (``Value/double(_:)``): NULL for NaN and the infinities, which no Decimal holds;
    ///   NULL stays NULL.
    /// - `remodel_decimal_unheld(x)`: 1 for a double no Decimal holds, which a Decimal
    ///   attribute reads as 0 (``AttributeCoercion/decimalHolds(_:)``); 0 for anything else.
    /// - `remodel_uuid(x)`: a UUID attribute's column `x` read as a context reads it and
    ///   written back to a UUID attribute: its 16 bytes; NULL for NULL, and for what no UUID
    ///   attribute takes (text that is no UUID, other bytes, numbers: a type error there).
    /// - `remodel_wellformed(x)`: 1 when `x` is NULL or text of well-formed UTF-8, which
    ///   `remodel_text` returns as it is: `CASE WHEN remodel_wellformed(x) THEN x ELSE
    ///   remodel_text(x) END` gives the same values without copying the common ones.
    /// - `remodel_plain(x)`: 1 when `x` is NULL or text of plain ASCII (no NUL, no CR,
    ///   nothing above 0x7F), on which SQL's string functions give what Foundation's do;
    ///   0 for other text and other values.
    /// - `remodel_separated_count(x, separator)`: how many components Foundation's
    ///   `components(separatedBy:)` gives for text `x` and a separator of printable ASCII,
    ///   told from the bytes (``separatedCount(_:by:)``); NULL when the bytes cannot
    ///   tell, and for NULL and other values.
    /// The most bytes a text or blob value can have in this process: SQLite's length
    /// limit, which a connection may lower but never raise (SQLITE_MAX_LENGTH). A value
    /// that was read has at most this many.
    public static let maximumValueBytes: Int64 = {
        var db: OpaquePointer?
        defer { sqlite3_close(db) }
        guard sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else {
            return Int64(Int32.max)
        }
        return Int64(sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1))
    }()

    public func registerValueFunctions() throws(SQLiteError) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        var rc = sqlite3_create_function_v2(
            handle, "remodel_text", 1, flags, nil,
            { context, _, arguments in
                guard let context, let value = arguments?[0] else { return }
                guard sqlite3_value_type(value) != SQLITE_NULL, let text = sqlite3_value_text(value) else {
                    sqlite3_result_null(context)
                    return
                }
                let count = sqlite3_value_bytes(value)
                let bytes = UnsafeBufferPointer(start: text, count: Int(count))
                if sqlite3_value_type(value) == SQLITE_TEXT, UTF8Sequence.isWellFormed(bytes) {
                    sqlite3_result_value(context, value)
                    return
                }
                var repaired = String(decoding: bytes, as: UTF8.self)
                repaired.withUTF8 { utf8 in
                    let start =
                        utf8.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }
                        ?? Statement.emptyText
                    sqlite3_result_text(context, start, Int32(utf8.count), Statement.transient)
                }
            }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc) }
        rc = sqlite3_create_function_v2(
            handle, "remodel_wellformed", 1, flags, nil,
            { context, _, arguments in
                Database.testText(context, arguments?[0]) { UTF8Sequence.isWellFormed($0) }
            }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc) }
        rc = sqlite3_create_function_v2(
            handle, "remodel_plain", 1, flags, nil,
            { context, _, arguments in
                Database.testText(context, arguments?[0]) { bytes in
                    !bytes.contains { $0 == 0 || $0 == 0x0D || $0 >= 0x80 }
                }
            }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc) }
        rc = sqlite3_create_function_v2(
            handle, "remodel_separated_count", 2, flags, nil,
            { context, _, arguments in
                guard let context, let text = arguments?[0], let separator = arguments?[1] else { return }
                guard sqlite3_value_type(text) == SQLITE_TEXT, sqlite3_value_type(separator) == SQLITE_TEXT,
                    let t = sqlite3_value_text(text), let s = sqlite3_value_text(separator)
                else {
                    sqlite3_result_null(context)
                    return
                }
                // Each text first, then its length, as SQLite asks.
                let count = Database.separatedCount(
                    UnsafeBufferPointer(start: t, count: Int(sqlite3_value_bytes(text))),
                    by: UnsafeBufferPointer(start: s, count: Int(sqlite3_value_bytes(separator))))
                if let count { sqlite3_result_int64(context, Int64(count)) } else { sqlite3_result_null(context) }
            }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc) }
        rc = sqlite3_create_function_v2(
            handle, "remodel_float", 1, flags, nil,
            { context, _, arguments in
                guard let context, let value = arguments?[0] else { return }
                if sqlite3_value_type(value) == SQLITE_NULL {
                    sqlite3_result_null(context)
                } else {
                    sqlite3_result_double(context, Double(Float(sqlite3_value_double(value))))
                }
            }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc) }
        rc = sqlite3_create_function_v2(
            handle, "remodel_decimal", 1, flags, nil,
            { context, _, arguments in
                guard let context, let value = arguments?[0] else { return }
                // (What is written back as it is, told without reading it: a double a
                // Decimal keeps, an integer the double it is.)
                switch sqlite3_value_type(value) {
                case SQLITE_FLOAT where AttributeCoercion.keepsDecimal(sqlite3_value_double(value)):
                    sqlite3_result_double(context, sqlite3_value_double(value))
                    return
                case SQLITE_INTEGER where AttributeCoercion.decimalIntegers.contains(sqlite3_value_int64(value)):
                    sqlite3_result_double(context, Double(sqlite3_value_int64(value)))
                    return
                default: break
                }
                if case .decimal(let decimal)? = EntityBinding.read(value, as: .decimal) {
                    sqlite3_result_double(context, Value.double(decimal))
                } else {
                    sqlite3_result_null(context)
                }
            }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc) }
        rc = sqlite3_create_function_v2(
            handle, "remodel_decimal_written", 1, flags, nil,
            { context, _, arguments in
                guard let context, let value = arguments?[0] else { return }
                guard sqlite3_value_type(value) != SQLITE_NULL else {
                    sqlite3_result_null(context)
                    return
                }
                let double = sqlite3_value_double(value)
                // (A double a Decimal keeps is written as it is, told without converting it.)
                if AttributeCoercion.keepsDecimal(double) {
                    sqlite3_result_double(context, double)
                } else {
                    let written = Value.double(Value.decimal(double))
                    if written.isNaN { sqlite3_result_null(context) } else { sqlite3_result_double(context, written) }
                }
            }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc) }
        rc = sqlite3_create_function_v2(
            handle, "remodel_decimal_unheld", 1, flags, nil,
            { context, _, arguments in
                guard let context, let value = arguments?[0] else { return }
                let unheld =
                    sqlite3_value_type(value) == SQLITE_FLOAT
                    && !AttributeCoercion.decimalHolds(sqlite3_value_double(value))
                sqlite3_result_int64(context, unheld ? 1 : 0)
            }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc) }
        rc = sqlite3_create_function_v2(
            handle, "remodel_uuid", 1, flags, nil,
            { context, _, arguments in
                guard let context, let value = arguments?[0] else { return }
                // (16 bytes are written back as they are, told without reading them.)
                if sqlite3_value_type(value) == SQLITE_BLOB, sqlite3_value_bytes(value) == 16 {
                    sqlite3_result_value(context, value)
                    return
                }
                guard let read = EntityBinding.read(value, as: .uuid),
                    let stored = try? AttributeCoercion.coerce(read, to: .uuid, name: ""),
                    case .blob(let bytes) = EntityBinding.sqliteValue(stored, as: .uuid)
                else {
                    sqlite3_result_null(context)
                    return
                }
                bytes.withUnsafeBytes { buffer in
                    sqlite3_result_blob(context, buffer.baseAddress, Int32(buffer.count), Statement.transient)
                }
            }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc) }
    }

    /// The number of components `components(separatedBy:)` splits `text` into at
    /// `separator`, told from UTF-8 bytes; nil when they cannot tell it. Foundation
    /// compares characters (grapheme clusters, canonically equivalent), so an occurrence
    /// of the separator's bytes is one of the separator only when no character joins it:
    ///
    /// - the separator is printable ASCII, and the text well-formed UTF-8;
    /// - the characters on either side of each occurrence are below U+0300 (ASCII, or two
    ///   bytes led by C2…CB): none is a combining mark or a joiner, which would join the
    ///   separator's last character to what follows it, nor a prepended mark (U+0600 …),
    ///   which joins what follows it; a CR or a NUL is no such character;
    /// - the text has none of the three characters canonically equal to an ASCII one
    ///   (U+037E to ";", U+1FEF to "`", U+212A to "K"), which would be separators too.
    ///
    /// The occurrences are then counted from the left, without overlap, as Foundation
    /// finds them: for the text `"café au lait"` and `" "`, 3; for `"a \u{301}b"`, nil.
    static func separatedCount(_ text: UnsafeBufferPointer<UInt8>, by separator: UnsafeBufferPointer<UInt8>)
        -> Int?
    {
        guard let first = separator.first, separator.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }),
            UTF8Sequence.isWellFormed(text)
        else { return nil }
        let n = text.count, m = separator.count
        /// Whether the byte at `i` leads a character below U+0300 (ASCII included).
        func leadsNarrow(_ i: Int) -> Bool { text[i] < 0x80 || (0xC2...0xCB).contains(text[i]) }
        var i = 0, separators = 0
        while i < n {
            let byte = text[i]
            if byte == first, i + m <= n, (1..<m).allSatisfy({ text[i + $0] == separator[$0] }) {
                // The character before: ASCII, or a continuation byte after a narrow lead.
                if i > 0, text[i - 1] >= 0x80, !(i >= 2 && (0xC2...0xCB).contains(text[i - 2])) { return nil }
                if i + m < n, !leadsNarrow(i + m) { return nil }
                separators += 1
                i += m
                continue
            }
            // Well-formed: a lead byte has all its continuation bytes.
            if byte == 0xCD, text[i + 1] == 0xBE { return nil }
            if byte == 0xE1, text[i + 1] == 0xBF, text[i + 2] == 0xAF { return nil }
            if byte == 0xE2, text[i + 1] == 0x84, text[i + 2] == 0xAA { return nil }
            i += 1
        }
        return separators + 1
    }

    /// The result of a test of text: 1 for NULL, for text whose bytes `accepts` accepts;
    /// 0 for other text and other values.
    private static func testText(
        _ context: OpaquePointer?, _ value: OpaquePointer?,
        _ accepts: (UnsafeBufferPointer<UInt8>) -> Bool
    ) {
        guard let context, let value else { return }
        switch sqlite3_value_type(value) {
        case SQLITE_NULL:
            sqlite3_result_int(context, 1)
        case SQLITE_TEXT:
            // The text first, then its length, as SQLite asks.
            let text = sqlite3_value_text(value)
            let count = Int(sqlite3_value_bytes(value))
            sqlite3_result_int(
                context, text.map { accepts(UnsafeBufferPointer(start: $0, count: count)) } ?? true ? 1 : 0)
        default:
            sqlite3_result_int(context, 0)
        }
    }

    /// `file:<path>?<query>`, the path escaped as ``immutableURI(_:)`` escapes it.
    static func uri(_ path: String, query: String) -> String {
        let immutable = immutableURI(path)
        return String(immutable.dropLast("?immutable=1".count)) + "?" + query
    }
}

/// The arguments of a call of a function registered with
/// ``Database/registerFunction(_:arity:_:)``.
public struct SQLFunctionArguments {
    let values: UnsafeMutablePointer<OpaquePointer?>?
    public let count: Int

    /// The argument as an integer (SQLite's conversion), 0 for NULL.
    public func int64(at index: Int) -> Int64 { sqlite3_value_int64(values?[index]) }

    /// The argument as an attribute of `type` reads it from a column; nil for the types
    /// no model stores (undefined, object IDs, composites).
    public func value(at index: Int, as type: AttributeType) -> Value? {
        EntityBinding.read(values?[index], as: type)
    }
}

extension Database {
    /// Registers a SQL function `name` taking `arity` arguments (-1 for any number),
    /// evaluated by `body` on every call: what it returns is the call's value, what it
    /// throws fails the statement with the error's description. Not deterministic to
    /// SQLite: it is called once per row it is written for.
    public func registerFunction(
        _ name: String, arity: Int32,
        _ body: @escaping (SQLFunctionArguments) throws -> SQLiteValue
    ) throws(SQLiteError) {
        final class Box {
            let body: (SQLFunctionArguments) throws -> SQLiteValue
            init(_ body: @escaping (SQLFunctionArguments) throws -> SQLiteValue) { self.body = body }
        }
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        let rc = sqlite3_create_function_v2(
            handle, name, arity, SQLITE_UTF8, box,
            { context, count, values in
                guard let context else { return }
                // (The function holds the box: no reference counted for each call.)
                Unmanaged<Box>.fromOpaque(sqlite3_user_data(context))._withUnsafeGuaranteedRef { box in
                    callFunction(box.body, context, values, count)
                }
            }, nil, nil,
            { box in
                if let box { Unmanaged<Box>.fromOpaque(box).release() }
            })
        guard rc == SQLITE_OK else { throw self.error(rc) }
    }
}

/// Calls `body` with the arguments SQLite gives a function, and gives SQLite its result.
private func callFunction(
    _ body: (SQLFunctionArguments) throws -> SQLiteValue, _ context: OpaquePointer,
    _ values: UnsafeMutablePointer<OpaquePointer?>?, _ count: Int32
) {
    do {
        switch try body(SQLFunctionArguments(values: values, count: Int(count))) {
        case .null: sqlite3_result_null(context)
        case .integer(let i): sqlite3_result_int64(context, i)
        case .real(let d): sqlite3_result_double(context, d)
        case .text(var s):
            s.withUTF8 { utf8 in
                let start =
                    utf8.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }
                    ?? Statement.emptyText
                sqlite3_result_text(context, start, Int32(utf8.count), Statement.transient)
            }
        case .blob(let data):
            data.withUnsafeBytes { bytes in
                sqlite3_result_blob(
                    context, bytes.baseAddress ?? UnsafeRawPointer(Statement.emptyText), Int32(bytes.count),
                    Statement.transient)
            }
        }
    } catch {
        sqlite3_result_error(context, "\(error)", -1)
    }
}
