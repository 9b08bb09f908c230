import CSQLite
import ExpressionLanguage
import Foundation

/// One entity's mapping between objects and rows, computed once per context: the stored
/// attributes and to-one relationships in slot order, their columns, and the SQL that
/// reads a row.
final class EntityBinding {
    /// The context that made the binding; it sets this to nil when it goes (see
    /// ``ManagedObject/context``). Unmanaged: only that context writes it, and only while
    /// it lives, so ``withContext(_:)`` can lend it without reference counting.
    @exclusivity(unchecked) private var contextReference: Unmanaged<ObjectContext>?

    var context: ObjectContext? {
        get { contextReference?.takeUnretainedValue() }
        set { contextReference = newValue.map { Unmanaged.passUnretained($0) } }
    }

    /// Calls `body` with the context, without retaining it; nil when the context is gone.
    /// The hot paths' form: an object's every attribute set goes through here.
    @inline(__always)
    func withContext<Result>(_ body: (ObjectContext) throws -> Result) rethrows -> Result? {
        guard let contextReference else { return nil }
        return try contextReference._withUnsafeGuaranteedRef(body)
    }
    let entity: EntityDescription
    let layout: StoreLayout.EntityLayout
    /// Stored attributes, inherited first, in slot order.
    let attributes: [AttributeDescription]
    /// The attributes' types by slot: what the hot paths read (an `AttributeDescription`
    /// is large to copy).
    let attributeTypes: [AttributeType]
    /// What a new object's attributes start as, by slot.
    let defaultValues: [Value?]
    let attributeSlots: [String: Int]
    /// The attributes' names by slot, for ``slot(ofAttribute:)``.
    let attributeNames: [String]
    /// The names' lengths in UTF-8 bytes, by slot: most names a lookup compares with
    /// differ in length, which is cheaper to see than a difference in bytes.
    private let attributeNameLengths: [Int]
    let attributeColumns: [String]
    /// Slots of attributes not read with the row (binary and transformable values, read
    /// when first asked for).
    let lazySlots: Set<Int>
    /// By slot: whether the attribute allows external binary data storage, so that its
    /// column holds Core Data's marker and inline bytes or a file reference
    /// (``ExternalBinaryData``).
    let externalSlots: [Bool]
    /// Whether any attribute allows external storage.
    let hasExternalSlots: Bool
    /// The store's external data files (nil for a binding that never reads or writes).
    let externalData: ExternalDataFiles?
    /// To-one relationships, in slot order: the entity's own and inherited ones, then its
    /// hidden ones (``StoreLayout/HiddenToOne``), which hold to-many relationships without
    /// an inverse and are no property of the object.
    let toOnes: [RelationshipDescription]
    /// Slots of the to-ones, hidden ones included (by their hidden names).
    let toOneSlots: [String: Int]
    /// How many of ``toOnes`` are the entity's relationships; the hidden ones follow.
    let propertyToOneCount: Int
    let toOneColumns: [StoreLayout.ToOneColumns]
    /// To-many relationships by name.
    let toManys: [String: RelationshipDescription]
    /// Each attribute's column in a row its table's reader fetched (-1 for a lazy one) and
    /// type, by slot (see ObjectContext.makeObject); empty until first needed. A binding
    /// belongs to one context, used from one thread.
    @exclusivity(unchecked) var rowReads: [(column: Int32, type: AttributeType)] = []

    /// Where a table reader's row has `Z_OPT`: after `Z_PK` and `Z_ENT`, as every table
    /// of the layout starts.
    static let versionColumn: Int32 = 2

