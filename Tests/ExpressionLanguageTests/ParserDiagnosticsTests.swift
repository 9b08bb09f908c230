import Foundation
import Testing

@testable import ExpressionLanguage

// Every diagnostic has a place and quotes the text (STYLE.md 3): exact messages with
// line, column and the token near which it happened; unclosed brackets name their
// opener; one renderer adds the line and a caret. Nesting is limited, never a stack
// overflow, and legal inputs near the limit parse, compile and evaluate. Mixing AND and
// OR without parentheses warns (LANGUAGE.md, decision 1).

private typealias Mode = ParserDiagnosticsTests.Mode

private func parse(_ source: String, _ mode: Mode, arguments: [Value] = []) throws(ExpressionError) -> FormatParser {
    let parser = FormatParser(source, arguments: arguments)
    switch mode {
    case .expression: _ = try parser.parseExpression()
    case .predicate: _ = try parser.parsePredicate()
    }
    return parser
}

/// The error parsing `source` gives; a recorded issue (and an empty error) when it parses.
private func error(_ source: String, _ mode: Mode, arguments: [Value] = []) -> ExpressionError {
    do {
        _ = try parse(source, mode, arguments: arguments)
        Issue.record("\(source) parsed")
        return ExpressionError(.syntax, "")
    } catch {
        return error
    }
}

/// Runs `body` and returns how long it took, in seconds.
private func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// Generous bounds: debug builds, on two cores shared with other builds.
private let quickly = 5.0

@Suite struct ParserDiagnosticsTests {
    enum Mode: Sendable { case expression, predicate }

    // MARK: - Messages

    struct Case: Sendable, CustomTestStringConvertible {
        var source: String
        var mode: Mode
        var kind: ExpressionError.Kind
        var description: String
        /// Where the unclosed opener is, for errors that name one.
        var related: String?

        init(
            _ source: String, _ mode: Mode, _ kind: ExpressionError.Kind, _ description: String, related: String? = nil
        ) {
            (self.source, self.mode, self.kind, self.description, self.related) = (
                source, mode, kind, description, related
            )
        }

        init(_ source: String, _ mode: Mode, _ description: String, related: String? = nil) {
            self.init(source, mode, .syntax, description, related: related)
        }

        var testDescription: String { source.debugDescription }
    }

