import ObjectGraph

/// Which destination instances were made from which source instances, for one entity
/// mapping: a compact, two-way table.
///
/// Each side is stored as runs: consecutive associations whose objects are of one entity
/// with consecutive primary keys make one run of 26 bytes (entity, first key, first
/// position, mask). The engine reads source rows in primary-key order and the destination
/// allocates keys in order, so a mapping over a table without gaps is one run on each side
/// however many rows it has. Keys that ascend with gaps (the rows a filter keeps) share a
/// run for each window of 64 keys, a bit for each key: a filter that keeps a scattered
/// half of a million rows makes 16,000 runs, not 250,000. The worst case (no two keys
/// within 64 of each other) is a run per association and side. Lookups are binary
/// searches over the runs; a side whose keys arrive out of order gets a sorted index of
/// its runs (4 bytes each) when first searched.
///
/// So that memory stays flat however large the store, a side past ``Side/spillsAfter``
/// runs moves its earlier runs to a scratch SQLite database of its own (``SpilledRuns``),
/// indexed by position and by key; lookups there are a query, and lookups in order read
/// the run they found again without one.
struct AssociationTable {
    /// An object on one side: its entity's index in its model, and its primary key.
    typealias Object = (entity: UInt16, key: Int64)

    /// The runs a side keeps in memory before it moves them to its scratch database.
    static let runsInMemory = 1 << 16

    /// One run of a side: `count` objects of `entity` from `key`, at positions from `start`.
    struct Run {
        var entity: UInt16
        var key: Int64
        var start: Int
        var count: Int
        /// 0 where its keys are consecutive from its first; else the keys of a window of 64
        /// from its first, a bit for each (bit i: the first key + i), in order.
        var mask: UInt64

        /// The keys it spans, from its first to its last.
        var span: Int { KeyWindow.span(count: count, mask: mask) }

        /// The offset of `key` within the run (its position less the run's first), if it
        /// holds it.
        func offset(of key: Int64) -> Int? {
            guard key.isAmong(span, from: self.key) else { return nil }
            let distance = Int(key - self.key)
            guard mask != 0 else { return distance }
            guard mask & (1 << UInt64(distance)) != 0 else { return nil }
            return (mask & ((1 << UInt64(distance)) - 1)).nonzeroBitCount
        }

        /// How many keys from the one at `offset` follow each other.
        func consecutive(from offset: Int) -> Int {
            guard mask != 0 else { return count - offset }
            let bit = UInt64(key(at: offset) - key)
            return (~(mask >> bit)).trailingZeroBitCount
        }

        /// The key at `offset` within the run.
        func key(at offset: Int) -> Int64 {
            guard mask != 0 else { return key + Int64(offset) }
            // (The offset-th key of the window: its bit, the lower ones cleared.)
            var bits = mask, offset = offset
            while offset > 0 {
                bits &= bits - 1
                offset -= 1
            }
            return key + Int64(bits.trailingZeroBitCount)
        }
    }

    /// One side of the table.
    struct Side {
        /// The table of each entity (by entity index): keys are unique per table.
        let tableOfEntity: [UInt16]
        /// How many runs it keeps in memory before it moves them to its scratch database.
        let spillsAfter: Int
        private(set) var count = 0
        // The runs in memory, those after the spilled ones.
        private var runEntity: [UInt16] = []
        private var runKey: [Int64] = []
        private var runStart: [Int] = []
        private var runMask: [UInt64] = []
        /// Runs ascend by (table, key) without overlapping: lookups search them directly.
        private var inOrder = true
        /// The most keys a run spans, from its first to its last.
        private var longestRun = 0
        private var sortedRuns: [UInt32]? = nil
        /// The runs before those in memory, where there are any. (Shared by the copies of
        /// the side: only the table in the manager appends.)
        private var spilled: SpilledRuns?
        /// Whether the scratch database could not be written: the runs stay in memory.
        private var spillFailed = false

        init(tableOfEntity: [UInt16], spillsAfter: Int = AssociationTable.runsInMemory) {
            self.tableOfEntity = tableOfEntity
            self.spillsAfter = max(1, spillsAfter)
        }

