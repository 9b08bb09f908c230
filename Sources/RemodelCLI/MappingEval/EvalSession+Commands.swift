import Foundation
import ExpressionLanguage
import ObjectGraph

extension EvalSession {
    /// One REPL command, as `:help` lists it.
    public struct Command: Sendable {
        /// The names it answers to, the first one canonical (`quit`, `q`).
        public var names: [String]
        /// How it is written: `:load FILE as NAME`.
        public var usage: [String]
        /// One line of help.
        public var summary: String
    }

    /// Every command, in the order `:help` lists them.
    public static let commands: [Command] = [
        Command(names: ["help"], usage: [":help"], summary: "show this help"),
        Command(names: ["quit", "q"], usage: [":quit, :q"], summary: "leave (Ctrl-D also leaves)"),
        Command(
            names: ["example"], usage: [":example"], summary: "bind SELF to the example person (what --example does)"),
        Command(
            names: ["load"], usage: [":load FILE", ":load FILE as NAME"],
            summary: "bind SELF, or $NAME, to the JSON value in FILE"),
        Command(
            names: ["self"], usage: [":self JSON", ":self ENTITY/PK"],
            summary: "bind SELF to a JSON value or a store object (:self alone shows it)"),
        Command(names: ["let"], usage: [":let NAME = JSON"], summary: "bind $NAME to a JSON value"),
        Command(
            names: ["open"], usage: [":open STORE --models PATH"],
            summary: "open a store read-only (--from VERSION names its version)"),
        Command(
            names: ["source"], usage: [":source ENTITY/PK"],
            summary: "bind $source to an object of the open store (Book/9)"),
        Command(
            names: ["mapping"], usage: [":mapping FILE"],
            summary: "load a mapping file (JSON, .xcmappingmodel, .cdm) for the open store"),
        Command(
            names: ["map"], usage: [":map ENTITYMAPPING ENTITY/PK", ":map ENTITYMAPPING"],
            summary: "show what an entity mapping makes of a row (or of its first rows); nothing is written"),
        Command(names: ["unset"], usage: [":unset NAME..."], summary: "remove the binding of $NAME (or of SELF)"),
        Command(names: ["vars"], usage: [":vars"], summary: "list SELF, the variables and the format arguments"),
        Command(
            names: ["args"], usage: [":args JSON-ARRAY"],
            summary: "set the format arguments of %@, %K, %d… (:args [] clears them)"),
        Command(
            names: ["print"], usage: [":print EXPR", ":print --apple EXPR"],
            summary: "show the canonical form of an expression or predicate, or (--apple) the form Apple prints"),
        Command(names: ["ast"], usage: [":ast EXPR"], summary: "show the syntax tree"),
        Command(names: ["type"], usage: [":type EXPR"], summary: "show only the type of the value"),
        Command(
            names: ["time"], usage: [":time EXPR"], summary: "evaluate repeatedly for half a second and show the speed"),
        Command(names: ["reset"], usage: [":reset"], summary: "forget SELF, the variables and the format arguments")
    ]

    /// The text of `:help`.
    public static var helpText: String {
        var lines = [
            "Type an expression (books.@sum.price * 1.03) or a predicate (age > 18 AND name BEGINSWITH[c] 'a');",
            "it is evaluated against SELF and shown with its type. $source means SELF unless you bind it.",
            "A line ending with \\, or with an unclosed ( [ { or quote, continues on the next line.",
            ""
        ]
        let width = commands.flatMap(\.usage).map(\.count).max() ?? 0
        for command in commands {
            for (i, usage) in command.usage.enumerated() {
                let pad = String(repeating: " ", count: width - usage.count + 3)
                lines.append("  " + usage + (i == 0 ? pad + command.summary : ""))
            }
        }
        lines += [
            "",
            #"JSON values may hold dates {"$date": "2001-01-01T00:00:00Z"}, data {"$data": "AQID"}"#,
            #"and sets {"$set": [1, 2]}. Assign with $name := EXPR to keep a computed value."#,
            "Try: :example, then books.@sum.price, or SUBQUERY(books, $b, $b.price > 10).title",
            "With a store: :open Books.sqlite --models Model.xcdatamodeld, :source Book/9, then $source.title;",
            #"{"$object": "Book/9"} in JSON names an object of the open store."#
        ]
        return lines.joined(separator: "\n")
    }

