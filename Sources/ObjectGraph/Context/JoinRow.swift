/// One row of a join table, stored with its columns in a fixed order so that both sides
/// of a relationship record the same row.
struct JoinRow: Hashable {
    let table: String
    let firstColumn: String
    let secondColumn: String
    let first: Int64
    let second: Int64

    init(side: StoreLayout.JoinTable.Side, source: Int64, destination: Int64) {
        table = side.table
        if side.sourceColumn < side.destinationColumn {
            (firstColumn, secondColumn, first, second) = (
                side.sourceColumn, side.destinationColumn, source, destination
            )
        } else {
            (firstColumn, secondColumn, first, second) = (
                side.destinationColumn, side.sourceColumn, destination, source
            )
        }
    }

    /// `(source, destination)` as `side` sees the row, when the row is of that side's table.
    func pair(for side: StoreLayout.JoinTable.Side) -> (Int64, Int64)? {
        guard table == side.table else { return nil }
        return side.sourceColumn == firstColumn ? (first, second) : (second, first)
    }
}
