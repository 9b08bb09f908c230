import Foundation

/// An `NSKeyedArchiver` archive, read without the classes that wrote it: compiled models
/// (`.mom`), compiled mapping models (`.cdm`) and the expressions and user info inside
/// Xcode's mapping models.
///
/// An archive is a property list whose `$objects` array holds every object once; objects
/// refer to each other by UID, and each names its class through `$class`. Readers walk it
/// from ``topObject(_:)`` with ``ArchivedValue``'s accessors, which check every reference
/// and say where in the archive a problem is.
///
///     let archive = try KeyedArchive(data: data)
///     let root = try archive.topObject()
///     let name = try root.string(forKey: "NSEntityName")
public struct KeyedArchive: Sendable {
    /// Every archived object; index 0 is `$null`.
    let objects: [PropertyList]
    let top: [String: PropertyList]

    /// Reads the binary property list `data` as a keyed archive.
    public init(data: Data) throws(ArchiveError) {
        guard BinaryPropertyList.isBinaryPropertyList(data) else {
            throw ArchiveError("not a keyed archive: the data is not a binary property list")
        }
        guard case .dictionary(let plist) = try BinaryPropertyList.decode(data) else {
            throw ArchiveError("not a keyed archive: the property list is not a dictionary")
        }
        guard case .array(let objects)? = plist["$objects"], case .dictionary(let top)? = plist["$top"] else {
            throw ArchiveError("not a keyed archive: no $objects array or no $top dictionary")
        }
        if let archiver = plist["$archiver"]?.string, archiver != "NSKeyedArchiver" {
            throw ArchiveError("not a keyed archive: written by \(archiver), not NSKeyedArchiver")
        }
        self.objects = objects
        self.top = top
    }

    /// The object archived at the top level under `key` (`root` for `archivedData(withRootObject:)`).
    public func topObject(_ key: String = "root") throws(ArchiveError) -> ArchivedValue {
        guard let value = top[key] else {
            throw ArchiveError(
                "the archive has no top-level object '\(key)' (it has \(top.keys.sorted().joined(separator: ", ")))")
        }
        return try resolve(value, path: key)
    }

    /// The value `plist` stands for: the object a UID refers to, or `plist` itself.
    func resolve(_ plist: PropertyList, path: String) throws(ArchiveError) -> ArchivedValue {
        guard case .uid(let index) = plist else { return ArchivedValue(archive: self, plist: plist, path: path) }
        guard index >= 0, index < objects.count else {
            throw ArchiveError("\(path): a reference to object \(index), but the archive has \(objects.count)")
        }
        if case .uid = objects[index] {
            throw ArchiveError("\(path): object \(index) is a bare reference, which no archiver writes")
        }
        return ArchivedValue(archive: self, plist: objects[index], path: path)
    }
}

/// One value of a ``KeyedArchive``, with the path that led to it (for messages:
/// `root.NSEntityMappings[2].NSValueExpression`).
public struct ArchivedValue: Sendable {
    /// How deeply ``foundationValue()`` follows nested collections.
    public static let maximumDepth = 256

    let archive: KeyedArchive
    /// The value itself: a dictionary for an archived object, or an inline scalar.
    public let plist: PropertyList
    /// Where the value is in the archive.
    public let path: String

    /// True for `nil` as archived (`$null`).
    public var isNull: Bool {
        switch plist {
        case .null: true
        case .string(let s): s == "$null"
        default: false
        }
    }

    /// The archived object's class name (`NSFunctionExpression`); nil for inline values.
    public var className: String? { classDescription?["$classname"]?.string }

    /// The class names the archived object's class descends from, most derived first.
    public var classHierarchy: [String] {
        guard case .array(let classes)? = classDescription?["$classes"] else { return [] }
        return classes.compactMap(\.string)
    }

    /// The fields of the object its `$class` refers to: `$classname` and `$classes`.
    private var classDescription: [String: PropertyList]? {
        guard case .dictionary(let fields) = plist, let reference = fields["$class"],
            let description = try? archive.resolve(reference, path: path),
            case .dictionary(let classFields) = description.plist
        else { return nil }
        return classFields
    }

    /// The keys of the archived object's fields, for messages.
    public var keys: [String] {
        guard case .dictionary(let fields) = plist else { return [] }
        return fields.keys.filter { !$0.hasPrefix("$") }.sorted()
    }

    /// The value under `key`; nil when the object has no such key or holds nil there.
    public func value(forKey key: String) throws(ArchiveError) -> ArchivedValue? {
        guard case .dictionary(let fields) = plist else {
            throw ArchiveError("\(path): expected an archived object, found \(describe())")
        }
        guard let raw = fields[key] else { return nil }
        let value = try archive.resolve(raw, path: "\(path).\(key)")
        return value.isNull ? nil : value
    }

