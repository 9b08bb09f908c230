import ExpressionLanguage

/// `mapping-eval --jsonl`: one JSON request per line in, one compact JSON response per
/// line out. This is the interface tests and other programs use; keep it stable.
///
/// Requests: `{"expression": "…"}` or `{"predicate": "…"}`, with optional `"object"`
/// (SELF), `"variables"` (an object of `$name` values) and `"arguments"` (an array for
/// `%@`, `%K`, `%d`…), all in the JSON encoding of values. Responses:
///
///     {"value":42,"type":"integer"}
///     {"error":{"kind":"syntax","message":"expected an expression, near end of input","line":1,"column":4}}
///
/// `kind` is an ``ExpressionError/Kind`` raw value, or `request` for a request that is
/// not valid (not JSON, not an object, a member missing or of the wrong type); `line` and
/// `column` point into the expression (for `request`, into the request line) and are
/// null when unknown.
///
/// A request with `"print": "canonical"` or `"print": "apple"` is parsed, not evaluated,
/// and answered with the printed form: `{"printed":"a + (b * 2)"}` (Apple's text for
/// `a + b * 2`).
public struct JSONLProtocol {
    /// What a request that does not say otherwise evaluates with (`--object`, `--var`,
    /// `--arg`, `--example`): a request's `"object"` and `"arguments"` replace these, its
    /// `"variables"` are added to these.
    public var object: Value
    public var variables: [String: Value]
    public var arguments: [Value]
    public var functions: FunctionRegistry
    /// Resolves `{"$object": "Book/9"}` in requests (with `--store`: an object of that
    /// store); without it such a reference is a request error.
    public var resolveObject: ((String) throws -> Value)?
    /// Answers `{"map": "ENTITYMAPPING", "source": "ENTITY/PK"}` (with `--store` and
    /// `--mapping`: what the entity mapping makes of that row); without it such a request
    /// is a request error.
    public var map: ((_ entityMapping: String, _ source: String) throws(InputError) -> JSON)?

    public init(
        object: Value = .null, variables: [String: Value] = [:], arguments: [Value] = [],
        functions: FunctionRegistry = .standard
    ) {
        self.object = object
        self.variables = variables
        self.arguments = arguments
        self.functions = functions
    }

    /// The members a request may have.
    public static let members = ["expression", "predicate", "object", "variables", "arguments", "print"]

