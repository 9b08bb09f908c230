import Testing

@testable import ObjectGraph

/// `RowCheck`, registered as a SQL function: which values meet which expectation, read
/// from the columns of a table as a statement hands them over (a REAL column's integer as
/// a double), and that a failure is remembered until cleared.
@Suite struct RowCheckTests {
    static let columns = [
        ("i", "INTEGER", ColumnExpectation(.integer(-5...5), allowsNull: false)),
        ("d", "FLOAT", ColumnExpectation(.real, allowsNull: true)),
        ("f", "FLOAT", ColumnExpectation(.float, allowsNull: true)),
        ("t", "VARCHAR", ColumnExpectation(.text, allowsNull: true))
    ]

    /// Whether the row `values` (SQL literals, in the order of ``columns``) meets the check.
    static func check(_ values: [String]) throws -> (accepted: Bool, failed: Bool) {
        let database = try Database(path: ":memory:", mode: .create)
        try database.execute(
            "CREATE TABLE r (\(columns.map { "\($0.0) \($0.1)" }.joined(separator: ", ")))")
        try database.execute("INSERT INTO r VALUES (\(values.joined(separator: ", ")))")
        let check = RowCheck(columns.map(\.2))
        try database.register(check, as: "check_row")
        let statement = try database.prepare("SELECT check_row(i, d, f, t) FROM r")
        _ = try statement.step()
        return (statement.int64(at: 0) == 1, check.failed)
    }

    @Test func acceptsWhatTheTypesWrite() throws {
        let rows = [
            ["0", "0.25", "0.5", "'plain'"], ["-5", "NULL", "NULL", "NULL"], ["5", "1e300", "-3.0", "'café'"],
            // A REAL column keeps 7 as an integer, and hands it over as a double.
            ["1", "7", "7", "''"]
        ]
        for row in rows {
            let (accepted, failed) = try Self.check(row)
            #expect(accepted && !failed, "\(row)")
        }
    }

    @Test func refusesAnythingElse() throws {
        let rows = [
            // Out of range, nil where it is not allowed, a real or text in an integer column.
            ["6", "0.0", "0.0", "NULL"], ["NULL", "0.0", "0.0", "NULL"], ["1.5", "0.0", "0.0", "NULL"],
            ["'1x'", "0.0", "0.0", "NULL"],
            // Text or a blob in a double's column; a double a float does not hold.
            ["0", "'abc'", "0.0", "NULL"], ["0", "X'01'", "0.0", "NULL"], ["0", "0.0", "0.1", "NULL"],
            // Ill-formed UTF-8, a surrogate and a blob for text (a number a text column
            // keeps as text).
            ["0", "0.0", "0.0", "CAST(X'66C328' AS TEXT)"], ["0", "0.0", "0.0", "CAST(X'EDA080' AS TEXT)"],
            ["0", "0.0", "0.0", "X'00FF'"]
        ]
        for row in rows {
            let (accepted, failed) = try Self.check(row)
            #expect(!accepted && failed, "\(row)")
        }
    }