    /// The value under `key`, which must be there.
    public func required(_ key: String) throws(ArchiveError) -> ArchivedValue {
        guard let value = try value(forKey: key) else {
            throw ArchiveError(
                "\(path): \(className ?? "the object") has no \(key) (it has \(keys.joined(separator: ", ")))")
        }
        return value
    }

    /// The string under `key` (inline, or an archived `NSString`).
    public func string(forKey key: String) throws(ArchiveError) -> String? {
        guard let value = try value(forKey: key) else { return nil }
        guard let string = value.stringValue else {
            throw ArchiveError("\(value.path): expected a string, found \(value.describe())")
        }
        return string
    }

    /// The integer under `key` (booleans read as 0 and 1).
    public func integer(forKey key: String) throws(ArchiveError) -> Int64? {
        guard let value = try value(forKey: key) else { return nil }
        switch value.plist {
        case .integer(let i): return i
        case .bool(let b): return b ? 1 : 0
        default: throw ArchiveError("\(value.path): expected an integer, found \(value.describe())")
        }
    }

    /// The boolean under `key` (integers read as true when not 0).
    public func bool(forKey key: String) throws(ArchiveError) -> Bool? {
        guard let value = try value(forKey: key) else { return nil }
        switch value.plist {
        case .bool(let b): return b
        case .integer(let i): return i != 0
        default: throw ArchiveError("\(value.path): expected a boolean, found \(value.describe())")
        }
    }

    /// The bytes under `key` (inline, or an archived `NSData`).
    public func data(forKey key: String) throws(ArchiveError) -> Data? {
        guard let value = try value(forKey: key) else { return nil }
        switch value.plist {
        case .data(let d): return d
        case .dictionary(let fields):
            if case .data(let d)? = fields["NS.data"] { return d }
        default: break
        }
        throw ArchiveError("\(value.path): expected data, found \(value.describe())")
    }

    /// The string this value is: an inline string or an archived `NSString`.
    public var stringValue: String? {
        switch plist {
        case .string(let s) where s != "$null": return s
        case .dictionary(let fields):
            if let s = fields["NS.string"]?.string { return s }
            if case .data(let bytes)? = fields["NS.bytes"] { return String(decoding: bytes, as: UTF8.self) }
            return nil
        default: return nil
        }
    }

    /// The elements of an archived `NSArray`, `NSSet` or `NSOrderedSet`.
    public func elements() throws(ArchiveError) -> [ArchivedValue] {
        guard case .dictionary(let fields) = plist, case .array(let references)? = fields["NS.objects"] else {
            throw ArchiveError("\(path): expected an archived array or set, found \(describe())")
        }
        var elements: [ArchivedValue] = []
        for (i, reference) in references.enumerated() {
            elements.append(try archive.resolve(reference, path: "\(path)[\(i)]"))
        }
        return elements
    }

    /// The entries of an archived `NSDictionary`, in archived order; keys must be strings.
    public func entries() throws(ArchiveError) -> [(key: String, value: ArchivedValue)] {
        if case .dictionary(let fields) = plist, fields["NS.keys"] == nil, fields["searchMapping"] != nil {
            return try knownKeysEntries()
        }
        guard case .dictionary(let fields) = plist, case .array(let keys)? = fields["NS.keys"],
            case .array(let values)? = fields["NS.objects"], keys.count == values.count
        else {
            throw ArchiveError("\(path): expected an archived dictionary, found \(describe())")
        }
        var entries: [(key: String, value: ArchivedValue)] = []
        for (i, reference) in keys.enumerated() {
            let key = try archive.resolve(reference, path: "\(path).NS.keys[\(i)]")
            guard let name = key.stringValue else {
                throw ArchiveError("\(key.path): a dictionary key that is not a string (\(key.describe()))")
            }
            entries.append((name, try archive.resolve(values[i], path: "\(path)[\(name)]")))
        }
        return entries
    }

    /// The entries of Core Data's `NSKnownKeysDictionary1`, as the model a store caches
    /// (`Z_MODELCACHE`) archives its entities and properties: the keys in
    /// `searchMapping.keys`, the values at the same places in `values`; a slot holding
    /// `emptyToken` has no value.
    private func knownKeysEntries() throws(ArchiveError) -> [(key: String, value: ArchivedValue)] {
        let keys = try required("searchMapping").required("keys").elements()
        let values = try required("values").elements()
        guard keys.count == values.count else {
            throw ArchiveError("\(path): \(keys.count) keys and \(values.count) values")
        }
        let empty = try value(forKey: "emptyToken")?.stringValue
        var entries: [(key: String, value: ArchivedValue)] = []
        for (key, value) in zip(keys, values) {
            guard let name = key.stringValue else {
                throw ArchiveError("\(key.path): a dictionary key that is not a string (\(key.describe()))")
            }
            if let empty, value.stringValue == empty { continue }
            entries.append((name, value))
        }
        return entries
    }

