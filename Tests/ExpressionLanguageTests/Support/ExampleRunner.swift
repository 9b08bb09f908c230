import Foundation
import Testing

@testable import ExpressionLanguage

// What EvaluationTests (JSONL fixtures) and DocumentationExamplesTests (the `eval` blocks
// of docs/) share: the sample objects that `{"$object": "Person/1"}` names, and one way to
// run an expression or predicate and compare the outcome with an expectation.

// MARK: - Sample objects

/// A person of the sample object graph: `{"$object": "Person/1"}` in fixtures and docs.
///
///     Person/1  Ada    36  friends [Person/2, Person/3]  manager nil       tags {"math", "poetry"}
///     Person/2  Brian  17  friends [Person/1]            manager Person/1  tags {}
///     Person/3  Chloé  52  friends []                    manager Person/1  tags {"math"}
///
/// Keys: `name`, `age`, `friends` (array), `manager` (nil or a person), `tags` (set),
/// `nickname` (always nil). Any other key is an ``ExpressionError/Kind/unknownKey`` error.
final class SamplePerson: KeyValueCoding, @unchecked Sendable {
    // `@unchecked`: built once by `SampleObjects` and never changed afterwards.
    let number: Int
    let name: String
    let age: Int64
    let tags: [String]
    fileprivate(set) var friends: [SamplePerson] = []
    fileprivate(set) var manager: SamplePerson?

    init(number: Int, name: String, age: Int64, tags: [String]) {
        self.number = number
        self.name = name
        self.age = age
        self.tags = tags
    }

    func value(forKey key: String) throws -> Value {
        switch key {
        case "name": return .string(name)
        case "age": return .integer(age)
        case "friends": return .array(friends.map { .object(ObjectReference($0)) })
        case "manager": return manager.map { .object(ObjectReference($0)) } ?? .null
        case "tags": return .set(.init(tags.map(Value.string)))
        case "nickname": return .null
        default: throw ExpressionError(.unknownKey, "Person has no key '\(key)'")
        }
    }

    var objectDescription: String { "Person/\(number)" }
    var kindName: String { "Person" }
}

/// A managed object context for FETCH: `{"$object": "Context/main"}`. It holds the three
/// people of ``SamplePerson``.
///
/// The request is an entity name (`'Person'`) or a dictionary
/// `{'entity': 'Person', 'predicate': 'age > 20'}`; the predicate is compiled and
/// evaluated against each person.
final class SampleContext: FetchExecuting, @unchecked Sendable {
    let people: [SamplePerson]

    init(people: [SamplePerson]) { self.people = people }

    func value(forKey key: String) throws -> Value {
        switch key {
        case "name": return "main"
        default: throw ExpressionError(.unknownKey, "Context has no key '\(key)'")
        }
    }

    var objectDescription: String { "Context/main" }
    var kindName: String { "Context" }

    func executeFetch(_ request: Value, countOnly: Bool) throws -> Value {
        var entity: String
        var predicate: CompiledPredicate? = nil
        switch request {
        case .string(let name):
            entity = name
        case .dictionary(let d):
            guard case .string(let name)? = d["entity"] else {
                throw ExpressionError(.host, "a fetch request needs an 'entity'")
            }
            entity = name
            if case .string(let text)? = d["predicate"] {
                predicate = try ExpressionCompiler().compilePredicate(text)
            }
        default:
            throw ExpressionError(.host, "not a fetch request: \(request.kind.rawValue)")
        }
        guard entity == "Person" else { throw ExpressionError(.host, "no entity named '\(entity)'") }
        var found: [Value] = []
        for person in people {
            let object = Value.object(ObjectReference(person))
            if let predicate, try !predicate.evaluate(with: object) { continue }
            found.append(object)
        }
        return countOnly ? .integer(Int64(found.count)) : .array(found)
    }
}

/// The one sample graph, so that `Person/1` is the same object wherever it is named.
enum SampleObjects {
    static let people: [SamplePerson] = {
        let ada = SamplePerson(number: 1, name: "Ada", age: 36, tags: ["math", "poetry"])
        let brian = SamplePerson(number: 2, name: "Brian", age: 17, tags: [])
        let chloe = SamplePerson(number: 3, name: "Chloé", age: 52, tags: ["math"])
        ada.friends = [brian, chloe]
        brian.friends = [ada]
        brian.manager = ada
        chloe.manager = ada
        return [ada, brian, chloe]
    }()

    static let context = SampleContext(people: people)

    /// Resolves `{"$object": "Person/2"}` and `{"$object": "Context/main"}`.
    static func resolve(_ reference: String) throws -> Value {
        if reference == "Context/main" { return .object(ObjectReference(context)) }
        if reference.hasPrefix("Person/"), let n = Int(reference.dropFirst(7)), (1...people.count).contains(n) {
            return .object(ObjectReference(people[n - 1]))
        }
        throw ExpressionError(.host, "no sample object '\(reference)'")
    }

