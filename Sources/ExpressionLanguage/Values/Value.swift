import Foundation
import OrderedCollections

/// A value of the expression language: what expressions evaluate to, what variables and
/// objects hold, and what format arguments supply.
///
/// The cases mirror the Foundation classes that NSExpression works with: `NSNull`/`nil`
/// (``null``), `NSNumber` (``bool``, ``integer``, ``double``), `NSDecimalNumber`
/// (``decimal``), `NSString`, `NSDate`, `NSData`, `NSArray`, `NSSet`, `NSDictionary`, and
/// objects that answer key-value coding (``object(_:)``): store objects, the migration
/// manager, embedders' host objects.
///
/// Equality (`==`) is Foundation's `isEqual:`: numbers compare by value across integer,
/// double, decimal and bool (`1 == 1.0`, `0 == false`), a string never equals a number,
/// and objects compare by identity unless they say otherwise.
public enum Value: Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case decimal(Decimal)
    case string(String)
    /// A moment in time. Core Data stores dates as seconds since 2001-01-01T00:00:00Z,
    /// which is `Date.timeIntervalSinceReferenceDate`.
    case date(Date)
    case data(Data)
    case array([Value])
    /// An unordered collection without duplicates; kept in insertion order so that output
    /// is deterministic.
    case set(OrderedSet<Value>)
    case dictionary([String: Value])
    case object(ObjectReference)
}

/// A reference to an object that answers key-value coding: a store object, the migration
/// manager, a fetch request, or anything an embedder makes visible to expressions.
public struct ObjectReference: @unchecked Sendable, Hashable {
    // `@unchecked`: objects are owned by the context that evaluates expressions over them;
    // Remodel never shares one across threads (see docs/language.md, "Threads").
    public let object: any KeyValueCoding

    public init(_ object: any KeyValueCoding) {
        self.object = object
    }

    public static func == (lhs: ObjectReference, rhs: ObjectReference) -> Bool {
        lhs.object.isEqual(to: rhs.object)
    }

    public func hash(into hasher: inout Hasher) {
        object.hashIdentity(into: &hasher)
    }
}

/// What an object must do to be read by key paths (`$source.user.name`) and compared.
///
/// Store objects, the migration manager and embedders' host objects conform. Plain
/// dictionaries and arrays do not need to: the language reads them directly.
public protocol KeyValueCoding: AnyObject {
    /// The value for `key`, like Foundation's `valueForKey:`. Throw
    /// ``EvaluationError/unknownKey(_:on:)`` for a key the object does not have.
    func value(forKey key: String) throws -> Value

    /// How the object is named in output: `Book/9` for a store object
    /// (printed as `{"$object": "Book/9"}` in JSON).
    var objectDescription: String { get }

    /// The name of the object's kind, for error messages ("unknown key 'x' on Book").
    var kindName: String { get }

    /// `isEqual:`; the default is identity.
    func isEqual(to other: any KeyValueCoding) -> Bool

    /// Hashes whatever `isEqual(to:)` compares; the default is identity.
    func hashIdentity(into hasher: inout Hasher)
}

extension KeyValueCoding {
    public var kindName: String { String(describing: type(of: self)) }

    public var objectDescription: String {
        "\(kindName)@\(String(UInt(bitPattern: ObjectIdentifier(self).hashValue), radix: 16))"
    }

    public func isEqual(to other: any KeyValueCoding) -> Bool { self === other }

    public func hashIdentity(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}

// MARK: - Kinds

extension Value {
    /// The kind of a value, as the CLIs and the `--jsonl` protocol name it.
    public enum Kind: String, Sendable, CaseIterable {
        case null, boolean, integer, double, decimal, string, date, data, array, set, dictionary, object
    }

