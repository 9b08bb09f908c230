import ArgumentParser
import ExpressionLanguage
import Migration
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

            With a Core Data store (written by Apple's Core Data or by Remodel): --store STORE \
            --models PATH opens it read-only as the model version it matches (PATH: an \
            .xcdatamodeld folder, a *.model.json file or a folder of them), --source Book/9 \
            binds $source to the object with primary key 9, and {"$object": "Book/9"} in JSON \
            names one. In the REPL: :open STORE --models PATH, then :source Book/9.

            JSON values keep integer vs double; dates are {"$date": "2001-01-01T00:00:00Z"}, \
            data {"$data": "<base64>"}, sets {"$set": [...]}. $source means SELF unless \
            bound, so the expressions of a mapping file work as they are.

            Exit status: 0 success, 1 an evaluation failed, 2 invalid input (usage, parse \
            error, bad JSON, unreadable file). See docs/mapping-eval.md.
            """
    )

    @Option(
        name: [.customShort("e"), .customLong("expression")], parsing: .unconditionalSingleValue,
        help: ArgumentHelp(
            "Evaluate EXPR (an expression or a predicate), print its value as JSON and exit. Repeatable: evaluated in order, in one session.",
            valueName: "EXPR"))
    public var expressions: [String] = []

    @Flag(help: "With -e, follow each value with two spaces and its type: 3  (integer).")
    public var type = false

    @OptionGroup(title: "Bindings")
    public var bindings: EvalBindingOptions

    @Flag(help: "Read one JSON request per line from standard input and write one JSON response per line.")
    public var jsonl = false

    public init() {}

    public func validate() throws {
        if jsonl && !expressions.isEmpty {
            throw ValidationError("--jsonl reads its expressions from standard input; drop -e.")
        }
        if type && expressions.isEmpty { throw ValidationError("--type only applies to -e.") }
    }

    public func run() throws {
        let session = EvalSession()
        session.policies = Self.policies
        do {
            try bindings.bind(session)
        } catch {
            writeError("error: " + error.message)
            throw ExitStatus.badInput.code
        }
        if jsonl {
            var variables = session.variables
            // $manager reads --store as it does in the REPL.
            if let manager = session.storeManager, variables["manager"] == nil { variables["manager"] = manager }
            var protocolHandler = JSONLProtocol(
                object: session.object, variables: variables, arguments: session.arguments, functions: session.functions
            )
            if session.mapping != nil {
                protocolHandler.map = { name, source throws(InputError) in
                    let (_, properties) = try session.mapped(name, source: source)
                    return [
                        "properties": .array(
                            properties.map { property -> JSON in
                                let expression = property.expression.map(JSON.string) ?? .null
                                switch property.result {
                                case .success(let value):
                                    return [
                                        "name": .string(property.name), "expression": expression, "value": value.json,
                                        "type": .string(value.kind.rawValue)
                                    ]
                                case .failure(let error):
                                    return [
                                        "name": .string(property.name), "expression": expression,
                                        "error": .string(error.message)
                                    ]
                                }
                            })
                    ]
                }
            }
            protocolHandler.resolveObject = { [store = session.store] reference in
                guard let store else {
                    throw ExpressionError(
                        .host,
                        "no store is open to find \(reference) in; start mapping-eval --jsonl with --store STORE --models PATH"
                    )
                }
                return try store.resolve(reference)
            }
            protocolHandler.run(reading: LineReader()) { response in
                FileHandle.standardOutput.write(Data((response + "\n").utf8))
            }
            return
        }
        if !expressions.isEmpty {
            let status = evaluateAll(in: session)
            if status != .success { throw status.code }
            return
        }
        let editor = LineEditor()
        if editor.isInteractive {
            var banner =
                "mapping-eval: type an expression or a predicate; :help lists the commands, :quit or Ctrl-D leaves."
            if bindings.example {
                banner += "\nSELF is the example person; try books.@sum.price or name BEGINSWITH[c] \"ada\"."
            }
            LineEditor.writeToTerminal(banner)
        }
        let status = EvalREPL(session: session, editor: editor).run()
        if status != .success { throw status.code }
    }

    /// Evaluates each -e in order; stops at the first failure and returns its status.
    func evaluateAll(in session: EvalSession) -> ExitStatus {
        for expression in expressions {
            if expression.trimmingWhitespace.hasPrefix(":") {
                // A REPL command (:print, :ast, …): print what it prints.
                let output = session.execute(expression)
                for line in output.lines { EvalREPL.writeToStandardStreams(line) }
                if output.status != .success { return output.status }
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
        return .success
    }

    private func writeError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Parses the command line, runs, and exits: 0 on success, 1 when an evaluation
    /// failed, 2 for invalid input, including usage errors (which argument-parser would
    /// end with 64). `--help` prints to standard output and exits 0. A project's own
    /// `mapping-eval` passes its `policies`: a loaded mapping's check and dry run use them,
    /// as its own `mapping-migrate` does (``MigrateCommand/main(environment:arguments:)``).
    public static func main(_ arguments: [String]? = nil, policies: PolicyRegistry = PolicyRegistry()) -> Never {
        Self.policies = policies
        runAndExit(arguments)
    }

    // Set once, before parsing, by the executable's main.
    nonisolated(unsafe) static var policies = PolicyRegistry()
}

/// What the session starts with, in every mode: SELF, `$variables`, format arguments.
public struct EvalBindingOptions: ParsableArguments {
    @Flag(help: "Bind SELF (and $source) to the bundled example person.")
    public var example = false

    @Option(
        name: .customLong("object"),
        help: ArgumentHelp("Bind SELF (and $source) to the JSON value in FILE.", valueName: "FILE"))
    public var objectFile: String?

    @Option(
        name: .customLong("var"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp(
            "Bind $NAME to a JSON value (strings need their quotes: --var 'name=\"Ada\"'). Repeatable.",
            valueName: "NAME=JSON"))
    public var variables: [String] = []

    @Option(
        name: .customLong("arg"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp("Add a format argument for %@, %K, %d… (JSON). Repeatable, in order.", valueName: "JSON"))
    public var arguments: [String] = []

    @Option(
        help: ArgumentHelp(
            "Open the Core Data store at STORE read-only (needs --models); {\"$object\": \"Book/9\"} in JSON then names its objects.",
            valueName: "STORE"))
    public var store: String?

    @Option(
        help: ArgumentHelp(
            "The model versions for --store: a *.model.json file, a folder of them, or an .xcdatamodeld folder.",
            valueName: "PATH"))
    public var models: String?

    @Option(
        help: ArgumentHelp(
            "With --store, open it as this version of --models instead of the one it matches.", valueName: "VERSION"))
    public var from: String?

    @Option(
        help: ArgumentHelp("Bind $source to the object ENTITY/PK of --store, such as Book/9.", valueName: "ENTITY/PK"))
    public var source: String?

    @Option(
        help: ArgumentHelp(
            "Load this mapping file for --store (what :mapping does), for :map and {\"map\": …} requests.",
            valueName: "FILE"))
    public var mapping: String?

    @Option(
        name: .customLong("self"),
        help: ArgumentHelp("Bind SELF to the object ENTITY/PK of --store.", valueName: "ENTITY/PK"))
    public var selfObject: String?

    public init() {}

    public func validate() throws {
        let selfOptions = [(example, "--example"), (objectFile != nil, "--object"), (selfObject != nil, "--self")]
            .filter(\.0).map(\.1)
        if selfOptions.count > 1 {
            let names = selfOptions.dropLast().joined(separator: ", ") + " and " + selfOptions.last!
            throw ValidationError("\(names) \(selfOptions.count == 2 ? "both" : "all") bind SELF; use one.")
        }
        if store != nil && models == nil {
            throw ValidationError(
                "--store needs --models PATH: a *.model.json file, a folder of them, or an .xcdatamodeld folder.")
        }
        if store == nil {
            for (given, option) in [
                (models != nil, "--models"), (from != nil, "--from"), (source != nil, "--source"),
                (selfObject != nil, "--self"),
                (mapping != nil, "--mapping")
            ] where given {
                throw ValidationError("\(option) needs --store STORE.")
            }
        }
        for (value, option) in [(source, "--source"), (selfObject, "--self")] {
            if let value, !EvalSession.isObjectReference(value) {
                throw ValidationError("\(option) \(value): expected ENTITY/PK, such as \(option) Book/9.")
            }
        }
    }

    /// Opens --store, then binds --example / --object / --self, --var, --arg and --source
    /// in `session`.
    public func bind(_ session: EvalSession) throws(InputError) {
        if let store, let models { try session.open(store, models: models, version: from) }
        if let mapping {
            let loaded = session.execute(":mapping \(mapping)")
            if loaded.status != .success {
                throw InputError(
                    loaded.diagnostics.trimmingWhitespace.replacingOccurrences(of: "error: ", with: "--mapping: "))
            }
        }
        if example { session.bindObject(ExampleObject.value) }
        if let objectFile { session.bindObject(try session.jsonValue(fromFile: objectFile)) }
        if let selfObject {
            do {
                session.bindObject(try session.storeObject(selfObject))
            } catch {
                throw InputError(Self.prefixed("--self", selfObject, error.message))
            }
        }
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
                session.bind(name, to: try session.jsonValue(json))
            } catch {
                throw InputError("--var \(name): " + error.message + Self.quotingHint(json))
            }
        }
        var values: [Value] = []
        for (i, argument) in arguments.enumerated() {
            do {
                values.append(try session.jsonValue(argument))
            } catch {
                throw InputError("--arg #\(i + 1): " + error.message + Self.quotingHint(argument))
            }
        }
        session.setArguments(values)
        if let source {
            do {
                session.bind("source", to: try session.storeObject(source))
            } catch {
                throw InputError(Self.prefixed("--source", source, error.message))
            }
        }
    }

    /// `--source Book/99: no such object…`: the option before a message that may already
    /// start with the object's name.
    private static func prefixed(_ option: String, _ reference: String, _ message: String) -> String {
        let name = reference.split(whereSeparator: { $0.isWhitespace || $0 == "/" }).joined(separator: "/")
        return message.hasPrefix(name + ": ") ? "\(option) " + message : "\(option) \(reference): " + message
    }

    /// A hint for text that was probably meant as a JSON string.
    private static func quotingHint(_ json: String) -> String {
        guard let first = json.first, first.isLetter, json != "true", json != "false", json != "null" else { return "" }
        return "\n(a JSON string needs double quotes: '\"\(json)\"')"
    }
}
