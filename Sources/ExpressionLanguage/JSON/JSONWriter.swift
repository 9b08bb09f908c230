extension JSON {
    /// The JSON text of this value, deterministic for equal values.
    ///
    /// Compact (the default) has no whitespace at all; pretty indents by two spaces and
    /// puts one space after each colon. Object members are written in their stored order.
    ///
    ///     let json: JSON = ["value": 2.5, "tags": [1, "a"], "empty": [:]]
    ///     json.serialized()
    ///     // {"value":2.5,"tags":[1,"a"],"empty":{}}
    ///     json.serialized(pretty: true)
    ///     // {
    ///     //   "value": 2.5,
    ///     //   "tags": [
    ///     //     1,
    ///     //     "a"
    ///     //   ],
    ///     //   "empty": {}
    ///     // }
    ///
    /// Doubles are written in the shortest form that reads back as the same double, and
    /// always with a `.` or an exponent so that they read back as doubles: `2.0`, `0.1`,
    /// `1e+300`, `-0.0`. JSON has no NaN or infinity: a non-finite ``double(_:)`` is
    /// written as `null`, like JavaScript's `JSON.stringify` (`Value.json` never makes one;
    /// it writes `{"$double": "NaN"}`).
    ///
    /// Strings escape only what JSON requires: `"`, `\`, and control characters (`\n`,
    /// `\t`, `\r`, `\b`, `\f` by name, others as `\u001f`). `/` and non-ASCII characters
    /// are written as they are.
    public func serialized(pretty: Bool = false) -> String {
        var writer = JSONWriter(pretty: pretty)
        writer.write(self)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// `string` as a JSON string literal, with its quotes: `"a\"b"`. For messages.
    static func quoted(_ string: String) -> String {
        var writer = JSONWriter(pretty: false)
        writer.writeString(string)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

/// Writes JSON text into a byte buffer; see ``JSON/serialized(pretty:)``.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private let pretty: Bool
    private var depth = 0

    init(pretty: Bool) {
        self.pretty = pretty
    }

    mutating func write(_ json: JSON) {
        switch json {
        case .null:
            bytes.append(contentsOf: "null".utf8)
        case .bool(let value):
            bytes.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value):
            writeInteger(value)
        case .double(let value):
            // `description` is the shortest round-trip form and always has '.' or 'e'
            // for finite values ("2.0", "1e+300", "5e-324").
            bytes.append(contentsOf: (value.isFinite ? value.description : "null").utf8)
        case .string(let value):
            writeString(value)
        case .array(let elements):
            guard !elements.isEmpty else { return bytes.append(contentsOf: "[]".utf8) }
            bytes.append(UInt8(ascii: "["))
            depth += 1
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                writeNewline()
                write(element)
            }
            depth -= 1
            writeNewline()
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            guard !members.isEmpty else { return bytes.append(contentsOf: "{}".utf8) }
            bytes.append(UInt8(ascii: "{"))
            depth += 1
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                writeNewline()
                writeString(key)
                bytes.append(UInt8(ascii: ":"))
                if pretty { bytes.append(UInt8(ascii: " ")) }
                write(value)
            }
            depth -= 1
            writeNewline()
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// In pretty output, a line break and the indentation of the current depth.
    private mutating func writeNewline() {
        guard pretty else { return }
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * depth))
    }

    private mutating func writeInteger(_ value: Int64) {
        let start = bytes.count
        var magnitude = value.magnitude
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        bytes[start...].reverse()
    }

    /// A quoted string; runs that need no escaping are copied in one go.
    mutating func writeString(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            var runStart = 0
            for (index, byte) in utf8.enumerated()
            where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                runStart = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                default:
                    let hexDigits: StaticString = "0123456789abcdef"
                    bytes.append(contentsOf: "u00".utf8)
                    bytes.append(hexDigits.utf8Start[Int(byte >> 4)])
                    bytes.append(hexDigits.utf8Start[Int(byte & 0xF)])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