    /// The value as the expression language holds it: numbers, strings, dates, data,
    /// `NSNull`, and arrays, sets and dictionaries of them (`NSDecimalNumber` too).
    public func foundationValue() throws(ArchiveError) -> Value {
        try foundationValue(depth: 0)
    }

    private func foundationValue(depth: Int) throws(ArchiveError) -> Value {
        guard depth < Self.maximumDepth else {
            throw ArchiveError(
                "\(path): collections nested deeper than \(Self.maximumDepth) levels, or one that contains itself")
        }
        switch plist {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        case .real(let d): return .double(d)
        case .date(let t): return .date(Date(timeIntervalSinceReferenceDate: t))
        case .data(let d): return .data(d)
        case .string(let s): return s == "$null" ? .null : .string(s)
        case .uid, .array:
            throw ArchiveError("\(path): \(describe()) where an object was expected")
        case .dictionary(let fields):
            let hierarchy = classHierarchy
            if let string = stringValue { return .string(string) }
            if hierarchy.contains("NSNull") { return .null }
            if hierarchy.contains("NSDate"), let time = fields["NS.time"] {
                switch time {
                case .real(let t): return .date(Date(timeIntervalSinceReferenceDate: t))
                case .integer(let t): return .date(Date(timeIntervalSinceReferenceDate: Double(t)))
                default: break
                }
            }
            if hierarchy.contains("NSData"), let data = try data(forKey: "NS.data") { return .data(data) }
            if hierarchy.contains("NSDecimalNumber") { return .decimal(try decimalValue()) }
            if hierarchy.contains("NSDictionary") {
                var dictionary: [String: Value] = [:]
                for (key, value) in try entries() { dictionary[key] = try value.foundationValue(depth: depth + 1) }
                return .dictionary(dictionary)
            }
            let isSet = hierarchy.contains("NSSet")
            if isSet || hierarchy.contains("NSArray") || hierarchy.contains("NSOrderedSet") {
                var array: [Value] = []
                for element in try elements() { array.append(try element.foundationValue(depth: depth + 1)) }
                return isSet ? .set(.init(array)) : .array(array)
            }
            if hierarchy.contains("NSUUID"), case .data(let bytes)? = fields["NS.uuidbytes"], bytes.count == 16 {
                let uuid = bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
                return .string(uuid.uuidString)
            }
            if hierarchy.contains("NSURL"), let relative = try string(forKey: "NS.relative") {
                return .string(relative)
            }
            throw ArchiveError("\(path): an archived \(className ?? "object") where a plain value was expected")
        }
    }

    /// An archived `NSDecimalNumber`: `NS.mantissa`, 8 16-bit words, least significant
    /// first, in the byte order `NS.bo` names (2 big-endian, else little-endian), of which
    /// `NS.length` count; `NS.exponent` and `NS.negative` (the coder of Foundation's
    /// `NSDecimalNumber`).
    private func decimalValue() throws(ArchiveError) -> Decimal {
        guard let bytes = try data(forKey: "NS.mantissa"), bytes.count == 16 else {
            throw ArchiveError("\(path): an archived NSDecimalNumber without its 16-byte NS.mantissa")
        }
        let length = Int(try integer(forKey: "NS.length") ?? 0)
        let exponent = try integer(forKey: "NS.exponent") ?? 0
        guard (0...8).contains(length), (-128...127).contains(exponent) else {
            throw ArchiveError(
                "\(path): an archived NSDecimalNumber with length \(length) and exponent \(exponent), out of range")
        }
        let bigEndian = try integer(forKey: "NS.bo") == 2
        let bytesArray = Array(bytes)
        var significand = Decimal(0)
        for i in stride(from: length - 1, through: 0, by: -1) {
            let (a, b) = (UInt16(bytesArray[2 * i]), UInt16(bytesArray[2 * i + 1]))
            significand = significand * 65536 + Decimal(bigEndian ? a << 8 | b : b << 8 | a)
        }
        let negative = try bool(forKey: "NS.negative") ?? false
        return Decimal(sign: negative ? .minus : .plus, exponent: Int(exponent), significand: significand)
    }

    /// What the value is, for messages: `an archived NSFunctionExpression`, `the string 'x'`.
    public func describe() -> String {
        switch plist {
        case .dictionary: className.map { "an archived \($0)" } ?? "a dictionary"
        case .string(let s): "the string '\(s.prefix(40))'"
        case .integer(let i): "the integer \(i)"
        case .real(let d): "the number \(d)"
        case .bool(let b): b ? "true" : "false"
        default: "a \(plist.kindName)"
        }
    }
}