    /// `json` as a value, with sample objects resolved.
    static func value(_ json: JSON) throws(ExpressionError) -> Value {
        try Value(json: json, resolveObject: resolve)
    }
}

// MARK: - Running an example

/// Where an error came from.
enum Phase: String, Sendable {
    case parse, compile, evaluate
}

/// What running an expression or a predicate gave.
enum Outcome {
    case value(Value)
    case error(ExpressionError, Phase)

    /// The outcome in the fixture format, for failure messages: paste-ready.
    var fixtureJSON: String {
        switch self {
        case .value(let v):
            return #""value": \#(v.json.serialized()), "type": "\#(v.kind.rawValue)""#
        case .error(let e, let phase):
            let location = e.location
            return #""error": {"kind": "\#(e.kind.rawValue)", "message": \#(JSON.string(e.message).serialized()), "#
                + #""line": \#(location.map { String($0.line) } ?? "null"), "#
                + #""column": \#(location.map { String($0.column) } ?? "null"), "phase": "\#(phase.rawValue)"}"#
        }
    }
}

/// The input of one example.
struct ExampleInput {
    var source: String
    var isPredicate: Bool
    var object: Value = .null
    var variables: [String: Value] = [:]
    var arguments: [Value] = []
}

enum ExampleRunner {
    /// Parses, compiles (with the standard registry) and evaluates, recording which phase failed.
    static func run(_ input: ExampleInput) -> Outcome {
        let compiler = ExpressionCompiler()
        if input.isPredicate {
            let tree: FormatPredicate
            do { tree = try FormatPredicate(parsing: input.source, arguments: input.arguments) } catch {
                return .error(error, .parse)
            }
            let compiled: CompiledPredicate
            do { compiled = try compiler.compile(tree, source: input.source) } catch { return .error(error, .compile) }
            do { return .value(.bool(try compiled.evaluate(with: input.object, variables: input.variables))) } catch {
                return .error(error, .evaluate)
            }
        } else {
            let tree: FormatExpression
            do { tree = try FormatExpression(parsing: input.source, arguments: input.arguments) } catch {
                return .error(error, .parse)
            }
            let compiled: CompiledExpression
            do { compiled = try compiler.compile(tree, source: input.source) } catch { return .error(error, .compile) }
            do { return .value(try compiled.evaluate(with: input.object, variables: input.variables)) } catch {
                return .error(error, .evaluate)
            }
        }
    }

    /// Whether `source` is a predicate: it parses as one (an expression never does, since
    /// a predicate needs a comparison operator outside any parentheses of a function).
    static func isPredicate(_ source: String, arguments: [Value]) -> Bool {
        (try? FormatParser(source, arguments: arguments).parsePredicate()) != nil
    }
}

/// What an example expects.
enum Expectation {
    /// A value (as DESIGN.md's JSON) and its kind (`integer`, `double`, …).
    case value(JSON, type: String)
    /// An error; nil fields are not checked.
    case error(kind: String?, message: String, line: Int?, column: Int?, phase: String?)

    /// The differences between `outcome` and this expectation; empty when it holds.
    func mismatches(_ outcome: Outcome) -> [String] {
        switch (self, outcome) {
        case (.value(let expected, let type), .value(let actual)):
            var problems: [String] = []
            do {
                let expectedJSON = try SampleObjects.value(expected).json
                if expectedJSON != actual.json {
                    problems.append("value \(actual.json.serialized()), expected \(expectedJSON.serialized())")
                }
            } catch {
                problems.append("the expected value is not valid: \(error)")
            }
            if actual.kind.rawValue != type { problems.append("type \(actual.kind.rawValue), expected \(type)") }
            return problems
        case (.value, .error(let error, let phase)):
            return ["\(phase.rawValue) error instead of a value: \(error)"]
        case (.error(_, let message, _, _, _), .value(let v)):
            return ["a value (\(v.json.serialized()) \(v.kind.rawValue)) instead of the error \"\(message)\""]
        case (.error(let kind, let message, let line, let column, let phase), .error(let error, let actualPhase)):
            var problems: [String] = []
            if let kind, kind != error.kind.rawValue {
                problems.append("kind \(error.kind.rawValue), expected \(kind)")
            }
            if message != error.message { problems.append("message \"\(error.message)\", expected \"\(message)\"") }
            if let column, column != error.location?.column {
                problems.append("column \(error.location.map { String($0.column) } ?? "none"), expected \(column)")
            }
            if let line, line != error.location?.line {
                problems.append("line \(error.location.map { String($0.line) } ?? "none"), expected \(line)")
            }
            if let phase, phase != actualPhase.rawValue {
                problems.append("phase \(actualPhase.rawValue), expected \(phase)")
            }
            return problems
        }
    }
}
