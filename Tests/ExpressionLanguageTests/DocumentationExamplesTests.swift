import Foundation
import Testing
import TestSupport

@testable import ExpressionLanguage

// The examples of docs/language.md and docs/functions.md, run as tests so that the docs
// cannot rot (STYLE.md 13).
//
// An example block is a fenced block with the info string `eval`; each line is
//
//     EXPRESSION ⟹ JSON (type)
//     EXPRESSION ⟹ error: exact message
//
// where JSON is the value in DESIGN.md's encoding and type its kind. A line
// `# with {"object": …, "variables": {…}, "arguments": […]}` binds SELF, variables and
// format arguments for the lines after it in the block; other lines starting with `# `
// are comments, blank lines are skipped. A line is a predicate when it parses as one.

/// One example line of the docs.
struct DocumentationExample: Sendable, Identifiable, CustomTestStringConvertible {
    /// `language.md:123`.
    let id: String
    let source: String
    /// The `# with` bindings in force, as JSON text.
    let bindings: String?
    /// What follows `⟹`.
    let expected: String
    /// Why the line is not an example, when it is not one.
    var malformed: String? = nil

    var testDescription: String { id }

    static let documents = ["language.md", "functions.md"]

    static let docsDirectory = Repository.url("docs")

    /// Every example of every document, in order; a line that is not an example, or a
    /// missing document, becomes an example that fails with the reason.
    static let all: [DocumentationExample] = documents.flatMap { name -> [DocumentationExample] in
        guard let text = try? String(contentsOf: docsDirectory.appendingPathComponent(name), encoding: .utf8) else {
            return [
                DocumentationExample(
                    id: name, source: "", bindings: nil, expected: "", malformed: "docs/\(name) is missing")
            ]
        }
        return examples(in: text, named: name)
    }

    static func examples(in text: String, named name: String) -> [DocumentationExample] {
        var examples: [DocumentationExample] = []
        var inBlock = false
        var bindings: String? = nil
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(rawLine)
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if !inBlock {
                if trimmed == "```eval" {
                    inBlock = true
                    bindings = nil
                }
                continue
            }
            if trimmed == "```" {
                inBlock = false
                continue
            }
            if trimmed.isEmpty { continue }
            if trimmed.hasPrefix("# with ") {
                bindings = String(trimmed.dropFirst("# with ".count))
                continue
            }
            if trimmed.hasPrefix("# ") { continue }
            let id = "\(name):\(index + 1)"
            guard let arrow = line.range(of: " ⟹ ") else {
                examples.append(
                    DocumentationExample(
                        id: id, source: line, bindings: nil, expected: "",
                        malformed: "not an example: no ' ⟹ ' in the line"))
                continue
            }
            examples.append(
                DocumentationExample(
                    id: id, source: String(line[..<arrow.lowerBound]), bindings: bindings,
                    expected: String(line[arrow.upperBound...]).trimmingCharacters(in: .whitespaces)))
        }
        return examples
    }

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// The input and expectation the line describes.
    func parsed() throws -> (ExampleInput, Expectation) {
        if let malformed { throw Malformed(description: malformed) }
        var object: Value = .null
        var variables: [String: Value] = [:]
        var arguments: [Value] = []
        if let bindings {
            let json = try JSON.parse(bindings)
            for key in json.objectValue?.keys ?? [] where !["object", "variables", "arguments"].contains(key) {
                throw Malformed(description: "unknown binding '\(key)' in # with")
            }
            if let o = json["object"] { object = try SampleObjects.value(o) }
            if let v = json["variables"] {
                guard case .dictionary(let d) = try SampleObjects.value(v) else {
                    throw Malformed(description: "\"variables\" must be an object")
                }
                variables = d
            }
            if let a = json["arguments"]?.arrayValue {
                arguments = try a.map { item throws in try SampleObjects.value(item) }
            }
        }
        let input = ExampleInput(
            source: source, isPredicate: ExampleRunner.isPredicate(source, arguments: arguments),
            object: object, variables: variables, arguments: arguments)
        if expected.hasPrefix("error: ") {
            return (
                input,
                .error(
                    kind: nil, message: String(expected.dropFirst("error: ".count)), line: nil, column: nil, phase: nil)
            )
        }
        guard expected.hasSuffix(")"), let open = expected.range(of: " (", options: .backwards) else {
            throw Malformed(description: "expected 'JSON (type)' or 'error: message' after ⟹, not \(expected)")
        }
        let type = String(expected[open.upperBound..<expected.index(before: expected.endIndex)])
        let value = try JSON.parse(String(expected[..<open.lowerBound]))
        return (input, .value(value, type: type))
    }
}