    func executeCommand(_ text: String) -> EvalOutput {
        let body = text.dropFirst()
        let name = String(body.prefix(while: { !$0.isWhitespace }))
        let argument = String(body.dropFirst(name.count)).trimmingWhitespace
        do throws(InputError) {
            switch name {
            case "help": try noArgument(argument, name); return printing(Self.helpText)
            case "quit", "q":
                try noArgument(argument, name)
                return EvalOutput(quit: true)
            case "example":
                try noArgument(argument, name)
                bindObject(ExampleObject.value)
                return printing("SELF = " + EvalFormat.abbreviated(object))
            case "load": return try load(argument)
            case "self": return try selfCommand(argument)
            case "open": return try openCommand(argument)
            case "source": return try sourceCommand(argument)
            case "mapping": return try mappingCommand(argument)
            case "map": return try mapCommand(argument)
            case "let": return try letCommand(argument)
            case "unset": return try unset(argument)
            case "vars": try noArgument(argument, name); return printing(bindingsText)
            case "args": return try args(argument)
            case "print":
                var text = try required(argument, name)
                let apple =
                    text.hasPrefix("--apple") && (text.count == 7 || text.dropFirst(7).first?.isWhitespace == true)
                if apple { text = try required(String(text.dropFirst(7)).trimmingWhitespace, name) }
                let parsed = try parseOnly(text)
                return printing(apple ? parsed.appleForm : parsed.canonicalForm)
            case "ast":
                let parsed = try parseOnly(try required(argument, name))
                switch parsed.tree {
                case .expression(let e): return printing(SyntaxNode.expression(e).dump)
                case .predicate(let p): return printing(SyntaxNode.predicate(p).dump)
                }
            case "type":
                return show(try required(argument, name)) { [$0.value.kind.rawValue] }
            case "time": return time(try required(argument, name))
            case "reset":
                try noArgument(argument, name)
                reset()
                return printing("SELF, variables and arguments cleared")
            default:
                var message = "error: unknown command ':\(name)'"
                if let suggestion = Self.suggestion(for: name) { message += " (did you mean :\(suggestion)?)" }
                return .failure(message + "; :help lists the commands")
            }
        } catch {
            return .failure(error.message.hasPrefix("error: ") ? error.message : "error: " + error.message)
        }
    }

    private func printing(_ text: String) -> EvalOutput {
        EvalOutput(lines: [EvalOutput.Line(.output, text)])
    }

    private func usage(_ name: String) -> String {
        let usages = Self.commands.first { $0.names.contains(name) }?.usage ?? []
        return usages.joined(separator: "  or  ")
    }

    private func noArgument(_ argument: String, _ name: String) throws(InputError) {
        guard argument.isEmpty else { throw InputError(":\(name) takes no argument") }
    }

    private func required(_ argument: String, _ name: String) throws(InputError) -> String {
        guard !argument.isEmpty else { throw InputError("usage: \(usage(name))") }
        return argument
    }

    /// Parses for `:print` and `:ast`, which show a tree without evaluating it.
    private func parseOnly(_ source: String) throws(InputError) -> InputEvaluator.Parsed {
        do {
            return try InputEvaluator.parse(source, arguments: arguments)
        } catch {
            throw InputError(EvalFormat.error(error))
        }
    }

    // MARK: - Bindings

