import Foundation

/// A property list value for ``BinaryPlistWriter``, with the UIDs keyed archives refer by
/// (which Foundation on Linux cannot write).
indirect enum PlistValue {
    case string(String), integer(Int64), real(Double), bool(Bool), data(Data), uid(Int)
    case array([PlistValue]), set([PlistValue]), dictionary([(String, PlistValue)])
}

/// Writes `bplist00` data, for tests that build keyed archives the fixtures do not have.
enum BinaryPlistWriter {
    static func data(_ root: PlistValue) -> Data {
        var objects: [[UInt8]] = []
        // Objects are numbered as they are flattened; containers hold 2-byte references.
        @discardableResult func flatten(_ value: PlistValue) -> Int {
            let index = objects.count
            objects.append([])
            var bytes: [UInt8]
            switch value {
            case .string(let s):
                let ascii = s.allSatisfy(\.isASCII)
                let body = ascii ? Array(s.utf8) : s.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
                bytes = marker(ascii ? 0x5 : 0x6, ascii ? body.count : body.count / 2) + body
            case .integer(let i): bytes = [0x13] + be(UInt64(bitPattern: i), 8)
            case .real(let d): bytes = [0x23] + be(d.bitPattern, 8)
            case .bool(let b): bytes = [b ? 0x09 : 0x08]
            case .data(let d): bytes = marker(0x4, d.count) + Array(d)
            case .uid(let u): bytes = [0x81] + be(UInt64(u), 2)
            case .array(let elements), .set(let elements):
                let refs = elements.map { flatten($0) }
                let kind: UInt8 = if case .set = value { 0xC } else { 0xA }
                bytes = marker(kind, refs.count) + refs.flatMap { be(UInt64($0), 2) }
            case .dictionary(let entries):
                let keys = entries.map { flatten(.string($0.0)) }
                let values = entries.map { flatten($0.1) }
                bytes = marker(0xD, keys.count) + (keys + values).flatMap { be(UInt64($0), 2) }
            }
            objects[index] = bytes
            return index
        }
        flatten(root)
        var out: [UInt8] = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects { offsets.append(out.count); out += object }
        let tableOffset = out.count
        for offset in offsets { out += be(UInt64(offset), 8) }
        out += [0, 0, 0, 0, 0, 0, 8, 2] + be(UInt64(objects.count), 8) + be(0, 8) + be(UInt64(tableOffset), 8)
        return Data(out)
    }

    /// A keyed archive of `objects` (`$objects`; index 0 should be `"$null"`) whose root is `root`.
    static func keyedArchive(objects: [PlistValue], root: Int) -> Data {
        data(
            .dictionary([
                ("$archiver", .string("NSKeyedArchiver")), ("$version", .integer(100000)),
                ("$top", .dictionary([("root", .uid(root))])), ("$objects", .array(objects))
            ]))
    }

    private static func marker(_ kind: UInt8, _ count: Int) -> [UInt8] {
        count < 15 ? [kind << 4 | UInt8(count)] : [kind << 4 | 0xF, 0x11] + be(UInt64(count), 2)
    }

    private static func be(_ n: UInt64, _ size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8((n >> (UInt64($0) * 8)) & 0xFF) }
    }
}
