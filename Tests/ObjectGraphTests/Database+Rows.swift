@testable import ObjectGraph

extension Database {
    /// The rows `sql` selects, each as its columns' values joined by spaces (`nil` for
    /// NULL, `?` for a real or a blob): what the layout tests compare stored rows with.
    func rows(_ sql: String) throws -> [String] {
        let statement = try prepare(sql)
        var rows: [String] = []
        while try statement.step() {
            rows.append(
                (0..<statement.columnCount).map { i in
                    switch statement.value(at: i) {
                    case .integer(let n): String(n)
                    case .text(let t): t
                    case .null: "nil"
                    default: "?"
                    }
                }.joined(separator: " "))
        }
        return rows
    }
}