    static let cases: [Case] = [
        // Where an expression or an operator is missing
        Case("$source.price *", .expression, "1:16: expected an expression, near end of input"),
        Case("a ==", .predicate, "1:5: expected an expression, near end of input"),
        Case(
            "name", .predicate,
            "1:5: expected a comparison operator (==, <, IN, LIKE, …) to make a predicate, near end of input"),
        Case("name LIKES 'x'", .predicate, "1:6: expected a comparison operator (==, <, IN, LIKE, …), near 'LIKES'"),
        Case("a == 1 b == 2", .predicate, "1:8: unexpected 'b' after a complete predicate, near 'b'"),
        Case("1 < 2 < 3", .predicate, "1:7: unexpected '<' after a complete predicate, near '<'"),
        Case("a == 1", .expression, "1:3: unexpected '==' after a complete expression, near '=='"),
        Case("x := 1", .expression, "1:3: only a $variable can be assigned with ':=', near ':='"),
        // Unclosed brackets name the opener
        Case("(a + b", .expression, "1:7: expected ')' to close '(' at 1:1, near end of input", related: "1:1"),
        Case("sqrt(1 2)", .expression, "1:8: expected ')' to close '(' at 1:5, near '2'", related: "1:5"),
        Case("{1, 2", .expression, "1:6: expected '}' to close '{' at 1:1, near end of input", related: "1:1"),
        Case("a[FIRST", .expression, "1:8: expected ']' to close '[' at 1:2, near end of input", related: "1:2"),
        Case("a ==[c 'x'", .predicate, "1:8: expected ']' to close '[' at 1:5, near ''x''", related: "1:5"),
        Case(
            "a == 1 OR\n  (b == 2\n  AND c == 3", .predicate,
            "3:13: expected ')' to close '(' at 2:3, near end of input", related: "2:3"),
        Case(
            "a == 'Jane", .predicate, "1:11: expected \"'\" to close the string at 1:6, near end of input",
            related: "1:6"),
        Case("\"a\nb", .expression, "2:2: expected '\"' to close the string at 1:1, near end of input", related: "1:1"),
        // Reserved words, quoted as written
        Case(
            "first == 1", .predicate,
            "1:1: 'first' is a reserved word and cannot start an expression; write #first to use it as a key, near 'first'"
        ),
        Case(
            "a == 1 and or b == 2", .predicate,
            "1:12: 'or' is a reserved word and cannot start an expression; write #or to use it as a key, near 'or'"),
        // Options
        Case(
            "a ==[x] 'y'", .predicate,
            "1:6: expected comparison options: the letters c, d, n and l, as in [c] or [cd], near 'x'"),
        Case("a BETWEEN[c] {1, 2}", .predicate, "1:10: BETWEEN takes no options such as [c], near '['"),
        // Functions
        Case(
            "foo(1)", .expression, .unknownFunction,
            "1:1: unknown function 'foo'; the built-in functions are listed in docs/language.md, and methods are called with FUNCTION(target, 'selector:', …), near 'foo'"
        ),
        Case("sqrt(1, 2)", .expression, .unknownFunction, "1:1: sqrt takes 1 argument, not 2, near 'sqrt'"),
        Case(
            "modulus:by:(7)", .expression, .unknownFunction,
            "1:1: modulus:by: takes 2 arguments, not 1, near 'modulus:by:'"),
        Case(
            "FUNCTION(a)", .expression,
            "1:1: FUNCTION needs a target and a selector: FUNCTION(target, 'selector:', arguments…), near 'FUNCTION'"),
        // Lexical errors: what to write instead
        Case("1 // one", .expression, "1:3: comments are not part of the format language, near '//'"),
        Case(
            "? = 'ABC'", .predicate,
            "1:1: '?' is not part of the format language; use a format argument such as %@, near '?'"),
        Case("1\\n+1", .expression, "1:2: a backslash is allowed only inside a quoted string, near '\\'"),
        Case(
            "~5", .expression, "1:1: '~' is not an operator of the format language; write onesComplement(a), near '~'"),
        Case(
            "7 % 2", .expression,
            "1:3: '%' starts a format specifier such as %@, %K or %d; for the remainder write modulus:by:(a, b), near '%'"
        ),
        Case("'\\x4'", .expression, "1:2: the escape \\x needs 2 hexadecimal digits, near '\\x4'"),
        Case("0b102", .expression, "1:5: invalid digit '2' in the number '0b10', near '0b10'"),
        // Columns count characters, lines count line breaks
        Case("'é😀' + é", .expression, "1:8: unexpected character 'é', near 'é'"),
        Case("a == 1 AND\r\n  b ==", .predicate, "2:7: expected an expression, near end of input"),
        // Lexical errors come in text order with syntax errors
        Case("a b 'unclosed", .predicate, "1:3: expected a comparison operator (==, <, IN, LIKE, …), near 'b'"),
        Case(
            "a == 'x' AND b == 'y", .predicate, "1:21: expected \"'\" to close the string at 1:19, near end of input",
            related: "1:19")
    ]

    @Test(arguments: cases)
    func message(_ c: Case) {
        let e = error(c.source, c.mode)
        #expect(e.kind == c.kind)
        #expect(e.description == c.description)
        #expect(e.relatedLocation?.description == c.related)
    }

