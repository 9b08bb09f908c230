import OrderedCollections

/// A JSON document, as read by `JSON.parse(_:)` and written by ``serialized(pretty:)``.
///
/// Unlike Foundation's `JSONSerialization` and `JSONDecoder`, this type keeps the
/// difference between `1` and `1.0`: a number written without `.`, `e` or `E` is an
/// ``integer(_:)``, any other number is a ``double(_:)``, and the writer prints doubles so
/// that they read back as doubles (`2.0`, `1e+300`). The CLIs' `"type": "integer"` versus
/// `"type": "double"` depends on it.
///
/// Objects keep their keys in the order they were read or inserted, and the writer prints
/// them in that order. Equality is structural and follows that order too: `{"a":1,"b":2}`
/// and `{"b":2,"a":1}` are different values (they print differently), and `.integer(1)`
/// is not `.double(1)`.
///
///     let json = try JSON.parse(#"{"price": 2.50, "count": 3}"#)
///     json["price"]                 // .double(2.5)
///     json["count"]                 // .integer(3)
///     json.serialized()             // {"price":2.5,"count":3}
///
/// Not `indirect`: arrays and dictionaries already store their elements out of line, and
/// boxing every scalar cost a fifth of the reading time (the enum is 24 bytes, like `Value`).
public enum JSON: Hashable, Sendable {
    case null
    case bool(Bool)
    /// A number written without `.`, `e` or `E`, within `Int64`.
    case integer(Int64)
    /// A number written with a fraction or an exponent. Only finite values can be written
    /// as JSON; see ``serialized(pretty:)`` for what happens to the others.
    case double(Double)
    case string(String)
    case array([JSON])
    /// Members in their order in the text (or of insertion); keys are unique.
    case object(OrderedDictionary<String, JSON>)
}

// MARK: - Accessors

extension JSON {
    /// The member named `key` of an object; nil for a missing key or a value that is not
    /// an object.
    public subscript(key: String) -> JSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// True for ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The boolean of ``bool(_:)``; nil for anything else.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The integer of ``integer(_:)``; nil for anything else, including integral doubles.
    public var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The number of ``integer(_:)`` or ``double(_:)`` as a double; nil for anything else.
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }

    /// The text of ``string(_:)``; nil for anything else.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The elements of ``array(_:)``; nil for anything else.
    public var arrayValue: [JSON]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The members of ``object(_:)``; nil for anything else.
    public var objectValue: OrderedDictionary<String, JSON>? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// What kind of JSON value this is, for messages: `null`, `boolean`, `integer`,
    /// `double`, `string`, `array` or `object`.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .double: "double"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

// MARK: - Printing

extension JSON: CustomStringConvertible {
    /// The compact serialization, `{"a":1,"b":[2.5,"x"]}`.
    public var description: String { serialized() }
}

// MARK: - Literals

extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }

    /// Members in the order written. A repeated key is a programmer error.
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(OrderedDictionary(uniqueKeysWithValues: elements))
    }
}
