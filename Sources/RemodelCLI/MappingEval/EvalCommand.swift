import ArgumentParser
import ExpressionLanguage
import Foundation

/// `mapping-eval`: the REPL, one-shot evaluation (`-e`) and the `--jsonl` protocol.
///
/// Exit statuses: 0 success; 1 an evaluation failed; 2 invalid input (usage, a parse
/// error, bad JSON, an unreadable file).
public struct EvalCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "mapping-eval",
        abstract: "Evaluate NSExpression/NSPredicate format strings, the language of mapping files.",
        usage: """
            mapping-eval [<bindings>]
            mapping-eval [<bindings>] -e EXPR [-e EXPR]... [--type]
            mapping-eval [<bindings>] --jsonl
            """,
        discussion: """
            Without -e or --jsonl, mapping-eval is a REPL: type an expression or a \
            predicate and see its value and type. :help lists the commands (:load, :let, \
            :print, :ast, :time, …). From a pipe it reads the same inputs without prompts.

            Start with the bundled example person (name, age, birthday, address, books):
              $ mapping-eval --example
              remodel> books.@sum.price * 1.03
              43.5175  (double)
              remodel> name BEGINSWITH[cd] "ad" AND age > 18
              true  (boolean)

            One-shot, for scripts: each -e prints its value as JSON on one line.
              $ mapping-eval --example -e 'SUBQUERY(books, $b, $b.price > 10).title'
              ["Sketch of the Analytical Engine","Poetical Science"]
              $ mapping-eval --example --var 'rate=1.03' -e 'books.@sum.price * $rate'
              43.5175
              $ mapping-eval --object mappings/examples/person.json -e 'address.city'
              "London"
              $ mapping-eval --arg '"age"' --arg 30 --example -e '%K > %@' --type
              true  (boolean)
              $ echo '5 / 2' | mapping-eval
              2  (integer)

            For programs, one JSON request per line in, one JSON line out:
              $ echo '{"expression": "a * 2", "object": {"a": 21}}' | mapping-eval --jsonl
              {"value":42,"type":"integer"}

            JSON values keep integer vs double; dates are {"$date": "2001-01-01T00:00:00Z"}, \
            data {"$data": "<base64>"}, sets {"$set": [...]}. $source means SELF unless \
            bound, so the expressions of a mapping file work as they are.

            Exit status: 0 success, 1 an evaluation failed, 2 invalid input (usage, parse \
            error, bad JSON, unreadable file). See docs/mapping-eval.md.
            """
    )

    @Option(
        name: [.customShort("e"), .customLong("expression")], parsing: .unconditionalSingleValue,
        help: ArgumentHelp("Evaluate EXPR (an expression or a predicate), print its value as JSON and exit. Repeatable: evaluated in order, in one session.", valueName: "EXPR"))
    public var expressions: [String] = []

    @Flag(help: "With -e, follow each value with two spaces and its type: 3  (integer).")
    public var type = false

    @OptionGroup(title: "Bindings")
    public var bindings: EvalBindingOptions

    @Flag(help: "Read one JSON request per line from standard input and write one JSON response per line.")
    public var jsonl = false

    public init() {}

    public func validate() throws {
        if jsonl && !expressions.isEmpty { throw ValidationError("--jsonl reads its expressions from standard input; drop -e.") }
        if type && expressions.isEmpty { throw ValidationError("--type only applies to -e.") }
    }

    public func run() throws {
        let session = EvalSession()
        do {
            try bindings.bind(session)
        } catch {
            writeError("error: " + error.message)
            throw ExitCode(2)
        }
        if jsonl {
            let protocolHandler = JSONLProtocol(object: session.object, variables: session.variables, arguments: session.arguments)
            protocolHandler.run(reading: LineReader()) { response in
                FileHandle.standardOutput.write(Data((response + "\n").utf8))
            }
            return
        }
        if !expressions.isEmpty {
            let status = evaluateAll(in: session)
            if status != 0 { throw ExitCode(status) }
            return
        }
        let editor = LineEditor()
        if editor.isInteractive {
            var banner = "mapping-eval: type an expression or a predicate; :help lists the commands, :quit or Ctrl-D leaves."
            if bindings.example {
                banner += "\nSELF is the example person; try books.@sum.price or name BEGINSWITH[c] \"ada\"."
            }
            LineEditor.writeToTerminal(banner)
        }
        let status = EvalREPL(session: session, editor: editor).run()
        if status != 0 { throw ExitCode(status) }
    }

    /// Evaluates each -e in order; stops at the first failure and returns its status.
    func evaluateAll(in session: EvalSession) -> Int32 {
        for expression in expressions {
            if expression.trimmingWhitespace.hasPrefix(":") {
                // A REPL command (:print, :ast, …): print what it prints.
                let output = session.execute(expression)
                for line in output.lines { EvalREPL.writeToStandardStreams(line) }
                if output.status != 0 { return output.status }
                continue
            }
            do {
                let evaluation = try session.evaluate(expression)
                for warning in evaluation.parsed.warnings { writeError(EvalFormat.warning(warning)) }
                let text = type ? EvalFormat.valueAndType(evaluation.value) : evaluation.value.json.serialized()
                FileHandle.standardOutput.write(Data((text + "\n").utf8))
            } catch {
                for warning in error.warnings { writeError(EvalFormat.warning(warning)) }
                writeError(EvalFormat.error(error.error))
                return EvalFormat.status(error)
            }
        }
        return 0
    }

    private func writeError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Parses the command line, runs, and exits: 0 on success, 1 when an evaluation
    /// failed, 2 for invalid input, including usage errors (which argument-parser would
    /// end with 64). `--help` prints to standard output and exits 0.
    public static func main(_ arguments: [String]? = nil) -> Never {
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
            terminate(0)
        } catch let code as ExitCode {
            terminate(code.rawValue)
        } catch {
            let message = fullMessage(for: error)
            if exitCode(for: error) == .success {
                FileHandle.standardOutput.write(Data((message + "\n").utf8))
                terminate(0)
            }
            FileHandle.standardError.write(Data((message + "\n").utf8))
            terminate(2)
        }
    }

    private static func terminate(_ status: Int32) -> Never {
        Foundation.exit(status)
    }
}

