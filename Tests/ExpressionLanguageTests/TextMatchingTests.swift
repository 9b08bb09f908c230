import Foundation
import Testing

@testable import ExpressionLanguage

// Case/diacritic folding, the string operators built on it, LIKE and MATCHES.
// Rules: shared/spec/LANGUAGE.md, A4 (LIKE, MATCHES, [c]/[d]) and Decisions 5.

private let c: ComparisonOptions = .caseInsensitive
private let d: ComparisonOptions = .diacriticInsensitive
private let cd: ComparisonOptions = [.caseInsensitive, .diacriticInsensitive]
private let n: ComparisonOptions = .normalized
private let l: ComparisonOptions = .localeSensitive

/// The Unicode scalars of `s`, for readable failures with combining marks.
private func scalars(_ s: String) -> String {
    s.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")
}

/// One suite per subject, grouped so that the names do not collide with other files.
@Suite enum TextMatchingTests {}

// MARK: - Folding

extension TextMatchingTests {
    @Suite struct StringFoldingTests {
        @Test(
            arguments: [
                // ASCII byte path
                ("ABC xyz 09_", c, "abc xyz 09_"),
                ("abc", c, "abc"),
                ("ABC", d, "ABC"),
                ("ABC", [], "ABC"),
                // Full case folding
                ("Straße", c, "strasse"),
                ("ẞ", c, "ss"),
                ("ǅ", c, "ǆ"),
                ("Ǆ", c, "ǆ"),
                ("ΟΔΟΣ", c, "οδοσ"),
                ("οδος", c, "οδοσ"),
                ("ﬀ", c, "ff"),
                ("K", c, "k"),  // KELVIN SIGN
                ("ſ", c, "s"),  // LATIN SMALL LETTER LONG S
                ("ꭰ", c, "Ꭰ"),  // Cherokee folds to uppercase
                ("Ꭰ", c, "Ꭰ"),
                // Turkish I is not special: no locale
                ("I", c, "i"),
                ("İ", c, "i\u{307}"),
                ("ı", c, "ı"),
                ("İ", cd, "i"),
                // Diacritics
                ("Québec", d, "Quebec"),
                ("ñ", d, "n"),
                ("Crème Brûlée", d, "Creme Brulee"),
                ("e\u{301}", d, "e"),
                ("é", d, "e"),
                ("QUÉBEC", cd, "quebec"),
                ("ᾳ", d, "α"),
                ("ᾳ", c, "αι"),
                ("한", d, "한"),  // Hangul decomposes into letters, not marks
                ("ø", d, "ø"),  // no canonical decomposition
                // [n] supersedes [c] and [d]; [l] is ignored
                ("ÀBC", [n, c, d], "ÀBC"),
                ("ABC", l, "ABC"),
                ("ÀBC", [c, d, l], "abc")
            ] as [(String, ComparisonOptions, String)])
        func fold(input: String, options: ComparisonOptions, expected: String) {
            let folded = StringFolding.fold(input, options)
            #expect(folded == expected, "\(scalars(folded)) vs \(scalars(expected))")
        }

        @Test(
            arguments: [
                ("QUEBEC", "Quebec", c, true),
                ("QUEBEC", "Quebec", [], false),
                ("Québec", "Quebec", d, true),
                ("Québec", "Quebec", [], false),
                ("QUÉBEC", "quebec", cd, true),
                ("QUÉBEC", "quebec", c, false),
                ("straße", "STRASSE", c, true),
                ("straße", "STRASSE", [], false),
                ("ΟΔΟΣ", "οδος", c, true),
                ("ǅ", "ǆ", c, true),
                ("ǅ", "Ǆ", c, true),
                ("ǅ", "ǆ", [], false),
                // precomposed and combining é are canonically equivalent, with or without options
                ("\u{E9}", "e\u{301}", [], true),
                ("\u{E9}", "E\u{301}", c, true),
                ("\u{E9}", "e", [], false),
                ("\u{E9}", "e", d, true),
                ("e\u{301}", "e", d, true),
                // Turkish I is not special
                ("I", "i", c, true),
                ("I", "ı", c, false),
                ("İ", "i", c, false),
                ("İ", "i", cd, true),
                // [n] compares as given
                ("ABC", "abc", [n, c], false),
                ("abc", "abc", n, true),
                ("ABC", "abc", [c, l], true),
                ("", "", c, true)
            ] as [(String, String, ComparisonOptions, Bool)])
        func equals(a: String, b: String, options: ComparisonOptions, expected: Bool) {
            #expect(StringFolding.equals(a, b, options) == expected)
            #expect(StringFolding.equals(b, a, options) == expected)
        }

