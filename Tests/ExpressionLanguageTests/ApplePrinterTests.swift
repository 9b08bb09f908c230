import Foundation
import Testing

@testable import ExpressionLanguage

/// Apple's printed form (`predicateFormat`): the texts that tests run on Apple's Foundation
/// assert, then the rules read from Foundation's code, each on an example.
@Suite struct ApplePrinterTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var input: String
        var arguments: [Value] = []
        var printed: String
        var testDescription: String { input }
    }

    /// Asserted by tests run on Apple's Foundation (docs/language.md, "Apple's printed form").
    static let observed: [Case] = [
        Case(input: "isMale == YES", printed: "isMale == 1"),
        Case(input: "isMale == yes", printed: "isMale == 1"),
        Case(input: "isMale == TRUE", printed: "isMale == 1"),
        Case(input: "lastName LIKE 'Smith'", printed: #"lastName LIKE "Smith""#),
        Case(input: "%@ like %@", arguments: ["firstName", "Adam"], printed: #""firstName" LIKE "Adam""#),
        Case(input: "%K like %@", arguments: ["firstName", "Adam"], printed: #"firstName LIKE "Adam""#),
        Case(input: "SELF like[c] 'prefix*suffix'", printed: #"SELF LIKE[c] "prefix*suffix""#),
        Case(input: #"FUNCTION(a, "pow:", 3) == 8"#, printed: #"FUNCTION(a, "pow:" , 3) == 8"#),
        Case(input: "FUNCTION('a', 'uppercase') == 'A'", printed: #"FUNCTION("a", "uppercase") == "A""#),
        Case(input: "a[SIZE] == 3", printed: "a[SIZE] == 3"),
        Case(input: "a[FIRST] == 1", printed: "a[FIRST] == 1"),
        Case(input: "a[LAST] == 1", printed: "a[LAST] == 1"),
        Case(input: "a[1] == 1", printed: "a[1] == 1"),
        Case(input: "a.@count == 3", printed: "a.@count == 3"),
        Case(input: "$a == 1", printed: "$a == 1"),
        Case(input: "%@ + %@ == 2", arguments: [1, 1], printed: "1 + 1 == 2"),
        Case(input: #"%@ + %@ == "11""#, arguments: ["1", "1"], printed: #""1" + "1" == "11""#),
        Case(input: "color == 'lightgray' AND name == 'Tinna'", printed: #"color == "lightgray" AND name == "Tinna""#),
        Case(input: "name == nil", printed: "name == nil"),
        Case(input: "SUBQUERY(city.branches, $x1, $x1.nr == 52).@count > 0", printed: "SUBQUERY(city.branches, $x1, $x1.nr == 52).@count > 0"),
        Case(input: "TRUEPREDICATE", printed: "TRUEPREDICATE"),
        Case(input: "FALSEPREDICATE", printed: "FALSEPREDICATE"),
    ]

    /// Read from Foundation's code: numbers as NSNumber describes them, every nested infix
    /// operation in parentheses, bitwise functions as operators, built-ins by selector,
    /// `$a.$b` as written, `#` before every reserved word in a key path.
    static let derived: [Case] = [
        Case(input: "score > 10.0", printed: "score > 10"),
        Case(input: "price * 1.5 > 2.25", printed: "price * 1.5 > 2.25"),
        Case(input: "a + b * 2 == 1", printed: "a + (b * 2) == 1"),
        Case(input: "(a + b) * 2 == 1", printed: "(a + b) * 2 == 1"),
        Case(input: "1 - 2 - 3 == 1", printed: "(1 - 2) - 3 == 1"),
        Case(input: "(key & 1) > 0", printed: "key & 1 > 0"),
        Case(input: "flags & (1 << 3) != 0", printed: "flags & (1 << 3) != 0"),
        Case(input: "sqrt(2) + modulus:by:(7, 2) > 1", printed: "sqrt:(2) + modulus:by:(7, 2) > 1"),
        Case(input: "now() > %@", arguments: [.date(Date(timeIntervalSinceReferenceDate: 10))], printed: #"now() > CAST(10.000000, "NSDate")"#),
        Case(input: "$a.$b == 'x'", printed: #"$a.$b == "x""#),
        Case(input: "#first.#last == 1", printed: "#first.#last == 1"),
        Case(input: "a = 1", printed: "a == 1"),
        Case(input: "a <> 1", printed: "a != 1"),
        Case(input: "a == 1 AND (b == 2 OR c == 3)", printed: "a == 1 AND (b == 2 OR c == 3)"),
        Case(input: "NOT (a == 1 OR b == 2)", printed: "NOT (a == 1 OR b == 2)"),
        Case(input: "ANY tags.name IN {'a', 'b'}", printed: #"ANY tags.name IN {"a", "b"}"#),
        Case(input: "name CONTAINS[cd] 'x'", printed: #"name CONTAINS[cd] "x""#),
        Case(input: "TERNARY(a > 1, 'y', 'n') == 'y'", printed: #"TERNARY(a > 1, "y", "n") == "y""#),
        Case(input: "CAST('1', 'NSNumber') == 1", printed: #"CAST("1", "NSNumber") == 1"#),
        Case(input: "x BETWEEN {1, 5}", printed: "x BETWEEN {1, 5}"),
    ]

    @Test(arguments: observed + derived)
    func printsAsApplesFoundation(_ c: Case) throws {
        let predicate = try FormatParser(c.input, arguments: c.arguments).parsePredicate()
        #expect(predicate.appleFormat == c.printed)
    }

    @Test func expressionsPrintTheSameWay() throws {
        #expect(try FormatParser("a + b * 2").parseExpression().appleFormat == "a + (b * 2)")
        #expect(try FormatParser("5 & 3 | 1").parseExpression().appleFormat == "(5 & 3) | 1")
        #expect(try FormatParser("{1, 2.0, TRUE, 'x'}").parseExpression().appleFormat == #"{1, 2, 1, "x"}"#)
        // The canonical form is unchanged, and it is what parses back.
        #expect(try FormatParser("a + b * 2").parseExpression().description == "a + b * 2")
    }
}
