import Foundation
import RemodelCLI
import Testing
import TestSupport

/// The `mapping-eval` executable end to end: one-shot evaluation and its exit statuses,
/// piped input, usage errors.
@Suite struct MappingEvalBinaryTests {
    typealias Result = MappingEvalProcess.Result

    func run(_ arguments: String..., stdin: String = "") throws -> Result {
        try MappingEvalProcess.run(arguments, stdin: stdin)
    }

    // MARK: - One-shot

    @Test func oneShotPrintsTheJSONValue() throws {
        #expect(try run("-e", "1 + 2") == Result(status: 0, stdout: "3\n", stderr: ""))
        #expect(try run("-e", "1 + 2", "--type") == Result(status: 0, stdout: "3  (integer)\n", stderr: ""))
        #expect(try run("--example", "-e", "name") == Result(status: 0, stdout: "\"Ada Lovelace\"\n", stderr: ""))
        #expect(
            try run("--example", "-e", "birthday", "--type")
                == Result(status: 0, stdout: "{\"$date\":\"1815-12-10T00:00:00Z\"}  (date)\n", stderr: ""))
        #expect(
            try run("--example", "-e", "age > 18 AND name BEGINSWITH[cd] 'ad'")
                == Result(status: 0, stdout: "true\n", stderr: ""))
        // Values that start with '-' are expressions, not options.
        #expect(try run("-e", "-1 - 1", "--arg", "-2") == Result(status: 0, stdout: "-2\n", stderr: ""))
    }

    @Test func severalExpressionsShareASession() throws {
        #expect(
            try run("-e", "$x := 20 + 1", "-e", "$x * 2", "--type")
                == Result(status: 0, stdout: "21  (integer)\n42  (integer)\n", stderr: ""))
        // The first failure stops, with its status.
        #expect(
            try run("-e", "1", "-e", "1/0", "-e", "2")
                == Result(
                    status: 1, stdout: "1\n",
                    stderr: """
                        error: 1:1: integer division by zero (1 / 0); divide by a double (1 / 0.0) for IEEE infinity
                          1/0
                          ^~~

                        """))
        // Commands work too.
        #expect(
            try run("-e", ":print a  ==  b", "-e", ":ast -x")
                == Result(status: 0, stdout: "a == b\nnegate\n  keyPath x\n", stderr: ""))
        #expect(
            try run("-e", ":nope")
                == Result(status: 2, stdout: "", stderr: "error: unknown command ':nope'; :help lists the commands\n"))
    }

    @Test func exitStatuses() throws {
        // 2: the text is not a valid expression (parse or compile errors).
        #expect(
            try run("-e", "1 +")
                == Result(
                    status: 2, stdout: "",
                    stderr: """
                        error: 1:4: expected an expression, near end of input
                          1 +
                             ^

                        """))
        #expect(
            try run("-e", "FUNCTION(1, 'nope:')")
                == Result(
                    status: 2, stdout: "",
                    stderr: """
                        error: 1:13: unknown selector 'nope:'; FUNCTION calls only registered selectors (docs/functions.md lists them; embedders register more)
                          FUNCTION(1, 'nope:')
                                      ^~~~~~~

                        """))
        // 1: a valid expression failed to evaluate.
        #expect(
            try run("-e", "$missing + 1")
                == Result(
                    status: 1, stdout: "",
                    stderr: """
                        error: 1:1: $missing has no value; bind it before evaluating
                          $missing + 1
                          ^~~~~~~~

                        """))
    }

    @Test func warningsGoToStandardError() throws {
        #expect(
            try run("-e", "TRUEPREDICATE OR FALSEPREDICATE AND TRUEPREDICATE")
                == Result(
                    status: 0, stdout: "true\n",
                    stderr: """
                        warning: 1:18: AND and OR are mixed without parentheses; Remodel binds AND tighter than OR (as C and SQL do), but Apple does not document its order: add parentheses to say what you mean
                          TRUEPREDICATE OR FALSEPREDICATE AND TRUEPREDICATE
                                           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~

                        """))
    }

    @Test func bindings() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("book-\(UUID().uuidString).json")
        try Data(#"{"title": "Dune", "price": 9.5}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(
            try run("--object", file.path, "-e", "$source.price * 2") == Result(status: 0, stdout: "19.0\n", stderr: "")
        )
        #expect(
            try run(
                "--var", "d={\"$date\": \"2001-01-02T00:00:00Z\"}", "--var", "n=2", "-e", "$d", "-e", "$n", "--type")
                == Result(status: 0, stdout: "{\"$date\":\"2001-01-02T00:00:00Z\"}  (date)\n2  (integer)\n", stderr: "")
        )
        #expect(
            try run("--arg", "\"title\"", "--arg", "{\"$set\": [1]}", "--object", file.path, "-e", "{%K, %@}")
                == Result(status: 0, stdout: "[\"Dune\",{\"$set\":[1]}]\n", stderr: ""))
    }

    @Test func badBindingsAreInvalidInput() throws {
        #expect(
            try run("--var", "name=Ada", "-e", "1")
                == Result(
                    status: 2, stdout: "",
                    stderr: """
                        error: --var name: 1:1: invalid JSON: expected a value, found 'Ada'
                          Ada
                          ^
                        (a JSON string needs double quotes: '"Ada"')

                        """))
        #expect(
            try run("--var", "name", "-e", "1")
                == Result(
                    status: 2, stdout: "", stderr: "error: --var name: expected NAME=JSON, such as --var 'rate=1.03'\n")
        )
        #expect(
            try run("--var", "a-b=1", "-e", "1")
                == Result(
                    status: 2, stdout: "",
                    stderr: """
                        error: --var a-b=1: 'a-b' is not a variable name (letters, digits and _, not starting with a digit)

                        """))
        #expect(
            try run("--arg", "[1,", "-e", "1")
                == Result(
                    status: 2, stdout: "",
                    stderr: """
                        error: --arg #1: 1:4: invalid JSON: expected a value, found end of input
                          [1,
                             ^

                        """))
        #expect(
            try run("--object", "/nonexistent.json", "-e", "1")
                == Result(status: 2, stdout: "", stderr: "error: cannot read /nonexistent.json: no such file\n"))
    }

    @Test func usageErrorsExitWith2() throws {
        let usage = """
            Usage: mapping-eval [<bindings>]
                   mapping-eval [<bindings>] -e EXPR [-e EXPR]... [--type]
                   mapping-eval [<bindings>] --jsonl
              See 'mapping-eval --help' for more information.

            """
        #expect(
            try run("--type") == Result(status: 2, stdout: "", stderr: "Error: --type only applies to -e.\n" + usage))
        #expect(
            try run("--jsonl", "-e", "1")
                == Result(
                    status: 2, stdout: "",
                    stderr: "Error: --jsonl reads its expressions from standard input; drop -e.\n" + usage))
        #expect(
            try run("--example", "--object", "x.json")
                == Result(
                    status: 2, stdout: "", stderr: "Error: --example and --object both bind SELF; use one.\n" + usage))
        #expect(
            try run("--bogus") == Result(status: 2, stdout: "", stderr: "Error: Unknown option '--bogus'\n" + usage))
    }

    @Test func helpTeaches() throws {
        let result = try run("--help")
        #expect(result.status == 0)
        #expect(result.stderr == "")
        #expect(
            result.stdout.hasPrefix(
                "OVERVIEW: Evaluate NSExpression/NSPredicate format strings, the language of\nmapping files.\n"))
        for text in [
            "$ mapping-eval --example", "remodel> books.@sum.price * 1.03", "| mapping-eval --jsonl",
            "Exit status: 0 success",
            "BINDINGS:", "--var <NAME=JSON>", "-e, --expression <EXPR>", "--type", "--jsonl"
        ] {
            #expect(result.stdout.contains(text), "\(text)")
        }
    }

    // MARK: - Piped input

    @Test func pipedInputIsTheREPLWithoutPrompts() throws {
        #expect(try run(stdin: "1 + 2\n") == Result(status: 0, stdout: "3  (integer)\n", stderr: ""))
        #expect(try run(stdin: "1 + 2") == Result(status: 0, stdout: "3  (integer)\n", stderr: ""))
        #expect(try run(stdin: "") == Result(status: 0, stdout: "", stderr: ""))
        #expect(
            try run(
                "--example",
                stdin: """
                    :let rate = 1.5
                    $total := books.@sum.price

                    $total * $rate
                    :type birthday
                    :vars
                    """)
                == Result(
                    status: 0,
                    stdout: """
                        $rate = 1.5  (double)
                        42.25  (double)
                        63.375  (double)
                        date
                        SELF = {"address":{"city":"London","country":"GB","street":"12 St James's Square"},"age":36,"birthday":{"$date":"1815-12\
                        -10T00…  (dictionary)
                        $source = SELF
                        $rate = 1.5  (double)
                        $total = 42.25  (double)

                        """, stderr: ""))
    }

    @Test func pipedErrorsGoToStandardErrorAndSetTheStatus() throws {
        // The worst status of the inputs: 1 for an evaluation error…
        #expect(
            try run(stdin: "1/0\n2\n")
                == Result(
                    status: 1, stdout: "2  (integer)\n",
                    stderr: """
                        error: 1:1: integer division by zero (1 / 0); divide by a double (1 / 0.0) for IEEE infinity
                          1/0
                          ^~~

                        """))
        // …2 for invalid input, whatever came before.
        #expect(
            try run(stdin: "1 +\n1/0\n:q\n3\n")
                == Result(
                    status: 2, stdout: "",
                    stderr: """
                        error: 1:4: expected an expression, near end of input
                          1 +
                             ^
                        error: 1:1: integer division by zero (1 / 0); divide by a double (1 / 0.0) for IEEE infinity
                          1/0
                          ^~~

                        """))
    }

    @Test func multiLineInput() throws {
        #expect(
            try run(
                "--example",
                stdin: """
                    SUBQUERY(books, $b,
                      $b.price > 10).title
                    1 + \\
                    2
                    'two
                    lines'
                    :let point = {
                      "x": 1,
                      "y": [2,
                            3]
                    }
                    $point.y[LAST]
                    """)
                == Result(
                    status: 0,
                    stdout: """
                        ["Sketch of the Analytical Engine","Poetical Science"]  (array)
                        3  (integer)
                        "two\\nlines"  (string)
                        $point = {"x":1,"y":[2,3]}  (dictionary)
                        3  (integer)

                        """, stderr: ""))
        // An error on a later line of an input shows that line.
        #expect(
            try run(stdin: "(1 +\n  2 +)\n")
                == Result(
                    status: 2, stdout: "",
                    stderr: """
                        error: 2:6: expected an expression, near ')'
                            2 +)
                               ^

                        """))
        // Input that ends inside an expression is evaluated, and says what is missing.
        #expect(
            try run(stdin: "(1 +\n2\n")
                == Result(
                    status: 2, stdout: "",
                    stderr: """
                        error: 2:2: expected ')' to close '(' at 1:1, near end of input
                          2
                           ^

                        """))
        // A command line ends an unfinished input rather than joining it.
        #expect(
            try run(stdin: "(1 +\n:print 1+1\n")
                == Result(
                    status: 2, stdout: "1 + 1\n",
                    stderr: """
                        error: 1:5: expected an expression, near end of input
                          (1 +
                              ^

                        """))
    }

    @Test func timeReportsSpeed() throws {
        let result = try run(stdin: ":time 2 * 3\n")
        #expect(result.status == 0)
        #expect(result.stderr == "")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.first == "6  (integer)")
        let match = try #require(
            lines.last?.wholeMatch(
                of: /[0-9,]+ evaluations\/s, [0-9.,]+ ns per evaluation \([0-9,]+ evaluations in ([0-9]+\.[0-9]{2}) s\)/
            ),
            "\(result.stdout)")
        // About half a second: at least that, and not much more.
        #expect(try #require(Double(match.output.1)) >= 0.5)
    }

    @Test func theExampleFileIsTheBuiltInExample() throws {
        let file = Repository.root.appendingPathComponent("mappings/examples/person.json")
        #expect(try String(contentsOf: file, encoding: .utf8) == ExampleObject.json + "\n")
        #expect(try run("--object", file.path, "-e", "SELF") == run("--example", "-e", "SELF"))
    }
}