/// What the session starts with, in every mode: SELF, `$variables`, format arguments.
public struct EvalBindingOptions: ParsableArguments {
    @Flag(help: "Bind SELF (and $source) to the bundled example person.")
    public var example = false

    @Option(name: .customLong("object"), help: ArgumentHelp("Bind SELF (and $source) to the JSON value in FILE.", valueName: "FILE"))
    public var objectFile: String?

    @Option(
        name: .customLong("var"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp("Bind $NAME to a JSON value (strings need their quotes: --var 'name=\"Ada\"'). Repeatable.", valueName: "NAME=JSON"))
    public var variables: [String] = []

    @Option(
        name: .customLong("arg"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp("Add a format argument for %@, %K, %d… (JSON). Repeatable, in order.", valueName: "JSON"))
    public var arguments: [String] = []

    public init() {}

    public func validate() throws {
        if example && objectFile != nil { throw ValidationError("--example and --object both bind SELF; use one.") }
    }

    /// Binds --example / --object, --var and --arg in `session`.
    public func bind(_ session: EvalSession) throws(InputError) {
        if example { session.bindObject(ExampleObject.value) }
        if let objectFile { session.bindObject(try JSONInput.value(fromFile: objectFile)) }
        for binding in variables {
            guard let equals = binding.firstIndex(of: "=") else {
                throw InputError("--var \(binding): expected NAME=JSON, such as --var 'rate=1.03'")
            }
            let name: String
            do {
                name = try EvalSession.variableName(String(binding[..<equals]))
            } catch {
                throw InputError("--var \(binding): " + error.message)
            }
            let json = String(binding[binding.index(after: equals)...])
            do {
                session.bind(name, to: try JSONInput.value(from: json))
            } catch {
                throw InputError("--var \(name): " + error.message + Self.quotingHint(json))
            }
        }
        var values: [Value] = []
        for (i, argument) in arguments.enumerated() {
            do {
                values.append(try JSONInput.value(from: argument))
            } catch {
                throw InputError("--arg #\(i + 1): " + error.message + Self.quotingHint(argument))
            }
        }
        session.setArguments(values)
    }

    /// A hint for text that was probably meant as a JSON string.
    private static func quotingHint(_ json: String) -> String {
        guard let first = json.first, first.isLetter, json != "true", json != "false", json != "null" else { return "" }
        return "\n(a JSON string needs double quotes: '\"\(json)\"')"
    }
}