@Suite struct DocumentationExamplesTests {
    @Test(arguments: DocumentationExample.all)
    func example(_ example: DocumentationExample) throws {
        let (input, expectation) = try example.parsed()
        let outcome = ExampleRunner.run(input)
        let problems = expectation.mismatches(outcome)
        let actual: String
        switch outcome {
        case .value(let v): actual = "\(v.json.serialized()) (\(v.kind.rawValue))"
        case .error(let e, _): actual = "error: \(e.message)"
        }
        #expect(
            problems.isEmpty,
            "\(example.id): \(example.source)\n  \(problems.joined(separator: "\n  "))\n  actual: \(example.source) ⟹ \(actual)"
        )
    }

    @Test func documentsHaveExamples() {
        for document in DocumentationExample.documents {
            let count = DocumentationExample.all.filter { $0.id.hasPrefix(document + ":") }.count
            #expect(count >= 20, "docs/\(document) has \(count) examples")
        }
    }

    /// Every built-in function appears in an example, called by its format name.
    @Test func everyBuiltinFunctionHasAnExample() {
        let sources = DocumentationExample.all.map(\.source)
        for function in BuiltinFunction.all {
            let call = function.formatName + "("
            #expect(sources.contains { $0.contains(call) }, "no example in docs/ calls \(call)…)")
        }
    }

    /// Every selector of the standard registry appears in a FUNCTION example, and every
    /// kind of target it is registered for is named in docs/functions.md's list.
    @Test func everyStandardSelectorHasAnExample() throws {
        let sources = DocumentationExample.all.map(\.source)
        for selector in FunctionRegistry.standard.selectors {
            let found = sources.contains {
                $0.contains("FUNCTION(") && ($0.contains("'\(selector)'") || $0.contains("\"\(selector)\""))
            }
            #expect(found, "no example in docs/ calls FUNCTION(…, '\(selector)', …)")
        }
    }

    /// docs/functions.md's tables list each selector with the kinds of target it is
    /// registered for, in rows `| \`selector\`, \`selector\` | kind, kind | …`.
    @Test func functionsTableListsEveryImplementation() throws {
        let text = try String(
            contentsOf: DocumentationExample.docsDirectory.appendingPathComponent("functions.md"), encoding: .utf8)
        var documented: [String: Set<String>] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count > 2 else { continue }
            let kinds = cells[2].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            for selector in cells[1].split(separator: ",") {
                documented[selector.trimmingCharacters(in: CharacterSet(charactersIn: "` ")), default: []].formUnion(
                    kinds)
            }
        }
        for selector in FunctionRegistry.standard.selectors {
            let kinds = Set(FunctionRegistry.standard.implementations(of: selector).map(\.target.description))
            #expect(
                documented[selector] == kinds,
                "docs/functions.md lists '\(selector)' for \(documented[selector]?.sorted() ?? []), registered for \(kinds.sorted())"
            )
        }
        for selector in documented.keys where FunctionRegistry.standard.implementations(of: selector).isEmpty {
            Issue.record("docs/functions.md lists '\(selector)', which is not registered")
        }
    }
}
