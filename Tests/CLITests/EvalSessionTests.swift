import Foundation
import RemodelCLI
import Testing

/// The REPL's session as a library: every command and kind of input, with exact output.
@Suite struct EvalSessionTests {
    /// Runs `inputs` in order in one session; returns the last input's output.
    @discardableResult
    func run(_ session: EvalSession, _ inputs: String...) -> EvalOutput {
        var last = EvalOutput()
        for input in inputs { last = session.execute(input) }
        return last
    }

    func example() -> EvalSession {
        let session = EvalSession()
        session.bindObject(ExampleObject.value)
        return session
    }

    func scratchFile(_ name: String, _ contents: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "eval-session-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data(contents.utf8).write(to: url)
        return url.path
    }

    // MARK: - Expressions and predicates

    @Test(arguments: [
        ("1 + 2", "3  (integer)\n"),
        ("5 / 2", "2  (integer)\n"),
        ("5.0 / 2", "2.5  (double)\n"),
        ("name", "\"Ada Lovelace\"  (string)\n"),
        ("books.@sum.price * 1.03", "43.5175  (double)\n"),
        ("age > 18 AND name BEGINSWITH[cd] 'ad'", "true  (boolean)\n"),
        ("age < 18", "false  (boolean)\n"),
        ("TRUEPREDICATE", "true  (boolean)\n"),
        ("birthday", "{\"$date\":\"1815-12-10T00:00:00Z\"}  (date)\n"),
        ("address", "{\"city\":\"London\",\"country\":\"GB\",\"street\":\"12 St James's Square\"}  (dictionary)\n"),
        ("books.title[LAST]", "\"Poetical Science\"  (string)\n"),
        (
            "SUBQUERY(books, $b, $b.price > 10).title",
            "[\"Sketch of the Analytical Engine\",\"Poetical Science\"]  (array)\n"
        ),
        ("$source.age + 1", "37  (integer)\n"),
        ("missing", "null  (null)\n"),
        ("CAST('12.50', 'NSDecimalNumber')", "12.5  (decimal)\n"),
        ("  \n  ", "")
    ])
    func evaluates(input: String, output: String) {
        let result = example().execute(input)
        #expect(result.output == output)
        #expect(result.diagnostics == "")
        #expect(result.status == .success)
    }

    @Test func valuesOfEveryKind() {
        let session = EvalSession()
        session.bind("d", to: .date(Date(timeIntervalSinceReferenceDate: 0)))
        session.bind("b", to: .data(Data([1, 2, 3])))
        session.bind("s", to: .set([1, 2]))
        #expect(run(session, "$d").output == "{\"$date\":\"2001-01-01T00:00:00Z\"}  (date)\n")
        #expect(run(session, "$b").output == "{\"$data\":\"AQID\"}  (data)\n")
        #expect(run(session, "$s").output == "{\"$set\":[1,2]}  (set)\n")
        #expect(run(session, "{1, 'a', nil}").output == "[1,\"a\",null]  (array)\n")
        #expect(run(session, "nil").output == "null  (null)\n")
    }

