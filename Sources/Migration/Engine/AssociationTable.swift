/// Which destination instances were made from which source instances, for one entity
/// mapping: a compact, two-way table.
///
/// Each association costs 20 bytes (an entity number and a `Z_PK` on each side, in
/// separate arrays so nothing is padded) and nothing else while associations arrive in
/// primary-key order, which is how the engine reads source rows and allocates destination
/// keys. Lookups are binary searches; a side whose keys arrived out of order gets a sorted
/// index of 4 bytes per association the first time it is searched.
struct AssociationTable {
    /// One side of the table: entities (as indexes into the side's entity list) and keys.
    struct Side {
        private(set) var entities: [UInt16] = []
        private(set) var keys: [Int64] = []
        /// The tables of the entities, by entity index: keys are unique per table.
        let tableOfEntity: [UInt16]
        private var inOrder = true
        private var sortedIndex: [Int32]? = nil

        init(tableOfEntity: [UInt16]) { self.tableOfEntity = tableOfEntity }

        var count: Int { keys.count }

        mutating func append(entity: UInt16, key: Int64) {
            if inOrder, let last = keys.last {
                let lastTable = tableOfEntity[Int(entities[entities.count - 1])]
                let table = tableOfEntity[Int(entity)]
                if (table, key) < (lastTable, last) { inOrder = false }
            }
            entities.append(entity)
            keys.append(key)
            sortedIndex = nil
        }

        /// The positions of the associations whose object on this side is `(entity, key)`.
        mutating func positions(entity: UInt16, key: Int64) -> [Int] {
            let table = tableOfEntity[Int(entity)]
            let (tables, entities, keys) = (tableOfEntity, self.entities, self.keys)
            let sortKey = { (i: Int) -> (UInt16, Int64) in (tables[Int(entities[i])], keys[i]) }
            if inOrder {
                var low = 0, high = keys.count
                while low < high {
                    let mid = (low + high) / 2
                    if sortKey(mid) < (table, key) { low = mid + 1 } else { high = mid }
                }
                var result: [Int] = []
                while low < keys.count, sortKey(low) == (table, key) {
                    result.append(low)
                    low += 1
                }
                return result
            }
            if sortedIndex == nil {
                sortedIndex = (0..<Int32(keys.count)).sorted { a, b in
                    let ka = sortKey(Int(a)), kb = sortKey(Int(b))
                    return ka != kb ? ka < kb : a < b
                }
            }
            let index = sortedIndex!
            var low = 0, high = index.count
            while low < high {
                let mid = (low + high) / 2
                if sortKey(Int(index[mid])) < (table, key) { low = mid + 1 } else { high = mid }
            }
            var result: [Int] = []
            while low < index.count, sortKey(Int(index[low])) == (table, key) {
                result.append(Int(index[low]))
                low += 1
            }
            return result
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

    /// The destinations associated with a source, in the order they were associated.
    mutating func destinations(ofSource entity: UInt16, key: Int64) -> [(entity: UInt16, key: Int64)] {
        sources.positions(entity: entity, key: key).map { (destinations.entities[$0], destinations.keys[$0]) }
    }

    /// The sources associated with a destination, in the order they were associated.
    mutating func sources(ofDestination entity: UInt16, key: Int64) -> [(entity: UInt16, key: Int64)] {
        destinations.positions(entity: entity, key: key).map { (sources.entities[$0], sources.keys[$0]) }
    }

    /// The association at `position`.
    subscript(position: Int) -> (source: (entity: UInt16, key: Int64), destination: (entity: UInt16, key: Int64)) {
        ((sources.entities[position], sources.keys[position]), (destinations.entities[position], destinations.keys[position]))
    }
}