        /// How many runs the side has (for tests and reports).
        var runCount: Int { runStart.count + (spilled?.runCount ?? 0) }

        /// How many of them are in its scratch database.
        var spilledRunCount: Int { spilled?.runCount ?? 0 }

        /// The run at `index` among those in memory.
        private func run(_ index: Int) -> Run {
            let end = index + 1 < runStart.count ? runStart[index + 1] : count
            return Run(
                entity: runEntity[index], key: runKey[index], start: runStart[index], count: end - runStart[index],
                mask: runMask[index])
        }

        mutating func append(entity: UInt16, key: Int64) { append(entity: entity, key: key, count: 1) }

        /// Appends `count` objects of `entity` with consecutive keys from `key`.
        mutating func append(entity: UInt16, key: Int64, count n: Int) {
            guard n > 0 else { return }
            let last = runStart.count - 1
            var key = key, n = n
            if last >= 0, runEntity[last] == entity {
                let run = run(last)
                if run.mask == 0, key.follows(run.key, by: run.count) {
                    count += n
                    longestRun = max(longestRun, run.count + n)
                    sortedRuns = nil
                    return
                }
                // The stretch's first keys join the last run's window where they fall in it,
                // as they would one by one: a filter's rows come as short stretches.
                var length = run.count
                while let mask = KeyWindow.adding(key, to: run.key, count: length, mask: runMask[last]) {
                    runMask[last] = mask
                    count += 1
                    length += 1
                    longestRun = max(longestRun, Int(key - run.key) + 1)
                    sortedRuns = nil
                    n -= 1
                    guard n > 0 else { return }
                    key += 1
                }
            }
            startRun(entity: entity, key: key)
            count += n - 1
            longestRun = max(longestRun, n)
        }

        /// A new run of one object.
        private mutating func startRun(entity: UInt16, key: Int64) {
            let last = runStart.count - 1
            if last >= 0, inOrder {
                let run = run(last)
                let previous = (tableOfEntity[Int(run.entity)], run.key + Int64(run.span - 1))
                if (tableOfEntity[Int(entity)], key) <= previous { inOrder = false }
            }
            if runStart.count >= spillsAfter { spill() }
            runEntity.append(entity)
            runKey.append(key)
            runStart.append(count)
            runMask.append(0)
            count += 1
            longestRun = max(longestRun, 1)
            sortedRuns = nil
        }

        /// Moves every run in memory but the last, which may still grow, to the scratch
        /// database. Where it cannot be written, the runs stay in memory.
        private mutating func spill() {
            guard !spillFailed, runStart.count > 1 else { return }
            let moved = runStart.count - 1
            do {
                let scratch = try spilled ?? SpilledRuns()
                spilled = scratch
                let side = self
                try scratch.append((0..<moved).lazy.map { side.run($0) }, tables: tableOfEntity)
            } catch {
                spillFailed = true
                return
            }
            runEntity.removeFirst(moved)
            runKey.removeFirst(moved)
            runStart.removeFirst(moved)
            runMask.removeFirst(moved)
            sortedRuns = nil
        }

        /// The run that holds `position`.
        func run(containing position: Int) throws(SQLiteError) -> Run {
            if let spilled, runStart.first.map({ position < $0 }) ?? true {
                return try spilled.run(containing: position)
            }
            var low = 0, high = runStart.count
            while high - low > 1 {
                let mid = (low + high) / 2
                if runStart[mid] <= position { low = mid } else { high = mid }
            }
            return run(low)
        }

        /// The object at `position`.
        func object(at position: Int) throws(SQLiteError) -> Object {
            let run = try run(containing: position)
            return (run.entity, run.key(at: position - run.start))
        }

