import Foundation

/// A built-in function of the format language (`sqrt(2)`, `modulus:by:(7, 2)`): Apple's
/// `expressionForFunction:arguments:` table. docs/language.md lists them with examples.
struct BuiltinFunction: Sendable {
    /// Apple's selector: `sqrt:`, `modulus:by:`, `now`.
    let selector: String
    let arity: Int
    /// Pure functions with constant arguments are folded at compile time.
    let isPure: Bool
    let body: @Sendable ([Value]) throws(ExpressionError) -> Value

    /// How the function is written in a format string: `sqrt` for `sqrt:`, `now` for
    /// `now`, `modulus:by:` for multi-part selectors.
    var formatName: String {
        let parts = selector.split(separator: ":")
        return parts.count > 1 ? selector : String(parts.first ?? "")
    }

    /// The function for a name as written in a format string (`sqrt`, `sqrt:`,
    /// `modulus:by:`), given its argument count.
    static func named(_ name: String) -> BuiltinFunction? {
        if let f = table[name] { return f }
        if !name.hasSuffix(":"), let f = table[name + ":"] { return f }
        return nil
    }

    static func bySelector(_ selector: String) -> BuiltinFunction? { table[selector] }

    /// Every built-in, by selector.
    static let table: [String: BuiltinFunction] = {
        var table: [String: BuiltinFunction] = [:]
        for f in BuiltinFunction.all { table[f.selector] = f }
        return table
    }()

    /// The names users can write, for "did you mean" help.
    static var formatNames: [String] { table.values.map(\.formatName).sorted() }
}
