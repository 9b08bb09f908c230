/// A token of the format language (Grammar/tokens.md lists them all).
struct Token: Sendable {
    var kind: Kind
    var range: SourceRange

    enum Kind: Hashable, Sendable {
        /// An integer or real literal (already typed: `.integer` or `.double`).
        case number(Value)
        /// `9223372036854775808`: 2^63, an integer only as the operand of a unary minus
        /// (`-9223372036854775808` is the smallest 64-bit integer).
        case minimumIntegerMagnitude
        /// A quoted string, escapes resolved.
        case string(String)
        /// A bare identifier that is not a reserved word.
        case identifier(String)
        /// A reserved word (matched case-insensitively).
        case keyword(Keyword)
        /// `#word`: a reserved word used as a key.
        case escapedIdentifier(String)
        /// `@count`, `@sum`, …
        case atKey(String)
        /// `$name`.
        case variable(String)
        /// `%@`, `%K`, `%d`, …
        case format(FormatSpecifier)
        /// `modulus:by:`: a multi-part function name.
        case selector(String)
        case punctuation(Punctuation)
        case end
    }

    enum Punctuation: String, Hashable, Sendable, CaseIterable {
        case leftParen = "(", rightParen = ")", leftBracket = "[", rightBracket = "]"
        case leftBrace = "{", rightBrace = "}", comma = ",", dot = "."
        case plus = "+", minus = "-", star = "*", power = "**", slash = "/"
        case assign = "=", equal = "==", notEqual = "!=", notEqualAlt = "<>"
        case less = "<", lessOrEqual = "<=", lessOrEqualAlt = "=<"
        case greater = ">", greaterOrEqual = ">=", greaterOrEqualAlt = "=>"
        case colonAssign = ":=", bang = "!", ampersands = "&&", pipes = "||"
        case ampersand = "&", pipe = "|", caret = "^", shiftLeft = "<<", shiftRight = ">>"
    }
}

/// The reserved words. `FUNCTION` and `TERNARY` are not reserved: they are recognised
/// only when followed by `(`, so keys of those names still work.
///
/// reservedWord := "AND" | "OR" | "IN" | "NOT" | "ALL" | "ANY" | "SOME" | "NONE" | "LIKE"
///               | "CASEINSENSITIVE" | "CI" | "MATCHES" | "CONTAINS" | "BEGINSWITH" | "ENDSWITH"
///               | "BETWEEN" | "NULL" | "NIL" | "SELF" | "TRUE" | "YES" | "FALSE" | "NO" | "FIRST"
///               | "LAST" | "SIZE" | "ANYKEY" | "SUBQUERY" | "FETCH" | "CAST" | "TRUEPREDICATE"
///               | "FALSEPREDICATE" | "UTI-CONFORMS-TO" | "UTI-EQUALS"
///
/// Matched case-insensitively (`aNd`, `NiL`); `#word` makes any of them a key.
enum Keyword: String, CaseIterable, Hashable, Sendable {
    case and = "AND", or = "OR", `in` = "IN", not = "NOT", all = "ALL", any = "ANY", some = "SOME"
    case none = "NONE", like = "LIKE", caseInsensitive = "CASEINSENSITIVE", ci = "CI"
    case matches = "MATCHES", contains = "CONTAINS", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH"
    case between = "BETWEEN", null = "NULL", `nil` = "NIL", `self` = "SELF", `true` = "TRUE"
    case yes = "YES", `false` = "FALSE", no = "NO", first = "FIRST", last = "LAST", size = "SIZE"
    case anyKey = "ANYKEY", subquery = "SUBQUERY", fetch = "FETCH", cast = "CAST"
    case truePredicate = "TRUEPREDICATE", falsePredicate = "FALSEPREDICATE"
    case utiConformsTo = "UTI-CONFORMS-TO", utiEquals = "UTI-EQUALS"

    /// Keywords by upper-cased spelling.
    static let byName: [String: Keyword] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    /// Whether `word` is reserved (and so must be written `#word` to be a key).
    static func isReserved(_ word: String) -> Bool { byName[word.uppercased()] != nil }
}

/// A format specifier and what it turns into.
public enum FormatSpecifier: Hashable, Sendable, CustomStringConvertible {
    /// `%@`: the argument as a constant.
    case object
    /// `%K`: the argument (a string) as a key path.
    case keyPath
    /// `%d %i %ld %lld %hi %c %u %x %o …`: the argument as an integer constant.
    case integer(String)
    /// `%f %e %g %lf …`: the argument as a double constant.
    case real(String)

    public var description: String {
        switch self {
        case .object: "%@"
        case .keyPath: "%K"
        case .integer(let s), .real(let s): "%" + s
        }
    }
}