        @Test(
            arguments: [
                ("ABC", "abc", [], ComparisonResult.orderedAscending),
                ("123", "abc", [], .orderedAscending),
                ("abc", "abd", [], .orderedAscending),
                ("abc", "ab", [], .orderedDescending),
                ("abc", "ABC", c, .orderedSame),
                ("b", "A", c, .orderedDescending),
                ("_", "a", c, .orderedAscending),  // folds to lowercase: '_' < 'a'
                ("\u{E9}", "e\u{301}", [], .orderedSame),
                ("Quebec", "Québec", d, .orderedSame),
                ("Quebec", "Québec", [], .orderedAscending)
            ] as [(String, String, ComparisonOptions, ComparisonResult)])
        func compare(a: String, b: String, options: ComparisonOptions, expected: ComparisonResult) {
            #expect(StringFolding.compare(a, b, options) == expected)
        }

        enum Operation: String, Sendable { case beginsWith, endsWith, contains }

        @Test(
            arguments: [
                // An empty needle is false (Apple).
                (Operation.beginsWith, "aBcDeF", "", [], false),
                (.endsWith, "x", "", [], false),
                (.contains, "abc", "", [], false),
                (.contains, "", "", [], false),
                (.beginsWith, "aBcDeF", "aBc", [], true),
                (.beginsWith, "aBcDeF", "abc", [], false),
                (.beginsWith, "aBcDeF", "abc", c, true),
                (.beginsWith, "abc", "abcd", [], false),
                (.endsWith, "abc", "abc", [], true),
                (.endsWith, "aBcDeF", "DEF", c, true),
                (.contains, "AABBBAA", "BBB", [], true),
                (.contains, "AABBBAA", "bbb", [], false),
                (.contains, "AABBBAA", "bbb", c, true),
                (.contains, "AABBBAA", "ABA", [], false),
                (.beginsWith, "Québec", "queb", cd, true),
                (.beginsWith, "Québec", "queb", c, false),
                (.beginsWith, "straße", "STRASS", c, true),
                (.endsWith, "café", "FE", cd, true),
                (.contains, "naïve café", "E CA", cd, true),
                (.contains, "naïve café", "ive", d, true),
                // Characters, not code points or bytes
                (.beginsWith, "e\u{301}tude", "e", [], false),
                (.beginsWith, "e\u{301}tude", "e", d, true),
                (.endsWith, "cafe\u{301}", "e", [], false),
                (.endsWith, "cafe\u{301}", "\u{E9}", [], true),
                (.contains, "x👍🏽y", "👍", [], false),
                (.contains, "x👍🏽y", "👍🏽", [], true),
                (.contains, "🇫🇷🇩🇪", "🇩🇪", [], true),
                (.beginsWith, "a\r\nb", "a\r", [], false),
                (.contains, "a\r\nb", "\n", [], false),
                (.contains, "a\r\nb", "\r\n", [], true)
            ] as [(Operation, String, String, ComparisonOptions, Bool)])
        func substring(operation: Operation, s: String, needle: String, options: ComparisonOptions, expected: Bool) {
            let result: Bool
            switch operation {
            case .beginsWith: result = StringFolding.hasPrefix(s, needle, options)
            case .endsWith: result = StringFolding.hasSuffix(s, needle, options)
            case .contains: result = StringFolding.contains(s, needle, options)
            }
            #expect(result == expected)
        }
    }
}

// MARK: - LIKE

