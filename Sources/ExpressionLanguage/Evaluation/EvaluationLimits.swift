import Synchronization

/// Limits on the values an expression makes out of little: a padding length, a string or an
/// array appended to itself level after level. Past a limit the function is an error
/// (``ExpressionError/Kind/range``) that names the limit, not an allocation that takes the
/// process down. Values read from a store are not limited: their size is the data's.
///
///     EvaluationLimits.maximumStringLength = 1 << 20   // one Mi UTF-16 units
///
/// Process-wide; set them before evaluating (docs/language.md, "Limits").
public enum EvaluationLimits {
    private static let strings = Atomic<Int>(1 << 28)
    private static let collections = Atomic<Int>(1 << 26)

    /// The longest string a string function makes, in UTF-16 units: 2^28 (268,435,456,
    /// 512 MB of UTF-16) unless set.
    public static var maximumStringLength: Int {
        get { strings.load(ordering: .relaxed) }
        set { strings.store(newValue, ordering: .relaxed) }
    }

    /// The most elements a collection function makes: 2^26 (67,108,864) unless set.
    public static var maximumCollectionCount: Int {
        get { collections.load(ordering: .relaxed) }
        set { collections.store(newValue, ordering: .relaxed) }
    }

    static func check(stringLength length: Int, _ selector: String) throws(ExpressionError) {
        guard length <= maximumStringLength else {
            throw ExpressionError(
                .range,
                "\(selector) would make a string of \(length) characters, more than the limit of \(maximumStringLength) "
                    + "(EvaluationLimits.maximumStringLength)")
        }
    }

    static func check(collectionCount count: Int, _ selector: String) throws(ExpressionError) {
        guard count <= maximumCollectionCount else {
            throw ExpressionError(
                .range,
                "\(selector) would make a collection of \(count) elements, more than the limit of \(maximumCollectionCount) "
                    + "(EvaluationLimits.maximumCollectionCount)")
        }
    }
}
