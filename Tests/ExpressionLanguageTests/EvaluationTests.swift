import Foundation
import Testing

@testable import ExpressionLanguage

// The evaluator against the rules of shared/spec/LANGUAGE.md (A4–A7 and the Decisions),
// as tables: one JSONL file per area in Fixtures/, one test case per line.
//
// A line is one object:
//
//     {"id": "arith-001", "expression": "5 / 2", "value": 2, "type": "integer"}
//     {"id": "cmp-010", "predicate": "self > 3", "object": 4, "value": true, "type": "boolean"}
//     {"id": "err-001", "expression": "1 / 0",
//      "error": {"kind": "divisionByZero", "message": "…", "column": 1}}
//
// - `expression` or `predicate`: the text (a predicate's value is true or false);
// - `object` (SELF), `variables` (name → value), `arguments` (format arguments for `%@`,
//   `%K`, `%d`…): values in DESIGN.md's JSON encoding; `{"$object": "Person/1"}` names
//   the sample objects of Support/ExampleRunner.swift;
// - `value` and `type`: the exact value (in the same encoding, so `2` and `2.0` differ)
//   and its kind;
// - or `error`: the exact `kind`, `message` and `column`, and optionally `line` and
//   `phase` (`parse`, `compile` or `evaluate`: when the error must happen);
// - `note`: free text, ignored.

/// One line of a fixture file.
struct EvaluationCase: Sendable, Identifiable, CustomTestStringConvertible {
    let id: String
    let file: String
    let line: Int
    /// The line's JSON, or why it could not be read.
    let content: Result<JSON, FixtureError>

    var testDescription: String { id }

    struct FixtureError: Error, Sendable, CustomStringConvertible {
        var description: String
    }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures")

    /// Every line of every `*.jsonl` file in Fixtures/, in file and line order.
    static let all: [EvaluationCase] = {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var cases: [EvaluationCase] = []
        for file in files.filter({ $0.hasSuffix(".jsonl") }).sorted() {
            guard let text = try? String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8) else {
                cases.append(
                    EvaluationCase(
                        id: file, file: file, line: 0,
                        content: .failure(FixtureError(description: "unreadable"))))
                continue
            }
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                guard !trimmed.isEmpty else { continue }
                let place = "\(file):\(index + 1)"
                do {
                    let json = try JSON.parse(trimmed)
                    let id = json["id"]?.stringValue ?? place
                    cases.append(EvaluationCase(id: id, file: file, line: index + 1, content: .success(json)))
                } catch {
                    cases.append(
                        EvaluationCase(
                            id: place, file: file, line: index + 1,
                            content: .failure(FixtureError(description: "\(error)"))))
                }
            }
        }
        return cases
    }()

    /// The input and the expectation of the line.
    func parsed() throws -> (ExampleInput, Expectation) {
        let json = try content.get()
        func fail(_ message: String) -> FixtureError { FixtureError(description: "\(file):\(line): \(message)") }
        let known: Set<String> = [
            "id", "expression", "predicate", "object", "variables", "arguments",
            "value", "type", "error", "note"
        ]
        for key in json.objectValue?.keys ?? [] where !known.contains(key) { throw fail("unknown field '\(key)'") }

        var input: ExampleInput
        if let text = json["expression"]?.stringValue {
            input = ExampleInput(source: text, isPredicate: false)
        } else if let text = json["predicate"]?.stringValue {
            input = ExampleInput(source: text, isPredicate: true)
        } else {
            throw fail("needs \"expression\" or \"predicate\"")
        }
        if let object = json["object"] { input.object = try SampleObjects.value(object) }
        if let variables = json["variables"] {
            guard case .dictionary(let d) = try SampleObjects.value(variables) else {
                throw fail("variables must be an object")
            }
            input.variables = d
        }
        if let arguments = json["arguments"] {
            guard let items = arguments.arrayValue else { throw fail("arguments must be an array") }
            input.arguments = try items.map { item throws in try SampleObjects.value(item) }
        }

        if let error = json["error"] {
            guard let message = error["message"]?.stringValue, let kind = error["kind"]?.stringValue,
                let column = error["column"]?.integerValue
            else {
                throw fail("an error needs \"kind\", \"message\" and \"column\"")
            }
            return (
                input,
                .error(
                    kind: kind, message: message, line: error["line"]?.integerValue.map(Int.init),
                    column: Int(column), phase: error["phase"]?.stringValue)
            )
        }
        guard let value = json["value"], let type = json["type"]?.stringValue else {
            throw fail("needs \"value\" and \"type\", or \"error\"")
        }
        return (input, .value(value, type: type))
    }
}

@Suite struct EvaluationTests {
    @Test(arguments: EvaluationCase.all)
    func fixture(_ testCase: EvaluationCase) throws {
        let (input, expectation) = try testCase.parsed()
        let outcome = ExampleRunner.run(input)
        let problems = expectation.mismatches(outcome)
        #expect(
            problems.isEmpty,
            "\(testCase.file):\(testCase.line) \(input.source)\n  \(problems.joined(separator: "\n  "))\n  actual: \(outcome.fixtureJSON)"
        )
    }

    @Test func fixtureIDsAreUniqueAndPresent() {
        var seen: [String: String] = [:]
        for c in EvaluationCase.all {
            #expect(c.id != "\(c.file):\(c.line)", "\(c.file):\(c.line) has no id")
            if let other = seen[c.id] { Issue.record("id \(c.id) is used at \(other) and \(c.file):\(c.line)") }
            seen[c.id] = "\(c.file):\(c.line)"
        }
        #expect(EvaluationCase.all.count >= 400)
    }

    /// Every file the brief names exists, so an area cannot silently go missing.
    @Test func everyAreaHasAFixtureFile() {
        let files = Set(EvaluationCase.all.map(\.file))
        for area in [
            "literals", "arithmetic", "keypaths-and-collection-operators", "comparisons-and-nil",
            "strings-and-options", "like-and-matches", "collections-any-all-in-between",
            "subquery-ternary-cast-assignment", "functions", "function-selectors", "format-arguments", "errors"
        ] {
            #expect(files.contains(area + ".jsonl"), "Fixtures/\(area).jsonl is missing")
        }
    }

    /// Every built-in of the function table is called by some fixture.
    @Test func everyBuiltinFunctionHasAFixture() throws {
        let sources = try EvaluationCase.all.map { try $0.parsed().0.source }
        for function in BuiltinFunction.all {
            let call = function.formatName + "("
            let found =
                sources.contains { $0.contains(call) }
                || (function.selector == "castObject:toType:" && sources.contains { $0.contains("CAST(") })
            #expect(found, "no fixture calls \(function.selector)")
        }
    }

    /// Every selector of FunctionRegistry.standard is called by some fixture.
    @Test func everyStandardSelectorHasAFixture() throws {
        let sources = try EvaluationCase.all.map { try $0.parsed().0.source }
        for selector in FunctionRegistry.standard.selectors {
            let found = sources.contains {
                $0.contains("FUNCTION(") && ($0.contains("'\(selector)'") || $0.contains("\"\(selector)\""))
            }
            #expect(found, "no fixture calls FUNCTION(…, '\(selector)', …)")
        }
    }
}