        /// The positions, in order, of the associations whose object on this side is
        /// `(entity, key)`.
        mutating func positions(entity: UInt16, key: Int64) throws(SQLiteError) -> [Int] {
            let table = tableOfEntity[Int(entity)]
            func start(_ run: Int) -> (UInt16, Int64) { (tableOfEntity[Int(runEntity[run])], runKey[run]) }
            func position(_ run: Run) -> Int? {
                guard tableOfEntity[Int(run.entity)] == table, let offset = run.offset(of: key) else { return nil }
                return run.start + offset
            }
            if inOrder {
                // The last run starting at or before (table, key) is the only candidate.
                var low = 0, high = runStart.count
                while low < high {
                    let mid = (low + high) / 2
                    if start(mid) <= (table, key) { low = mid + 1 } else { high = mid }
                }
                if low > 0 { return position(run(low - 1)).map { [$0] } ?? [] }
                guard let spilled, let found = try spilled.lastRun(table: table, atOrBefore: key) else { return [] }
                return position(found).map { [$0] } ?? []
            }
            if sortedRuns == nil {
                sortedRuns = (0..<UInt32(runStart.count)).sorted { start(Int($0)) < start(Int($1)) }
            }
            let index = sortedRuns!
            var low = 0, high = index.count
            while low < high {
                let mid = (low + high) / 2
                if start(Int(index[mid])) <= (table, key) { low = mid + 1 } else { high = mid }
            }
            // Runs may overlap when keys repeat: look back as far as the longest run reaches.
            var result: [Int] = []
            var i = low - 1
            while i >= 0 {
                let run = Int(index[i])
                let (t, k) = start(run)
                if t != table || !key.isAmong(longestRun, from: k) { break }
                if let found = position(self.run(run)) { result.append(found) }
                i -= 1
            }
            if let spilled {
                let (earliest, overflow) = key.subtractingReportingOverflow(Int64(longestRun - 1))
                for run in try spilled.runs(table: table, from: overflow ? .min : earliest, through: key) {
                    if let found = position(run) { result.append(found) }
                }
            }
            return result.sorted()
        }

        /// Calls `body` with each of its runs, in order of position.
        func forEachRun(_ body: (Run) throws(SQLiteError) -> Void) throws(SQLiteError) {
            try spilled?.forEach(body)
            for index in runStart.indices { try body(run(index)) }
        }
    }

    var sources: Side
    var destinations: Side

    init(sourceTables: [UInt16], destinationTables: [UInt16], spillsAfter: Int = AssociationTable.runsInMemory) {
        sources = Side(tableOfEntity: sourceTables, spillsAfter: spillsAfter)
        destinations = Side(tableOfEntity: destinationTables, spillsAfter: spillsAfter)
    }

    var count: Int { sources.count }

    /// Forgets every association.
    mutating func removeAll() {
        sources = Side(tableOfEntity: sources.tableOfEntity, spillsAfter: sources.spillsAfter)
        destinations = Side(tableOfEntity: destinations.tableOfEntity, spillsAfter: destinations.spillsAfter)
    }

    mutating func associate(source: Object, destination: Object) {
        sources.append(entity: source.entity, key: source.key)
        destinations.append(entity: destination.entity, key: destination.key)
    }

    /// Associates `count` sources with consecutive keys from `source.key` with as many
    /// destinations with consecutive keys from `destination.key`, pair by pair.
    mutating func associate(source: Object, destination: Object, count: Int) {
        sources.append(entity: source.entity, key: source.key, count: count)
        destinations.append(entity: destination.entity, key: destination.key, count: count)
    }

    /// The destinations associated with a source, in the order they were associated.
    mutating func destinations(ofSource entity: UInt16, key: Int64) throws(SQLiteError) -> [Object] {
        try sources.positions(entity: entity, key: key).map { position throws(SQLiteError) in
            try destinations.object(at: position)
        }
    }

    /// The sources associated with a destination, in the order they were associated.
    mutating func sources(ofDestination entity: UInt16, key: Int64) throws(SQLiteError) -> [Object] {
        try destinations.positions(entity: entity, key: key).map { position throws(SQLiteError) in
            try sources.object(at: position)
        }
    }

    /// The association at `position`.
    func association(at position: Int) throws(SQLiteError) -> (
        source: Object, destination: Object
    ) {
        (try sources.object(at: position), try destinations.object(at: position))
    }

