import Foundation

/// Case and diacritic folding for the `[c]` and `[d]` comparison options, and the string
/// tests built on it: `==`, ordering, BEGINSWITH, ENDSWITH, CONTAINS.
///
/// Folding is locale-free, so Turkish dotted and dotless I are not special: `I` folds to
/// `i`, `İ` to `i` + U+0307, and `ı` stays `ı`.
///
/// - `[c]` applies Unicode full case folding: `straße` =[c] `STRASSE`, `ǅ` =[c] `ǆ`,
///   `ς` =[c] `Σ` =[c] `σ`.
/// - `[d]` decomposes canonically, drops nonspacing marks (general category Mn) and
///   recomposes: `Québec` → `Quebec`, `ñ` → `n`, `한` stays `한`. Letters with no canonical
///   decomposition keep their identity (`ø`, `ł`, `đ` are not `o`, `l`, `d`).
/// - `[n]` means the caller promises both strings are already folded: nothing is folded,
///   whatever other options are given (Apple: it "supersedes" `[c]` and `[d]`).
/// - `[l]` is ignored: Remodel evaluates with no locale.
///
/// Folded strings are compared as sequences of `Character`s (extended grapheme clusters),
/// with Swift's canonical equivalence: precomposed `é` equals `e` + U+0301 even without
/// options, and `?` in LIKE matches one `Character`. Because `[c]` can change a string's
/// length (`ß` → `ss`), the tests fold first and compare the folded strings.
///
/// ASCII strings (the common case in stores) are folded by a byte loop with no Foundation
/// call and no allocation when nothing changes.
enum StringFolding {
    /// `s` with the folding that `options` ask for.
    static func fold(_ s: String, _ options: ComparisonOptions) -> String {
        let folding = effectiveOptions(options)
        guard !folding.isEmpty else { return s }
        if isASCII(s) {
            // ASCII has no diacritics; only case can change.
            return folding.contains(.caseInsensitive) ? asciiLowercased(s) : s
        }
        var result = s
        // Diacritics first, so that marks a case mapping would add are not stranded and a
        // mark such as U+0345 (iota subscript) goes away as a diacritic, not as a letter.
        if folding.contains(.diacriticInsensitive) { result = removingDiacritics(result) }
        if folding.contains(.caseInsensitive) { result = caseFolded(result) }
        return result
    }

    /// Orders `a` and `b` after folding: Swift's `String` order (Unicode scalar values of
    /// the canonical composition), which is byte order for ASCII, so `'ABC' < 'abc'` and
    /// `'123' < 'abc'`.
    static func compare(_ a: String, _ b: String, _ options: ComparisonOptions) -> ComparisonResult {
        let x = fold(a, options)
        let y = fold(b, options)
        if x == y { return .orderedSame }
        return x < y ? .orderedAscending : .orderedDescending
    }

    /// Whether `a` and `b` are equal after folding (canonically equivalent).
    static func equals(_ a: String, _ b: String, _ options: ComparisonOptions) -> Bool {
        if let result = withASCIIBytes(
            a, b, options,
            { a, b, caseless in
                a.count == b.count && asciiEqual(a, 0, b, caseless: caseless)
            })
        {
            return result
        }
        return fold(a, options) == fold(b, options)
    }

    /// BEGINSWITH. An empty `prefix` gives false (`'abc' BEGINSWITH ''` is false).
    static func hasPrefix(_ s: String, _ prefix: String, _ options: ComparisonOptions) -> Bool {
        guard !prefix.isEmpty else { return false }
        if let result = withASCIIBytes(
            s, prefix, options,
            { s, p, caseless in
                p.count <= s.count && asciiEqual(s, 0, p, caseless: caseless)
            })
        {
            return result
        }
        return literalHasPrefix(fold(s, options), fold(prefix, options))
    }

    /// ENDSWITH. An empty `suffix` gives false.
    static func hasSuffix(_ s: String, _ suffix: String, _ options: ComparisonOptions) -> Bool {
        guard !suffix.isEmpty else { return false }
        if let result = withASCIIBytes(
            s, suffix, options,
            { s, p, caseless in
                p.count <= s.count && asciiEqual(s, s.count - p.count, p, caseless: caseless)
            })
        {
            return result
        }
        return literalHasSuffix(fold(s, options), fold(suffix, options))
    }

