import Foundation
import Testing

@testable import ExpressionLanguage

// The compiler (Evaluation/ExpressionCompiler.swift): what it folds and what it must not
// (STYLE.md 8), contexts and layouts shared across evaluations and expressions, selectors
// registered by embedders, and where errors point in multi-line text. What expressions
// evaluate to is EvaluationTests' subject.

@Suite struct CompilerTests {
    private static func json(_ text: String) -> JSON { try! JSON.parse(text) }

    // MARK: Constant folding

    /// Pure operations on constants are folded: `constantValue` holds the result.
    @Test(arguments: [
        ("1 + 2 * 3", "7"),
        ("5 / 2", "2"),
        ("((24 - 18) / 87.00) * 100", "6.896551724137931"),
        ("-(2 ** 2)", "-4.0"),
        ("sqrt(16)", "4.0"),
        ("sum({1, 2, 3})", "6.0"),
        ("uppercase('a') ", "\"A\""),
        ("{1, 2 + 3, 'x'}", "[1,5,\"x\"]"),
        ("{1, 2, 3}[LAST]", "3"),
        ("{'a', 'bb'}.length", "[1,2]"),
        ("CAST(86400, 'NSDate')", #"{"$date":"2001-01-02T00:00:00Z"}"#),
        ("CAST('4.5', 'NSNumber')", "4.5"),
        ("TERNARY(1 < 2, 'yes', $never)", "\"yes\""),
        ("noindex(7)", "7"),
        ("modulus:by:(7, 2)", "1"),
        ("'text'", "\"text\"")
    ])
    func foldsPureConstantSubtrees(source: String, expected: String) throws {
        let compiled = try ExpressionCompiler().compileExpression(source)
        let folded = try #require(compiled.constantValue, "\(source) was not folded")
        #expect(folded.json == Self.json(expected))
        // The folded value is what evaluation returns.
        #expect(try compiled.evaluate().json == Self.json(expected))
    }

    /// A constant key path into a format argument (`%@.population`) folds too.
    @Test func foldsKeyPathsIntoConstantArguments() throws {
        let compiled = try ExpressionCompiler().compileExpression("%@.population * 2", arguments: [["population": 21]])
        #expect(compiled.constantValue == .integer(42))
    }

    /// What depends on time, randomness, bindings, objects or host calls is never folded.
    @Test(arguments: [
        "now()",
        "random()",
        "randomn(5)",
        "{1, now()}",
        "CAST(now(), 'NSNumber')",
        "random() * 0",
        "$x + 1",
        "SELF",
        "name",
        "SUBQUERY({1, 2}, $x, $x > 1)",
        "$x := 1",
        "FUNCTION('a', 'uppercaseString')",
        "TERNARY(random() < 2, 1, 2)"
    ])
    func doesNotFoldWhatCanChange(source: String) throws {
        let compiled = try ExpressionCompiler().compileExpression(source)
        #expect(compiled.constantValue == nil, "\(source) was folded to \(String(describing: compiled.constantValue))")
    }

    @Test func nowAndRandomAreEvaluatedEachTime() throws {
        let compiler = ExpressionCompiler()
        let random = try compiler.compileExpression("random()")
        let values = try Set((0..<20).map { _ in try random.evaluate().doubleValue! })
        #expect(values.count > 1)
        #expect(values.allSatisfy { (0..<1).contains($0) })

        let now = try compiler.compileExpression("now()")
        guard case .date(let first) = try now.evaluate() else { Issue.record("now() is not a date"); return }
        Thread.sleep(forTimeInterval: 0.002)
        guard case .date(let second) = try now.evaluate() else { Issue.record("now() is not a date"); return }
        #expect(second > first)
    }

    /// An operation that fails on constants is left for evaluation, which fails with the
    /// operation's place (STYLE.md 8: division by zero stays a run-time error).
    @Test(arguments: [
        ("1 + 10 / 0", ExpressionError.Kind.divisionByZero, 5),
        ("2 * (9223372036854775807 + 1)", .overflow, 5),
        ("modulus:by:(1, 0)", .divisionByZero, 1),
        ("sqrt('a')", .type, 1),
        ("{1, 2}[5]", .range, 1),
        ("min({})", .range, 1),
        ("distanceToLocation:fromLocation:(1, 2)", .unsupported, 1),
        ("CAST('x', 'NSNumber')", .type, 1),
        ("-'a'", .type, 1)
    ])
    func errorsAreNotFoldedAway(source: String, kind: ExpressionError.Kind, column: Int) throws {
        let compiled = try ExpressionCompiler().compileExpression(source)
        #expect(compiled.constantValue == nil)
        let error = #expect(throws: ExpressionError.self) { try compiled.evaluate() }
        #expect(error?.kind == kind)
        #expect(error?.location?.column == column)
    }

    @Test(arguments: [
        ("1 < 2", true as Bool?),
        ("'abc' BEGINSWITH[c] 'A'", true),
        ("TRUEPREDICATE AND 1 == 1", true),
        ("FALSEPREDICATE AND $x == 1", false),
        ("TRUEPREDICATE OR $x == 1", true),
        ("NOT (1 IN {2, 3})", true),
        ("$x == 1 OR TRUEPREDICATE", nil),
        ("1 / 0 == 1", nil),
        ("now() > CAST(0, 'NSDate')", nil),
        ("'a' MATCHES '('", nil),
        ("'x' UTI-EQUALS 'x'", nil)
    ])
    func foldsConstantPredicates(source: String, expected: Bool?) throws {
        let compiled = try ExpressionCompiler().compilePredicate(source)
        #expect(compiled.constantValue == expected)
    }

    /// A constant MATCHES pattern that does not compile fails where the comparison runs,
    /// pointing at the pattern (LANGUAGE.md decision 5), and never when it does not run.
    @Test func invalidConstantPatternFailsAtEvaluation() throws {
        let compiler = ExpressionCompiler()
        let compiled = try compiler.compilePredicate("name MATCHES '(' OR $skip == 1")
        let error = #expect(throws: ExpressionError.self) {
            try compiled.evaluate(with: ["name": "x"], variables: ["skip": 1])
        }
        #expect(error?.kind == .regex)
        #expect(error?.location?.column == 14)
        #expect(try compiled.evaluate(with: ["name": nil], variables: ["skip": 1]) == true)
        let shortCircuited = try compiler.compilePredicate("$skip == 1 OR name MATCHES '('")
        #expect(try shortCircuited.evaluate(with: ["name": "x"], variables: ["skip": 1]) == true)
    }

