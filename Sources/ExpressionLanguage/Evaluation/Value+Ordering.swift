import Foundation

extension Value {
    /// Orders two values as a sort does: nil before everything else, then `compare:`
    /// (numbers by value, strings literally, dates chronologically). Values that cannot be
    /// ordered against each other (a string and a number) are a type error.
    public static func sortOrder(_ lhs: Value, _ rhs: Value) throws(ExpressionError) -> ComparisonResult {
        switch (lhs.isNull, rhs.isNull) {
        case (true, true): return .orderedSame
        case (true, false): return .orderedAscending
        case (false, true): return .orderedDescending
        default: return try ComparisonEvaluation.order(lhs, rhs, options: [], op: "a sort")
        }
    }
}
