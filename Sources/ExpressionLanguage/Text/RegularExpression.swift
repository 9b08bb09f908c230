import CPCRE2
import Foundation

/// A MATCHES pattern compiled with PCRE2, matched against whole strings.
///
/// Apple's MATCHES uses ICU's `uregex_matches`: the pattern must match the *entire*
/// subject. Remodel compiles with `PCRE2_ANCHORED | PCRE2_ENDANCHORED` for the same effect,
/// in UTF mode with Unicode properties for `\w`, `\d`, `\b` and POSIX classes
/// (`PCRE2_UTF | PCRE2_UCP`), so `.` matches one code point: `'é' MATCHES '.'` is true.
///
///     try RegularExpression(pattern: "a.c", options: []).matches("abc")   // true
///     try RegularExpression(pattern: "b", options: []).matches("abc")     // false
///
/// Options:
/// - `[c]` sets `PCRE2_CASELESS` (Unicode simple case folding: `ß` does not match `ss`).
/// - `[d]` removes diacritics from the *subject* (``StringFolding``) before matching. The
///   pattern is not folded: write it without diacritics (`'Québec' MATCHES[d] 'Quebec'`
///   is true, `'Quebec' MATCHES[d] 'Québec'` is false).
/// - `[n]` supersedes `[c]` and `[d]`; `[l]` is ignored.
///
/// An empty pattern matches nothing, not even the empty string (Apple: empty pattern →
/// false).
///
/// Matching runs with a match limit, so that a pattern that backtracks catastrophically
/// (`(a+)+$` against `aaaa…ab`) fails with an error in milliseconds instead of running for
/// years, and with bounds on the memory it may use. The pattern is JIT-compiled where PCRE2
/// supports it. The JIT starts on its default 32 KiB machine-stack area, which is enough
/// for all but long subjects that repeat a group (`(ab)*` against 100 000 characters);
/// those are matched again once with a JIT stack of up to ``jitStackLimit``.
///
/// Thread safety: the compiled code and the match context are only read after `init`, which
/// PCRE2 allows from any number of threads at once; each call to ``matches(_:)`` has its
/// own match data. Hence `@unchecked Sendable`.
final class RegularExpression: @unchecked Sendable {
    /// Most backtracking steps one match may take (PCRE2's `match_limit`); a catastrophic
    /// pattern reaches it in a few milliseconds.
    static let matchLimit: UInt32 = 1_000_000
    /// Deepest nesting of backtracking points when the interpreter matches, without JIT
    /// (PCRE2's `depth_limit`). A repeated group nests once per repetition.
    static let depthLimit: UInt32 = 250_000
    /// Most memory the interpreter's backtracking frames may use, in KiB (PCRE2's
    /// `heap_limit`, whose default is 20 GiB).
    static let heapLimit: UInt32 = 64 * 1024
    /// Largest JIT stack for the second attempt of a match that overflowed the default one,
    /// in bytes. It is reserved for that one match and only touched pages are committed.
    static let jitStackLimit = 16 * 1024 * 1024

    /// The pattern as written.
    let pattern: String
    let options: ComparisonOptions
    /// Nil for the empty pattern, which matches nothing.
    private let code: OpaquePointer?
    private let matchContext: OpaquePointer?
    private let foldsDiacritics: Bool
    /// Whether PCRE2 compiled the pattern to machine code.
    let isJITCompiled: Bool