extension TextMatchingTests {
    @Suite struct LikePatternTests {
        @Test(
            arguments: [
                // LANGUAGE.md A4
                ("a*c", [], "ac", true),
                ("a*c", [], "abc", true),
                ("a*c", [], "abcdefc", true),
                ("a*c", [], "ab", false),
                ("a?c", [], "abc", true),
                ("a?c", [], "ac", false),
                ("a?c", [], "abbc", false),
                ("*?", [], "", false),
                ("*?", [], "x", true),
                // Whole-string match
                ("abc", [], "abc", true),
                ("abc", [], "abcd", false),
                ("abc", [], "xabc", false),
                ("b", [], "abc", false),
                ("", [], "", true),
                ("", [], "a", false),
                ("*", [], "", true),
                ("*", [], "anything at all", true),
                ("**", [], "", true),
                ("?", [], "", false),
                ("??", [], "ab", true),
                ("??", [], "abc", false),
                ("?*?", [], "a", false),
                ("?*?", [], "ab", true),
                // Prefix, suffix, infix shapes
                ("abc*", [], "abcdef", true),
                ("abc*", [], "abc", true),
                ("abc*", [], "ab", false),
                ("*def", [], "abcdef", true),
                ("*def", [], "abcdeff", false),
                ("*cd*", [], "abcdef", true),
                ("*cd*", [], "cd", true),
                ("*cd*", [], "abdc", false),
                // Backtracking to the last star
                ("*a", [], "ba", true),
                ("a*a", [], "a", false),
                ("a*a", [], "aa", true),
                ("a*b*c", [], "abcbc", true),
                ("*a*b*c*", [], "xaybzc", true),
                ("*a*b*c*", [], "xaybz", false),
                ("a*b?d", [], "abxbcd", true),
                ("a*b?d", [], "abxbd", false),
                // Escapes (pattern text after the string literal's own escapes)
                ("a\\*c", [], "a*c", true),
                ("a\\*c", [], "abc", false),
                ("a\\?c", [], "a?c", true),
                ("a\\?c", [], "abc", false),
                ("a\\\\c", [], "a\\c", true),
                ("a\\\\*", [], "a\\bc", true),
                ("a\\\\*", [], "abc", false),
                ("\\x", [], "x", true),
                ("a\\", [], "a\\", true),
                ("\\**", [], "*abc", true),
                ("\\**", [], "abc", false),
                ("*\\?", [], "why?", true),
                ("*\\?", [], "why", false),
                // [c], [d]
                ("A*C", c, "abc", true),
                ("A*C", [], "abc", false),
                ("a?C", c, "ABc", true),
                ("Quebec", d, "Québec", true),
                ("Quebec", [], "Québec", false),
                ("Québec", d, "Quebec", true),
                ("qu?bec", d, "Québec", false),
                ("Qu?bec", [], "Québec", true),
                ("QUEBEC", cd, "québec", true),
                ("*É*", cd, "crème brûlée", true),
                ("STRASSE", c, "straße", true),
                ("STRA?E", c, "straße", false),  // [c] folds ß to ss, two Characters
                ("STRA??E", c, "straße", true),
                ("stra*e", c, "STRASSE", true),
                ("ABC", [n, c], "abc", false),
                // One ? per Character (extended grapheme cluster)
                ("a?c", [], "a👍🏽c", true),
                ("a?c", [], "a🇫🇷c", true),
                ("a?c", [], "ae\u{301}c", true),
                ("a?c", [], "a\u{E9}c", true),
                ("??", [], "👍🏽", false),
                ("?", [], "\r\n", true),
                ("a?", [], "a\r\n", true),
                ("a\r*", [], "a\r\n", false),
                ("*?", [], "한", true),
                ("?b?", [], "éb€", true),
                ("*é*", [], "caf\u{E9}s", true),
                ("*é*", [], "cafe\u{301}s", true)
            ] as [(String, ComparisonOptions, String, Bool)])
        func like(pattern: String, options: ComparisonOptions, subject: String, expected: Bool) {
            #expect(LikePattern(pattern, options: options).matches(subject) == expected)
        }

