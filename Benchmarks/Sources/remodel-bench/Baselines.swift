import CPCRE2Baseline
import ExpressionLanguage
import Foundation

/// The hand-written Swift that the compiled expressions are compared with. Each baseline
/// takes the same `[String: Value]` row, does the same lookups, the same arithmetic and
/// the same string folding as the expression, and returns the same result; the benchmark
/// checks that they agree on every input before it measures anything.
enum Baseline {
    /// `$source.price * 1.03`.
    static func price(_ source: [String: Value]) -> Value {
        switch source["price"] {
        case .double(let p)?: return .double(p * 1.03)
        case .integer(let i)?: return .double(Double(i) * 1.03)
        default: return .null
        }
    }

    /// `name BEGINSWITH[cd] 'jo' AND age > 18`, left to right with short-circuit.
    static func beginsWithAndAge(_ source: [String: Value]) -> Bool {
        guard case .string(let name)? = source["name"], hasFoldedPrefix(name, "jo") else { return false }
        guard case .integer(let age)? = source["age"] else { return false }
        return age > 18
    }

    /// Whether `s`, folded for case and diacritics, begins with `prefix` (already folded,
    /// ASCII). What one would write by hand: a byte loop for ASCII, Foundation's
    /// `folding(options:locale:)` otherwise.
    static func hasFoldedPrefix(_ s: String, _ prefix: String) -> Bool {
        var ascii = true
        for byte in s.utf8 where byte >= 0x80 {
            ascii = false
            break
        }
        guard ascii else {
            return s.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).hasPrefix(prefix)
        }
        let p = prefix.utf8
        guard s.utf8.count >= p.count else { return false }
        for (a, b) in zip(s.utf8, p) where (a &- UInt8(ascii: "A") < 26 ? a | 0x20 : a) != b {
            return false
        }
        return true
    }

    /// `email MATCHES pattern`, with PCRE2 called directly: the same engine, flags and JIT
    /// as the library, compiled once, one match data block reused.
    static func matches(_ pattern: String) -> ([String: Value]) -> Bool {
        let matcher = PCRE2Matcher(pattern: pattern)
        return { source in
            guard case .string(let email)? = source["email"] else { return false }
            return matcher.matches(email)
        }
    }

    /// `email MATCHES pattern` with Foundation's `NSRegularExpression` (ICU on Apple
    /// platforms, as NSPredicate's MATCHES): for reference.
    static func matchesWithNSRegularExpression(_ pattern: String) -> ([String: Value]) -> Bool {
        let regex = try! NSRegularExpression(pattern: "^(?:\(pattern))$")
        return { source in
            guard case .string(let email)? = source["email"] else { return false }
            return regex.firstMatch(in: email, range: NSRange(email.startIndex..., in: email)) != nil
        }
    }

    /// `email MATCHES pattern` with Swift's `Regex` and `wholeMatch(of:)`: for reference.
    static func matchesWithSwiftRegex(_ pattern: String) -> ([String: Value]) -> Bool {
        let regex = try! Regex(pattern)
        return { source in
            guard case .string(let email)? = source["email"] else { return false }
            return (try? regex.wholeMatch(in: email)) != nil
        }
    }
}

/// A PCRE2 pattern matched against whole strings, as the library's MATCHES does it.
final class PCRE2Matcher {
    private let code: OpaquePointer
    private let matchData: OpaquePointer

    init(pattern: String) {
        var errorCode: Int32 = 0
        var errorOffset = 0
        var text = pattern
        let flags = PCRE2_UTF | PCRE2_UCP | PCRE2_ANCHORED | PCRE2_ENDANCHORED | PCRE2_NO_UTF_CHECK
        let compiled = text.withUTF8 { bytes in
            pcre2_compile_8(bytes.baseAddress, bytes.count, flags, &errorCode, &errorOffset, nil)
        }
        guard let compiled else { fatalError("invalid pattern \(pattern): PCRE2 error \(errorCode)") }
        code = compiled
        _ = pcre2_jit_compile_8(compiled, PCRE2_JIT_COMPLETE)
        matchData = pcre2_match_data_create_8(1, nil)!
    }

    deinit {
        pcre2_match_data_free_8(matchData)
        pcre2_code_free_8(code)
    }

    func matches(_ subject: String) -> Bool {
        var subject = subject
        let rc = subject.withUTF8 { bytes in
            pcre2_match_8(code, bytes.baseAddress, bytes.count, 0, PCRE2_NO_UTF_CHECK, matchData, nil)
        }
        return rc >= 0
    }
}
