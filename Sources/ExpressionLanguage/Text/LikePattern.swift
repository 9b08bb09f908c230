/// A LIKE pattern, compiled once: a whole-string glob match.
///
/// - `*` matches zero or more Characters, `?` exactly one Character (an extended grapheme
///   cluster, so `?` matches `é` written either way, a flag emoji, or CR LF).
/// - A backslash makes the next character literal: `\*` and `\?` match the wildcard
///   characters, `\\` a backslash, and `\x` is `x`. A backslash at the very end of the
///   pattern matches a backslash. (These are the pattern's escapes, applied after the
///   string literal's own: the format string `'a\\*'` is the pattern `a\*`.)
/// - Everything else matches itself; `[c]` and `[d]` fold the pattern's literal text and
///   the subject with ``StringFolding``, `[n]` folds nothing. `?` counts the Characters of
///   the folded subject: with `[c]`, `ß` folds to `ss`, so `'straße' LIKE[c] 'STRA?E'` is
///   false and `'straße' LIKE[c] 'STRA??E'` is true.
///
///     LikePattern("a*c").matches("abcdefc")        // true
///     LikePattern("a?c").matches("ac")             // false
///     LikePattern("qu?bec", options: [.caseInsensitive, .diacriticInsensitive])
///         .matches("QUÉBEC")                       // true
///
/// Matching is iterative and only ever backtracks to the most recent `*`, so it takes at
/// most O(pattern × subject) steps: `*a*a*a*a*b` against a long run of `a`s does not blow
/// up. Patterns that are plain text, `text*`, `*text` or `*text*` take a direct path.
struct LikePattern: Sendable {
    enum Token<Element: Equatable & Sendable>: Equatable, Sendable {
        case literal(Element)
        /// `?`
        case any
        /// `*`; never two in a row.
        case star
    }

    /// The shape of a pattern that needs no general matching.
    private enum Shape: Sendable {
        /// No wildcards: the whole subject equals the text.
        case exactly(String)
        /// `text*`
        case prefix(String)
        /// `*text`
        case suffix(String)
        /// `*text*`
        case infix(String)
        /// `*`
        case anything
        case general
    }

    /// The pattern as written.
    let pattern: String
    let options: ComparisonOptions

    private let tokens: [Token<Character>]
    /// The same tokens as UTF-8 bytes when every literal is a single ASCII byte; used when
    /// the subject is ASCII too.
    private let byteTokens: [Token<UInt8>]?
    private let shape: Shape

    init(_ pattern: String, options: ComparisonOptions = []) {
        self.pattern = pattern
        self.options = options

        var tokens: [Token<Character>] = []
        var literalRun = String.UnicodeScalarView()
        func flushLiteralRun() {
            guard !literalRun.isEmpty else { return }
            for character in StringFolding.fold(String(literalRun), options) {
                tokens.append(.literal(character))
            }
            literalRun = String.UnicodeScalarView()
        }
        var scalars = pattern.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            switch scalar {
            case "\\":
                literalRun.append(scalars.next() ?? "\\")
            case "*":
                flushLiteralRun()
                if tokens.last != .star { tokens.append(.star) }
            case "?":
                flushLiteralRun()
                tokens.append(.any)
            default:
                literalRun.append(scalar)
            }
        }
        flushLiteralRun()
        self.tokens = tokens

        var byteTokens: [Token<UInt8>]? = []
        for token in tokens {
            switch token {
            case .star: byteTokens?.append(.star)
            case .any: byteTokens?.append(.any)
            case .literal(let character):
                guard let byte = character.asciiValue, character.utf8.count == 1 else {
                    byteTokens = nil
                    break
                }
                byteTokens?.append(.literal(byte))
            }
            if byteTokens == nil { break }
        }
        self.byteTokens = byteTokens
        self.shape = Self.shape(of: tokens)
    }

    /// Whether the whole of `s` matches the pattern.
    func matches(_ s: String) -> Bool {
        let subject = StringFolding.fold(s, options)
        switch shape {
        case .anything: return true
        case .exactly(let text): return subject == text
        case .prefix(let text): return StringFolding.literalHasPrefix(subject, text)
        case .suffix(let text): return StringFolding.literalHasSuffix(subject, text)
        case .infix(let text): return StringFolding.literalContains(subject, text)
        case .general: break
        }
        if let byteTokens {
            var subject = subject
            let result: Bool? = subject.withUTF8 { bytes in
                // Bytes are Characters only for ASCII without CR (CR LF is one Character).
                guard bytes.allSatisfy({ $0 < 0x80 && $0 != UInt8(ascii: "\r") }) else { return nil }
                return Self.match(byteTokens, bytes)
            }
            if let result { return result }
        }
        return Self.match(tokens, Array(subject))
    }

    /// Glob matching with one backtracking point, the most recent star: when a literal
    /// fails, the star takes one more element and the rest of the pattern is retried.
    /// Backtracking to earlier stars is never needed, because whatever they could absorb
    /// the latest star can absorb too.
    private static func match<C: RandomAccessCollection>(_ tokens: [Token<C.Element>], _ s: C) -> Bool
    where C.Index == Int {
        var t = 0
        var i = s.startIndex
        var starToken = -1
        var starResume = s.startIndex
        while i < s.endIndex {
            if t < tokens.count {
                switch tokens[t] {
                case .star:
                    starToken = t
                    starResume = i
                    t += 1
                    continue
                case .any:
                    t += 1
                    i += 1
                    continue
                case .literal(let element) where element == s[i]:
                    t += 1
                    i += 1
                    continue
                case .literal:
                    break
                }
            }
            guard starToken >= 0 else { return false }
            t = starToken + 1
            starResume += 1
            i = starResume
        }
        while t < tokens.count, tokens[t] == .star { t += 1 }
        return t == tokens.count
    }

    private static func shape(of tokens: [Token<Character>]) -> Shape {
        guard !tokens.contains(.any) else { return .general }
        let stars = tokens.indices.filter { tokens[$0] == .star }
        func text(_ range: Range<Int>) -> String {
            String(
                tokens[range].map { token -> Character in
                    guard case .literal(let character) = token else { preconditionFailure() }
                    return character
                })
        }
        let n = tokens.count
        switch stars {
        case []: return .exactly(text(0..<n))
        case [0] where n == 1: return .anything
        case [0]: return .suffix(text(1..<n))
        case [n - 1]: return .prefix(text(0..<(n - 1)))
        case [0, n - 1]: return .infix(text(1..<(n - 1)))
        default: return .general
        }
    }
}