    /// CONTAINS with a string on both sides (substring). An empty `needle` gives false.
    static func contains(_ s: String, _ needle: String, _ options: ComparisonOptions) -> Bool {
        guard !needle.isEmpty else { return false }
        return literalContains(fold(s, options), fold(needle, options))
    }

    // MARK: - Tests on strings that are already folded

    // These compare Characters, not bytes: `"e\u{301}"` does not start with `"e"`, and
    // CR LF is one Character, so `"a\r\n"` does not start with `"a\r"`. An empty needle is
    // found everywhere; the callers above and LIKE decide what an empty needle means.

    /// Whether the Characters of `s` start with those of `prefix`.
    static func literalHasPrefix(_ s: String, _ prefix: String) -> Bool {
        if let result = withSimpleBytes(
            s, prefix,
            { s, p in
                p.count <= s.count && memcmpEqual(s, 0, p)
            })
        {
            return result
        }
        return s.starts(with: prefix)
    }

    /// Whether the Characters of `s` end with those of `suffix`.
    static func literalHasSuffix(_ s: String, _ suffix: String) -> Bool {
        if let result = withSimpleBytes(
            s, suffix,
            { s, p in
                p.count <= s.count && memcmpEqual(s, s.count - p.count, p)
            })
        {
            return result
        }
        return s.reversed().starts(with: suffix.reversed())
    }

    /// Whether the Characters of `needle` occur contiguously in those of `s`.
    static func literalContains(_ s: String, _ needle: String) -> Bool {
        if let result = withSimpleBytes(s, needle, { s, p in firstIndex(of: p, in: s) != nil }) {
            return result
        }
        let haystack = Array(s)
        let pattern = Array(needle)
        return firstIndex(of: pattern[...], in: haystack[...]) != nil
    }

    // MARK: - Folding

    /// `[n]` supersedes `[c]` and `[d]`; `[l]` is ignored.
    static func effectiveOptions(_ options: ComparisonOptions) -> ComparisonOptions {
        if options.contains(.normalized) { return [] }
        return options.intersection([.caseInsensitive, .diacriticInsensitive])
    }

    static func isASCII(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { bytes in
            var combined: UInt8 = 0
            for byte in bytes { combined |= byte }
            return combined < 0x80
        }
    }

    private static func asciiLowercased(_ s: String) -> String {
        var s = s
        return s.withUTF8 { bytes in
            guard bytes.contains(where: { $0 &- UInt8(ascii: "A") < 26 }) else { return nil }
            return String(unsafeUninitializedCapacity: bytes.count) { out in
                for (i, byte) in bytes.enumerated() {
                    out[i] = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
                }
                return bytes.count
            }
        } ?? s
    }

    /// Canonical decomposition, without nonspacing marks, recomposed (so that a regular
    /// expression still sees `한` as one code point).
    private static func removingDiacritics(_ s: String) -> String {
        let decomposed = s.decomposedStringWithCanonicalMapping
        var kept = String.UnicodeScalarView()
        var removedAny = false
        for scalar in decomposed.unicodeScalars {
            if scalar.properties.generalCategory == .nonspacingMark {
                removedAny = true
            } else {
                kept.append(scalar)
            }
        }
        guard removedAny else { return s }
        return String(kept).precomposedStringWithCanonicalMapping
    }

    /// Unicode full case folding, scalar by scalar (no context, no locale).
    private static func caseFolded(_ s: String) -> String {
        var folded = String.UnicodeScalarView()
        for scalar in s.unicodeScalars {
            if scalar.isASCII {
                let value = UInt8(scalar.value)
                folded.append(Unicode.Scalar(value &- UInt8(ascii: "A") < 26 ? value | 0x20 : value))
            } else if !scalar.properties.changesWhenCaseFolded {
                folded.append(scalar)
            } else {
                folded.append(contentsOf: caseFolded(scalar).unicodeScalars)
            }
        }
        return String(folded)
    }

    /// The case folding of one scalar that changes when case folded.
    ///
    /// The standard library exposes case *mappings* but not the CaseFolding.txt table, so
    /// this picks the first of these that is stable under folding: the lowercase mapping
    /// (almost every letter: `A` → `a`, `ǅ` → `ǆ`, `İ` → `i` + U+0307), the lowercase of
    /// the uppercase of the lowercase (`ß` and `ẞ` → `ss`, `ς` → `σ`, `ſ` → `s`, `ᾳ` →
    /// `αι`), and the uppercase mapping (lowercase Cherokee folds to uppercase). For every
    /// scalar of Unicode 14 the result is CaseFolding.txt's full (C + F) folding, up to
    /// canonical equivalence (checked once against Python's `str.casefold`).
    private static func caseFolded(_ scalar: Unicode.Scalar) -> String {
        let lower = scalar.properties.lowercaseMapping
        if isStableUnderFolding(lower) { return lower }
        let lowerUpperLower = lower.uppercased().lowercased()
        if isStableUnderFolding(lowerUpperLower) { return lowerUpperLower }
        let upper = scalar.properties.uppercaseMapping
        if isStableUnderFolding(upper) { return upper }
        return lowerUpperLower
    }