    /// Objects answer through a protocol and may change: a key path into one is not folded.
    @Test func doesNotFoldObjects() throws {
        let ada = try SampleObjects.resolve("Person/1")
        let compiled = try ExpressionCompiler().compileExpression("%@.name", arguments: [ada])
        #expect(compiled.constantValue == nil)
        #expect(try compiled.evaluate() == "Ada")
    }

    // MARK: Contexts and layouts

    @Test func reusesOneContextAcrossEvaluations() throws {
        let compiled = try ExpressionCompiler().compileExpression("$source.price * $rate")
        let context = compiled.makeContext()
        context[variable: "rate"] = 2
        var results: [Value] = []
        for price: Value in [1, 2.5, 10] {
            context[variable: "source"] = ["price": price]
            results.append(try compiled.evaluate(in: context))
        }
        #expect(results.map(\.json) == [.integer(2), .double(5), .integer(20)])

        // SELF can change too.
        let name = try ExpressionCompiler().compileExpression("uppercase(name)")
        let selfContext = name.makeContext()
        for (object, expected) in [("Ada", "ADA"), ("Brian", "BRIAN")] {
            selfContext.object = ["name": .string(object)]
            #expect(try name.evaluate(in: selfContext) == .string(expected))
        }
    }

    @Test func assignmentsPersistInTheContextUntilReset() throws {
        let counter = try ExpressionCompiler().compileExpression("$count := $count + 1")
        let context = counter.makeContext()
        context[variable: "count"] = 0
        for expected: Int64 in 1...3 {
            #expect(try counter.evaluate(in: context) == .integer(expected))
        }
        #expect(context[variable: "count"] == .integer(3))
        context.reset()
        #expect(context[variable: "count"] == nil)
        let error = #expect(throws: ExpressionError.self) { try counter.evaluate(in: context) }
        #expect(error?.kind == .unboundVariable)
        #expect(error?.message == "$count has no value; bind it before evaluating")
        #expect(error?.location?.column == 11)
    }