    /// The attribute in `slot` as its table reader's row in `statement` holds it; nil for a
    /// lazy one, not in the row (see ``rowReads``).
    @inline(__always)
    func rowValue(_ statement: Statement, slot: Int) -> Value? {
        let read = rowReads[slot]
        // `.none`, not `nil`, which Value, ExpressibleByNilLiteral, could read as `.null`.
        return read.column < 0 ? Value?.none : Self.read(statement, read.column, as: read.type)
    }
    /// The INSERT of a whole row: Z_PK, Z_ENT, Z_OPT, the attributes in slot order, then
    /// each to-one's key, entity and order columns.
    let insertSQL: String
    /// The context's prepared ``insertSQL``, once it has saved an object of the entity.
    @exclusivity(unchecked) var insertStatement: Statement? = nil
    /// The context's prepared UPDATEs of saved objects of the entity, by the bit mask of
    /// the slots they write (``ObjectContext/writeUpdate``).
    @exclusivity(unchecked) var updateStatements: [UInt64: Statement] = [:]
    /// The key counter of the entity's table, once the context has inserted an object of it.
    @exclusivity(unchecked) var keyCounter: ObjectContext.KeyCounter? = nil
    /// Slots of the attributes and to-ones a save requires values for.
    let requiredAttributeSlots: [Int]
    let requiredToOneSlots: [Int]
    /// No destination for each to-one: what a new object starts with.
    let noDestinations: [ObjectID?]
    init(entity: EntityDescription, model: ObjectModel, layout: StoreLayout, externalData: ExternalDataFiles? = nil) {
        let entityLayout = layout.entities[entity.name]!
        let attributes = model.allAttributes(of: entity).filter { !$0.isTransient }
        let relationships = model.allRelationships(of: entity).filter { !$0.isTransient }
        let properties = relationships.filter { !$0.isToMany }
        let hidden = entityLayout.hiddenToOnes.map { h in
            RelationshipDescription(name: h.name, destination: h.owner, inverse: h.relationship)
        }
        let toOnes = properties + hidden
        propertyToOneCount = properties.count
        self.entity = entity
        self.layout = entityLayout
        self.attributes = attributes
        attributeTypes = attributes.map(\.type)
        defaultValues = attributes.map { $0.defaultValue ?? .null }
        attributeSlots = Dictionary(uniqueKeysWithValues: attributes.enumerated().map { ($1.name, $0) })
        attributeNames = attributes.map(\.name)
        attributeNameLengths = attributes.map(\.name.utf8.count)
        attributeColumns = attributes.map { entityLayout.attributeColumns[$0.name]! }
        lazySlots = Set(
            attributes.indices.filter { attributes[$0].type == .binary || attributes[$0].type == .transformable })
        externalSlots = attributes.map(\.storesExternalEncoding)
        hasExternalSlots = externalSlots.contains(true)
        self.externalData = externalData
        self.toOnes = toOnes
        toOneSlots = Dictionary(uniqueKeysWithValues: toOnes.enumerated().map { ($1.name, $0) })
        toOneColumns = toOnes.map { entityLayout.toOneColumns[$0.name]! }
        toManys = Dictionary(uniqueKeysWithValues: relationships.filter(\.isToMany).map { ($0.name, $0) })
        requiredAttributeSlots = attributes.indices.filter { !attributes[$0].isOptional }
        requiredToOneSlots = toOnes.indices.filter { !toOnes[$0].isOptional }
        noDestinations = Array(repeating: nil, count: toOnes.count)
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"] + attributeColumns
        for c in toOneColumns {
            columns.append(c.key)
            if let e = c.entity { columns.append(e) }
            if let o = c.order { columns.append(o) }
        }
        insertSQL =
            "INSERT INTO \(entityLayout.table) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
    }

    /// The slot of the to-one relationship `name`; nil for a hidden to-one's name.
    @inline(__always)
    func slot(ofToOne name: String) -> Int? {
        guard let slot = toOneSlots[name], slot < propertyToOneCount else { return nil }
        return slot
    }

    /// The slot of the attribute `name`. Entities have few attributes and their names are
    /// short, so comparing names beats hashing the key, which profiles of reads by name
    /// showed as their largest cost; lengths are compared first (a UTF-8 count is stored
    /// in a string), names only when the lengths agree.
    @inline(__always)
    func slot(ofAttribute name: String) -> Int? {
        if attributeNames.count <= 16 {
            let length = name.utf8.count
            for slot in attributeNameLengths.indices where attributeNameLengths[slot] == length {
                if attributeNames[slot] == name { return slot }
            }
            return nil
        }
        return attributeSlots[name]
    }

    /// Reads an attribute's value from a column, as its type stores it.
    static func read(_ statement: Statement, _ index: Int32, as type: AttributeType) -> Value {
        if let value = read(sqlite3_column_value(statement.handle, index), as: type) { return value }
        if statement.isNull(index) { return .null }
        return .data(statement.data(at: index) ?? Data())
    }

    /// The value the column of the attribute in `slot` holds for `value`: for an
    /// external-storage attribute, Core Data's encoding (a large value written to a file),
    /// else the value itself.
    @inline(__always)
    func stored(_ value: Value, slot: Int, object: @autoclosure () -> String) throws(ContextError) -> Value {
        guard hasExternalSlots && externalSlots[slot] else { return value }
        guard let externalData else { return ExternalBinaryData.encode(value) }
        return try externalData.encode(value, object: object(), attribute: attributeNames[slot])
    }

    /// The value of the attribute in `slot` of the object `primaryKey` as read from its
    /// column: an external-storage attribute's marker decoded, its file read.
    @inline(__always)
    func decoded(_ value: Value, slot: Int, primaryKey: Int64, storePath: String) throws(ContextError) -> Value {
        guard hasExternalSlots && externalSlots[slot] else { return value }
        return try (externalData ?? ExternalDataFiles(storeAt: storePath)).decode(
            value, object: "\(entity.name)/\(primaryKey)", attribute: attributeNames[slot])
    }

