import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// The check of a store's rows made ahead of the statements that write them, on a thread
/// of its own (docs/pushdown.md, "Checked ahead"): it decides only which of two statements
/// writes a chunk, so every store, count and error is the one the interpreter gives, and
/// the one the statements give when each checks its own rows. Chunks of 100 keys; the
/// check waits for each chunk (`.waiting`), so which chunks it covers is known.
@Suite struct CheckAheadTests {
    static let v1 = """
        {"version": "A1", "entities": {"Item": {"attributes": {
          "name": {"type": "string", "optional": false}, "n": "int32", "price": "double", "weight": "float"}}}}
        """
    static let v2 = """
        {"version": "A2", "entities": {"Item": {"attributes": {
          "name": {"type": "string", "optional": false}, "n": "int16", "price": "double", "weight": "float"}}}}
        """

    static func mapping() throws -> MappingModel {
        try PushdownDifferentialTests.mapping(
            from: "A1", to: "A2",
            [
                #"{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings": {"price": "$source.price * 2"}}"#
            ])
    }

    /// A source of the items 1 to 1,000, well typed, then changed by `sql`.
    static func makeSource(at path: String, _ sql: String) throws {
        let store = try PushdownDifferentialTests.makeItems(
            at: path, model: try model(v1), count: 1_000, columns: "ZNAME, ZN, ZPRICE, ZWEIGHT",
            values: "'item ' || i, i % 30000, i * 0.25, i * 0.5")
        if !sql.isEmpty { try store.database.execute(sql) }
    }

    /// The store (or the error) and the report of a migration of `source` to `path`.
    static func run(source: String, to path: String, pushdown: Bool = true, checkAhead: CheckAhead.Mode) throws -> (
        PushdownDifferentialTests.Outcome, MappingExecution?
    ) {
        var options = MigrationOptions(pushdown: pushdown)
        options.sqlChunkRows = 100
        options.checkAhead = checkAhead
        let manager = try MigrationManager(
            mapping: try mapping(), source: try model(v1), destination: try model(v2), options: options)
        do {
            let report = try manager.migrateStore(from: source, to: path)
            let counts = report.entityMappings.map { [$0.sourceInstances, $0.destinationInstances] }
            return (.store(try PushdownDifferentialTests.dump(path), counts), report.entityMappings.first?.execution)
        } catch {
            return (.failure("\((error as? MigrationError)?.kind.rawValue ?? "?"): \(error)"), nil)
        }
    }

    /// Odd rows in some chunks (text in an integer column, a Float's column holding a double
    /// it does not hold, ill-formed text), with keys by an offset and, with a key missing,
    /// counted: the chunks in which the check ahead found every row meets it are written
    /// without the check (never the first, written while the check starts), the others as
    /// before, and the store is the interpreter's and the one every chunk checked gives.
    @Test(
        arguments: [
            ("", 9, 9), ("UPDATE ZITEM SET ZN = 'many' WHERE Z_PK = 350", 8, 8),
            ("UPDATE ZITEM SET ZWEIGHT = 0.1 WHERE Z_PK IN (150, 720)", 6, 7),
            ("UPDATE ZITEM SET ZNAME = CAST(X'66C328' AS TEXT) WHERE Z_PK IN (50, 999)", 7, 8),
            ("UPDATE ZITEM SET ZN = 2.5 WHERE Z_PK % 100 = 1", 0, 0)
        ], [false, true])
    func chunksTheCheckFoundWellTypedAreWrittenWithoutIt(
        _ odd: (sql: String, byOffset: Int, counted: Int), keyMissing: Bool
    ) throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("A1.sqlite")
        try Self.makeSource(at: source, odd.sql + (keyMissing ? "; DELETE FROM ZITEM WHERE Z_PK = 2" : ""))
        let (interpreted, _) = try Self.run(
            source: source, to: directory.path("i.sqlite"), pushdown: false, checkAhead: .off)
        let (checked, without) = try Self.run(source: source, to: directory.path("c.sqlite"), checkAhead: .off)
        let (ahead, with) = try Self.run(source: source, to: directory.path("a.sqlite"), checkAhead: .waiting)
        let name = "\(odd.sql)\(keyMissing ? ", a key missing" : "")"
        // (Booleans: a store's dump is too long for a message.)
        let (likeTheInterpreter, likeEveryChunkChecked) = (ahead == interpreted, ahead == checked)
        #expect(likeTheInterpreter, "\(name): \(RandomLinkDifferentialTests.difference(ahead, interpreted))")
        #expect(likeEveryChunkChecked, "\(name): \(RandomLinkDifferentialTests.difference(ahead, checked))")
        #expect(with?.instancesAsSQL == true, "\(name)")
        #expect(without?.chunksCheckedAhead == 0, "\(name)")
        // (With keys by an offset, a chunk with a row that fails reaches past it, and the
        // later chunks straddle the check's.)
        #expect(with?.chunksCheckedAhead == (keyMissing ? odd.counted : odd.byOffset), "\(name)")
        if case .store(let tables, _) = ahead { #expect(tables["ZITEM"]?.count == 1_000 - (keyMissing ? 1 : 0)) }
    }

