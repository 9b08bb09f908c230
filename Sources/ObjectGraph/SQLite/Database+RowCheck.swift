import CSQLite
import ExpressionLanguage

/// What one column of a row must hold for a statement to read it as it is: a value of the
/// storage class its attribute is written as (an integer in a range, a double, one a
/// 32-bit float holds exactly, well-formed UTF-8 text), or NULL where that is allowed.
/// A statement over a store from elsewhere reads its columns as they are on the rows
/// where every column meets its expectation (``RowCheck``), and converts them as a
/// reader does on the others.
public struct ColumnExpectation: Hashable, Sendable {
    public enum Storage: Hashable, Sendable {
        /// An integer in the range (a boolean: 0…1).
        case integer(ClosedRange<Int64>)
        /// A double (a REAL column's value, which SQLite hands over as a double even when
        /// it keeps it as an integer).
        case real
        /// A double that a 32-bit float holds exactly, as a Float attribute writes it.
        case float
        /// A double that a Decimal attribute, reading it, writes back as itself
        /// (``AttributeCoercion/keepsDecimal(_:)``), or an integer SQLite keeps as
        /// itself where that double is written (``AttributeCoercion/decimalIntegers``).
        case decimal
        /// A blob of 16 bytes, as a UUID attribute writes one.
        case uuid
        /// Text of well-formed UTF-8.
        case text
        /// What a step that copies a column reads back as it is (``RowCheck`` then tells
        /// exactly the rows SQL's comparisons of the column's class tell):
        /// - `number`: an integer or a double, as a Double or Date attribute reads it;
        /// - `integral`: an integer in the range, or a double equal to one of them;
        /// - `floatNumber`: an integer or a double that a 32-bit float holds exactly, as
        ///   `remodel_float` rounds it;
        /// - `anyText`: text, of any bytes;
        /// - `blob`: a blob.
        case number, integral(ClosedRange<Int64>), floatNumber, anyText, blob
    }

    public var storage: Storage
    public var allowsNull: Bool

    public init(_ storage: Storage, allowsNull: Bool) {
        self.storage = storage
        self.allowsNull = allowsNull
    }
}

/// The test of a row's columns against their ``ColumnExpectation``s, registered as a SQL
/// function (``Database/register(_:as:)``) that takes the columns in order: 1 when every
/// one meets its expectation, else 0, and ``failed`` is set. A check that stops at the
/// first failure takes the row's key first, keeps the key of the first row that fails
/// (``firstFailure``), and gives 0 for every row after it until cleared: a statement that
/// writes rows in key order then writes those before it.
public final class RowCheck: @unchecked Sendable {
    public let stopsAtFirstFailure: Bool
    /// Whether a row has failed the test since it was last cleared.
    public private(set) var failed = false
    /// The key of the first row that failed, for a check that stops there.
    public private(set) var firstFailure: Int64?

    /// Forgets the failures.
    public func clear() {
        failed = false
        firstFailure = nil
    }

    /// The expectations as the test reads them, once a row, in order.
    fileprivate let tests: UnsafeMutableBufferPointer<Test>