    @Test func expressionsOfOneCompilerShareALayoutAndAContext() throws {
        let compiler = ExpressionCompiler()
        let total = try compiler.compileExpression("$source.a + $k")
        let check = try compiler.compilePredicate("$source.b == $k")
        let remember = try compiler.compileExpression("$tmp := $source.a * 2")
        let recall = try compiler.compileExpression("$tmp + 1")
        #expect(compiler.layout.names == ["source", "k", "tmp"])
        #expect(total.layout === check.layout)

        let context = total.makeContext()
        context.bind(["source": ["a": 40, "b": 2], "k": 2, "unused": 99])
        #expect(try total.evaluate(in: context) == .integer(42))
        #expect(try check.evaluate(in: context) == true)
        // One expression's assignment is the next one's input.
        #expect(try remember.evaluate(in: context) == .integer(80))
        #expect(try recall.evaluate(in: context) == .integer(81))

        // A variable that a later compilation adds still fits an existing context.
        let late = try compiler.compileExpression("$late * 2")
        context[variable: "late"] = 21
        #expect(try late.evaluate(in: context) == .integer(42))
    }

    @Test func separateCompilersHaveSeparateLayouts() throws {
        let a = try ExpressionCompiler().compileExpression("$x")
        let b = try ExpressionCompiler().compileExpression("$y + $x")
        #expect(a.layout !== b.layout)
        #expect(b.layout.names == ["y", "x"])
        #expect(try b.evaluate(variables: ["x": 1, "y": 2]) == .integer(3))
    }

    // MARK: Selectors registered by embedders

    struct Refused: Error, CustomStringConvertible {
        var description: String { "refused by the host" }
    }

    private static var embedderFunctions: FunctionRegistry {
        var functions = FunctionRegistry.standard
        functions.register("greeting", for: SamplePerson.self) { person, _ in .string("Hello, \(person.name)") }
        functions.register("isOlderThan:", for: SamplePerson.self) { person, arguments in
            guard let years = arguments[0].integerValue else {
                throw ExpressionError(.type, "isOlderThan: needs an integer")
            }
            return .bool(person.age > years)
        }
        functions.register("explode", for: SamplePerson.self) { _, _ in throw Refused() }
        // Overrides the standard selector for strings only.
        functions.register("uppercaseString", on: .string) { target, _ in
            guard case .string(let s) = target else { return .null }
            return .string("<" + s.uppercased() + ">")
        }
        return functions
    }

    @Test func callsSelectorsRegisteredForAnEmbeddersClass() throws {
        let compiler = ExpressionCompiler(functions: Self.embedderFunctions)
        let ada = try SampleObjects.resolve("Person/1")
        let brian = try SampleObjects.resolve("Person/2")
        #expect(try compiler.compileExpression("FUNCTION(SELF, 'greeting')").evaluate(with: ada) == "Hello, Ada")
        let older = try compiler.compilePredicate("FUNCTION($p, 'isOlderThan:', 18) == YES")
        #expect(try older.evaluate(variables: ["p": ada]) == true)
        #expect(try older.evaluate(variables: ["p": brian]) == false)
        // Key paths and selectors mix.
        let friends = try compiler.compileExpression(
            "SUBQUERY(friends, $f, FUNCTION($f, 'isOlderThan:', 20) == YES).name")
        #expect(try friends.evaluate(with: ada) == ["Chloé"])
        // A selector known only at evaluation is resolved in the same registry.
        let dynamic = try compiler.compileExpression("FUNCTION(SELF, $selector)")
        #expect(try dynamic.evaluate(with: brian, variables: ["selector": "greeting"]) == "Hello, Brian")
    }