    /// Compiles `pattern`; throws a ``ExpressionError/Kind/regex`` error that quotes PCRE2's
    /// message and the offending UTF-8 offset in the pattern when it is invalid.
    /// `jit: false` keeps to the interpreter; for tests.
    init(pattern: String, options: ComparisonOptions, jit: Bool = true) throws(ExpressionError) {
        self.pattern = pattern
        self.options = options
        let effective = StringFolding.effectiveOptions(options)
        foldsDiacritics = effective.contains(.diacriticInsensitive)
        guard !pattern.isEmpty else {
            code = nil
            matchContext = nil
            isJITCompiled = false
            return
        }

        var flags =
            PCRE2_UTF | PCRE2_UCP | PCRE2_ANCHORED | PCRE2_ENDANCHORED
            | PCRE2_NO_UTF_CHECK  // a Swift String is always valid UTF-8
        if effective.contains(.caseInsensitive) { flags |= PCRE2_CASELESS }
        var errorCode: Int32 = 0
        var errorOffset = 0
        var text = pattern
        let compiled = text.withUTF8 { bytes in
            pcre2_compile_8(bytes.baseAddress, bytes.count, flags, &errorCode, &errorOffset, nil)
        }
        guard let compiled else {
            throw ExpressionError(
                .regex,
                "invalid regular expression '\(pattern)': \(Self.message(for: errorCode)) "
                    + "at pattern offset \(errorOffset)"
            )
        }
        code = compiled
        // Fails when PCRE2 was built without JIT or for an unsupported CPU; the
        // interpreter then does the work.
        isJITCompiled = jit && pcre2_jit_compile_8(compiled, PCRE2_JIT_COMPLETE) == 0

        guard let context = pcre2_match_context_create_8(nil) else {
            pcre2_code_free_8(compiled)
            fatalError("PCRE2 could not allocate a match context")
        }
        pcre2_set_match_limit_8(context, Self.matchLimit)
        pcre2_set_depth_limit_8(context, Self.depthLimit)
        pcre2_set_heap_limit_8(context, Self.heapLimit)
        matchContext = context
    }

    deinit {
        pcre2_match_context_free_8(matchContext)
        pcre2_code_free_8(code)
    }

    /// Whether the pattern matches the whole of `subject`. Throws a
    /// ``ExpressionError/Kind/regex`` error when the match hits its limits.
    func matches(_ subject: String) throws(ExpressionError) -> Bool {
        guard let code else { return false }
        var subject = foldsDiacritics ? StringFolding.fold(subject, .diacriticInsensitive) : subject
        // One ovector pair is enough: only whether it matched matters.
        guard let matchData = pcre2_match_data_create_8(1, nil) else {
            fatalError("PCRE2 could not allocate match data")
        }
        defer { pcre2_match_data_free_8(matchData) }

        let result = subject.withUTF8 { bytes in
            var empty: UInt8 = 0
            return withUnsafePointer(to: &empty) { emptyPointer in
                let start = bytes.baseAddress ?? emptyPointer
                let rc = pcre2_match_8(
                    code, start, bytes.count, 0, PCRE2_NO_UTF_CHECK, matchData, matchContext)
                guard rc == PCRE2_ERROR_JIT_STACKLIMIT else { return rc }
                return matchWithLargeJITStack(code, start, bytes.count, matchData)
            }
        }
        switch result {
        case 0...:
            // 0 means the ovector was too small to hold the captures, after a match.
            return true
        case PCRE2_ERROR_NOMATCH:
            return false
        case PCRE2_ERROR_MATCHLIMIT:
            throw ExpressionError(
                .regex,
                "regular expression '\(pattern)' hit its match limit of \(Self.matchLimit) "
                    + "backtracking steps on a subject of \(subject.count) characters; avoid nested "
                    + "repetition such as '(a+)+' and overlapping alternatives such as '(a|ab)*'"
            )
        case PCRE2_ERROR_DEPTHLIMIT, PCRE2_ERROR_HEAPLIMIT, PCRE2_ERROR_JIT_STACKLIMIT:
            throw ExpressionError(
                .regex,
                "regular expression '\(pattern)' hit its memory limit on a subject of "
                    + "\(subject.count) characters (\(Self.message(for: result))); a repeated group "
                    + "nests once per repetition, so repeat a character class instead where you "
                    + "can ('[ab]*' rather than '(a|b)*')"
            )
        default:
            throw ExpressionError(
                .regex,
                "regular expression '\(pattern)' could not be matched: \(Self.message(for: result))"
            )
        }
    }