    /// Calls `body` with each stretch of associations whose sources and destinations both
    /// have consecutive keys, in order of position: `count` sources from `source` made as
    /// many destinations from `destination`, pair by pair.
    func forEachStretch(
        _ body: (_ source: Object, _ destination: Object, _ count: Int)
            throws(SQLiteError) -> Void
    ) throws(SQLiteError) {
        try sources.forEachRun { run throws(SQLiteError) in
            try KeyWindow.forEachStretch(count: run.count, mask: run.mask) { distance, offset, n throws(SQLiteError) in
                var done = 0
                while done < n {
                    let position = run.start + offset + done
                    let destination = try destinations.run(containing: position)
                    let at = position - destination.start
                    let m = min(n - done, destination.consecutive(from: at))
                    try body(
                        (run.entity, run.key + Int64(distance + done)), (destination.entity, destination.key(at: at)), m
                    )
                    done += m
                }
            }
        }
    }
}

/// The runs a side of an ``AssociationTable`` moved out of memory, in a scratch SQLite
/// database of its own: a private temporary file, deleted when the connection closes.
/// SQLite keeps its pages in a small cache and the rest on disk.
final class SpilledRuns {
    private let database: Database
    private let insert: Statement
    private let byPosition: Statement
    private let lastByKey: Statement
    private let byKeys: Statement
    private(set) var runCount = 0
    /// The run a lookup last found: lookups in order find it again without a query.
    private var cached: (table: UInt16, run: AssociationTable.Run)?