        @Test(arguments: [
            ("*a*a*a*a*a*a*a*a*b", String(repeating: "a", count: 20_000)),
            ("*a*a*a*a*a*a*a*a*b*", String(repeating: "a", count: 20_000)),
            ("a*a*a*a*a*a*a*a*a?b", String(repeating: "a", count: 20_000)),
            ("*é*é*é*é*é*é*é*é*b", String(repeating: "é", count: 5_000)),
            ("*?*?*?*?*?*?*?*?*b", String(repeating: "x", count: 20_000))
        ])
        func pathologicalPatternIsFast(pattern: String, subject: String) {
            let like = LikePattern(pattern)
            let clock = ContinuousClock()
            var result = true
            let elapsed = clock.measure { result = like.matches(subject) }
            #expect(result == false)
            #expect(elapsed < .seconds(2), "took \(elapsed)")
            print("LIKE '\(pattern)' against \(subject.count) characters: \(elapsed)")
        }
    }
}

// MARK: - MATCHES

extension TextMatchingTests {
    @Suite struct RegularExpressionTests {
        @Test(
            arguments: [
                // Whole-string semantics (uregex_matches)
                ("b", [], "abc", false),
                ("a.c", [], "abc", true),
                ("abc", [], "abcd", false),
                ("bcd", [], "abcd", false),
                (".*b.*", [], "abc", true),
                ("a|ab", [], "ab", true),  // the end anchor makes the first alternative backtrack
                ("(a+)+$", [], "aaa", true),
                ("^abc$", [], "abc", true),
                (".*", [], "", true),
                ("a*", [], "", true),
                (".*", [], "a\nb", false),  // '.' does not match a newline
                ("(?s).*", [], "a\nb", true),
                // Empty pattern matches nothing
                ("", [], "", false),
                ("", [], "a", false),
                // [c]
                ("hello", c, "HELLO", true),
                ("hello", [], "HELLO", false),
                ("[a-z]+", c, "Hello", true),
                ("straße", c, "STRAẞE", true),
                ("straße", c, "STRASSE", false),  // PCRE2 folds simply: one code point each
                ("hello", [n, c], "HELLO", false),
                // UTF and Unicode properties
                (".", [], "é", true),
                (".", [], "e\u{301}", false),  // two code points
                ("..", [], "e\u{301}", true),
                ("\\X", [], "e\u{301}", true),
                (".", [], "👍", true),
                ("\\w+", [], "Straße", true),
                ("\\d+", [], "٣٤", true),
                ("\\p{L}+", [], "Québec", true),
                ("[[:alpha:]]+", [], "Québec", true),
                // [d] folds the subject, not the pattern
                ("quebec", d, "québec", true),
                ("quebec", [], "québec", false),
                ("québec", d, "québec", false),
                ("QUEBEC", cd, "québec", true),
                ("q.ebec", d, "que\u{301}bec", true)
            ] as [(String, ComparisonOptions, String, Bool)])
        func matches(pattern: String, options: ComparisonOptions, subject: String, expected: Bool) throws {
            let regex = try RegularExpression(pattern: pattern, options: options)
            #expect(try regex.matches(subject) == expected)
        }

        @Test(arguments: [
            ("(abc", "invalid regular expression '(abc': missing closing parenthesis at pattern offset 4"),
            ("*a", "invalid regular expression '*a': quantifier does not follow a repeatable item at pattern offset 0"),
            ("a[b", "invalid regular expression 'a[b': missing terminating ] for character class at pattern offset 3"),
            ("é(", "invalid regular expression 'é(': missing closing parenthesis at pattern offset 3"),
            ("a\\", "invalid regular expression 'a\\': \\ at end of pattern at pattern offset 2")
        ])
        func invalidPattern(pattern: String, message: String) {
            #expect(throws: ExpressionError(.regex, message)) {
                try RegularExpression(pattern: pattern, options: [])
            }
        }