    /// The response to one request line (without its line break), or nil for a blank line.
    public func response<Bytes: Collection<UInt8>>(to line: Bytes) -> String? {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return nil }
        return response(toRequest: line).serialized()
    }

    /// The response to one request line as JSON.
    func response<Bytes: Collection<UInt8>>(toRequest line: Bytes) -> JSON {
        if let json = try? JSON.parse(line), json.objectValue?["map"] != nil {
            return mapResponse(json)
        }
        let request: Request
        do {
            request = try Request(line, defaults: self)
        } catch {
            return Self.errorResponse(kind: "request", message: error.message, line: error.line, column: error.column)
        }
        if let style = request.print {
            do {
                let parsed = try InputEvaluator.parse(request.source, arguments: request.arguments, mode: request.mode)
                return ["printed": .string(style == .apple ? parsed.appleForm : parsed.canonicalForm)]
            } catch {
                let location = error.location
                return Self.errorResponse(
                    kind: error.kind.rawValue, message: error.message + (error.near.map { ", near \($0)" } ?? ""),
                    line: location?.line, column: location?.column)
            }
        }
        do {
            let evaluation = try InputEvaluator.evaluate(
                request.source, mode: request.mode, object: request.object, variables: request.variables,
                arguments: request.arguments, compiler: ExpressionCompiler(functions: functions))
            return ["value": evaluation.value.json, "type": .string(evaluation.value.kind.rawValue)]
        } catch {
            let e = error.error
            let location = e.location
            return Self.errorResponse(
                kind: e.kind.rawValue, message: e.message + (e.near.map { ", near \($0)" } ?? ""),
                line: location?.line, column: location?.column)
        }
    }

    /// `{"map": "ProductToProduct", "source": "Product/1"}`: the properties the entity
    /// mapping sets for that row, `{"properties": [{"name": …, "expression": …, "value": …,
    /// "type": …} or {"name": …, "expression": …, "error": …}]}`.
    func mapResponse(_ request: JSON) -> JSON {
        guard let members = request.objectValue else { return .null }
        if let unknown = members.keys.first(where: { $0 != "map" && $0 != "source" }) {
            return Self.errorResponse(
                kind: "request",
                message: #"unknown member \#(JSON.string(unknown)); a map request has "map" and "source""#, line: nil,
                column: nil)
        }
        guard let name = members["map"]?.stringValue, let source = members["source"]?.stringValue else {
            return Self.errorResponse(
                kind: "request",
                message: #"a map request has "map" (an entity mapping's name) and "source" (ENTITY/PK), both strings"#,
                line: nil, column: nil)
        }
        guard let map else {
            return Self.errorResponse(
                kind: "request",
                message:
                    "no mapping is loaded; start mapping-eval --jsonl with --store STORE --models PATH --mapping FILE",
                line: nil, column: nil)
        }
        do {
            return try map(name, source)
        } catch {
            return Self.errorResponse(kind: "request", message: error.message, line: nil, column: nil)
        }
    }

    static func errorResponse(kind: String, message: String, line: Int?, column: Int?) -> JSON {
        let details: JSON = [
            "kind": .string(kind), "message": .string(message),
            "line": line.map { .integer(Int64($0)) } ?? .null,
            "column": column.map { .integer(Int64($0)) } ?? .null
        ]
        return ["error": details]
    }

    /// Answers every line of `input` until its end, writing each response with `write`
    /// (which should flush: programs wait for each answer).
    public func run(reading input: LineReader, write: (String) -> Void) {
        while let line = input.readLine() {
            if let response = response(to: line) { write(response) }
        }
    }

    /// A request, decoded and checked.
    struct Request {
        var source: String
        var mode: InputEvaluator.Mode
        var object: Value
        var variables: [String: Value]
        var arguments: [Value]
        /// `"print"`: answer with the printed form instead of the value.
        var print: PrintStyle?

        enum PrintStyle: String { case canonical, apple }

        struct Invalid: Error {
            var message: String
            var line: Int?
            var column: Int?
        }

        init<Bytes: Collection<UInt8>>(_ line: Bytes, defaults: JSONLProtocol) throws(Invalid) {
            let json: JSON
            do {
                json = try JSON.parse(line)
            } catch {
                throw Invalid(message: "invalid JSON: \(error.message)", line: error.line, column: error.column)
            }
            guard let members = json.objectValue else {
                throw Invalid(
                    message:
                        #"a request is a JSON object, such as {"expression": "1 + 2"}, not \#(Self.a(json.kindName))"#)
            }
            if let unknown = members.keys.first(where: { !JSONLProtocol.members.contains($0) }) {
                throw Invalid(
                    message: #"unknown member \#(JSON.string(unknown)); a request has "expression" or "predicate", "#
                        + #"and may have "object", "variables", "arguments" and "print""#)
            }
            switch (members["expression"], members["predicate"]) {
            case (let e?, nil): (source, mode) = (try Self.text(e, "expression"), .expression)
            case (nil, let p?): (source, mode) = (try Self.text(p, "predicate"), .predicate)
            case (nil, nil): throw Invalid(message: #"a request needs "expression" or "predicate""#)
            case (_?, _?): throw Invalid(message: #"a request has "expression" or "predicate", not both"#)
            }
            object = defaults.object
            if let json = members["object"] { object = try Self.value(json, "object", defaults.resolveObject) }
            variables = defaults.variables
            if let json = members["variables"] {
                guard let names = json.objectValue else {
                    throw Invalid(
                        message: #""variables" must be an object of names and values, not \#(Self.a(json.kindName))"#)
                }
                for (name, member) in names {
                    variables[name] = try Self.value(member, "variables", defaults.resolveObject, path: ".\(name)")
                }
            }
            if let json = members["print"] {
                guard let text = json.stringValue, let style = PrintStyle(rawValue: text) else {
                    throw Invalid(message: #""print" must be "canonical" or "apple", not \#(json.serialized())"#)
                }
                print = style
            }
            arguments = defaults.arguments
            if let json = members["arguments"] {
                guard let elements = json.arrayValue else {
                    throw Invalid(message: #""arguments" must be an array, not \#(Self.a(json.kindName))"#)
                }
                arguments = []
                for (i, element) in elements.enumerated() {
                    arguments.append(try Self.value(element, "arguments", defaults.resolveObject, path: "[\(i)]"))
                }
            }
        }

        private static func text(_ json: JSON, _ member: String) throws(Invalid) -> String {
            guard let text = json.stringValue else {
                throw Invalid(message: "\"\(member)\" must be a string, not \(a(json.kindName))")
            }
            return text
        }

        private static func value(
            _ json: JSON, _ member: String, _ resolveObject: ((String) throws -> Value)?, path: String = ""
        ) throws(Invalid) -> Value {
            do {
                return try Value(json: json, resolveObject: resolveObject)
            } catch {
                let message =
                    error.message.hasPrefix(".") || error.message.hasPrefix("[") ? error.message : ": " + error.message
                throw Invalid(message: "\"\(member)\"\(path)\(message)")
            }
        }

        /// `an array`, `a string`, `null`.
        static func a(_ kind: String) -> String {
            if kind == "null" { return kind }
            return (kind.first.map { "aeiou".contains($0) } ?? false ? "an " : "a ") + kind
        }
    }
}