    public var kind: Kind {
        switch self {
        case .null: .null
        case .bool: .boolean
        case .integer: .integer
        case .double: .double
        case .decimal: .decimal
        case .string: .string
        case .date: .date
        case .data: .data
        case .array: .array
        case .set: .set
        case .dictionary: .dictionary
        case .object: .object
        }
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// True for the numeric kinds (`NSNumber`): bool, integer, double, decimal.
    public var isNumber: Bool {
        switch self {
        case .bool, .integer, .double, .decimal: true
        default: false
        }
    }

    /// The elements of an array or a set; nil for anything else.
    public var collectionElements: [Value]? {
        switch self {
        case .array(let elements): elements
        case .set(let elements): elements.elements
        default: nil
        }
    }

    /// The number as a double, for numeric values.
    public var doubleValue: Double? {
        switch self {
        case .bool(let b): b ? 1 : 0
        case .integer(let i): Double(i)
        case .double(let d): d
        case .decimal(let d): Self.double(d)
        default: nil
        }
    }

    /// The double nearest `decimal`: its exact text parsed as Double parses it, correctly
    /// rounded. (`NSDecimalNumber.doubleValue` is an ulp off for most values on Linux:
    /// 19.99 read from a store as the double nearest it came back as 19.990000000000002,
    /// so copying a Decimal attribute changed it.) A decimal's text is exact, so a double
    /// read as the decimal its shortest text says is written back as itself.
    public static func double(_ decimal: Decimal) -> Double {
        Double(decimal.description) ?? NSDecimalNumber(decimal: decimal).doubleValue
    }

    /// The decimal a double says, as NSNumber describes it (0.1 for the double nearest
    /// 0.1). NaN for NaN and the infinities, which a Decimal does not hold (Foundation's
    /// `Decimal(Double)` stops the program on an infinity), and for magnitudes beyond its
    /// exponents.
    public static func decimal(_ double: Double) -> Decimal {
        guard double.isFinite else { return .nan }
        return decimal(describing: double) ?? Decimal(double)
    }

    /// The decimal a double's text says, as NSNumber describes it (0.1 for the double
    /// nearest 0.1): what a Decimal attribute reads from its column; nil where a Decimal
    /// cannot hold that text.
    public static func decimal(describing double: Double) -> Decimal? {
        decimal(parsing: numberDescription(double))
    }

    /// The decimal `text` spells (`-1.5`, `8.7e+144`), exactly; nil where a Decimal cannot
    /// hold it. Foundation's parser refuses an exponent past a Decimal's largest, 127,
    /// even where the digits and the zeros they need fit its mantissa of 38 digits: the
    /// 8.7e+144 a store may hold is 87 followed by 16 zeros, times 10^127. Such a text is
    /// parsed with its exponent folded into its digits so.
    public static func decimal(parsing text: String) -> Decimal? {
        // (No locale: a point separates the fraction, as in a POSIX locale, without one
        // made for each value read.)
        if let decimal = Decimal(string: text) { return decimal }
        let parts = text.lowercased().split(separator: "e", omittingEmptySubsequences: false)
        guard parts.count == 2, let exponent = Int(parts[1].hasPrefix("+") ? parts[1].dropFirst() : parts[1]) else {
            return nil
        }
        var number = parts[0]
        let sign = number.first == "-" ? "-" : ""
        if number.first == "-" || number.first == "+" { number = number.dropFirst() }
        let point = number.split(separator: ".", omittingEmptySubsequences: false)
        guard point.count <= 2, point.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) else {
            return nil
        }
        let fraction = point.count == 2 ? point[1] : ""
        let digits = String((point[0] + fraction).drop { $0 == "0" })
        // (The exponent of the digits read as an integer.)
        let (scale, overflow) = exponent.subtractingReportingOverflow(fraction.count)
        guard !overflow, !digits.isEmpty, scale > 127, digits.count + (scale - 127) <= 38 else { return nil }
        return Decimal(string: sign + digits + String(repeating: "0", count: scale - 127) + "e127")
    }

    /// The decimal a double is, digit for digit as Foundation converts it; NaN for NaN
    /// and the infinities (``decimal(_:)``).
    public static func decimal(exactly double: Double) -> Decimal {
        double.isFinite ? Decimal(double) : .nan
    }

