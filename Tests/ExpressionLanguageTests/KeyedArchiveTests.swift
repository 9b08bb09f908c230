import Foundation
import Testing
import TestSupport

@testable import ExpressionLanguage

/// The binary property list and keyed archive readers: exact values, archived expressions,
/// and damaged input that must fail with a message, never crash.
struct KeyedArchiveTests {
    /// A binary property list made of `objects` (each already encoded), the first on top.
    static func bplist(_ objects: [[UInt8]], referenceSize: UInt8 = 1) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let table = bytes.count
        for offset in offsets { bytes += [UInt8(offset >> 8), UInt8(offset & 0xFF)] }
        bytes += [0, 0, 0, 0, 0, 0, 2, referenceSize]
        func be64(_ n: Int) -> [UInt8] { (0..<8).reversed().map { UInt8((n >> ($0 * 8)) & 0xFF) } }
        bytes += be64(objects.count) + be64(0) + be64(table)
        return Data(bytes)
    }

    static func ascii(_ s: String) -> [UInt8] {
        let count = s.utf8.count
        return (count < 15 ? [0x50 | UInt8(count)] : [0x5F, 0x10, UInt8(count)]) + Array(s.utf8)
    }

    @Test func readsScalarsAndContainers() throws {
        // {"a": [1, -2, 2.5, true, "é"]}
        let data = Self.bplist([
            [0xD1, 1, 2],
            Self.ascii("a"),
            [0xA5, 3, 4, 5, 6, 7],
            [0x10, 1],
            [0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE],
            [0x23] + Array(withUnsafeBytes(of: (2.5).bitPattern.bigEndian, Array.init)),
            [0x09],
            [0x61, 0x00, 0xE9]
        ])
        #expect(
            try BinaryPropertyList.decode(data)
                == .dictionary(["a": .array([.integer(1), .integer(-2), .real(2.5), .bool(true), .string("é")])]))
    }

    /// Damage of every kind is an error with a message: a container that contains itself, a
    /// reference past the end, a trailer pointing outside, a header missing.
    @Test(arguments: [
        ("cycle", bplist([[0xA1, 0]]), "damaged binary property list: object 0 contains itself"),
        ("reference past the end", bplist([[0xA1, 7]]), "damaged binary property list: reference to object 7 of 1"),
        (
            "length past the end", bplist([[0x5F, 0x10, 0xFF]]),
            "damaged binary property list: object 0 runs past the object area"
        ),
        (
            "no header", Data("not a plist at all, just some text here".utf8),
            "not a binary property list (no bplist00 header, or too short)"
        ),
        (
            "key not a string", bplist([[0xD1, 1, 1], [0x10, 1]]),
            "damaged binary property list: dictionary 0 has a key that is not a string"
        )
    ])
    func damageIsAnError(_ name: String, _ data: Data, _ message: String) {
        #expect(throws: ArchiveError(message)) { try BinaryPropertyList.decode(data) }
    }

    /// A keyed archive whose expression refers to itself fails at the depth limit.
    @Test func aSelfReferentialExpressionFails() throws {
        // $objects: [$null, {NSOperand: UID 1, NSSelectorName: "x", $class: UID 3}, "x", {$classname, $classes}]
        let data = Self.bplist([
            [0xD4, 1, 2, 3, 4, 5, 6, 7, 8],  // top dictionary
            Self.ascii("$version"), Self.ascii("$objects"), Self.ascii("$archiver"), Self.ascii("$top"),
            [0x12, 0x00, 0x01, 0x86, 0xA0],  // 100000
            [0xA4, 9, 10, 11, 12],  // $objects
            Self.ascii("NSKeyedArchiver"),
            [0xD1, 13, 14],  // $top = {root: UID 1}
            Self.ascii("$null"),
            [0xD3, 15, 16, 17, 14, 11, 18],  // {NSOperand: UID 1, NSSelectorName: "x", $class: UID 3}
            Self.ascii("x"),
            [0xD2, 19, 20, 21, 22],  // class description
            Self.ascii("root"), [0x80, 1],
            Self.ascii("NSOperand"), Self.ascii("NSSelectorName"), Self.ascii("$class"), [0x80, 3],
            Self.ascii("$classname"), Self.ascii("$classes"), Self.ascii("NSFunctionExpression"), [0xA1, 21]
        ])
        let root = try KeyedArchive(data: data).topObject()
        #expect(root.className == "NSFunctionExpression")
        #expect(throws: ArchiveError.self) { try FormatExpression(archived: root) }
    }

    /// Every prefix and many byte flips of real archives (compiled models and mapping
    /// models written by Xcode) read or fail with an error; none crashes.
    @Test func damagedRealArchivesNeverCrash() throws {
        try SharedFixtures.require()
        let root = SharedFixtures.root
        guard let enumerator = FileManager.default.enumerator(atPath: root.path) else {
            try Test.cancel(SharedFixtures.missingMessage)
        }
        let archives = enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".cdm") || $0.hasSuffix(".mom") }
            .sorted()
        try #require(!archives.isEmpty)
        var generator = SystemRandomNumberGenerator()
        var outcomes = (read: 0, failed: 0)
        func attempt(_ data: Data) {
            do {
                let top = try KeyedArchive(data: data).topObject()
                if let mappings = try? top.value(forKey: "NSEntityMappings"), let list = try? mappings.elements() {
                    for mapping in list {
                        if let expression = try? mapping.value(forKey: "NSSourceExpression") {
                            _ = try? FormatExpression(archived: expression)
                        }
                    }
                }
                _ = try? top.foundationValue()
                outcomes.read += 1
            } catch {
                outcomes.failed += 1
            }
        }
        for name in archives {
            let data = try Data(contentsOf: root.appendingPathComponent(name))
            for length in stride(from: 0, to: data.count, by: max(1, data.count / 200)) { attempt(data.prefix(length)) }
            for _ in 0..<300 {
                var damaged = data
                for _ in 0..<3 {
                    let i = Int.random(in: 0..<damaged.count, using: &generator)
                    damaged[i] = UInt8.random(in: 0...255, using: &generator)
                }
                attempt(damaged)
            }
        }
        #expect(outcomes.failed > 0)
    }
}