    /// The expectations of a step that copies columns (`.integral`, `.number`,
    /// `.floatNumber`, `.anyText`, `.blob`, and `.text` where a length is bounded) accept
    /// exactly the values that SQL's comparisons of their class accept, which a renaming
    /// step's check once made of every row: over values of every class, at the edges of
    /// each range, stored in columns of every affinity.
    @Test func theCopyExpectationsTellWhatSQLsComparisonsTell() throws {
        let expectations: [(ColumnExpectation.Storage, String)] = [
            (.integral(-32768...32767), "x >= '' OR x <> CAST(x AS INTEGER) OR x NOT BETWEEN -32768 AND 32767"),
            (.integral(Int64.min...Int64.max), "x >= '' OR x <> CAST(x AS INTEGER)"),
            (.integral(0...1), "x >= '' OR x <> CAST(x AS INTEGER) OR x NOT IN (0, 1)"),
            (.number, "x >= ''"),
            (.floatNumber, "x >= '' OR remodel_float(x) <> x"),
            (.anyText, "x < '' OR x >= X''"),
            (.text, "x < '' OR x >= X'' OR NOT remodel_wellformed(x)"),
            (.blob, "x < X''"),
            (.uuid, "x < X'' OR length(x) <> 16")
        ]
        let values = [
            "NULL", "0", "-0.0", "1", "1.0", "5", "5.0", "5.5", "-1", "32767", "32768", "32768.0", "-32768",
            "-32769.0", "2147483648", "16777216", "16777217", "16777217.0", "0.1", "0.25", "1e20", "-1e20",
            "9223372036854775807", "-9223372036854775808", "9.223372036854775807e18", "-9.223372036854775808e18",
            "1e300", "'5'", "'abc'", "''", "CAST(X'66C328' AS TEXT)", "X''", "X'01'",
            "X'6F9619FF8B86D011B42D00C04FC964FF'", "'6F9619FF-8B86-D011-B42D-00C04FC964FF'"
        ]
        let database = try Database(path: ":memory:", mode: .create)
        try database.registerValueFunctions()
        let affinities = ["INTEGER", "FLOAT", "TIMESTAMP", "VARCHAR", "BLOB", ""]
        try database.execute(
            "CREATE TABLE r (\(affinities.indices.map { "c\($0) \(affinities[$0])" }.joined(separator: ", ")))")
        for value in values {
            try database.execute(
                "INSERT INTO r VALUES (\(Array(repeating: value, count: affinities.count).joined(separator: ", ")))")
        }
        var compared = 0
        for (storage, broken) in expectations {
            let check = RowCheck([ColumnExpectation(storage, allowsNull: true)])
            try database.register(check, as: "check_row")
            for column in affinities.indices.map({ "c\($0)" }) {
                let sql = broken.replacingOccurrences(of: "x", with: column)
                let statement = try database.prepare(
                    "SELECT quote(\(column)), typeof(\(column)), check_row(\(column)), NOT coalesce(\(sql), 0) FROM r")
                while try statement.step() {
                    compared += 1
                    #expect(
                        statement.int64(at: 2) == statement.int64(at: 3),
                        "\(storage) of \(statement.string(at: 0) ?? "") (\(statement.string(at: 1) ?? "")) in \(column)"
                    )
                }
            }
        }
        #expect(compared == expectations.count * affinities.count * values.count)
    }

    /// The decimal expectation accepts a double a Decimal attribute reads and writes
    /// back as itself, and an integer it writes back as itself (within ±2^53, where the
    /// double it writes is that integer), and nothing else: not the infinities, -0 (in a
    /// column without affinity; a DECIMAL column makes it the integer 0), magnitudes
    /// beyond a Decimal, larger integers or text. Each value the expectation accepts is
    /// written back as itself, in a DECIMAL column and in a DOUBLE one: read as a context
    /// reads it, and bound as a context writes it.
    @Test func theDecimalExpectationAcceptsTheValuesADecimalKeeps() throws {
        let database = try Database(path: ":memory:", mode: .create)
        try database.execute("CREATE TABLE r (x DECIMAL, y, d DECIMAL, f DOUBLE)")
        let check = RowCheck([ColumnExpectation(.decimal, allowsNull: true)])
        try database.register(check, as: "check_row")
        for (value, kept) in [
            ("19.99", true), ("0.1", true), ("-2.5e-7", true), ("1e20", true), ("NULL", true), ("9e999", false),
            ("1e300", false), ("3", true), ("-0.0", true), ("9007199254740992", true), ("-9007199254740992", true),
            ("9007199254740993", false), ("-9007199254740993", false), ("'19.99x'", false), ("X'01'", false)
        ] {
            try database.execute("DELETE FROM r")
            try database.execute("INSERT INTO r (x, y) VALUES (\(value), \(value))")
            let statement = try database.prepare("SELECT check_row(x), check_row(y), x FROM r")
            _ = try statement.step()
            #expect((statement.int64(at: 0) == 1) == kept, "\(value)")
            #expect((statement.int64(at: 1) == 1) == (kept && value != "-0.0"), "\(value), no affinity")
            guard kept else { continue }
            // Written back as a context writes what it read, beside the value as it is.
            let read = EntityBinding.read(statement, 2, as: .decimal)
            let written = EntityBinding.sqliteValue(read, as: .decimal)
            let insert = try database.prepare("UPDATE r SET d = ?, f = ?")
            try insert.bind(written, at: 1)
            try insert.bind(written, at: 2)
            _ = try insert.step()
            let compared = try database.prepare(
                "SELECT d IS x AND typeof(d) = typeof(x), f IS CAST(x AS REAL) AND typeof(f) = 'real' OR x IS NULL FROM r"
            )
            _ = try compared.step()
            #expect(compared.int64(at: 0) == 1 && compared.int64(at: 1) == 1, "\(value) written back")
        }
    }

    /// A check that stops at the first failure: the rows before it pass, every row from
    /// it on fails, and it keeps that row's key until cleared.
    @Test func stopsAtTheFirstFailureWhereAskedTo() throws {
        let database = try Database(path: ":memory:", mode: .create)
        try database.execute("CREATE TABLE r (k INTEGER PRIMARY KEY, i INTEGER)")
        try database.execute("INSERT INTO r VALUES (10, 1), (20, 2), (30, 'x'), (40, 4), (50, 'y')")
        let check = RowCheck([ColumnExpectation(.integer(0...9), allowsNull: false)], stopsAtFirstFailure: true)
        try database.register(check, as: "check_row")
        let statement = try database.prepare("SELECT check_row(k, i) FROM r ORDER BY k")
        var results: [Int64] = []
        while try statement.step() { results.append(statement.int64(at: 0)) }
        #expect(results == [1, 1, 0, 0, 0])
        #expect(check.failed && check.firstFailure == 30)
        check.clear()
        #expect(!check.failed && check.firstFailure == nil)
    }
}