    /// The number as an integer when it is integral (bool, integer); nil otherwise.
    public var integerValue: Int64? {
        switch self {
        case .bool(let b): b ? 1 : 0
        case .integer(let i): i
        default: nil
        }
    }
}

// MARK: - Literals

extension Value: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: Value...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, Value)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

// MARK: - Equality (isEqual:)

extension Value: Hashable {
    public static func == (lhs: Value, rhs: Value) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        // Foundation's isEqual: on strings compares UTF-16 code units: 'é' precomposed and
        // decomposed differ, where Swift's == finds them equivalent.
        case (.string(let a), .string(let b)): return a.utf16.elementsEqual(b.utf16)
        case (.date(let a), .date(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.set(let a), .set(let b)): return a.count == b.count && a.allSatisfy { b.contains($0) }
        case (.dictionary(let a), .dictionary(let b)): return a == b
        case (.object(let a), .object(let b)): return a == b
        default:
            guard lhs.isNumber && rhs.isNumber else { return false }
            // Equality of values (sets, dictionaries, dedup) is reflexive: NaN is NaN and no
            // other number. The language's == follows IEEE instead (ComparisonEvaluation).
            if lhs.isNaN || rhs.isNaN { return lhs.isNaN && rhs.isNaN }
            return Value.compareNumbers(lhs, rhs) == .orderedSame
        }
    }

    /// True for a double or decimal NaN.
    public var isNaN: Bool {
        switch self {
        case .double(let d): d.isNaN
        case .decimal(let d): d.isNaN
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool, .integer, .double, .decimal:
            // Equal numbers of different kinds must hash alike.
            hasher.combine(1)
            if let i = integerValue { hasher.combine(Double(i)) } else { hasher.combine(doubleValue ?? .nan) }
        case .string(let s):
            // As equality compares them: by UTF-16 code units.
            hasher.combine(s.utf16.count)
            for unit in s.utf16 { hasher.combine(unit) }
        case .date(let d): hasher.combine(d)
        case .data(let d): hasher.combine(d)
        case .array(let a): hasher.combine(a)
        case .set(let s):
            // Order-independent: combine the count and an XOR of element hashes.
            hasher.combine(s.count)
            hasher.combine(s.reduce(0) { $0 ^ $1.hashValue })
        case .dictionary(let d): hasher.combine(d)
        case .object(let o): hasher.combine(o)
        }
    }

    /// Orders two numbers by value, exactly across kinds (an `Int64` is not rounded through
    /// `Double` when compared with another integer).
    static func compareNumbers(_ lhs: Value, _ rhs: Value) -> ComparisonResult {
        if let a = lhs.integerValue, let b = rhs.integerValue {
            return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        }
        if case .decimal(let a) = lhs, case .decimal(let b) = rhs {
            return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        }
        let a = lhs.doubleValue ?? .nan
        let b = rhs.doubleValue ?? .nan
        if let i = lhs.integerValue, case .double(let d) = rhs { return compare(i, d) }
        if case .double(let d) = lhs, let i = rhs.integerValue { return invert(compare(i, d)) }
        return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
    }

    private static func compare(_ i: Int64, _ d: Double) -> ComparisonResult {
        if d.isNaN { return .orderedDescending }
        if d >= 9_223_372_036_854_775_808.0 { return .orderedAscending }
        if d < -9_223_372_036_854_775_808.0 { return .orderedDescending }
        let t = d.rounded(.towardZero)
        let ti = Int64(t)
        if i != ti { return i < ti ? .orderedAscending : .orderedDescending }
        let frac = d - t
        return frac > 0 ? .orderedAscending : (frac < 0 ? .orderedDescending : .orderedSame)
    }

    private static func invert(_ r: ComparisonResult) -> ComparisonResult {
        switch r {
        case .orderedAscending: .orderedDescending
        case .orderedDescending: .orderedAscending
        case .orderedSame: .orderedSame
        }
    }
}
