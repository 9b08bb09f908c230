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
    /// By copy: the source attribute and the destination attribute.
    private let sources: [AttributeKey]
    private let destinations: [AttributeKey]
    /// By copy: the source column, and how it goes to the destination without decoding
    /// (nil when it cannot: the value is read and set).
    private let stored: [(column: Int32, copy: StoredCopy?)]
    /// By copy: whether ``copyStoredValues()`` did it for the current row.
    private let done: UnsafeMutableBufferPointer<Bool>

    /// Copies of `attributes`, pairs of a source attribute of the reader's entity and a
    /// destination attribute of the inserter's, numbered from 0 in this order.
    public init(from reader: RowReader, to inserter: RowInserter, attributes: [(AttributeKey, AttributeKey)])
        throws(ContextError)
    {
        for (source, destination) in attributes {
            guard source.binding === reader.binding else {
                throw ContextError(
                    .unknownKey, "the key '\(source.name)' is not of \(reader.entityName)", key: source.name)
            }
            guard destination.binding === inserter.binding else {
                throw ContextError(
                    .unknownKey, "the key '\(destination.name)' is not of \(inserter.entityName)", key: destination.name
                )
            }
        }
        self.reader = reader
        self.inserter = inserter
        sources = attributes.map(\.0)
        destinations = attributes.map(\.1)
        stored = attributes.map { source, destination in
            let column = reader.column(ofSlot: source.slot)
            let copy =
                column < 0 ? nil : inserter.storedCopy(from: reader.binding, slot: source.slot, to: destination.slot)
            return (column, copy)
        }
        done = .allocate(capacity: attributes.count)
        done.initialize(repeating: false)
    }

    deinit {
        done.deallocate()
    }

    /// How many copies there are.
    public var count: Int { stored.count }

    /// Sets the destination attribute of copy `index` in the inserter's next row to the
    /// source attribute's value in the reader's current row. The reader must stay on its
    /// row until the inserter inserts it.
    public func copy(_ index: Int) throws(ContextError) {
        let (column, copy) = stored[index]
        if let copy, inserter.copyStored(column, of: reader.statement.handle, copy) { return }
        try inserter.set(try reader.value(for: sources[index]), for: destinations[index])
    }

    /// Does every copy whose value in the current row goes from column to parameter
    /// without decoding, in one pass, and says whether that was all of them. The others
    /// are left for ``copy(_:)`` (``isDone(_:)`` tells which), which is where their
    /// errors, if any, come from: a copy done here cannot fail.
    public func copyStoredValues() -> Bool {
        let row = reader.statement.handle
        var all = true
        for index in stored.indices {
            let (column, copy) = stored[index]
            let copied = copy.map { inserter.copyStored(column, of: row, $0) } ?? false
            done[index] = copied
            all = all && copied
        }
        return all
    }

    /// Whether ``copyStoredValues()`` did copy `index` for the current row.
    public func isDone(_ index: Int) -> Bool { done[index] }
}
