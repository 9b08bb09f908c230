/// The `[c]`, `[d]`, `[n]`, `[l]` options of a comparison.
public struct ComparisonOptions: OptionSet, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `[c]`: case-insensitive.
    public static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// `[d]`: diacritic-insensitive.
    public static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
    /// `[n]`: the caller promises both strings are already folded; compare as they are.
    public static let normalized = ComparisonOptions(rawValue: 4)
    /// `[l]`: locale-sensitive. Remodel evaluates with no locale (see docs/language.md).
    public static let localeSensitive = ComparisonOptions(rawValue: 8)

    /// The letters as they appear between brackets, in canonical order: `cd`, `n`, `cdl`.
    public var letters: String {
        var s = ""
        if contains(.caseInsensitive) { s += "c" }
        if contains(.diacriticInsensitive) { s += "d" }
        if contains(.normalized) { s += "n" }
        if contains(.localeSensitive) { s += "l" }
        return s
    }

    /// Parses `cd`, `n`, … (any order, case-insensitive); nil for anything else.
    public init?(letters: String) {
        var options: ComparisonOptions = []
        for ch in letters.lowercased() {
            switch ch {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "n": options.insert(.normalized)
            case "l": options.insert(.localeSensitive)
            default: return nil
            }
        }
        guard !letters.isEmpty else { return nil }
        self = options
    }
}