    /// `:load FILE` or `:load FILE as NAME`.
    private func load(_ argument: String) throws(InputError) -> EvalOutput {
        var path = try required(argument, "load")
        var name: String?
        let words = path.split(whereSeparator: \.isWhitespace)
        if words.count >= 3, words[words.count - 2] == "as" {
            name = try Self.variableName(String(words[words.count - 1]))
            let asRange = path.range(of: " as ", options: .backwards) ?? path.range(of: "\tas", options: .backwards)!
            path = String(path[..<asRange.lowerBound]).trimmingWhitespace
        }
        if path.count >= 2, let first = path.first, first == "'" || first == "\"", path.last == first {
            path = String(path.dropFirst().dropLast())
        }
        let value = try jsonValue(fromFile: path)
        if let name {
            bind(name, to: value)
            return printing("$\(name) = " + EvalFormat.abbreviated(value))
        }
        bindObject(value)
        return printing("SELF = " + EvalFormat.abbreviated(value))
    }

    /// `:self JSON`, `:self ENTITY/PK` (an object of the open store), or `:self` to show SELF.
    private func selfCommand(_ argument: String) throws(InputError) -> EvalOutput {
        if Self.isObjectReference(argument) {
            bindObject(try storeObject(argument))
            return printing(Self.describeBinding("SELF", object))
        }
        if !argument.isEmpty { bindObject(try jsonValue(argument)) }
        return printing("SELF = " + EvalFormat.abbreviated(object))
    }

    /// `:source ENTITY/PK`, or `:source` to show what `$source` is.
    private func sourceCommand(_ argument: String) throws(InputError) -> EvalOutput {
        if argument.isEmpty {
            if let value = variables["source"] { return printing(Self.describeBinding("$source", value)) }
            if !object.isNull { return printing("$source = SELF") }
            return .failure("error: $source is not bound; :source ENTITY/PK binds it to an object of the open store")
        }
        guard Self.isObjectReference(argument) else {
            throw InputError("usage: \(usage("source")), such as :source Book/9 (to bind JSON, use :let source = JSON)")
        }
        let value = try storeObject(argument)
        bind("source", to: value)
        return printing(Self.describeBinding("$source", value))
    }

    /// `Book/9`, `Book 9`: an entity name and a primary key.
    static func isObjectReference(_ text: String) -> Bool {
        let words = text.split(whereSeparator: { $0.isWhitespace || $0 == "/" })
        guard words.count == 2, let first = words[0].unicodeScalars.first,
            first == "_" || first.properties.isAlphabetic,
            words[0] != "true", words[0] != "false", words[0] != "null"
        else { return false }
        return Int64(words[1]) != nil
    }

    /// `$source = {"$object":"Book/9"}  (object)`, then, for an object of a store, its
    /// attributes and relationships, one per line, so that you see what key paths it has.
    static func describeBinding(_ name: String, _ value: Value) -> String {
        var lines = ["\(name) = " + EvalFormat.abbreviated(value)]
        guard case .object(let reference) = value, let object = reference.object as? ManagedObject,
            let model = object.managedObjectContext?.store.model
        else { return lines.joined(separator: "\n") }
        let attributes = model.allAttributes(of: object.entity).filter { !$0.isTransient }.map(\.name)
        let relationships = model.allRelationships(of: object.entity).filter { !$0.isTransient }.map(\.name)
        for key in (attributes + relationships).sorted() {
            let shown: String
            do {
                shown = EvalFormat.abbreviated(try object.value(forKey: key), limit: 100)
            } catch {
                shown = "(cannot be read: \(error))"
            }
            lines.append("  .\(key) = " + shown)
        }
        return lines.joined(separator: "\n")
    }