    /// Binds an attribute's value to a parameter, as its type stores it.
    static func bind(_ value: Value, as type: AttributeType, to statement: Statement, at index: Int32)
        throws(SQLiteError)
    {
        try statement.bind(sqliteValue(value, as: type), at: index)
    }

    /// Whether ``read(_:as:)`` reads `type` from a value.
    static func readsFromValue(_ type: AttributeType) -> Bool {
        switch type {
        case .string, .uri, .int16, .int32, .int64, .boolean, .double, .float, .date, .binary, .transformable,
            .decimal, .uuid:
            true
        case .undefined, .objectID, .composite: false
        }
    }

    /// Reads an attribute's value from an SQLite value (a column of a row, an argument of a
    /// SQL function), as its type stores it; nil for the types no model stores (undefined,
    /// object IDs, composites). Numbers, dates and booleans read their value and storage
    /// class with one lookup; text by its pointer, which is nil only for NULL. A decimal
    /// is read from the storage class it has: an integer as itself, text as the number it
    /// spells (0 if none), a double (or a blob, as SQLite converts it) as the decimal its
    /// shortest text says (``Value/decimal(describing:)``: written back, the same double;
    /// past 1e127 too), 0 where no Decimal holds it. A UUID is read from 16 bytes, or from
    /// text, in capitals; other bytes are read as data.
    @inline(__always)
    static func read(_ value: OpaquePointer?, as type: AttributeType) -> Value? {
        switch type {
        case .string, .uri:
            guard let text = sqlite3_value_text(value) else { return .null }
            return .string(
                String(
                    decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))), as: UTF8.self))
        case .int16, .int32, .int64:
            return sqlite3_value_type(value) == SQLITE_NULL ? .null : .integer(sqlite3_value_int64(value))
        case .boolean:
            return sqlite3_value_type(value) == SQLITE_NULL ? .null : .bool(sqlite3_value_int64(value) != 0)
        case .double, .float:
            return sqlite3_value_type(value) == SQLITE_NULL ? .null : .double(sqlite3_value_double(value))
        case .date:
            return sqlite3_value_type(value) == SQLITE_NULL
                ? .null : .date(Date(timeIntervalSinceReferenceDate: sqlite3_value_double(value)))
        case .binary, .transformable:
            if sqlite3_value_type(value) == SQLITE_NULL { return .null }
            guard let bytes = sqlite3_value_blob(value) else { return .data(Data()) }
            return .data(Data(bytes: bytes, count: Int(sqlite3_value_bytes(value))))
        case .decimal:
            switch sqlite3_value_type(value) {
            case SQLITE_NULL: return .null
            case SQLITE_INTEGER: return .decimal(Decimal(sqlite3_value_int64(value)))
            case SQLITE_TEXT:
                return .decimal(Value.decimal(parsing: text(of: value)) ?? 0)
            default: return .decimal(Value.decimal(describing: sqlite3_value_double(value)) ?? 0)
            }
        case .uuid:
            switch sqlite3_value_type(value) {
            case SQLITE_NULL: return .null
            case SQLITE_TEXT: return .string(text(of: value).uppercased())
            default:
                // (The pointer first, then the count: a number is converted to its text.)
                guard let blob = sqlite3_value_blob(value) else { return .data(Data()) }
                let count = Int(sqlite3_value_bytes(value))
                guard count == 16 else { return .data(Data(bytes: blob, count: count)) }
                let u = UnsafeBufferPointer(start: blob.assumingMemoryBound(to: UInt8.self), count: 16)
                return .string(
                    UUID(
                        uuid: (
                            u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                            u[14], u[15]
                        )
                    ).uuidString)
            }
        case .undefined, .objectID, .composite:
            return nil
        }
    }

    /// The text of a value SQLite holds as text, decoded as the `.string` case decodes it.
    private static func text(of value: OpaquePointer?) -> String {
        guard let text = sqlite3_value_text(value) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
    }

    /// What the column of an attribute of `type` holds for `value` (already coerced and
    /// encoded as the attribute stores it): booleans as 0 and 1, integers in double
    /// columns as doubles, decimals as doubles, UUIDs as their 16 bytes, dates as seconds
    /// since 2001; collections and objects as NULL.
    static func sqliteValue(_ value: Value, as type: AttributeType) -> SQLiteValue {
        switch value {
        case .null: .null
        case .bool(let b): .integer(b ? 1 : 0)
        case .integer(let i): type == .double || type == .float ? .real(Double(i)) : .integer(i)
        case .double(let d): .real(d)
        case .decimal(let d): .real(Value.double(d))
        case .string(let s):
            if type == .uuid, let uuid = UUID(uuidString: s) {
                .blob(withUnsafeBytes(of: uuid.uuid) { Data($0) })
            } else {
                .text(s)
            }
        case .date(let d): .real(d.timeIntervalSinceReferenceDate)
        case .data(let d): .blob(d)
        case .array, .set, .dictionary, .object: .null
        }
    }
}