    init() throws(SQLiteError) {
        database = try Database(path: "")
        try database.execute("PRAGMA journal_mode = OFF")
        try database.execute("PRAGMA synchronous = OFF")
        try database.execute("PRAGMA cache_size = -128")
        try database.execute(
            "CREATE TABLE run (start INTEGER PRIMARY KEY, tbl INTEGER NOT NULL, entity INTEGER NOT NULL, "
                + "key INTEGER NOT NULL, count INTEGER NOT NULL, mask INTEGER NOT NULL)")
        try database.execute("CREATE INDEX run_by_key ON run (tbl, key)")
        insert = try database.prepare("INSERT INTO run VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        let columns = "tbl, entity, key, start, count, mask"
        byPosition = try database.prepare("SELECT \(columns) FROM run WHERE start <= ?1 ORDER BY start DESC LIMIT 1")
        lastByKey = try database.prepare(
            "SELECT \(columns) FROM run WHERE tbl = ?1 AND key <= ?2 ORDER BY key DESC LIMIT 1")
        byKeys = try database.prepare("SELECT \(columns) FROM run WHERE tbl = ?1 AND key BETWEEN ?2 AND ?3")
    }

    /// Appends `runs`, which follow those it has, in one transaction.
    func append(_ runs: some Sequence<AssociationTable.Run>, tables: [UInt16]) throws(SQLiteError) {
        try database.execute("BEGIN")
        do {
            var appended = 0
            for run in runs {
                try insert.bind(Int64(run.start), at: 1)
                try insert.bind(Int64(tables[Int(run.entity)]), at: 2)
                try insert.bind(Int64(run.entity), at: 3)
                try insert.bind(run.key, at: 4)
                try insert.bind(Int64(run.count), at: 5)
                try insert.bind(Int64(bitPattern: run.mask), at: 6)
                try insert.run()
                appended += 1
            }
            try database.execute("COMMIT")
            runCount += appended
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
    }

    private func read(_ statement: Statement) -> (table: UInt16, run: AssociationTable.Run) {
        (
            UInt16(truncatingIfNeeded: statement.int64(at: 0)),
            AssociationTable.Run(
                entity: UInt16(truncatingIfNeeded: statement.int64(at: 1)), key: statement.int64(at: 2),
                start: Int(statement.int64(at: 3)), count: Int(statement.int64(at: 4)),
                mask: UInt64(bitPattern: statement.int64(at: 5)))
        )
    }

    /// The run that holds `position`, one of its positions.
    func run(containing position: Int) throws(SQLiteError) -> AssociationTable.Run {
        if let cached, position >= cached.run.start, position - cached.run.start < cached.run.count {
            return cached.run
        }
        defer { byPosition.reset() }
        try byPosition.bind(Int64(position), at: 1)
        guard try byPosition.step() else {
            throw SQLiteError(code: 1, extendedCode: 1, message: "no spilled association at \(position)")
        }
        let found = read(byPosition)
        cached = found
        return found.run
    }

    /// The last run of `table` whose first key is at most `key`, where runs ascend.
    func lastRun(table: UInt16, atOrBefore key: Int64) throws(SQLiteError) -> AssociationTable.Run? {
        if let cached, cached.table == table, key.isAmong(cached.run.span, from: cached.run.key) {
            return cached.run
        }
        defer { lastByKey.reset() }
        try lastByKey.bind(Int64(table), at: 1)
        try lastByKey.bind(key, at: 2)
        guard try lastByKey.step() else { return nil }
        let found = read(lastByKey)
        cached = found
        return found.run
    }

    /// The runs of `table` whose first key is from `low` through `high`.
    func runs(table: UInt16, from low: Int64, through high: Int64) throws(SQLiteError) -> [AssociationTable.Run] {
        defer { byKeys.reset() }
        try byKeys.bind(Int64(table), at: 1)
        try byKeys.bind(low, at: 2)
        try byKeys.bind(high, at: 3)
        var result: [AssociationTable.Run] = []
        while try byKeys.step() { result.append(read(byKeys).run) }
        return result
    }

    /// Calls `body` with each run, in order of position.
    func forEach(_ body: (AssociationTable.Run) throws(SQLiteError) -> Void) throws(SQLiteError) {
        let statement = try database.prepare("SELECT tbl, entity, key, start, count, mask FROM run ORDER BY start")
        while try statement.step() { try body(read(statement).run) }
    }
}

/// Keys that ascend with gaps, kept in runs of a window of 64 keys (``AssociationTable``'s
/// sides, ``EntityMappingRunner/KeyRun``): a run of `count` keys from its first is
/// consecutive where its mask is 0; else it holds the keys of its window whose bits are
/// set (bit i: the first key + i).
enum KeyWindow {
    /// The keys a run spans, from its first to its last.
    static func span(count: Int, mask: UInt64) -> Int { mask == 0 ? count : 64 - mask.leadingZeroBitCount }

    /// The mask of the run from `first` (`count` keys, `mask`) with `key` added, where
    /// `key` comes after the run's last and in the window of 64 from its first; nil
    /// otherwise.
    static func adding(_ key: Int64, to first: Int64, count: Int, mask: UInt64) -> UInt64? {
        guard key.isAmong(64, from: first) else { return nil }
        let distance = Int(key - first)
        guard distance >= span(count: count, mask: mask) else { return nil }
        // (A run of consecutive keys there holds fewer than 64.)
        return (mask == 0 ? UInt64.max >> UInt64(64 - count) : mask) | 1 << UInt64(distance)
    }

    /// Calls `body` with each stretch of consecutive keys of the run of `count` keys with
    /// `mask`: its first key's distance from the run's first, its offset among the run's
    /// keys, and how many.
    static func forEachStretch<E: Error>(
        count: Int, mask: UInt64, _ body: (_ distance: Int, _ offset: Int, _ count: Int) throws(E) -> Void
    ) throws(E) {
        guard mask != 0 else { return try body(0, 0, count) }
        var bits = mask, done = 0
        while bits != 0 {
            let first = bits.trailingZeroBitCount
            let ones = (~(bits >> UInt64(first))).trailingZeroBitCount
            try body(first, done, ones)
            done += ones
            bits &= ~((UInt64.max >> UInt64(64 - ones)) << UInt64(first))
        }
    }
}

extension Int64 {
    /// Whether this key is `count` keys after `start` (`start + count`), without
    /// overflowing: the last key Int64 holds has no successor.
    func follows(_ start: Int64, by count: Int) -> Bool {
        let (end, overflow) = start.addingReportingOverflow(Int64(count))
        return !overflow && end == self
    }

    /// Whether this key is one of the `count` keys from `start`, without overflowing.
    func isAmong(_ count: Int, from start: Int64) -> Bool {
        guard self >= start else { return false }
        let (distance, overflow) = subtractingReportingOverflow(start)
        return !overflow && distance < Int64(count)
    }
}

extension ClosedRange<Int64> {
    /// The last key of the chunk of `count` keys from `start`, these keys' last at most:
    /// no key beyond Int64's is computed.
    func chunkEnd(from start: Int64, count: Int) -> Int64 {
        upperBound.isAmong(count, from: start) ? upperBound : start + Int64(count) - 1
    }
}