    /// A row that meets a guard (a value out of the range the mapping writes, nil in
    /// arithmetic) in a chunk after the first: the check ahead stops short of it, the
    /// statement that checks its rows meets the guard, and the interpreter runs the mapping,
    /// with its error where there is one.
    @Test(arguments: ["UPDATE ZITEM SET ZN = 40000 WHERE Z_PK = 640", "UPDATE ZITEM SET ZPRICE = NULL WHERE Z_PK = 640"]
    )
    func aGuardedRowInALaterChunkGetsTheInterpretersOutcome(sql: String) throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("A1.sqlite")
        try Self.makeSource(at: source, sql)
        let (interpreted, _) = try Self.run(
            source: source, to: directory.path("i.sqlite"), pushdown: false, checkAhead: .off)
        let (ahead, _) = try Self.run(source: source, to: directory.path("a.sqlite"), checkAhead: .waiting)
        let likeTheInterpreter = ahead == interpreted
        #expect(likeTheInterpreter, "\(sql): \(RandomLinkDifferentialTests.difference(ahead, interpreted))")
    }

    /// A row of another entity in the table: the check ahead with keys by an offset finds
    /// it (its entity is part of the check), the rows are written again with counted keys,
    /// and that check ahead skips it (it reads the mapping's entity alone).
    @Test func aRowOfAnotherEntityIsSkippedAsTheInterpreterSkipsIt() throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("A1.sqlite")
        try Self.makeSource(at: source, "UPDATE ZITEM SET Z_ENT = 7 WHERE Z_PK = 420")
        let (interpreted, _) = try Self.run(
            source: source, to: directory.path("i.sqlite"), pushdown: false, checkAhead: .off)
        let (ahead, execution) = try Self.run(source: source, to: directory.path("a.sqlite"), checkAhead: .waiting)
        let likeTheInterpreter = ahead == interpreted
        #expect(likeTheInterpreter, "\(RandomLinkDifferentialTests.difference(ahead, interpreted))")
        #expect(execution?.chunksCheckedAhead == 9)
        if case .store(let tables, _) = ahead { #expect(tables["ZITEM"]?.count == 999) }
    }

    /// A cancellation between two chunks stops the run where it is, the check ahead with
    /// it (the run waits for its thread): the run reports the cancellation and leaves no
    /// new file, and the source can be migrated again at once.
    @Test(arguments: [CheckAhead.Mode.waiting, .beside])
    func aCancelledRunStopsTheCheckAhead(mode: CheckAhead.Mode) throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("A1.sqlite"), destination = directory.path("a.sqlite")
        try Self.makeSource(at: source, "")
        var options = MigrationOptions()
        options.sqlChunkRows = 100
        options.checkAhead = mode
        let manager = try MigrationManager(
            mapping: try Self.mapping(), source: try model(Self.v1), destination: try model(Self.v2), options: options)
        let error = try #require(throws: MigrationError.self) {
            try manager.migrateStore(from: source, to: destination) { progress in
                if progress.stage == .createInstances, progress.rows >= 300 { manager.cancel("stopped by the test") }
            }
        }
        #expect(error.kind == .cancelled, "\(error)")
        #expect(!FileManager.default.fileExists(atPath: destination))
        let (again, execution) = try Self.run(source: source, to: destination, checkAhead: mode)
        if case .store(let tables, _) = again {
            #expect(tables["ZITEM"]?.count == 1_000)
        } else {
            Issue.record("\(again)")
        }
        if mode == .waiting { #expect(execution?.chunksCheckedAhead == 9) }
    }

    /// A source in WAL mode whose log another connection holds open lets a writer commit
    /// beside the migration's read, and a second connection could read other rows: no
    /// check ahead there. A rollback-journal source, and a WAL source without its log (read
    /// as immutable), stay as they are.
    @Test func onlyASourceThatCannotChangeBesideTheReadIsCheckedAhead() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("A1.sqlite")
        try Self.makeSource(at: path, "")
        #expect(CheckAhead.staysAsItIs(try Database(path: path, mode: .readOnly)))
        do {
            let writer = try Database(path: path, mode: .readWrite)
            try writer.execute("PRAGMA journal_mode = WAL; UPDATE ZITEM SET ZNAME = 'changed' WHERE Z_PK = 1")
            let reader = try Database(path: path, mode: .readOnly)
            #expect(!reader.isImmutable)
            #expect(!CheckAhead.staysAsItIs(reader))
        }
        // (The writer closed: its log checkpointed and removed.)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        let reader = try Database(path: path, mode: .readOnly)
        #expect(reader.isImmutable)
        #expect(CheckAhead.staysAsItIs(reader))
    }

    /// A WAL source whose log another connection holds open is migrated as SQL, reading
    /// the log's rows, with no check ahead. (The new store's connection keeps its own
    /// file's lock; before, it asked the same of the source it attached, which SQLite
    /// refused with a disk I/O error while another connection had the source open.)
    @Test func aSourceWithALiveLogIsMigratedAsSQLWithoutACheckAhead() throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("A1.sqlite")
        try Self.makeSource(at: source, "")
        let writer = try Database(path: source, mode: .readWrite)
        try writer.execute("PRAGMA journal_mode = WAL; UPDATE ZITEM SET ZNAME = 'changed ' || Z_PK WHERE Z_PK > 500")
        #expect(FileManager.default.fileExists(atPath: source + "-wal"))
        let (interpreted, _) = try Self.run(
            source: source, to: directory.path("i.sqlite"), pushdown: false, checkAhead: .off)
        let (ahead, execution) = try Self.run(source: source, to: directory.path("a.sqlite"), checkAhead: .waiting)
        let likeTheInterpreter = ahead == interpreted
        #expect(likeTheInterpreter, "\(RandomLinkDifferentialTests.difference(ahead, interpreted))")
        #expect(execution?.instancesAsSQL == true)
        #expect(execution?.chunksCheckedAhead == 0)
        if case .store(let tables, _) = ahead { #expect(tables["ZITEM"]?.last?.contains("t:changed 1000") == true) }
    }
}
