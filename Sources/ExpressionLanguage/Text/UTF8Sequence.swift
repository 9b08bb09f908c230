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

    /// Whether all of `bytes` is well-formed UTF-8. ASCII, most text, is told first: the
    /// high bits of its bytes gathered eight at a time, the last eight overlapping the
    /// others. Other text is read sequence by sequence.
    package static func isWellFormed(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        let raw = UnsafeRawPointer(base)
        if count >= 8 {
            var gathered = raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            var i = 0
            while i + 16 < count {
                gathered |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                gathered |= raw.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)
                i += 16
            }
            if i + 8 < count { gathered |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) }
            if gathered & 0x8080_8080_8080_8080 == 0 { return true }
        } else if count >= 4 {
            let gathered =
                raw.loadUnaligned(as: UInt32.self) | raw.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            if gathered & 0x8080_8080 == 0 { return true }
        } else if count == 0 || (base[0] | base[count >> 1] | base[count - 1]) < 0x80 {
            // (One to three bytes: the first, the middle and the last are all of them.)
            return true
        }
        return isWellFormedSequenceBySequence(bytes)
    }

    /// Whether all of `bytes` is well-formed UTF-8, read sequence by sequence: runs of
    /// ASCII eight bytes at a time (the end of the text as its last eight), two-byte
    /// sequences, the most common others, at once.
    /// (Apart, so that ASCII's path saves no registers for it.)
    @inline(never)
    private static func isWellFormedSequenceBySequence(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        @inline(__always) func isASCII(at i: Int) -> Bool {
            UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0
        }
        var i = 0
        while i < count {
            let byte = base[i]
            if byte < 0x80 {
                if i + 8 <= count {
                    i += isASCII(at: i) ? 8 : 1
                } else if count >= 8, isASCII(at: count - 8) {
                    return true  // (the bytes from i on are among the last eight)
                } else {
                    i += 1
                }
            } else if byte >= 0xC2, byte <= 0xDF {
                guard i + 1 < count, base[i + 1] & 0xC0 == 0x80 else { return false }
                i += 2
            } else if let length = length(in: bytes, at: i) {
                i += length
            } else {
                return false
            }
        }
        return true
    }
}
