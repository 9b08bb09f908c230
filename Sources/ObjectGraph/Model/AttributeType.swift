/// The type of an attribute, with Core Data's names for it.
public enum AttributeType: String, CaseIterable, Hashable, Sendable {
    case int16, int32, int64, decimal, double, float, string, boolean, date, binary, uuid, uri, transformable
    /// Types an attribute may have only when it is transient (Xcode's `Undefined`, `ObjectID`,
    /// `Composite`): Remodel has no column for them (``isStorable``).
    case undefined, objectID, composite

    /// The types a stored attribute can have.
    public static let storableCases: [AttributeType] = allCases.filter(\.isStorable)

    /// Whether a stored attribute can have this type; `undefined`, `objectID` and
    /// `composite` only go with transient attributes.
    public var isStorable: Bool { !(self == .undefined || self == .objectID || self == .composite) }

    /// The name Xcode writes in `attributeType` (`Integer 16`, `Boolean`, …).
    public var xcodeName: String {
        switch self {
        case .int16: "Integer 16"
        case .int32: "Integer 32"
        case .int64: "Integer 64"
        case .decimal: "Decimal"
        case .double: "Double"
        case .float: "Float"
        case .string: "String"
        case .boolean: "Boolean"
        case .date: "Date"
        case .binary: "Binary"
        case .uuid: "UUID"
        case .uri: "URI"
        case .transformable: "Transformable"
        case .undefined: "Undefined"
        case .objectID: "ObjectID"
        case .composite: "Composite"
        }
    }

    /// Core Data's `NSAttributeType` raw value, which version hashes include.
    public var coreDataCode: Int {
        switch self {
        case .int16: 100
        case .int32: 200
        case .int64: 300
        case .decimal: 400
        case .double: 500
        case .float: 600
        case .string: 700
        case .boolean: 800
        case .date: 900
        case .binary: 1000
        case .uuid: 1100
        case .uri: 1200
        case .transformable: 1800
        case .undefined: 0
        case .objectID: 2000
        case .composite: 2100
        }
    }

    /// The type for an Xcode `attributeType` string.
    public init?(xcodeName: String) {
        guard let type = AttributeType.allCases.first(where: { $0.xcodeName == xcodeName }) else { return nil }
        self = type
    }

    /// The column type Core Data declares in its SQLite store.
    public var sqlType: String {
        switch self {
        case .int16, .int32, .int64, .boolean: "INTEGER"
        case .double, .float: "FLOAT"
        case .string, .uri: "VARCHAR"
        case .date: "TIMESTAMP"
        case .binary, .transformable, .uuid: "BLOB"
        case .decimal: "DECIMAL"
        // Never a column: validation refuses these types on stored attributes.
        case .undefined, .objectID, .composite: "BLOB"
        }
    }

    /// Whether values are integers (for range checks and conversions).
    public var isInteger: Bool { self == .int16 || self == .int32 || self == .int64 }

    /// Whether values are numbers of any kind (booleans included, as NSNumber).
    public var isNumeric: Bool {
        isInteger || self == .double || self == .float || self == .decimal || self == .boolean
    }

    /// The range an integer type holds.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .int16: Int64(Int16.min)...Int64(Int16.max)
        case .int32: Int64(Int32.min)...Int64(Int32.max)
        case .int64: Int64.min...Int64.max
        default: nil
        }
    }
}