    @Test func embedderRegistrationsOverrideWithoutChangingTheStandardRegistry() throws {
        let custom = ExpressionCompiler(functions: Self.embedderFunctions)
        #expect(try custom.compileExpression("FUNCTION('abc', 'uppercaseString')").evaluate() == "<ABC>")
        // Numbers still use the standard implementations of other selectors.
        #expect(try custom.compileExpression("FUNCTION(42, 'stringValue')").evaluate() == "42")
        // The standard registry is a value: copying and registering did not change it.
        #expect(try ExpressionCompiler().compileExpression("FUNCTION('abc', 'uppercaseString')").evaluate() == "ABC")
        #expect(!FunctionRegistry.standard.selectors.contains("greeting"))
        #expect(FunctionRegistry.standard.implementations(of: "uppercaseString").count == 1)
        #expect(Self.embedderFunctions.implementations(of: "uppercaseString").count == 2)
    }

    @Test func embedderSelectorErrors() throws {
        let custom = ExpressionCompiler(functions: Self.embedderFunctions)

        // Unknown to the standard registry: a compile-time error naming it.
        let unknown = #expect(throws: ExpressionError.self) {
            try ExpressionCompiler().compileExpression("FUNCTION(SELF, 'greeting')")
        }
        #expect(unknown?.kind == .unknownSelector)
        #expect(
            unknown?.message
                == "unknown selector 'greeting'; FUNCTION calls only registered selectors (docs/functions.md lists them; embedders register more)"
        )
        #expect(unknown?.location?.column == 16)

        // Registered for people, called on a constant string: known at compile time.
        let wrongKind = #expect(throws: ExpressionError.self) {
            try custom.compileExpression("FUNCTION('x', 'greeting')")
        }
        #expect(
            wrongKind?.message == "'greeting' is not registered for a string (\"x\"); it is registered for SamplePerson"
        )

        // … and on a value only known at evaluation.
        let dynamic = try custom.compileExpression("FUNCTION($p, 'greeting')")
        let wrongValue = #expect(throws: ExpressionError.self) { try dynamic.evaluate(variables: ["p": 5]) }
        #expect(
            wrongValue?.message == "'greeting' is not registered for an integer (5); it is registered for SamplePerson")
        #expect(wrongValue?.location?.column == 1)

        // An ExpressionError from the host comes through as it is, placed at the call.
        let typed = try custom.compileExpression("1 + FUNCTION(SELF, 'isOlderThan:', 'x')")
        let hostType = #expect(throws: ExpressionError.self) {
            try typed.evaluate(with: SampleObjects.resolve("Person/1"))
        }
        #expect(hostType?.kind == .type)
        #expect(hostType?.message == "isOlderThan: needs an integer")
        #expect(hostType?.location?.column == 5)

        // Any other error becomes a host error naming the selector.
        let explode = try custom.compileExpression("FUNCTION(SELF, 'explode')")
        let host = #expect(throws: ExpressionError.self) {
            try explode.evaluate(with: SampleObjects.resolve("Person/2"))
        }
        #expect(host?.kind == .host)
        #expect(host?.message == "'explode' failed: refused by the host")
    }

    // MARK: Where errors point

    @Test(arguments: [
        ("1 +\n  2 / 0", 2, 3),
        ("{\n  1,\n\t$nope\n}", 3, 2),
        ("SUBQUERY(xs, $x,\n    $x.y > 1)", 2, 5),
        ("TERNARY(TRUEPREDICATE,\n  'é' + 1,\n  0)", 2, 3)
    ])
    func evaluationErrorsCarryLineAndColumn(source: String, line: Int, column: Int) throws {
        let compiled = try ExpressionCompiler().compileExpression(source)
        let error = #expect(throws: ExpressionError.self) {
            try compiled.evaluate(with: ["xs": [["y": "2"]]])
        }
        #expect(error?.location?.line == line)
        #expect(error?.location?.column == column)
        #expect(error?.source == source)
    }

    @Test func compileErrorsCarryLineAndColumn() throws {
        let selector = #expect(throws: ExpressionError.self) {
            try ExpressionCompiler().compileExpression("FUNCTION(\n  'a',\n  'nope'\n)")
        }
        #expect(selector?.kind == .unknownSelector)
        #expect(selector?.location.map { [$0.line, $0.column] } == [3, 3])

        let cast = #expect(throws: ExpressionError.self) {
            try ExpressionCompiler().compileExpression("CAST(1,\n     'NSThing')")
        }
        #expect(cast?.location.map { [$0.line, $0.column] } == [2, 6])
    }

    @Test func renderedErrorShowsTheLineAndACaret() throws {
        let compiled = try ExpressionCompiler().compileExpression("1 +\n  2 / 0")
        let error = #expect(throws: ExpressionError.self) { try compiled.evaluate() }
        #expect(
            error?.rendered(label: "price") == """
                price: 2:3: integer division by zero (2 / 0); divide by a double (2 / 0.0) for IEEE infinity
                    2 / 0
                    ^~~~~
                """)
    }

    /// A long line is quoted in a window around the column, never whole: an error in a
    /// 40,000-character expression prints a few lines, not the expression.
    @Test func aLongLineIsQuotedAroundTheColumn() throws {
        let source =
            "'" + String(repeating: "a", count: 20_000) + "' + 2 / 0 + '" + String(repeating: "b", count: 20_000) + "'"
        let compiled = try ExpressionCompiler().compileExpression(source)
        let error = try #require(#expect(throws: ExpressionError.self) { try compiled.evaluate() })
        let lines = error.rendered().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0] == "1:20006: integer division by zero (2 / 0); divide by a double (2 / 0.0) for IEEE infinity")
        #expect(
            lines[1] == "  …" + String(repeating: "a", count: 76) + "' + 2 / 0 + '" + String(repeating: "b", count: 71)
                + "…")
        #expect(lines[2] == "   " + String(repeating: " ", count: 80) + "^~~~~")
        // A short line is still quoted whole.
        let short = try ExpressionCompiler().compileExpression("1 + 2 / 0")
        let shortError = try #require(#expect(throws: ExpressionError.self) { try short.evaluate() })
        #expect(
            shortError.rendered()
                == "1:5: integer division by zero (2 / 0); divide by a double (2 / 0.0) for IEEE infinity\n  1 + 2 / 0\n      ^~~~~"
        )
    }

    /// Trees built in code (no source text) compile and evaluate; their errors have no place.
    @Test func compilesTreesBuiltInCode() throws {
        let tree = FormatExpression(.arithmetic(.multiply, .keyPath("price"), .constant(2)))
        let compiled = try ExpressionCompiler().compile(tree)
        #expect(try compiled.evaluate(with: ["price": 21]) == .integer(42))
        let failing = try ExpressionCompiler().compile(
            FormatExpression(.arithmetic(.divide, .constant(1), .variable("zero"))))
        let error = #expect(throws: ExpressionError.self) { try failing.evaluate(variables: ["zero": 0]) }
        #expect(error?.kind == .divisionByZero)
        #expect(error?.location == nil)
    }
}

@Suite struct SlotBindingTests {
    @Test func bindingBySlotIsBindingByName() throws {
        let compiled = try ExpressionCompiler().compileExpression("$source.price * $rate")
        let context = compiled.makeContext()
        let source = try #require(context.layout.existingSlot(for: "source"))
        let rate = try #require(context.layout.existingSlot(for: "rate"))
        #expect(context.layout.existingSlot(for: "missing") == nil)
        context[slot: rate] = 2
        for price in [1, 5, 7] as [Int64] {
            context[slot: source] = ["price": .integer(price)]
            #expect(try compiled.evaluate(in: context) == .integer(price * 2))
            #expect(context[variable: "source"] == ["price": .integer(price)])
        }
        context[slot: rate] = nil
        let error = #expect(throws: ExpressionError.self) { try compiled.evaluate(in: context) }
        #expect(error?.description == "1:17: $rate has no value; bind it before evaluating")
    }
}
