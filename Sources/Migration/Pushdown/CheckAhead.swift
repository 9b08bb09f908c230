import Foundation
import ObjectGraph

/// The check of a source table's rows (``RowCheck``), made ahead of the statements that
/// write them: on a thread of its own, over a connection of its own to the source, one
/// chunk of keys at a time (docs/pushdown.md, "Checked ahead"). A chunk in which it found
/// that every row meets the check is written by the statement that reads the columns as
/// they are without calling the check on each row; a chunk it has not reached yet, or in
/// which a row fails, is written as before, checked as it is written. It only decides which
/// of two statements that write the same rows writes a chunk.
///
/// Both connections must read the same rows: it is started once the writing connection
/// holds its read of the source (a transaction), and only on a source that no other
/// connection can change while that read is held (``staysAsItIs(_:)``).
final class CheckAhead: @unchecked Sendable {
    /// When a chunk's statement is chosen by the check ahead.
    enum Mode: Hashable, Sendable {
        /// Never: every chunk is checked as it is written.
        case off
        /// Where the machine has another core for it; a chunk it has not reached yet is
        /// checked as it is written.
        case beside
        /// Always, and each chunk waits for it (for tests: which statement writes a chunk
        /// is then known).
        case waiting

        /// Whether there is a check ahead in this mode on this machine.
        var checks: Bool {
            switch self {
            case .off: false
            case .beside: ProcessInfo.processInfo.activeProcessorCount > 1
            case .waiting: true
            }
        }
    }

    // Touched by the thread alone until it has finished.
    private let database: Database
    private let statement: Statement
    private let next: Statement
    private let keys: ClosedRange<Int64>
    private let chunkRows: Int

    private let condition = NSCondition()
    // Under `condition`:
    /// Key ranges in which every row meets the check, in key order.
    private var clean: [ClosedRange<Int64>] = []
    /// The last key of the last chunk checked.
    private var reached: Int64?
    private var finished = false
    private var stopping = false

    /// Starts checking the rows of `table` (the source's name, without `src.`) with keys
    /// in `keys`, in chunks of `chunkRows` keys, each row's `columns` (SQL over `t0`)
    /// against `expectations`; only the rows of the entity `entity` where it is given.
    /// Nil when the source cannot be opened or the statements prepared: every chunk is
    /// then checked as it is written.
    init?(
        source path: String, table: String, columns: [String], expectations: [ColumnExpectation], entity: Int?,
        keys: ClosedRange<Int64>, chunkRows: Int
    ) {
        do {
            database = try Database(path: path, mode: .readOnly)
            try database.register(RowCheck(expectations), as: "remodel_row")
            let ofEntity = entity.map { " AND t0.Z_ENT = \($0)" } ?? ""
            statement = try database.prepare(
                "SELECT EXISTS (SELECT 1 FROM \(table) AS t0 WHERE t0.Z_PK BETWEEN ?1 AND ?2\(ofEntity) "
                    + "AND NOT remodel_row(\(columns.joined(separator: ", "))))")
            next = try database.prepare("SELECT min(Z_PK) FROM \(table) WHERE Z_PK > ?1")
        } catch {
            return nil
        }
        self.keys = keys
        self.chunkRows = chunkRows
        Thread { [self] in run() }.start()
    }

    /// Whether every row with a key in `chunk` meets the check: false where a row fails,
    /// or where the check has not reached the chunk's end (unless it `waits` for it).
    func covers(_ chunk: ClosedRange<Int64>, waiting waits: Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while waits, !finished, reached.map({ $0 < chunk.upperBound }) ?? true { condition.wait() }
        return clean.last { $0.lowerBound <= chunk.lowerBound }.map { chunk.upperBound <= $0.upperBound } ?? false
    }

    /// Stops the check and waits for its thread: nothing reads the source after it.
    func stop() {
        condition.lock()
        stopping = true
        condition.unlock()
        database.interrupter.interrupt()
        condition.lock()
        while !finished { condition.wait() }
        condition.unlock()
    }

    private func run() {
        defer {
            condition.lock()
            finished = true
            condition.broadcast()
            condition.unlock()
        }
        var from = keys.lowerBound, previousClean = false
        do {
            while true {
                let to = keys.chunkEnd(from: from, count: chunkRows)
                try statement.bind(from, at: 1)
                try statement.bind(to, at: 2)
                _ = try statement.step()
                let isClean = statement.int64(at: 0) == 0
                statement.reset()
                condition.lock()
                if isClean {
                    // (No key lies between two chunks: the next starts at the next key.)
                    if previousClean, let last = clean.popLast() {
                        clean.append(last.lowerBound...to)
                    } else {
                        clean.append(from...to)
                    }
                }
                previousClean = isClean
                reached = to
                condition.broadcast()
                let stops = stopping
                condition.unlock()
                if stops || to >= keys.upperBound { return }
                try next.bind(to, at: 1)
                guard try next.step(), !next.isNull(0) else { return }
                from = next.int64(at: 0)
                next.reset()
            }
        } catch {
            // Interrupted, or the source could not be read: the chunks not reached are
            // checked as they are written.
        }
    }

    /// Whether the source (its store's own connection) cannot change while the writing
    /// connection holds a read of it: a rollback-journal database, which no writer can
    /// commit to while a reader holds its lock, or one read as immutable. A WAL database
    /// with its log lets a writer commit beside a reader, and a second connection could
    /// then read other rows than the first.
    static func staysAsItIs(_ source: Database) -> Bool {
        if source.isImmutable { return true }
        guard let mode = try? source.prepare("PRAGMA journal_mode"), (try? mode.step()) == true else {
            return false
        }
        return mode.string(at: 0)?.lowercased() != "wal"
    }
}
