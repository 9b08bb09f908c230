import ExpressionLanguage

/// Copies attributes from a ``RowReader``'s current row into a ``RowInserter``'s next
/// row, with the keys resolved once: for loops that copy every row of a table.
///
///     let reader = try source.makeRowReader(for: "Product")
///     let inserter = try destination.makeRowInserter(for: "Product")
///     let copier = try RowCopier(from: reader, to: inserter, attributes: [
///         (try source.attributeKey("name", of: "Product"), try destination.attributeKey("name", of: "Product")),
///     ])
///     while try reader.next() {
///         try copier.copy(0)
///         try inserter.insertRow()
///     }
///
/// Each copy does what ``RowInserter/copy(_:of:to:)`` does.
public final class RowCopier {
    public let reader: RowReader
    public let inserter: RowInserter
    /// By copy: the source attribute, its column in the reader's row (-1 when the reader
    /// does not select it) and type, and the destination attribute.
    private let sources: [AttributeKey]
    private let columns: [Int32]
    private let sourceTypes: [AttributeType]
    private let destinations: [AttributeKey]

    /// Copies of `attributes`, pairs of a source attribute of the reader's entity and a
    /// destination attribute of the inserter's, numbered from 0 in this order.
    public init(from reader: RowReader, to inserter: RowInserter, attributes: [(AttributeKey, AttributeKey)]) throws(ContextError) {
        for (source, destination) in attributes {
            guard source.binding === reader.binding else {
                throw ContextError(.unknownKey, "the key '\(source.name)' is not of \(reader.entityName)", key: source.name)
            }
            guard destination.binding === inserter.binding else {
                throw ContextError(.unknownKey, "the key '\(destination.name)' is not of \(inserter.entityName)", key: destination.name)
            }
        }
        self.reader = reader
        self.inserter = inserter
        sources = attributes.map(\.0)
        destinations = attributes.map(\.1)
        columns = sources.map { reader.column(ofSlot: $0.slot) }
        sourceTypes = sources.map { reader.binding.attributeTypes[$0.slot] }
    }

    /// How many copies there are.
    public var count: Int { columns.count }

    /// Sets the destination attribute of copy `index` in the inserter's next row to the
    /// source attribute's value in the reader's current row. The reader must stay on its
    /// row until the inserter inserts it.
    public func copy(_ index: Int) throws(ContextError) {
        let column = columns[index]
        if column >= 0, inserter.copyStored(column, of: reader.statement.handle, as: sourceTypes[index], to: destinations[index].slot) {
            return
        }
        try inserter.set(try reader.value(for: sources[index]), for: destinations[index])
    }
}