    @Test func parseErrorsHaveACaretAndStatus2() {
        let result = EvalSession().execute("1 +")
        #expect(result.output == "")
        #expect(
            result.diagnostics == """
                error: 1:4: expected an expression, near end of input
                  1 +
                     ^

                """)
        #expect(result.status == .badInput)
    }

    @Test func theParseThatGotFurtherIsReported() {
        // As a predicate, `name ==` fails at its end; as an expression, at `==`.
        #expect(
            EvalSession().execute("name ==").diagnostics == """
                error: 1:8: expected an expression, near end of input
                  name ==
                         ^

                """)
        // Both fail at `b`: the expression's error wins a tie.
        #expect(
            EvalSession().execute("a b").diagnostics == """
                error: 1:3: unexpected 'b' after a complete expression, near 'b'
                  a b
                    ^

                """)
        // Both fail at AND, which only predicates have: the predicate's error wins.
        #expect(
            EvalSession().execute("a AND b == 1").diagnostics == """
                error: 1:3: expected a comparison operator (==, <, IN, LIKE, …), near 'AND'
                  a AND b == 1
                    ^~~

                """)
    }

    @Test func errorsOnALaterLineShowThatLine() {
        let result = EvalSession().execute("(1 +\n 2 +\n )")
        #expect(
            result.diagnostics == """
                error: 3:2: expected an expression, near ')'
                   )
                   ^

                """)
    }

    @Test func evaluationErrorsHaveStatus1() {
        let result = EvalSession().execute("1/0")
        #expect(
            result.diagnostics == """
                error: 1:1: integer division by zero (1 / 0); divide by a double (1 / 0.0) for IEEE infinity
                  1/0
                  ^~~

                """)
        #expect(result.status == .failed)
        #expect(
            EvalSession().execute("$nothing").diagnostics == """
                error: 1:1: $nothing has no value; bind it before evaluating
                  $nothing
                  ^~~~~~~~

                """)
    }

    @Test func warningsComeBeforeTheValue() {
        let result = example().execute("age > 18 AND name BEGINSWITH 'A' OR age < 3")
        #expect(
            result.lines == [
                EvalOutput.Line(
                    .diagnostics,
                    """
                    warning: 1:1: AND and OR are mixed without parentheses; Remodel binds AND tighter than OR \
                    (as C and SQL do), but Apple does not document its order: add parentheses to say what you mean
                      age > 18 AND name BEGINSWITH 'A' OR age < 3
                      ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
                    """),
                EvalOutput.Line(.output, "true  (boolean)")
            ])
        #expect(result.status == .success)
    }

    @Test func assignmentsPersist() {
        let session = example()
        #expect(run(session, "$total := books.@sum.price").output == "42.25  (double)\n")
        #expect(run(session, "$total * 2").output == "84.5  (double)\n")
        #expect(session.variables == ["total": .double(42.25)])
        // SUBQUERY's variable is not an assignment and does not leak.
        run(session, "SUBQUERY(books, $b, $b.price > 10).@count")
        #expect(session.variables.keys.sorted() == ["total"])
        // A failed evaluation keeps nothing.
        run(session, "($kept := 1) + 1/0")
        #expect(session.variables["kept"] == nil)
    }

    @Test func sourceIsSelfUnlessBound() {
        let session = example()
        #expect(run(session, "$source.name").output == "\"Ada Lovelace\"  (string)\n")
        run(session, ":let source = {\"name\": \"Grace\"}")
        #expect(run(session, "$source.name").output == "\"Grace\"  (string)\n")
        #expect(run(session, "name").output == "\"Ada Lovelace\"  (string)\n")
    }

    @Test func formatArguments() {
        let session = example()
        #expect(
            run(session, ":args [\"name\", \"Ada Lovelace\"]").output == "arguments = [\"name\",\"Ada Lovelace\"]\n")
        #expect(run(session, "%K == %@").output == "true  (boolean)\n")
        #expect(run(session, ":args").output == "arguments = [\"name\",\"Ada Lovelace\"]\n")
        #expect(run(session, ":args []").output == "arguments = []\n")
        #expect(
            run(session, "%@").diagnostics == """
                error: 1:1: %@ has no argument (0 given); pass one argument per format specifier, near '%@'
                  %@
                  ^~

                """)
        #expect(
            run(session, ":args {\"a\": 1}").diagnostics
                == "error: :args takes a JSON array, such as [\"name\", 18], not a dictionary\n")
    }

    // MARK: - Commands

    @Test func help() {
        let result = EvalSession().execute(":help")
        #expect(
            result.output == #"""
                Type an expression (books.@sum.price * 1.03) or a predicate (age > 18 AND name BEGINSWITH[c] 'a');
                it is evaluated against SELF and shown with its type. $source means SELF unless you bind it.
                A line ending with \, or with an unclosed ( [ { or quote, continues on the next line.

                  :help                          show this help
                  :quit, :q                      leave (Ctrl-D also leaves)
                  :example                       bind SELF to the example person (what --example does)
                  :load FILE                     bind SELF, or $NAME, to the JSON value in FILE
                  :load FILE as NAME
                  :self JSON                     bind SELF to a JSON value or a store object (:self alone shows it)
                  :self ENTITY/PK
                  :let NAME = JSON               bind $NAME to a JSON value
                  :open STORE --models PATH      open a store read-only (--from VERSION names its version)
                  :source ENTITY/PK              bind $source to an object of the open store (Book/9)
                  :mapping FILE                  load a mapping file (JSON, .xcmappingmodel, .cdm) for the open store
                  :map ENTITYMAPPING ENTITY/PK   show what an entity mapping makes of a row (or of its first rows); nothing is written
                  :map ENTITYMAPPING
                  :unset NAME...                 remove the binding of $NAME (or of SELF)
                  :vars                          list SELF, the variables and the format arguments
                  :args JSON-ARRAY               set the format arguments of %@, %K, %d… (:args [] clears them)
                  :print EXPR                    show the canonical form of an expression or predicate, or (--apple) the form Apple prints
                  :print --apple EXPR
                  :ast EXPR                      show the syntax tree
                  :type EXPR                     show only the type of the value
                  :time EXPR                     evaluate repeatedly for half a second and show the speed
                  :reset                         forget SELF, the variables and the format arguments

                JSON values may hold dates {"$date": "2001-01-01T00:00:00Z"}, data {"$data": "AQID"}
                and sets {"$set": [1, 2]}. Assign with $name := EXPR to keep a computed value.
                Try: :example, then books.@sum.price, or SUBQUERY(books, $b, $b.price > 10).title
                With a store: :open Books.sqlite --models Model.xcdatamodeld, :source Book/9, then $source.title;
                {"$object": "Book/9"} in JSON names an object of the open store.

                """#)
        // Every command is listed.
        for command in EvalSession.commands {
            #expect(result.output.contains(":" + command.names[0]))
        }
    }

    @Test func quit() {
        #expect(EvalSession().execute(":quit") == EvalOutput(quit: true))
        #expect(EvalSession().execute(":q") == EvalOutput(quit: true))
        #expect(
            EvalSession().execute(":q now")
                == EvalOutput(lines: [.init(.diagnostics, "error: :q takes no argument")], status: .badInput))
    }

    @Test func exampleCommand() {
        let session = EvalSession()
        #expect(
            session.execute(":example").output == """
                SELF = {"address":{"city":"London","country":"GB","street":"12 St James's Square"},"age":36,"birthday":{"$date":"1815-12\
                -10T00…  (dictionary)

                """)
        #expect(session.object == ExampleObject.value)
    }

    @Test func load() throws {
        let path = try scratchFile(
            "book.json", #"{"title": "Dune", "price": 9.5, "published": {"$date": "1965-08-01T00:00:00Z"}}"#)
        let session = EvalSession()
        #expect(
            run(session, ":load \(path)").output
                == "SELF = {\"price\":9.5,\"published\":{\"$date\":\"1965-08-01T00:00:00Z\"},\"title\":\"Dune\"}  (dictionary)\n"
        )
        #expect(run(session, "price * 2").output == "19.0  (double)\n")
        #expect(
            run(session, ":load \(path) as book").output
                == "$book = {\"price\":9.5,\"published\":{\"$date\":\"1965-08-01T00:00:00Z\"},\"title\":\"Dune\"}  (dictionary)\n"
        )
        #expect(run(session, "$book.title").output == "\"Dune\"  (string)\n")
        // Quotes allow spaces in the path.
        let spaced = try scratchFile("a book.json", "[1, 2]")
        #expect(run(session, ":load '\(spaced)' as list").output == "$list = [1,2]  (array)\n")
    }

    @Test func loadErrors() throws {
        let session = EvalSession()
        #expect(run(session, ":load").diagnostics == "error: usage: :load FILE  or  :load FILE as NAME\n")
        #expect(
            run(session, ":load /nonexistent/x.json").diagnostics
                == "error: cannot read /nonexistent/x.json: no such file\n")
        #expect(run(session, ":load /tmp").diagnostics == "error: cannot read /tmp: it is a directory\n")
        let bad = try scratchFile("bad.json", "{\"a\":\n  [1,,2]}")
        #expect(
            run(session, ":load \(bad)").diagnostics
                == "error: \(bad): 2:6: invalid JSON: expected a value, found ','\n")
        let badDate = try scratchFile("date.json", #"{"when": [{"$date": 5}]}"#)
        #expect(
            run(session, ":load \(badDate)").diagnostics == """
                error: \(badDate): .when[0]: "$date" expects an ISO 8601 date-time string such as "2001-01-01T00:00:00Z", not 5

                """)
        #expect(
            run(session, ":load \(bad) as 2x").diagnostics
                == "error: '2x' is not a variable name (letters, digits and _, not starting with a digit)\n")
        #expect(run(session, ":load \(bad)").status == .badInput)
        #expect(session.object == .null)
    }

    @Test func selfCommand() {
        let session = EvalSession()
        #expect(run(session, ":self").output == "SELF = null  (null)\n")
        #expect(run(session, ":self {\"a\": [1, 2.0]}").output == "SELF = {\"a\":[1,2.0]}  (dictionary)\n")
        #expect(run(session, "a[LAST]").output == "2.0  (double)\n")
        #expect(run(session, ":self").output == "SELF = {\"a\":[1,2.0]}  (dictionary)\n")
        #expect(
            run(session, ":self {\"a\": }").diagnostics == """
                error: 1:7: invalid JSON: expected a value, found '}'
                  {"a": }
                        ^

                """)
    }

    @Test func letCommand() {
        let session = EvalSession()
        #expect(
            run(session, ":let when = {\"$date\": \"2001-01-02T00:00:00Z\"}").output
                == "$when = {\"$date\":\"2001-01-02T00:00:00Z\"}  (date)\n")
        #expect(run(session, ":let $bytes = {\"$data\": \"AQID\"}").output == "$bytes = {\"$data\":\"AQID\"}  (data)\n")
        #expect(
            run(session, ":let tags = {\"$set\": [\"a\", \"b\", \"a\"]}").output
                == "$tags = {\"$set\":[\"a\",\"b\"]}  (set)\n")
        #expect(run(session, "$tags.@count").output == "2  (integer)\n")
        #expect(run(session, "$when > CAST(0, 'NSDate')").output == "true  (boolean)\n")
        #expect(
            run(session, ":let x = [1,").diagnostics == """
                error: 1:4: invalid JSON: expected a value, found end of input
                  [1,
                     ^

                """)
        #expect(
            run(session, ":let x = 1 + 2").diagnostics == """
                error: 1:3: invalid JSON: expected end of input, found '+'
                  1 + 2
                    ^

                """)
        #expect(
            run(session, ":let x = books.@count").diagnostics == """
                error: 1:1: invalid JSON: expected a value, found 'books.'
                  books.@count
                  ^
                (:let takes JSON; to keep the value of an expression, evaluate $x := EXPR)

                """)
        #expect(run(session, ":let x").diagnostics == "error: usage: :let NAME = JSON\n")
        #expect(run(session, ":let x =").diagnostics == "error: usage: :let NAME = JSON\n")
        #expect(
            run(session, ":let a.b = 1").diagnostics
                == "error: 'a.b' is not a variable name (letters, digits and _, not starting with a digit)\n")
        #expect(
            run(session, ":let when = {\"$date\": \"yesterday\"}").diagnostics.hasPrefix("error: \"$date\" expects"))
    }

    @Test func varsAndUnset() {
        let session = EvalSession()
        #expect(
            run(session, ":vars").output
                == "nothing is bound; :example, :load, :self, :let, :source and :args bind values\n")
        run(session, ":self {\"n\": 1}", ":let b = 2", ":let a = \"x\"", ":args [3]")
        #expect(
            run(session, ":vars").output == """
                SELF = {"n":1}  (dictionary)
                $source = SELF
                $a = "x"  (string)
                $b = 2  (integer)
                arguments = [3]

                """)
        #expect(run(session, ":vars now").diagnostics == "error: :vars takes no argument\n")
        let unset = run(session, ":unset a $b c")
        #expect(
            unset.lines == [
                .init(.output, "$a unbound"), .init(.output, "$b unbound"),
                .init(.diagnostics, "error: $c is not bound")
            ])
        #expect(unset.status == .badInput)
        #expect(run(session, ":unset SELF").output == "SELF unbound\n")
        #expect(run(session, ":unset SELF").diagnostics == "error: SELF is not bound\n")
        #expect(run(session, ":unset").diagnostics == "error: usage: :unset NAME...\n")
        #expect(run(session, ":vars").output == "arguments = [3]\n")
    }

    @Test func reset() {
        let session = example()
        run(session, ":let x = 1", ":args [1]", "$y := 2")
        #expect(run(session, ":reset").output == "SELF, variables and arguments cleared\n")
        #expect(session.object == .null && session.variables.isEmpty && session.arguments.isEmpty)
        #expect(
            run(session, ":vars").output
                == "nothing is bound; :example, :load, :self, :let, :source and :args bind values\n")
    }

    @Test func printShowsTheCanonicalForm() {
        let session = EvalSession()
        #expect(
            run(session, ":print name   BEGINSWITH[cd]   'ad' and age>18").output
                == "name BEGINSWITH[cd] \"ad\" AND age > 18\n")
        #expect(run(session, ":print (1 + 2) * 3").output == "(1 + 2) * 3\n")
        // As Apple's Foundation prints the same tree.
        #expect(run(session, ":print --apple isMale == YES AND score > 10.0").output == "isMale == 1 AND score > 10\n")
        #expect(run(session, ":print --apple a + b * 2").output == "a + (b * 2)\n")
        #expect(run(session, ":print --apple").status == .badInput)
        #expect(run(session, ":print $x := 2 ** 3 ** 2").output == "$x := 2 ** 3 ** 2\n")
        #expect(run(session, ":print").diagnostics == "error: usage: :print EXPR  or  :print --apple EXPR\n")
        #expect(
            run(session, ":print 1 +").diagnostics == """
                error: 1:4: expected an expression, near end of input
                  1 +
                     ^

                """)
    }

    @Test func astShowsTheTree() {
        let session = EvalSession()
        #expect(
            run(session, ":ast name BEGINSWITH[cd] \"ad\" AND age > 18").output == """
                AND
                  comparison BEGINSWITH[cd]
                    keyPath name
                    constant "ad"  (string)
                  comparison >
                    keyPath age
                    constant 18  (integer)

                """)
        #expect(
            run(session, ":ast FUNCTION(name, 'componentsSeparatedByString:', ' ')[LAST]").output == """
                index [LAST]
                  FUNCTION
                    keyPath name
                    constant "componentsSeparatedByString:"  (string)
                    constant " "  (string)

                """)
        #expect(
            run(session, ":ast $x := {1, -2, $y} ").output == """
                assign $x
                  aggregate {…} of 3
                    constant 1  (integer)
                    constant -2  (integer)
                    variable $y

                """)
        #expect(
            run(session, ":ast TERNARY(NOT ANY a IN {1}, SELF, sqrt(4) - -b)").output == """
                TERNARY
                  NOT
                    comparison ANY IN
                      keyPath a
                      aggregate {…} of 1
                        constant 1  (integer)
                  SELF
                  arithmetic -
                    function sqrt:
                      constant 4  (integer)
                    negate
                      keyPath b

                """)
        #expect(
            run(session, ":ast SUBQUERY(books, $b, $b.price > 10 OR FALSEPREDICATE).@count").output == """
                keyPath @count
                  SUBQUERY $b
                    keyPath books
                    OR
                      comparison >
                        keyPath price
                          variable $b
                        constant 10  (integer)
                      FALSEPREDICATE

                """)
        #expect(
            run(session, ":ast CAST(x[0], 'NSString')").output == """
                CAST
                  index
                    keyPath x
                    constant 0  (integer)
                  constant "NSString"  (string)

                """)
        #expect(run(session, ":ast").diagnostics == "error: usage: :ast EXPR\n")
    }

    @Test func type() {
        let session = example()
        #expect(run(session, ":type birthday").output == "date\n")
        #expect(run(session, ":type age > 1").output == "boolean\n")
        #expect(run(session, ":type 1/0").status == .failed)
        #expect(run(session, ":type").diagnostics == "error: usage: :type EXPR\n")
    }

    @Test func time() throws {
        let session = example()
        session.timingDuration = .milliseconds(20)
        let result = run(session, ":time books.@sum.price")
        #expect(result.lines.count == 2)
        #expect(result.lines.first == EvalOutput.Line(.output, "42.25  (double)"))
        let report = try #require(result.lines.last?.text)
        #expect(
            report.wholeMatch(
                of: /[0-9,]+ evaluations\/s, [0-9.,]+ ns per evaluation \([0-9,]+ evaluations in [0-9]+\.[0-9]{2} s\)/)
                != nil, "\(report)")
        #expect(
            run(session, ":time 1/0").lines == [
                .init(
                    .diagnostics,
                    """
                    error: 1:1: integer division by zero (1 / 0); divide by a double (1 / 0.0) for IEEE infinity
                      1/0
                      ^~~
                    """)
            ])
        #expect(run(session, ":time 1/0").status == .failed)
        #expect(run(session, ":time 1 +").status == .badInput)
    }

    @Test func unknownCommands() {
        #expect(
            EvalSession().execute(":foo").diagnostics == "error: unknown command ':foo'; :help lists the commands\n")
        #expect(
            EvalSession().execute(":lod x").diagnostics
                == "error: unknown command ':lod' (did you mean :load?); :help lists the commands\n")
        #expect(EvalSession().execute(":").diagnostics == "error: unknown command ':'; :help lists the commands\n")
        #expect(EvalSession().execute(":foo").status == .badInput)
    }

    // MARK: - Completion

    @Test func completions() throws {
        let session = example()
        session.bind("total", to: 1)
        #expect(session.completions(line: ":l", wordStart: 1, word: "l") == ["let ", "load "])
        #expect(session.completions(line: "$to", wordStart: 1, word: "to") == ["total"])
        #expect(session.completions(line: "$s", wordStart: 1, word: "s") == ["source"])
        #expect(session.completions(line: "addr", wordStart: 0, word: "addr") == ["address"])
        #expect(
            session.completions(line: "address.c", wordStart: 0, word: "address.c") == [
                "address.city", "address.country"
            ])
        #expect(session.completions(line: "books.ti", wordStart: 0, word: "books.ti") == ["books.title"])
        #expect(session.completions(line: "books.@s", wordStart: 0, word: "books.@s") == ["books.@sum"])
        #expect(session.completions(line: "books.@sum.p", wordStart: 0, word: "books.@sum.p") == ["books.@sum.price"])
        #expect(session.completions(line: "1 + a", wordStart: 4, word: "a") == ["address", "age"])
        let file = try scratchFile("person.json", "{}")
        let directory = (file as NSString).deletingLastPathComponent
        #expect(
            session.completions(line: ":load \(directory)/pe", wordStart: 6, word: "\(directory)/pe") == ["\(file) "])
        #expect(session.completions(line: ":load /tm", wordStart: 6, word: "/tm") == ["/tmp/"])
    }
}
