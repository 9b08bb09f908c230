/// Which destination instances were made from which source instances, for one entity
/// mapping: a compact, two-way table.
///
/// Each side is stored as runs: consecutive associations whose objects are of one entity
/// with consecutive primary keys make one run of 22 bytes (entity, first key, first
/// position, mask). The engine reads source rows in primary-key order and the destination
/// allocates keys in order, so a mapping over a table without gaps is one run on each side
/// however many rows it has. Keys that ascend with gaps (the rows a filter keeps) share a
/// run for each window of 64 keys, a bit for each key: a filter that keeps a scattered
/// half of a million rows makes 16,000 runs, not 250,000. The worst case (no two keys
/// within 64 of each other) is 22 bytes per association and side. Lookups are binary
/// searches over the runs; a side whose keys arrive out of order gets a sorted index of
/// its runs (4 bytes each) when first searched.
struct AssociationTable {
    /// One side of the table.
    struct Side {
        /// The table of each entity (by entity index): keys are unique per table.
        let tableOfEntity: [UInt16]
        private(set) var count = 0
        private var runEntity: [UInt16] = []
        private var runKey: [Int64] = []
        private var runStart: [UInt32] = []
        /// Per run: 0 where its keys are consecutive from its first; else the keys of a
        /// window of 64 from its first, a bit for each (bit i: the first key + i), in order.
        private var runMask: [UInt64] = []
        /// Runs ascend by (table, key) without overlapping: lookups search them directly.
        private var inOrder = true
        /// The most keys a run spans, from its first to its last.
        private var longestRun = 0
        private var sortedRuns: [UInt32]? = nil

        init(tableOfEntity: [UInt16]) { self.tableOfEntity = tableOfEntity }

        /// How many runs the side has (for tests and reports).
        var runCount: Int { runStart.count }

        private func length(_ run: Int) -> Int {
            (run + 1 < runStart.count ? Int(runStart[run + 1]) : count) - Int(runStart[run])
        }

        /// The keys a run spans, from its first to its last.
        private func span(_ run: Int) -> Int { KeyWindow.span(count: length(run), mask: runMask[run]) }

        /// The position of `key` within `run` (a run of its table), if the run holds it.
        private func offset(of key: Int64, in run: Int) -> Int? {
            guard key.isAmong(span(run), from: runKey[run]) else { return nil }
            let distance = Int(key - runKey[run])
            let mask = runMask[run]
            guard mask != 0 else { return distance }
            guard mask & (1 << UInt64(distance)) != 0 else { return nil }
            return (mask & ((1 << UInt64(distance)) - 1)).nonzeroBitCount
        }

        mutating func append(entity: UInt16, key: Int64) {
            let last = runStart.count - 1
            if last >= 0, runEntity[last] == entity {
                if runMask[last] == 0, key.follows(runKey[last], by: length(last)) {
                    count += 1
                    longestRun = max(longestRun, length(last))
                    sortedRuns = nil
                    return
                }
                if let mask = KeyWindow.adding(key, to: runKey[last], count: length(last), mask: runMask[last]) {
                    runMask[last] = mask
                    count += 1
                    longestRun = max(longestRun, Int(key - runKey[last]) + 1)
                    sortedRuns = nil
                    return
                }
            }
            startRun(entity: entity, key: key)
        }

        /// Appends `count` objects of `entity` with consecutive keys from `key`.
        mutating func append(entity: UInt16, key: Int64, count n: Int) {
            guard n > 1 else {
                if n == 1 { append(entity: entity, key: key) }
                return
            }
            let last = runStart.count - 1
            if last >= 0, runEntity[last] == entity, runMask[last] == 0, key.follows(runKey[last], by: length(last)) {
                count += n
            } else {
                startRun(entity: entity, key: key)
                count += n - 1
            }
            longestRun = max(longestRun, length(runStart.count - 1))
            sortedRuns = nil
        }