    fileprivate struct Test {
        /// The storage classes the column may hold, a bit for each (`1 << SQLITE_INTEGER`…).
        let classes: Int32
        /// What else a value of its class must be.
        let detail: Detail
        var low: Int64 = .min, high: Int64 = .max

        enum Detail { case none, inRange, float, text, integral, floatNumber, decimal, sixteenBytes }

        init(_ expectation: ColumnExpectation) {
            var classes: Int32 = expectation.allowsNull ? 1 << SQLITE_NULL : 0
            switch expectation.storage {
            case .integer(let range):
                classes |= 1 << SQLITE_INTEGER
                (low, high) = (range.lowerBound, range.upperBound)
                detail = range == Int64.min...Int64.max ? .none : .inRange
            case .real:
                classes |= 1 << SQLITE_FLOAT
                detail = .none
            case .float:
                classes |= 1 << SQLITE_FLOAT
                detail = .float
            case .decimal:
                classes |= 1 << SQLITE_FLOAT | 1 << SQLITE_INTEGER
                (low, high) = (
                    AttributeCoercion.decimalIntegers.lowerBound, AttributeCoercion.decimalIntegers.upperBound
                )
                detail = .decimal
            case .uuid:
                classes |= 1 << SQLITE_BLOB
                detail = .sixteenBytes
            case .text:
                classes |= 1 << SQLITE_TEXT
                detail = .text
            case .number:
                classes |= 1 << SQLITE_INTEGER | 1 << SQLITE_FLOAT
                detail = .none
            case .integral(let range):
                classes |= 1 << SQLITE_INTEGER | 1 << SQLITE_FLOAT
                (low, high) = (range.lowerBound, range.upperBound)
                detail = .integral
            case .floatNumber:
                classes |= 1 << SQLITE_INTEGER | 1 << SQLITE_FLOAT
                detail = .floatNumber
            case .anyText:
                classes |= 1 << SQLITE_TEXT
                detail = .none
            case .blob:
                classes |= 1 << SQLITE_BLOB
                detail = .none
            }
            self.classes = classes
        }

        /// Whether `value`, not NULL and of the storage class `type`, which the test
        /// accepts, is what it must be.
        func meets(_ value: OpaquePointer?, type: Int32) -> Bool {
            switch detail {
            case .none: return true
            case .inRange:
                let v = sqlite3_value_int64(value)
                return v >= low && v <= high
            case .integral:
                // (A double equal to an integer: SQL's `x = CAST(x AS INTEGER)`.)
                guard
                    let v = type == SQLITE_INTEGER
                        ? sqlite3_value_int64(value) : Int64(exactly: sqlite3_value_double(value))
                else { return false }
                return v >= low && v <= high
            case .float:
                let d = sqlite3_value_double(value)
                return Double(Float(d)) == d
            case .decimal:
                if type == SQLITE_INTEGER {
                    let v = sqlite3_value_int64(value)
                    return v >= low && v <= high
                }
                return AttributeCoercion.keepsDecimal(sqlite3_value_double(value))
            case .sixteenBytes:
                return sqlite3_value_bytes(value) == 16
            case .floatNumber:
                // (Compared as SQL compares the rounded double with the column's value:
                // exactly, an integer with a double too.)
                let rounded = Double(Float(sqlite3_value_double(value)))
                return type == SQLITE_INTEGER
                    ? Int64(exactly: rounded) == sqlite3_value_int64(value) : rounded == sqlite3_value_double(value)
            case .text:
                // (The text first, then its length, as SQLite asks.)
                guard let text = sqlite3_value_text(value) else { return true }
                return UTF8Sequence.isWellFormed(
                    UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))))
            }
        }
    }

    public init(_ expectations: [ColumnExpectation], stopsAtFirstFailure: Bool = false) {
        self.stopsAtFirstFailure = stopsAtFirstFailure
        tests = .allocate(capacity: expectations.count)
        _ = tests.initialize(from: expectations.map(Test.init))
    }

    deinit { tests.deallocate() }

    /// The test of one row: its key, then a value for each expectation for a check that
    /// stops at the first failure; a value for each expectation for one that does not.
    fileprivate func test(_ values: UnsafeMutablePointer<OpaquePointer?>) -> Bool {
        guard stopsAtFirstFailure else {
            if accepts(values) { return true }
            failed = true
            return false
        }
        guard firstFailure == nil else { return false }
        if accepts(values + 1) { return true }
        failed = true
        firstFailure = sqlite3_value_int64(values[0])
        return false
    }

    /// Whether the values at `values`, one for each test, meet the expectations.
    @inline(__always)
    private func accepts(_ values: UnsafeMutablePointer<OpaquePointer?>) -> Bool {
        guard var test = tests.baseAddress else { return true }
        var value = values
        let end = test + tests.count
        while test < end {
            let type = sqlite3_value_type(value.pointee)
            // (NULL is a class with nothing more to it.)
            guard test.pointee.classes & (1 &<< type) != 0,
                test.pointee.detail == .none || type == SQLITE_NULL || test.pointee.meets(value.pointee, type: type)
            else { return false }
            test += 1
            value += 1
        }
        return true
    }
}

extension Database {
    /// The place of each column of `table` (of the database attached as `schema`) in its
    /// rows, by name, upper-cased: a ``RowCheck`` given the columns stored last first has
    /// SQLite read each row's header once, on the first, and find the others from it.
    public func columnPlaces(of table: String, in schema: String = "main") throws(SQLiteError) -> [String: Int] {
        let columns = try prepare("SELECT upper(name) FROM pragma_table_info(?1, ?2)")
        try columns.bind(table, at: 1)
        try columns.bind(schema, at: 2)
        var places: [String: Int] = [:]
        while try columns.step() {
            if let name = columns.string(at: 0) { places[name] = places.count }
        }
        return places
    }

    /// Registers `check` as the SQL function `name`, of as many arguments as it has
    /// expectations (and the key first, for a check that stops at the first failure).
    public func register(_ check: RowCheck, as name: String) throws(SQLiteError) {
        let rc = sqlite3_create_function_v2(
            handle, name, Int32(check.tests.count + (check.stopsAtFirstFailure ? 1 : 0)), SQLITE_UTF8,
            Unmanaged.passRetained(check).toOpaque(),
            { context, _, arguments in
                guard let context, let arguments else { return }
                // (The function holds the check: no reference counted for each row. SQLite
                // calls it with as many arguments as it was registered with.)
                Unmanaged<RowCheck>.fromOpaque(sqlite3_user_data(context))._withUnsafeGuaranteedRef { check in
                    sqlite3_result_int(context, check.test(arguments) ? 1 : 0)
                }
            }, nil, nil,
            { pointer in pointer.map { Unmanaged<RowCheck>.fromOpaque($0).release() } })
        guard rc == SQLITE_OK else { throw error(rc) }
    }
}
