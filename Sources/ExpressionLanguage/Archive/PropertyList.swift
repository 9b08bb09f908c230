import Foundation

/// A property list value as Apple's binary property lists (`bplist00`) hold them, with the
/// UIDs that keyed archives use for references kept as ``uid(_:)``.
///
/// Foundation on Linux reads binary property lists but hides their UIDs, which every
/// keyed archive (`.mom`, `.cdm`, the expressions inside an `.xcmappingmodel`) is made of;
/// ``BinaryPropertyList`` reads them itself.
public indirect enum PropertyList: Hashable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    /// Seconds since 2001-01-01T00:00:00Z.
    case date(Double)
    case data(Data)
    case string(String)
    /// A reference into a keyed archive's `$objects`.
    case uid(Int)
    /// Arrays and sets (a set keeps its stored order).
    case array([PropertyList])
    case dictionary([String: PropertyList])

    /// The string, if this is one.
    public var string: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// What the value is, for messages.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .real: "real"
        case .date: "date"
        case .data: "data"
        case .string: "string"
        case .uid: "reference"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }
}

/// Why a property list or keyed archive cannot be read: what was wrong and where in it.
public struct ArchiveError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The message, naming the place in the archive (`$objects[12] NSArguments`) where known.
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// Reads Apple's binary property list format (`bplist00`), strictly: every offset,
/// count and reference is checked against the data, nesting is bounded, and a container
/// that contains itself is an error, so damaged or hostile input fails with a message and
/// never crashes or runs away. Objects referenced more than once are decoded once.
public struct BinaryPropertyList {
    /// How deeply containers may nest.
    public static let maximumDepth = 512

    /// Whether `data` starts like a binary property list.
    public static func isBinaryPropertyList(_ data: Data) -> Bool {
        data.starts(with: Array("bplist0".utf8))
    }

    /// The top object of `data`.
    public static func decode(_ data: Data) throws(ArchiveError) -> PropertyList {
        var reader = try BinaryPropertyList(Array(data))
        return try reader.object(at: reader.topObject, depth: 0)
    }

    private let bytes: [UInt8]
    private let offsetTableStart: Int
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    private let topObject: Int
    private var decoded: [Int: PropertyList] = [:]
    private var inProgress = Set<Int>()