    /// `:open STORE --models PATH [--from VERSION]`, or `:open` to show the open store.
    private func openCommand(_ argument: String) throws(InputError) -> EvalOutput {
        if argument.isEmpty {
            guard let store else { return printing("no store is open; :open STORE --models PATH opens one") }
            return printing(store.summary)
        }
        var paths: [String] = []
        var models: String?
        var version: String?
        var words = try Self.words(argument)[...]
        while let word = words.popFirst() {
            func value(_ option: String) throws(InputError) -> String {
                if word.hasPrefix(option + "=") { return String(word.dropFirst(option.count + 1)) }
                guard let next = words.popFirst(), !next.hasPrefix("--") else {
                    throw InputError("\(option) needs a value; usage: \(usage("open")) [--from VERSION]")
                }
                return next
            }
            if word == "--models" || word.hasPrefix("--models=") {
                models = try value("--models")
            } else if word == "--from" || word.hasPrefix("--from=") {
                version = try value("--from")
            } else if word.hasPrefix("--") {
                throw InputError("unknown option \(word); usage: \(usage("open")) [--from VERSION]")
            } else {
                paths.append(word)
            }
        }
        guard paths.count == 1 else {
            throw InputError(
                paths.isEmpty
                    ? "usage: \(usage("open"))"
                    : ":open takes one store, not \(paths.count) (quote a path with spaces); usage: \(usage("open"))")
        }
        guard let models = models ?? store?.modelsPath else {
            throw InputError(
                ":open needs --models PATH: a *.model.json file, a folder of them, or an .xcdatamodeld folder; usage: \(usage("open"))"
            )
        }
        let dropped = try open(paths[0], models: models, version: version)
        var output = EvalOutput()
        if !dropped.isEmpty {
            output.print(
                "\(dropped.joined(separator: ", ")) unbound: \(dropped.count == 1 ? "it held" : "they held") objects of the store open before"
            )
        }
        output.print(store!.summary)
        return output
    }

