import ExpressionLanguage

/// Parses, compiles and evaluates one input of `mapping-eval`: an expression or a
/// predicate. The REPL, `-e` and `--jsonl` all go through here, so they agree.
///
///     let evaluation = try InputEvaluator.evaluate("age > 18", object: ["age": 36])
///     evaluation.value   // .bool(true)
public enum InputEvaluator {
    /// How an input is read.
    public enum Mode: Sendable {
        /// As a predicate when it parses as one, else as an expression (the REPL, `-e`).
        case automatic
        case expression
        case predicate
    }

    /// A parsed input: its tree and the parser's warnings.
    public struct Parsed {
        public enum Tree {
            case expression(FormatExpression)
            case predicate(FormatPredicate)
        }

        public var tree: Tree
        public var source: String
        public var warnings: [ParseWarning]

        public var isPredicate: Bool {
            if case .predicate = tree { return true }
            return false
        }

        /// The canonical format string of the tree.
        public var canonicalForm: String {
            switch tree {
            case .expression(let e): e.description
            case .predicate(let p): p.description
            }
        }

        /// What Apple's Foundation prints for the tree (``FormatExpression/appleFormat``).
        public var appleForm: String {
            switch tree {
            case .expression(let e): e.appleFormat
            case .predicate(let p): p.appleFormat
            }
        }

        /// The `$name`s that `:=` assigns anywhere in the tree, in order of appearance.
        public var assignedVariables: [String] {
            var names: [String] = []
            func visit(_ node: SyntaxNode) {
                if case .expression(let e) = node, case .assignment(let name, _) = e.kind, !names.contains(name) {
                    names.append(name)
                }
                node.children.forEach(visit)
            }
            switch tree {
            case .expression(let e): visit(.expression(e))
            case .predicate(let p): visit(.predicate(p))
            }
            return names
        }
    }

    /// A compiled input, ready to evaluate any number of times.
    public struct Compiled {
        public enum Code {
            case expression(CompiledExpression)
            case predicate(CompiledPredicate)
        }

        public var code: Code
        public var parsed: Parsed

        public func makeContext(object: Value) -> EvaluationContext {
            switch code {
            case .expression(let e): e.makeContext(object: object)
            case .predicate(let p): p.makeContext(object: object)
            }
        }

        /// Evaluates in `context`; a predicate's answer is a boolean value.
        @inline(__always)
        public func evaluate(in context: EvaluationContext) throws(ExpressionError) -> Value {
            switch code {
            case .expression(let e): try e.evaluate(in: context)
            case .predicate(let p): .bool(try p.evaluate(in: context))
            }
        }
    }

    /// What one evaluation produced.
    public struct Evaluation {
        public var value: Value
        public var parsed: Parsed
        /// The values of the variables the input assigned with `:=`.
        public var assignments: [(name: String, value: Value)]
    }

    /// An error and the phase it happened in; the phase decides the exit status.
    public struct Failure: Error {
        public enum Phase: Sendable {
            /// Parsing or compiling: the text is not a valid input (exit status 2).
            case parse
            /// Evaluating a valid input failed (exit status 1).
            case evaluation
        }

        public var error: ExpressionError
        public var phase: Phase
        /// The parser's warnings, when the text parsed.
        public var warnings: [ParseWarning]

        public init(_ error: ExpressionError, phase: Phase, warnings: [ParseWarning] = []) {
            self.error = error
            self.phase = phase
            self.warnings = warnings
        }
    }

    /// Parses `source`. In ``Mode/automatic`` mode a predicate is tried first, then an
    /// expression; when both fail, the error of the parse that got further is thrown. On
    /// a tie the expression's error wins (most inputs are expressions), unless the
    /// expression stopped at AND or OR, which only a predicate has: `a AND b == 1` says
    /// that a comparison operator is missing after `a`.
    public static func parse(_ source: String, arguments: [Value] = [], mode: Mode = .automatic) throws(ExpressionError)
        -> Parsed
    {
        func asPredicate() throws(ExpressionError) -> Parsed {
            let parser = FormatParser(source, arguments: arguments)
            let predicate = try parser.parsePredicate()
            return Parsed(tree: .predicate(predicate), source: source, warnings: parser.warnings)
        }
        func asExpression() throws(ExpressionError) -> Parsed {
            let parser = FormatParser(source, arguments: arguments)
            let expression = try parser.parseExpression()
            return Parsed(tree: .expression(expression), source: source, warnings: parser.warnings)
        }
        switch mode {
        case .expression: return try asExpression()
        case .predicate: return try asPredicate()
        case .automatic:
            let predicateError: ExpressionError
            do { return try asPredicate() } catch { predicateError = error }
            let expressionError: ExpressionError
            do { return try asExpression() } catch { expressionError = error }
            throw further(predicateError, expressionError)
        }
    }

    /// Of two parse errors, the one that got further into the text.
    static func further(_ predicateError: ExpressionError, _ expressionError: ExpressionError) -> ExpressionError {
        if expressionError.kind == .tooDeep { return expressionError }
        if predicateError.kind == .tooDeep { return predicateError }
        let p = predicateError.range?.lowerBound ?? -1
        let e = expressionError.range?.lowerBound ?? -1
        if p != e { return p > e ? predicateError : expressionError }
        let connectives = ["'AND'", "'OR'", "'&&'", "'||'"]
        return connectives.contains(expressionError.near?.uppercased() ?? "") ? predicateError : expressionError
    }

    /// Compiles a parsed input with `compiler`.
    public static func compile(_ parsed: Parsed, with compiler: ExpressionCompiler) throws(ExpressionError) -> Compiled
    {
        switch parsed.tree {
        case .expression(let e):
            Compiled(code: .expression(try compiler.compile(e, source: parsed.source)), parsed: parsed)
        case .predicate(let p):
            Compiled(code: .predicate(try compiler.compile(p, source: parsed.source)), parsed: parsed)
        }
    }

    /// Parses, compiles and evaluates `source` against `object` with `variables` bound.
    ///
    /// `$source` means `object` unless `variables` binds it, so that the expressions of a
    /// mapping file (`$source.price * 1.03`) work as they are against a sample object.
    public static func evaluate(
        _ source: String, mode: Mode = .automatic, object: Value = .null, variables: [String: Value] = [:],
        arguments: [Value] = [], compiler: ExpressionCompiler = ExpressionCompiler()
    ) throws(Failure) -> Evaluation {
        let parsed: Parsed
        do {
            parsed = try parse(source, arguments: arguments, mode: mode)
        } catch {
            throw Failure(error, phase: .parse)
        }
        let compiled: Compiled
        do {
            compiled = try compile(parsed, with: compiler)
        } catch {
            throw Failure(error, phase: .parse, warnings: parsed.warnings)
        }
        let context = compiled.makeContext(object: object)
        context.bind(bindings(object: object, variables: variables))
        let value: Value
        do {
            value = try compiled.evaluate(in: context)
        } catch {
            throw Failure(error, phase: .evaluation, warnings: parsed.warnings)
        }
        var assignments: [(name: String, value: Value)] = []
        for name in compiled.parsed.assignedVariables {
            if let assigned = context[variable: name] { assignments.append((name, assigned)) }
        }
        return Evaluation(value: value, parsed: compiled.parsed, assignments: assignments)
    }

    /// The variables an evaluation sees: `variables`, plus `$source` bound to `object`
    /// when `variables` does not bind it and there is an object.
    public static func bindings(object: Value, variables: [String: Value]) -> [String: Value] {
        guard !object.isNull, variables["source"] == nil else { return variables }
        var all = variables
        all["source"] = object
        return all
    }
}