    private static func isStableUnderFolding(_ s: String) -> Bool {
        s.unicodeScalars.allSatisfy { !$0.properties.changesWhenCaseFolded }
    }

    // MARK: - Byte-level helpers

    /// Runs `body` on the UTF-8 of `s` and `needle` when bytes are Characters: both are
    /// ASCII and `s` has no CR (CR LF is one Character). Nil otherwise.
    private static func withSimpleBytes(
        _ s: String, _ needle: String,
        _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Bool
    ) -> Bool? {
        var s = s
        var needle = needle
        return s.withUTF8 { sBytes in
            var combined: UInt8 = 0
            for byte in sBytes {
                if byte == UInt8(ascii: "\r") { return nil }
                combined |= byte
            }
            guard combined < 0x80 else { return nil }
            return needle.withUTF8 { nBytes in
                guard nBytes.allSatisfy({ $0 < 0x80 }) else { return nil }
                return body(sBytes, nBytes)
            }
        }
    }

    /// Runs `body` on the UTF-8 of `s` and `other` when both are ASCII and `s` has no CR,
    /// with whether `options` fold case: for such strings folding only lowercases ASCII
    /// letters and bytes are Characters, so comparing bytes case-insensitively gives what
    /// folding both and comparing the results gives, without allocating folded copies.
    /// Nil otherwise.
    private static func withASCIIBytes(
        _ s: String, _ other: String, _ options: ComparisonOptions,
        _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>, _ caseless: Bool) -> Bool
    ) -> Bool? {
        let caseless = effectiveOptions(options).contains(.caseInsensitive)
        return withSimpleBytes(s, other) { s, o in body(s, o, caseless) }
    }

    /// Whether the bytes of `s` from `offset` are those of `p`, ASCII letters compared
    /// without case when `caseless`.
    private static func asciiEqual(
        _ s: UnsafeBufferPointer<UInt8>, _ offset: Int, _ p: UnsafeBufferPointer<UInt8>, caseless: Bool
    ) -> Bool {
        guard caseless else { return memcmpEqual(s, offset, p) }
        for i in 0..<p.count {
            let a = s[offset + i], b = p[i]
            if a != b, (a &- UInt8(ascii: "A") < 26 ? a | 0x20 : a) != (b &- UInt8(ascii: "A") < 26 ? b | 0x20 : b) {
                return false
            }
        }
        return true
    }

    private static func memcmpEqual(
        _ s: UnsafeBufferPointer<UInt8>, _ offset: Int, _ p: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        for i in 0..<p.count where s[offset + i] != p[i] { return false }
        return true
    }

    /// Naive substring search, O(n·m) at worst; the first offset where `pattern` occurs.
    static func firstIndex<C: RandomAccessCollection>(of pattern: C, in s: C) -> Int?
    where C.Element: Equatable, C.Index == Int {
        let n = s.count
        let m = pattern.count
        guard m <= n else { return nil }
        guard m > 0 else { return 0 }
        let base = s.startIndex
        let pBase = pattern.startIndex
        let first = pattern[pBase]
        var i = 0
        outer: while i <= n - m {
            if s[base + i] == first {
                var j = 1
                while j < m {
                    if s[base + i + j] != pattern[pBase + j] {
                        i += 1
                        continue outer
                    }
                    j += 1
                }
                return i
            }
            i += 1
        }
        return nil
    }
}

extension ComparisonOptions {
    /// `s` folded as comparisons with these options fold it before comparing: `[c]` folds
    /// case, `[d]` removes diacritics, `[n]` folds nothing. For code that must agree with
    /// the language's comparisons, such as the object graph's translation of predicates
    /// to SQL.
    ///
    ///     ComparisonOptions.caseInsensitive.folding("Straße")   // "strasse"
    public func folding(_ s: String) -> String { StringFolding.fold(s, self) }
}
