/// Well-formed UTF-8 as The Unicode Standard defines it (table 3-7): no overlong forms,
/// no surrogates, nothing past U+10FFFF. What Swift's decoding keeps byte for byte and
/// repairs otherwise; the JSON reader and the store's row copies both ask.
package enum UTF8Sequence {
    /// The length (2 to 4) of the well-formed sequence that starts at `offset`, whose byte
    /// is not ASCII; nil when the bytes there are not one.
    @inline(__always)
    package static func length(in bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Int? {
        // The sequence's length and the range of its second byte, by its first.
        let length: Int
        var second: ClosedRange<UInt8> = 0x80...0xBF
        switch bytes[offset] {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; second = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; second = 0x80...0x9F
        case 0xF0: length = 4; second = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; second = 0x80...0x8F
        default: return nil  // ASCII, a continuation byte, C0, C1 or F5 and above
        }
        guard offset + length <= bytes.count, second.contains(bytes[offset + 1]) else { return nil }
        for index in (offset + 2)..<(offset + length) where bytes[index] & 0xC0 != 0x80 { return nil }
        return length
    }

    /// Whether all of `bytes` is well-formed UTF-8. ASCII, most text, is checked eight
    /// bytes at a time, and the end of text of eight bytes or more as the eight bytes
    /// that end it.
    package static func isWellFormed(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        @inline(__always) func isASCII(at i: Int) -> Bool {
            UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0
        }
        var i = 0
        while i < count {
            if i + 8 <= count {
                if isASCII(at: i) {
                    i += 8
                    continue
                }
            } else if count >= 8, isASCII(at: count - 8) {
                // The bytes from i on are among the last eight.
                return true
            }
            if base[i] < 0x80 {
                i += 1
            } else if let length = length(in: bytes, at: i) {
                i += length
            } else {
                return false
            }
        }
        return true
    }
}