    private init(_ bytes: [UInt8]) throws(ArchiveError) {
        self.bytes = bytes
        guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist0".utf8)) else {
            throw ArchiveError("not a binary property list (no bplist00 header, or too short)")
        }
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw ArchiveError(
                "damaged binary property list: offset size \(offsetSize), reference size \(referenceSize)")
        }
        func field(_ at: Int) -> UInt64 { bytes[at..<at + 8].reduce(0) { $0 << 8 | UInt64($1) } }
        let count = field(trailer + 8), top = field(trailer + 16), table = field(trailer + 24)
        guard count > 0, count <= UInt64(bytes.count), top < count, table >= 8,
            table <= UInt64(trailer), UInt64(trailer) - table >= count * UInt64(offsetSize)
        else {
            throw ArchiveError(
                "damaged binary property list: \(count) objects, top \(top), offset table at \(table) in \(bytes.count) bytes"
            )
        }
        objectCount = Int(count)
        topObject = Int(top)
        offsetTableStart = Int(table)
    }

    /// The big-endian unsigned integer of `size` bytes at `start`; values past `Int.max`
    /// come back as `Int.max`, which every range check that follows refuses.
    private func unsigned(at start: Int, size: Int) -> Int {
        var value: UInt64 = 0
        for i in start..<start + size { value = value << 8 | UInt64(bytes[i]) }
        return Int(clamping: value)
    }

    private func offset(of object: Int) throws(ArchiveError) -> Int {
        let value = unsigned(at: offsetTableStart + object * offsetSize, size: offsetSize)
        guard value >= 8, value < offsetTableStart else {
            throw ArchiveError(
                "damaged binary property list: object \(object) at offset \(value), outside the object area")
        }
        return value
    }

    /// The bytes `start..<start+count`, checked against the object area.
    private func span(_ start: Int, _ count: Int, of object: Int) throws(ArchiveError) -> ArraySlice<UInt8> {
        guard count >= 0, start <= offsetTableStart, count <= offsetTableStart - start else {
            throw ArchiveError("damaged binary property list: object \(object) runs past the object area")
        }
        return bytes[start..<start + count]
    }

    /// The length of the object at `offset` whose marker's low nibble is `nibble`, and
    /// where its contents start.
    private func length(_ nibble: Int, after offset: Int, of object: Int) throws(ArchiveError) -> (
        count: Int, start: Int
    ) {
        guard nibble == 0xF else { return (nibble, offset + 1) }
        let marker = try span(offset + 1, 1, of: object).first!
        guard marker >> 4 == 0x1, marker & 0xF <= 3 else {
            throw ArchiveError("damaged binary property list: object \(object) has a bad length marker")
        }
        let size = 1 << Int(marker & 0xF)
        let value = unsigned(at: try span(offset + 2, size, of: object).startIndex, size: size)
        return (value, offset + 2 + size)
    }

    private mutating func object(at index: Int, depth: Int) throws(ArchiveError) -> PropertyList {
        guard index >= 0, index < objectCount else {
            throw ArchiveError("damaged binary property list: reference to object \(index) of \(objectCount)")
        }
        if let done = decoded[index] { return done }
        guard depth < Self.maximumDepth else {
            throw ArchiveError("binary property list nested deeper than \(Self.maximumDepth) levels")
        }
        guard inProgress.insert(index).inserted else {
            throw ArchiveError("damaged binary property list: object \(index) contains itself")
        }
        defer { inProgress.remove(index) }
        let at = try offset(of: index)
        let marker = Int(bytes[at]), kind = marker >> 4, nibble = marker & 0xF
        let value: PropertyList
        switch kind {
        case 0x0:
            switch nibble {
            case 0x0: value = .null
            case 0x8: value = .bool(false)
            case 0x9: value = .bool(true)
            default:
                throw ArchiveError(
                    "damaged binary property list: object \(index) has the unknown marker 0x\(String(marker, radix: 16))"
                )
            }
        case 0x1:
            guard nibble <= 4 else {
                throw ArchiveError(
                    "damaged binary property list: object \(index) is an integer of \(1 << nibble) bytes")
            }
            let size = 1 << nibble
            let raw = try span(at + 1, size, of: index)
            // 16-byte integers hold unsigned 64-bit values; their low 8 bytes are the value.
            let low = raw.suffix(min(size, 8)).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            value = .integer(size >= 8 ? Int64(bitPattern: low) : Int64(low))
        case 0x2:
            guard nibble == 2 || nibble == 3 else {
                throw ArchiveError("damaged binary property list: object \(index) is a real of \(1 << nibble) bytes")
            }
            let raw = try span(at + 1, 1 << nibble, of: index).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            value = .real(nibble == 2 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw))
        case 0x3:
            guard nibble == 3 else {
                throw ArchiveError(
                    "damaged binary property list: object \(index) has the unknown marker 0x\(String(marker, radix: 16))"
                )
            }
            let raw = try span(at + 1, 8, of: index).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            value = .date(Double(bitPattern: raw))
        case 0x4:
            let (count, start) = try length(nibble, after: at, of: index)
            value = .data(Data(try span(start, count, of: index)))
        case 0x5:
            let (count, start) = try length(nibble, after: at, of: index)
            // "ASCII" strings are written by Foundation for text whose characters are all
            // below 128; decode as Latin-1 so that no byte is lost either way.
            value = .string(String(decoding: try span(start, count, of: index).map { UInt16($0) }, as: UTF16.self))
        case 0x6:
            let (count, start) = try length(nibble, after: at, of: index)
            guard count <= Int.max / 2 else {
                throw ArchiveError("damaged binary property list: object \(index) is too long")
            }
            let raw = try span(start, count * 2, of: index)
            var units: [UInt16] = []
            units.reserveCapacity(count)
            var i = raw.startIndex
            while i < raw.endIndex { units.append(UInt16(raw[i]) << 8 | UInt16(raw[i + 1])); i += 2 }
            value = .string(String(decoding: units, as: UTF16.self))
        case 0x7:
            let (count, start) = try length(nibble, after: at, of: index)
            value = .string(String(decoding: try span(start, count, of: index), as: UTF8.self))
        case 0x8:
            let raw = try span(at + 1, nibble + 1, of: index)
            guard raw.count <= 7 else {
                throw ArchiveError("damaged binary property list: object \(index) is a reference of \(raw.count) bytes")
            }
            value = .uid(raw.reduce(0) { $0 << 8 | Int($1) })
        case 0xA, 0xC:
            let (count, start) = try length(nibble, after: at, of: index)
            guard count <= objectCount * 64 else {
                throw ArchiveError("damaged binary property list: object \(index) claims \(count) elements")
            }
            let refs = try span(start, count * referenceSize, of: index)
            var elements: [PropertyList] = []
            elements.reserveCapacity(count)
            for i in 0..<count {
                let ref = unsigned(at: refs.startIndex + i * referenceSize, size: referenceSize)
                elements.append(try object(at: ref, depth: depth + 1))
            }
            value = .array(elements)
        case 0xD:
            let (count, start) = try length(nibble, after: at, of: index)
            guard count <= objectCount * 64 else {
                throw ArchiveError("damaged binary property list: object \(index) claims \(count) entries")
            }
            let refs = try span(start, count * 2 * referenceSize, of: index)
            var entries: [String: PropertyList] = [:]
            entries.reserveCapacity(count)
            for i in 0..<count {
                let keyRef = unsigned(at: refs.startIndex + i * referenceSize, size: referenceSize)
                let valueRef = unsigned(at: refs.startIndex + (count + i) * referenceSize, size: referenceSize)
                guard case .string(let key) = try object(at: keyRef, depth: depth + 1) else {
                    throw ArchiveError(
                        "damaged binary property list: dictionary \(index) has a key that is not a string")
                }
                entries[key] = try object(at: valueRef, depth: depth + 1)
            }
            value = .dictionary(entries)
        default:
            throw ArchiveError(
                "damaged binary property list: object \(index) has the unknown marker 0x\(String(marker, radix: 16))")
        }
        decoded[index] = value
        return value
    }
}
