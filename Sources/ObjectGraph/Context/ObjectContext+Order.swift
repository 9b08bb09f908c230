import Foundation

// The order of ordered to-many relationships, kept as Core Data keeps it: positions in
// `Z_FOK_` columns (docs/store-format.md, "Ordered relationships").
//
// - ordered one-to-many: each destination's row holds its position in `Z_FOK_<INVERSE>`,
//   beside its to-one column;
// - ordered many-to-many (and ordered to-many without an inverse): each join row holds the
//   destination's position among the source's in `Z_FOK_<n><NAME>`, named after the column
//   that holds the destinations' keys.
//
// Setting an ordered relationship gives its members positions 1, 2, 3…; an object that
// joins one from the other side (`song.playlist = p`) goes last: at the next save it gets
// the position after the largest the relationship has. Reading orders by position, the
// unsaved ones first where they are set, the saved ones otherwise.
extension ObjectContext {
    /// `items` by position (`position` gives nil for items without one, which go last);
    /// items with equal positions, or none, keep their order.
    static func ordered<T>(_ items: [T], position: (T) -> Int64?) -> [T] {
        let positions = items.map(position)
        let order = items.indices.sorted { a, b in
            switch (positions[a], positions[b]) {
            case let (x?, y?) where x != y: return x < y
            case (_?, nil): return true
            case (nil, _?): return false
            default: return a < b
            }
        }
        return order.map { items[$0] }
    }

    /// Where appended positions are counted: one source's destinations in one `Z_FOK_`
    /// column.
    private struct OrderGroup: Hashable {
        var table: String
        var keyColumn: String
        var orderColumn: String
        var owner: Int64
    }

    /// Gives the objects that joined an ordered relationship without a position (from the
    /// other side) the positions after the largest one the relationship has, saved or not.
    func assignAppendedPositions() throws(ContextError) {
        // One-to-many: members whose to-one slot changed, by owner.
        var members: [OrderGroup: [(ManagedObject, Int)]] = [:]
        var highest: [OrderGroup: Int64] = [:]
        for object in pending.all where !object.isDeleted {
            for (slot, columns) in object.binding.toOneColumns.enumerated() {
                guard let orderColumn = columns.order, let owner = object.toOne[slot] else { continue }
                let group = OrderGroup(
                    table: object.objectID.table, keyColumn: columns.key, orderColumn: orderColumn,
                    owner: owner.primaryKey)
                if let position = object.positions[slot] {
                    highest[group] = max(highest[group] ?? 0, position)
                } else if object.isInserted || object.changedSlots.contains(toOne: slot) {
                    members[group, default: []].append((object, slot))
                }
            }
        }
        for (group, list) in members {
            var next = max(highest[group] ?? 0, try savedHighest(group)) + 1
            for (object, slot) in list.sorted(by: { $0.0.objectID.primaryKey < $1.0.objectID.primaryKey }) {
                object.positions[slot] = next
                next += 1
            }
        }

        // Many-to-many: inserted join rows without a position, by source.
        let joins = Dictionary(store.layout.joinTables.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        func orderedSides(_ table: String) -> [(source: String, destination: String, order: String)] {
            guard let join = joins[table] else { return [] }
            var sides: [(String, String, String)] = []
            if let order = join.secondOrderColumn { sides.append((join.firstColumn, join.secondColumn, order)) }
            if let order = join.firstOrderColumn { sides.append((join.secondColumn, join.firstColumn, order)) }
            return sides
        }
        var rows: [OrderGroup: [(JoinRow, Int64)]] = [:]
        highest = [:]
        for (row, positions) in joinPositions {
            for side in orderedSides(row.table) {
                guard let position = positions[side.order], let source = row.key(in: side.source) else { continue }
                let group = OrderGroup(table: row.table, keyColumn: side.source, orderColumn: side.order, owner: source)
                highest[group] = max(highest[group] ?? 0, position)
            }
        }
        for (row, insert) in joinChanges where insert {
            for side in orderedSides(row.table) where joinPositions[row]?[side.order] == nil {
                guard let source = row.key(in: side.source), let destination = row.key(in: side.destination) else {
                    continue
                }
                rows[
                    OrderGroup(table: row.table, keyColumn: side.source, orderColumn: side.order, owner: source),
                    default: []
                ]
                .append((row, destination))
            }
        }
        for (group, list) in rows {
            var next = max(highest[group] ?? 0, try savedHighest(group)) + 1
            for (row, _) in list.sorted(by: { $0.1 < $1.1 }) {
                joinPositions[row, default: [:]][group.orderColumn] = next
                next += 1
            }
        }
    }

    /// The largest saved position of a group (0 when it has none).
    private func savedHighest(_ group: OrderGroup) throws(ContextError) -> Int64 {
        let statement = try statement(
            "SELECT max(\(group.orderColumn)) FROM \(group.table) WHERE \(group.keyColumn) = ?")
        defer { statement.reset() }
        do {
            try statement.bind(group.owner, at: 1)
            guard try statement.step(), !statement.isNull(0) else { return 0 }
        } catch {
            throw ContextError(error)
        }
        return statement.int64(at: 0)
    }

    /// Writes the positions of join rows (inside the save's transaction, after the rows).
    func writeJoinPositions() throws {
        for (row, positions) in joinPositions {
            for (column, position) in positions.sorted(by: { $0.key < $1.key }) {
                let statement = try self.statement(
                    "UPDATE \(row.table) SET \(column) = ? WHERE \(row.firstColumn) = ? AND \(row.secondColumn) = ?")
                try statement.bind(position, at: 1)
                try statement.bind(row.first, at: 2)
                try statement.bind(row.second, at: 3)
                try statement.run()
            }
        }
    }
}

extension JoinRow {
    /// The key this row holds in `column`, when the row has that column.
    func key(in column: String) -> Int64? {
        if column == firstColumn { return first }
        if column == secondColumn { return second }
        return nil
    }
}