        /// A new run of one object.
        private mutating func startRun(entity: UInt16, key: Int64) {
            let last = runStart.count - 1
            if last >= 0, inOrder {
                let previous = (tableOfEntity[Int(runEntity[last])], runKey[last] + Int64(span(last) - 1))
                if (tableOfEntity[Int(entity)], key) <= previous { inOrder = false }
            }
            runEntity.append(entity)
            runKey.append(key)
            runStart.append(UInt32(count))
            runMask.append(0)
            count += 1
            longestRun = max(longestRun, 1)
            sortedRuns = nil
        }

        /// The object at `position`.
        func object(at position: Int) -> (entity: UInt16, key: Int64) {
            var low = 0, high = runStart.count
            while high - low > 1 {
                let mid = (low + high) / 2
                if Int(runStart[mid]) <= position { low = mid } else { high = mid }
            }
            var offset = position - Int(runStart[low])
            if runMask[low] != 0 {
                // (The offset-th key of the window: its bit, the lower ones cleared.)
                var mask = runMask[low]
                while offset > 0 {
                    mask &= mask - 1
                    offset -= 1
                }
                offset = mask.trailingZeroBitCount
            }
            return (runEntity[low], runKey[low] + Int64(offset))
        }

        /// The positions, in order, of the associations whose object on this side is
        /// `(entity, key)`.
        mutating func positions(entity: UInt16, key: Int64) -> [Int] {
            let table = tableOfEntity[Int(entity)]
            func start(_ run: Int) -> (UInt16, Int64) { (tableOfEntity[Int(runEntity[run])], runKey[run]) }
            func position(_ run: Int) -> Int? {
                guard tableOfEntity[Int(runEntity[run])] == table, let offset = offset(of: key, in: run) else {
                    return nil
                }
                return Int(runStart[run]) + offset
            }
            if inOrder {
                // The last run starting at or before (table, key) is the only candidate.
                var low = 0, high = runStart.count
                while low < high {
                    let mid = (low + high) / 2
                    if start(mid) <= (table, key) { low = mid + 1 } else { high = mid }
                }
                guard low > 0, let found = position(low - 1) else { return [] }
                return [found]
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
                if let found = position(run) { result.append(found) }
                i -= 1
            }
            return result.sorted()
        }
    }

    var sources: Side
    var destinations: Side

    init(sourceTables: [UInt16], destinationTables: [UInt16]) {
        sources = Side(tableOfEntity: sourceTables)
        destinations = Side(tableOfEntity: destinationTables)
    }

    var count: Int { sources.count }

    mutating func associate(source: (entity: UInt16, key: Int64), destination: (entity: UInt16, key: Int64)) {
        sources.append(entity: source.entity, key: source.key)
        destinations.append(entity: destination.entity, key: destination.key)
    }

    /// Associates `count` sources with consecutive keys from `source.key` with as many
    /// destinations with consecutive keys from `destination.key`, pair by pair.
    mutating func associate(source: (entity: UInt16, key: Int64), destination: (entity: UInt16, key: Int64), count: Int)
    {
        sources.append(entity: source.entity, key: source.key, count: count)
        destinations.append(entity: destination.entity, key: destination.key, count: count)
    }

    /// The destinations associated with a source, in the order they were associated.
    mutating func destinations(ofSource entity: UInt16, key: Int64) -> [(entity: UInt16, key: Int64)] {
        sources.positions(entity: entity, key: key).map { destinations.object(at: $0) }
    }

    /// The sources associated with a destination, in the order they were associated.
    mutating func sources(ofDestination entity: UInt16, key: Int64) -> [(entity: UInt16, key: Int64)] {
        destinations.positions(entity: entity, key: key).map { sources.object(at: $0) }
    }

    /// The association at `position`.
    subscript(position: Int) -> (source: (entity: UInt16, key: Int64), destination: (entity: UInt16, key: Int64)) {
        (sources.object(at: position), destinations.object(at: position))
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