    @Test func longTokensAreShortenedWhereQuoted() {
        let x39 = String(repeating: "x", count: 39)
        #expect(
            error("a == 1 " + String(repeating: "x", count: 60), .predicate).description
                == "1:8: unexpected '\(x39)…' after a complete predicate, near '\(x39)…'")
    }

    @Test func formatArgumentErrors() {
        #expect(
            error("a == %@", .predicate).description
                == "1:6: %@ has no argument (0 given); pass one argument per format specifier, near '%@'")
        #expect(
            error("%K == 1", .predicate, arguments: [1]).description
                == "1:1: %K needs a key path string, not integer, near '%K'")
        #expect(
            error("%5.2f", .expression, arguments: ["x"]).description
                == "1:1: %5.2f needs a number argument, not string, near '%5.2f'")
        #expect(error("%@ + %@", .expression, arguments: [1]).kind == .formatArgument)
    }

    /// The error points at the token: its range covers the token's text.
    @Test func rangeCoversTheToken() {
        let e = error("name LIKES 'x'", .predicate)
        #expect(e.range == SourceRange(5, 10))
        #expect(e.location == SourceLocation(offset: 5, line: 1, column: 6))
        let end = error("(a + b", .expression)
        #expect(end.range == SourceRange(6, 6))
        #expect(end.related == SourceRange(0, 1))
    }

    @Test func locationsAcrossLines() {
        // Offsets count UTF-8 bytes, columns characters.
        let source = "a == 1 AND\n  'é' == 2 AND\n  'é' ?= 3"
        let e = error(source, .predicate)
        #expect(e.location == SourceLocation(offset: 34, line: 3, column: 7))
        #expect(
            e.description == "3:7: '?' is not part of the format language; use a format argument such as %@, near '?'")
    }

    // MARK: - Rendering

    @Test func renderedWithLabelAndCaret() {
        let e = error("$source.price *", .expression)
        #expect(
            e.rendered(label: "price.mapping.json: .attributeMappings.price") == """
                price.mapping.json: .attributeMappings.price: 1:16: expected an expression, near end of input
                  $source.price *
                                 ^
                """)
        #expect(e.rendered(caret: false) == "1:16: expected an expression, near end of input")
    }

    @Test func renderedUnderlinesTheToken() {
        #expect(
            error("a == 1 AND\n  b LIKES 'x'", .predicate).rendered() == """
                2:5: expected a comparison operator (==, <, IN, LIKE, …), near 'LIKES'
                    b LIKES 'x'
                      ^~~~~
                """)
    }

    @Test func renderedShowsTheLineOfTheError() {
        #expect(
            error("a == 1 OR\n  (b == 2\n  AND c == 3", .predicate).rendered() == """
                3:13: expected ')' to close '(' at 2:3, near end of input
                    AND c == 3
                              ^
                """)
    }

    @Test func renderedCountsCharactersAndKeepsTabs() {
        #expect(
            error("'é😀' + é", .expression).rendered() == """
                1:8: unexpected character 'é', near 'é'
                  'é😀' + é
                         ^
                """)
        #expect(error("\tfoo(1)", .expression).rendered(caret: true).hasSuffix("\n  \tfoo(1)\n  \t^~~"))
    }

    @Test func renderedHidesCarriageReturns() {
        #expect(
            error("a == 1 AND\r\n  b ==\r\n", .predicate).rendered() == """
                3:1: expected an expression, near end of input
                  \("")
                  ^
                """)
        #expect(
            error("a ==\r\n  b LIKES 1", .predicate).rendered() == """
                2:5: unexpected 'LIKES' after a complete predicate, near 'LIKES'
                    b LIKES 1
                      ^~~~~
                """)
    }

    @Test func renderedWithoutAPlace() {
        let e = ExpressionError(.unboundVariable, "no value for $x")
        #expect(e.rendered(label: "eval") == "eval: no value for $x")
    }

    // MARK: - Depth

    @Test func depthLimitIsPinned() {
        #expect(FormatParser.maximumDepth == 256)
    }

    static let hugeNestings: [(String, String, String)] = [
        ("parentheses", String(repeating: "(", count: 100_000) + "1" + String(repeating: ")", count: 100_000), "1:257"),
        ("unclosed parentheses", String(repeating: "(", count: 100_000), "1:257"),
        ("brackets", "a" + String(repeating: "[0", count: 100_000), "1:514"),
        ("braces", String(repeating: "{", count: 100_000), "1:257"),
        ("calls", String(repeating: "sqrt(", count: 100_000), "1:1285"),
        ("unary minus", String(repeating: "-", count: 100_000) + "a", "1:257"),
        ("assignments", String(repeating: "$x := ", count: 100_000) + "1", "1:1540"),
        ("an arithmetic chain", String(repeating: "1 + ", count: 100_000) + "1", "1:1027"),
        ("a power chain", String(repeating: "2 ** ", count: 100_000) + "1", "1:1283")
    ]

    /// 100,000 levels: a `tooDeep` error at the 257th level, quickly, and no stack overflow.
    @Test(arguments: hugeNestings)
    func hugeExpressionIsTooDeep(_ what: String, _ source: String, _ location: String) {
        var e = ExpressionError(.syntax, "")
        let time = seconds { e = error(source, .expression) }
        #expect(e.kind == .tooDeep, "\(what)")
        #expect(
            e.description
                == "\(location): nesting is deeper than 256 levels; split the expression, near '\(tokenAt(e, in: source))'"
        )
        #expect(time < quickly, "\(what) took \(time) s")
    }

    private func tokenAt(_ e: ExpressionError, in source: String) -> String {
        guard let range = e.range else { return "" }
        return String(decoding: Array(source.utf8)[range.lowerBound..<range.upperBound], as: UTF8.self)
    }

    static let hugePredicates: [(String, String)] = [
        ("parentheses", String(repeating: "(", count: 100_000) + "a == 1" + String(repeating: ")", count: 100_000)),
        (
            "parenthesised expression",
            String(repeating: "(", count: 100_000) + "a" + String(repeating: ")", count: 100_000) + " == 1"
        ),
        ("NOT", String(repeating: "NOT ", count: 100_000) + "a == 1"),
        ("!", String(repeating: "!", count: 100_000) + "a == 1"),
        ("TERNARY", String(repeating: "TERNARY(", count: 100_000) + "a == 1"),
        ("SUBQUERY", String(repeating: "SUBQUERY(a, $x, ", count: 100_000) + "a == 1")
    ]

    @Test(arguments: hugePredicates)
    func hugePredicateIsTooDeep(_ what: String, _ source: String) {
        var e = ExpressionError(.syntax, "")
        let time = seconds { e = error(source, .predicate) }
        #expect(e.kind == .tooDeep, "\(what): \(e)")
        #expect(e.message == "nesting is deeper than 256 levels; split the expression")
        #expect(time < quickly, "\(what) took \(time) s")
    }

    static let nestingsAtTheLimit: [(String, String, Mode)] = [
        ("parentheses", String(repeating: "(", count: 256) + "1" + String(repeating: ")", count: 256), .expression),
        ("calls", String(repeating: "sqrt(", count: 256) + "1" + String(repeating: ")", count: 256), .expression),
        (
            "FUNCTION", String(repeating: "FUNCTION(a, 'b', ", count: 256) + "1" + String(repeating: ")", count: 256),
            .expression
        ),
        (
            "TERNARY", String(repeating: "TERNARY(a == 1, 1, ", count: 256) + "1" + String(repeating: ")", count: 256),
            .expression
        ),
        (
            "SUBQUERY",
            String(repeating: "SUBQUERY(a, $x, ", count: 256) + "TRUEPREDICATE"
                + String(repeating: ").@count > 0", count: 255) + ")", .expression
        ),
        (
            "predicate parentheses", String(repeating: "(", count: 256) + "a == 1" + String(repeating: ")", count: 256),
            .predicate
        ),
        ("NOT", String(repeating: "NOT ", count: 256) + "a == 1", .predicate),
        ("brackets", "a" + String(repeating: "[0", count: 256) + String(repeating: "]", count: 256), .expression),
        ("braces", String(repeating: "{", count: 256) + String(repeating: "}", count: 256), .expression),
        (
            "keys in parentheses", String(repeating: "a.(", count: 256) + "b" + String(repeating: ")", count: 256),
            .expression
        ),
        // Found by fuzzing: each `.$b` and each key after it nests the tree a level, which
        // the compiler then recursed into until the stack overflowed.
        ("key paths in variables", "$a" + String(repeating: ".$b", count: 256), .expression),
        ("keys after key paths in variables", "$a" + String(repeating: ".$b.c", count: 128), .expression)
    ]

    /// Every form of nesting parses at exactly the limit, even with a debug build's stack
    /// frames on a test thread (a stack overflow would crash the test process).
    @Test(arguments: nestingsAtTheLimit)
    func nestingAtTheLimitParses(_ what: String, _ source: String, _ mode: Mode) throws {
        _ = try parse(source, mode)
        let deeper = error(String(repeating: "(", count: 1) + source + ")", mode)
        #expect(deeper.kind == .tooDeep, "\(what) one level deeper: \(deeper)")
    }

    /// A parenthesised predicate and a parenthesised expression start alike; the parser
    /// tries one then the other, and remembers what failed, so that nesting them does not
    /// double the time with each level.
    @Test func backtrackingStaysPolynomial() throws {
        var source = "x == 1"
        for _ in 0..<80 { source = "(TERNARY(\(source), 1, 2)) > 0" }
        let time = try seconds { _ = try FormatParser(source).parsePredicate() }
        #expect(time < quickly, "took \(time) s")
    }

    /// AND and OR chains are one flat node each, so they do not count as nesting.
    @Test func longAndChainsAreFlat() throws {
        let source = Array(repeating: "a == 1", count: 10_000).joined(separator: " AND ")
        let tree = try FormatParser(source).parsePredicate()
        guard case .and(let children) = tree.kind else {
            Issue.record("not an AND")
            return
        }
        #expect(children.count == 10_000)
        let compiled = try ExpressionCompiler().compile(tree, source: source)
        #expect(try compiled.evaluate(with: ["a": 1]) == true)
        #expect(try compiled.evaluate(with: ["a": 2]) == false)
    }

    static let legalDeepExpressions: [(String, String, Value)] = [
        ("parentheses", String(repeating: "(", count: 200) + "1 + 1" + String(repeating: ")", count: 200), 2),
        ("an arithmetic chain", Array(repeating: "1", count: 200).joined(separator: " + "), 200),
        ("a right-nested chain", String(repeating: "1 - (", count: 100) + "1" + String(repeating: ")", count: 100), 1),
        ("unary minus", String(repeating: "-", count: 200) + "$x", 5),
        ("calls", String(repeating: "abs(", count: 200) + "-1" + String(repeating: ")", count: 200), 1),
        (
            "aggregates and indexes",
            String(repeating: "{", count: 100) + "7" + String(repeating: "}", count: 100)
                + String(repeating: "[0]", count: 100), 7
        ),
        ("assignments", (0..<200).map { "$v\($0) := " }.joined() + "3", 3),
        ("key paths", "$d" + String(repeating: ".a", count: 200), 9),
        (
            "TERNARY",
            String(repeating: "TERNARY(TRUEPREDICATE, ", count: 120) + "4" + String(repeating: ", 0)", count: 120), 4
        ),
        (
            "SUBQUERY",
            String(repeating: "SUBQUERY($list, $e, ", count: 200) + "TRUEPREDICATE"
                + String(repeating: ").@count > 0", count: 199) + ").@count", 1
        )
    ]

    /// Near the limit, legal inputs parse, compile and evaluate.
    @Test(arguments: legalDeepExpressions)
    func deepButLegalExpression(_ what: String, _ source: String, _ expected: Value) throws {
        var d: Value = 9
        for _ in 0..<200 { d = ["a": d] }
        let tree = try FormatParser(source).parseExpression()
        let compiled = try ExpressionCompiler().compile(tree, source: source)
        #expect(try compiled.evaluate(variables: ["x": 5, "d": d, "list": [1]]) == expected, "\(what)")
        #expect(try FormatParser(tree.description).parseExpression() == tree, "\(what)")
    }

    static let legalDeepPredicates: [(String, String)] = [
        ("parentheses", String(repeating: "(", count: 200) + "a == 1" + String(repeating: ")", count: 200)),
        (
            "parenthesised expression",
            String(repeating: "(", count: 200) + "a" + String(repeating: ")", count: 200) + " == 1"
        ),
        ("NOT", String(repeating: "NOT ", count: 200) + "a == 1"),
        (
            "nested compounds",
            String(repeating: "(a == 1 AND ", count: 120) + "a == 1" + String(repeating: ")", count: 120)
        )
    ]

    @Test(arguments: legalDeepPredicates)
    func deepButLegalPredicate(_ what: String, _ source: String) throws {
        let tree = try FormatParser(source).parsePredicate()
        let compiled = try ExpressionCompiler().compile(tree, source: source)
        #expect(try compiled.evaluate(with: ["a": 1]) == true, "\(what)")
        #expect(try FormatParser(tree.description).parsePredicate() == tree, "\(what)")
    }

    // MARK: - Warnings

    static let mixedWarning =
        "AND and OR are mixed without parentheses; Remodel binds AND tighter than OR (as C and SQL do), "
        + "but Apple does not document its order: add parentheses to say what you mean"

    static let warningCases: [(String, [String])] = [
        ("a == 1 AND b == 2 OR c == 3", ["1:1"]),
        ("a == 1 OR b == 2 AND c == 3", ["1:11"]),
        ("a == 1 && b == 2 || c == 3", ["1:1"]),
        ("a == 1 AND b == 2 OR c == 3 AND d == 4", ["1:1"]),
        ("NOT a == 1 AND b == 2 OR c == 3", ["1:1"]),
        ("(a == 1 AND b == 2 OR c == 3) AND d == 4", ["1:2"]),
        ("(a == 1 OR b == 2 AND c == 3) OR (d == 4 AND e == 5 OR f == 6)", ["1:12", "1:35"]),
        ("a == 1 OR\n  b == 2 AND c == 3", ["2:3"]),
        ("TERNARY(a == 1 AND b == 2 OR c == 3, 1, 2) > 0", ["1:9"]),
        // Parsed twice (first as a parenthesised predicate), warned once.
        ("(TERNARY(a == 1 AND b == 2 OR c == 3, 1, 2)) > 0", ["1:10"]),
        ("(a == 1 AND b == 2) OR c == 3", []),
        ("a == 1 OR (b == 2 AND c == 3)", []),
        ("(a == 1 OR b == 2) AND c == 3", []),
        ("a == 1 AND (b == 2 OR c == 3)", []),
        ("a == 1 AND b == 2 AND c == 3", []),
        ("a == 1 OR b == 2 OR c == 3", []),
        ("NOT (a == 1 OR b == 2) AND c == 3", [])
    ]

    @Test(arguments: warningCases)
    func andOrWarning(_ source: String, _ locations: [String]) throws {
        let parser = try parse(source, .predicate)
        #expect(parser.warnings.map(\.description) == locations.map { "\($0): warning: " + Self.mixedWarning })
    }

    @Test func andBindsTighterThanOr() throws {
        let tree = try FormatParser("a == 1 OR b == 2 AND c == 3").parsePredicate()
        guard case .or(let children) = tree.kind, children.count == 2, case .and(let inner) = children[1].kind else {
            Issue.record("\(tree.structure)")
            return
        }
        #expect(inner.count == 2)
        let compiled = try ExpressionCompiler().compile(tree)
        // true OR (false AND …) is true; (true OR false) AND false would be false.
        #expect(try compiled.evaluate(with: ["a": 1, "b": 0, "c": 0]) == true)
    }

    @Test func warningsInExpressions() throws {
        let parser = try parse("TERNARY(a == 1 OR b == 2 AND c == 3, 1, 2)", .expression)
        #expect(parser.warnings.map(\.description) == ["1:19: warning: " + Self.mixedWarning])
        #expect(parser.warnings.first?.range == SourceRange(18, 35))
    }

    /// A place inside a string's value (a predicate inside FETCH's string) maps back to the
    /// character or escape in the source that wrote it.
    @Test func stringValueOffsetsPointAtWhatWroteEachByte() throws {
        let source = #"x == 'a\u00e9\"b\101\\c\uD83D\uDE00'"#
        let start = try #require(source.utf8.firstIndex(of: UInt8(ascii: "'")))
        let open = source.utf8.distance(from: source.utf8.startIndex, to: start)
        let close = source.utf8.count - 1
        let offsets = try #require(FormatParser.valueOffsets(ofStringAt: SourceRange(open, close + 1), in: source))
        // a(1 byte) é(2) "(1) b(1) A(1) \(1) c(1) 😀(4), then the closing quote.
        let a = open + 1, e = a + 1, quote = e + 6, b = quote + 2, octal = b + 1, backslash = octal + 4,
            c = backslash + 2
        let emoji = c + 1
        #expect(offsets == [a, e, e, quote, b, octal, backslash, c, emoji, emoji, emoji, emoji, close])
        #expect(FormatParser.valueOffsets(ofStringAt: SourceRange(0, 1), in: source) == nil)
    }
}