    /// Matches again with a JIT stack of its own, up to ``jitStackLimit`` bytes. The shared
    /// match context cannot hold a stack (a stack serves one match at a time), so this one
    /// match gets a copy of the context with the stack assigned.
    private func matchWithLargeJITStack(
        _ code: OpaquePointer, _ start: UnsafePointer<UInt8>, _ length: Int, _ matchData: OpaquePointer
    ) -> Int32 {
        guard let stack = pcre2_jit_stack_create_8(32 * 1024, Self.jitStackLimit, nil) else {
            return PCRE2_ERROR_JIT_STACKLIMIT
        }
        defer { pcre2_jit_stack_free_8(stack) }
        guard let context = pcre2_match_context_copy_8(matchContext) else {
            return PCRE2_ERROR_JIT_STACKLIMIT
        }
        defer { pcre2_match_context_free_8(context) }
        pcre2_jit_stack_assign_8(context, nil, UnsafeMutableRawPointer(stack))
        return pcre2_match_8(code, start, length, 0, PCRE2_NO_UTF_CHECK, matchData, context)
    }

    /// PCRE2's text for an error code.
    private static func message(for errorCode: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let length = pcre2_get_error_message_8(errorCode, &buffer, buffer.count)
        guard length > 0 else { return "PCRE2 error \(errorCode)" }
        return String(decoding: buffer[..<Int(length)], as: UTF8.self)
    }
}

/// Compiled MATCHES patterns for patterns that are not constant (a key path, a variable),
/// by pattern and effective options; bounded, shared by all threads.
///
/// Constant patterns are compiled once when the predicate is compiled and do not come
/// here. Failures are cached too, so that an invalid pattern is not recompiled for every
/// object it is evaluated against. When the cache is full, the oldest entry goes.
enum RegexCache {
    /// How many patterns are kept.
    static let capacity = 256

    /// The compiled form of `pattern` with `options`, from the cache or compiled now.
    static func regularExpression(
        pattern: String, options: ComparisonOptions
    ) throws(ExpressionError) -> RegularExpression {
        let key = Key(pattern: pattern, options: StringFolding.effectiveOptions(options))
        if let cached = storage.withLock({ $0.entries[key] }) { return try cached.get() }
        // Compile outside the lock; if two threads race, both results are equivalent and
        // the first stored one wins.
        let compiled: Result<RegularExpression, ExpressionError>
        do throws(ExpressionError) {
            compiled = .success(try RegularExpression(pattern: pattern, options: options))
        } catch {
            compiled = .failure(error)
        }
        return try storage.withLock { $0.insert(compiled, for: key) }.get()
    }

    /// How many patterns are cached now; for tests.
    static var count: Int { storage.withLock { $0.entries.count } }

    /// Empties the cache; for tests.
    static func removeAll() { storage.withLock { $0 = Storage() } }

    private struct Key: Hashable {
        var pattern: String
        var options: ComparisonOptions
    }

    private struct Storage {
        var entries: [Key: Result<RegularExpression, ExpressionError>] = [:]
        /// Keys in insertion order, used as a ring once full; `next` is the oldest.
        var order: [Key] = []
        var next = 0

        mutating func insert(
            _ value: Result<RegularExpression, ExpressionError>, for key: Key
        ) -> Result<RegularExpression, ExpressionError> {
            if let existing = entries[key] { return existing }
            if order.count < RegexCache.capacity {
                order.append(key)
            } else {
                entries[order[next]] = nil
                order[next] = key
                next = (next + 1) % RegexCache.capacity
            }
            entries[key] = value
            return value
        }
    }

    private static let storage = Locked(Storage())
}

/// A value behind an `NSLock`.
///
/// Not `Synchronization.Mutex`, which needs macOS 15 while the package supports macOS 14.
private final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
