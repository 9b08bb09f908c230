/// A predicate of the format language, as parsed: `name BEGINSWITH[cd] 'jo' AND age > 18`.
///
/// Equality ignores source ranges; ``description`` prints the canonical format string,
/// which parses back to an equal tree.
public struct FormatPredicate: Hashable, Sendable {
    public var kind: Kind
    /// Where the predicate stands in the text it was parsed from; nil for trees built in code.
    public var range: SourceRange?

    public init(_ kind: Kind, range: SourceRange? = nil) {
        self.kind = kind
        self.range = range
    }

    public static func == (lhs: FormatPredicate, rhs: FormatPredicate) -> Bool { lhs.kind == rhs.kind }
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    public indirect enum Kind: Hashable, Sendable {
        /// `TRUEPREDICATE` / `FALSEPREDICATE`.
        case constant(Bool)
        /// `lhs OP[options] rhs`, possibly under ANY/ALL.
        case comparison(Comparison)
        /// `a AND b AND c`: true when all are (true when empty).
        case and([FormatPredicate])
        /// `a OR b OR c`: true when any is (false when empty).
        case or([FormatPredicate])
        /// `NOT p`; `NONE p` parses as `NOT ANY p`, as in Apple's parser.
        case not(FormatPredicate)
    }
}