    /// Splits command text into words at white space, keeping what is inside '…' or "…"
    /// together (the quotes are removed): `:open "My Store.sqlite" --models m`.
    static func words(_ text: String) throws(InputError) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        for c in text {
            if let q = quote {
                if c == q { quote = nil } else { current.append(c) }
            } else if c == "'" || c == "\"" {
                quote = c
                inWord = true
            } else if c.isWhitespace {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(c)
                inWord = true
            }
        }
        if let quote { throw InputError("unclosed \(quote) in \(text)") }
        if inWord { words.append(current) }
        return words
    }

    /// `:let NAME = JSON`.
    private func letCommand(_ argument: String) throws(InputError) -> EvalOutput {
        guard let equals = argument.firstIndex(of: "=") else { throw InputError("usage: \(usage("let"))") }
        let name = try Self.variableName(String(argument[..<equals]).trimmingWhitespace)
        let json = String(argument[argument.index(after: equals)...]).trimmingWhitespace
        guard !json.isEmpty else { throw InputError("usage: \(usage("let"))") }
        let value: Value
        do {
            value = try jsonValue(json)
        } catch {
            // Text that does not even start like JSON was probably meant as an expression.
            guard let first = json.first, !"{[\"-0123456789".contains(first) else { throw error }
            throw InputError(
                error.message + "\n(:let takes JSON; to keep the value of an expression, evaluate $\(name) := EXPR)")
        }
        bind(name, to: value)
        return printing("$\(name) = " + EvalFormat.abbreviated(value))
    }

    /// `:unset NAME...`.
    private func unset(_ argument: String) throws(InputError) -> EvalOutput {
        let names = try required(argument, "unset").split(whereSeparator: \.isWhitespace).map(String.init)
        var output = EvalOutput()
        for word in names {
            if word == "SELF" {
                if object.isNull { output.fail("error: SELF is not bound", status: .badInput); continue }
                bindObject(.null)
                output.print("SELF unbound")
                continue
            }
            let name: String
            do { name = try Self.variableName(word) } catch {
                output.fail("error: " + error.message, status: .badInput); continue
            }
            if unbind(name) {
                output.print("$\(name) unbound")
            } else {
                output.fail("error: $\(name) is not bound", status: .badInput)
            }
        }
        return output
    }

    /// `:args JSON-ARRAY`, or `:args` to show them.
    private func args(_ argument: String) throws(InputError) -> EvalOutput {
        if !argument.isEmpty {
            let value = try jsonValue(argument)
            guard case .array(let elements) = value else {
                throw InputError(":args takes a JSON array, such as [\"name\", 18], not a \(value.kind.rawValue)")
            }
            setArguments(elements)
        }
        return printing("arguments = " + Value.array(arguments).json.serialized())
    }

    /// What `:vars` prints.
    var bindingsText: String {
        var lines: [String] = []
        if !object.isNull { lines.append("SELF = " + EvalFormat.abbreviated(object)) }
        if !object.isNull && variables["source"] == nil { lines.append("$source = SELF") }
        for name in variables.keys.sorted() {
            lines.append("$\(name) = " + EvalFormat.abbreviated(variables[name]!))
        }
        if !arguments.isEmpty { lines.append("arguments = " + Value.array(arguments).json.serialized()) }
        if let store { lines.append("store = \(store.path) (\(store.model.version), read-only)") }
        if lines.isEmpty { return "nothing is bound; :example, :load, :self, :let, :source and :args bind values" }
        return lines.joined(separator: "\n")
    }

    /// `name` or `$name` as a variable name, without the `$`.
    static func variableName(_ word: String) throws(InputError) -> String {
        let name = word.hasPrefix("$") ? String(word.dropFirst()) : word
        guard let first = name.unicodeScalars.first, first == "_" || first.properties.isAlphabetic && first.isASCII,
            name.unicodeScalars.allSatisfy({
                $0 == "_" || ($0.isASCII && $0.properties.isAlphabetic) || ("0"..."9").contains($0)
            })
        else {
            throw InputError("'\(word)' is not a variable name (letters, digits and _, not starting with a digit)")
        }
        return name
    }

    /// The command closest to a misspelt `name`, if one is close.
    static func suggestion(for name: String) -> String? {
        Suggestion.closest(to: name, among: commands.flatMap(\.names).filter { $0.count > 1 })
    }

    // MARK: - Timing

    /// `:time EXPR`: the value, then how fast it evaluates in a reused context.
    private func time(_ source: String) -> EvalOutput {
        var output = EvalOutput()
        let compiled: InputEvaluator.Compiled
        do {
            let parsed = try InputEvaluator.parse(source, arguments: arguments)
            for warning in parsed.warnings { output.warn(EvalFormat.warning(warning)) }
            compiled = try InputEvaluator.compile(parsed, with: compiler)
        } catch {
            output.fail(EvalFormat.error(error), status: .badInput)
            return output
        }
        let context = compiled.makeContext(object: object)
        let bindings = InputEvaluator.bindings(object: object, variables: variables)
        context.bind(bindings)
        let clock = ContinuousClock()
        var count = 0
        var batch = 1
        let start = clock.now
        var elapsed = Duration.zero
        do {
            output.print(EvalFormat.valueAndType(try compiled.evaluate(in: context)))
            repeat {
                for _ in 0..<batch { _ = try compiled.evaluate(in: context) }
                count += batch
                elapsed = clock.now - start
                // Grow the batch, but not past what the remaining time should take.
                let perEvaluation = elapsed / count
                let remaining = timingDuration - elapsed
                let fits = perEvaluation > .zero ? Int(remaining / perEvaluation) : batch * 2
                batch = max(1, min(batch * 2, fits))
            } while elapsed < timingDuration
        } catch {
            output.fail(EvalFormat.error(error), status: .failed)
            return output
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let nanoseconds = seconds * 1e9 / Double(count)
        output.print(
            "\(Self.grouped(Int((Double(count) / seconds).rounded()))) evaluations/s, "
                + "\(Self.formatted(nanoseconds)) ns per evaluation "
                + "(\(Self.grouped(count)) evaluations in \(Self.formatted(seconds, digits: 2)) s)")
        return output
    }

    /// `1234567` as `1,234,567`.
    static func grouped(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + out
    }

    /// A positive number with `digits` decimals, or fewer significant ones when large.
    static func formatted(_ x: Double, digits: Int = 1) -> String {
        if x >= 100 { return grouped(Int(x.rounded())) }
        let scale = pow(10, Double(digits))
        let rounded = (x * scale).rounded() / scale
        var text = String(rounded)
        if let dot = text.firstIndex(of: ".") {
            let decimals = text.distance(from: dot, to: text.endIndex) - 1
            if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
        }
        return text
    }
}