        @Test(arguments: [true, false])
        func catastrophicPatternHitsTheLimitQuickly(jit: Bool) throws {
            let regex = try RegularExpression(pattern: "(a+)+$", options: [], jit: jit)
            let subject = String(repeating: "a", count: 40) + "b"
            let clock = ContinuousClock()
            var thrown: ExpressionError?
            let elapsed = clock.measure {
                do throws(ExpressionError) {
                    _ = try regex.matches(subject)
                } catch {
                    thrown = error
                }
            }
            #expect(thrown?.kind == .regex)
            #expect(
                thrown?.message == "regular expression '(a+)+$' hit its match limit of 1000000 backtracking "
                    + "steps on a subject of 41 characters; avoid nested repetition such as '(a+)+' and "
                    + "overlapping alternatives such as '(a|ab)*'")
            #expect(elapsed < .seconds(2), "took \(elapsed)")
            print("MATCHES '(a+)+$' against 40 a's and a b, JIT \(regex.isJITCompiled): \(elapsed)")
        }

        @Test(arguments: [true, false])
        func longSubjectsMatch(jit: Bool) throws {
            // A repeated group nests once per repetition: this overflows the JIT's default
            // 32 KiB stack, so the JIT path retries with a larger one.
            let subject = String(repeating: "ab", count: 50_000)
            for pattern in ["(ab)*", "(?:a|b)*", "[ab]*", ".*b", "(\\w+\\s?)*"] {
                #expect(try RegularExpression(pattern: pattern, options: [], jit: jit).matches(subject), "\(pattern)")
            }
            #expect(try RegularExpression(pattern: "(ab)*", options: [], jit: jit).matches(subject + "a") == false)
        }

        @Test(arguments: [true, false])
        func hugeSubjectHitsAMemoryLimit(jit: Bool) throws {
            let regex = try RegularExpression(pattern: "(ab)*", options: [], jit: jit)
            let subject = String(repeating: "ab", count: 2_000_000)
            let limit = regex.isJITCompiled ? "JIT stack limit reached" : "matching depth limit exceeded"
            #expect(
                throws: ExpressionError(
                    .regex,
                    "regular expression '(ab)*' hit its memory limit on a subject of 4000000 characters "
                        + "(\(limit)); a repeated group nests once per repetition, so repeat a character "
                        + "class instead where you can ('[ab]*' rather than '(a|b)*')")
            ) { try regex.matches(subject) }
            #expect(try RegularExpression(pattern: "[ab]*", options: [], jit: jit).matches(subject))
        }

        @Test func sharedAcrossThreads() async throws {
            let regex = try RegularExpression(pattern: "[a-z]+-\\d+", options: c)
            let results = await withTaskGroup(of: Int.self) { group in
                for task in 0..<8 {
                    group.addTask {
                        var matched = 0
                        for i in 0..<500 where (try? regex.matches("Item-\(task * 1000 + i)")) == true {
                            matched += 1
                        }
                        return matched
                    }
                }
                return await group.reduce(0, +)
            }
            #expect(results == 4000)
        }

        @Test func cache() throws {
            let first = try RegexCache.regularExpression(pattern: "x+y", options: c)
            let again = try RegexCache.regularExpression(pattern: "x+y", options: [c, l])
            #expect(first === again)  // [l] does not change the compiled form
            let other = try RegexCache.regularExpression(pattern: "x+y", options: [])
            #expect(first !== other)
            #expect(try first.matches("XXY"))

            // Invalid patterns are cached as failures and throw every time.
            for _ in 0..<2 {
                let expected = ExpressionError(
                    .regex, "invalid regular expression '(x': missing closing parenthesis at pattern offset 2")
                #expect(throws: expected) {
                    try RegexCache.regularExpression(pattern: "(x", options: [])
                }
            }

            // Bounded.
            for i in 0..<(RegexCache.capacity + 50) {
                _ = try RegexCache.regularExpression(pattern: "p\(i)", options: [])
            }
            #expect(RegexCache.count <= RegexCache.capacity)
            let newest = "p\(RegexCache.capacity + 49)"
            #expect(try RegexCache.regularExpression(pattern: newest, options: []).matches(newest))
        }
    }
}
