import Foundation
import Testing
import TestSupport

@testable import ExpressionLanguage

/// Apple's printed form (`predicateFormat`): every case of Grammar/corpus/apple-printed.txt
/// (what tests run on Apple's Foundation assert, then the rules read from Foundation's
/// code), and every example of docs/language.md's "Apple's printed form".
@Suite struct ApplePrinterTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var place: String
        var input: String
        var arguments: [Value] = []
        var printed: String
        var testDescription: String { place }
    }

    /// `input with [arguments]`, the arguments as a JSON array of Remodel's value encoding.
    static func split(_ text: String) throws -> (String, [Value]) {
        guard let with = text.range(of: " with [", options: .backwards) else { return (text, []) }
        let json = try JSON.parse(Array(text[text.index(before: with.upperBound)...].utf8))
        guard case .array(let arguments) = try Value(json: json) else { throw ExpressionError(.type, "not an array") }
        return (String(text[..<with.lowerBound]), arguments)
    }

    static let corpus: [Case] = {
        let file = "Grammar/corpus/apple-printed.txt"
        guard let text = try? String(contentsOf: Repository.url(file), encoding: .utf8) else { return [] }
        return text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { i, line in
            guard !line.isEmpty, !line.hasPrefix("#"), let arrow = line.range(of: " ⟶ ") else { return nil }
            guard let (input, arguments) = try? split(String(line[..<arrow.lowerBound])) else {
                return Case(place: "\(file):\(i + 1)", input: "<unreadable arguments>", printed: "")
            }
            return Case(
                place: "\(file):\(i + 1)", input: input, arguments: arguments,
                printed: String(line[arrow.upperBound...]))
        }
    }()

    @Test(arguments: corpus)
    func printsAsApplesFoundation(_ c: Case) throws {
        let predicate = try FormatParser(c.input, arguments: c.arguments).parsePredicate()
        #expect(predicate.appleFormat == c.printed)
    }

    @Test func theCorpusHasEveryKindOfCase() {
        #expect(Self.corpus.count >= 40, "the corpus did not load")
    }

    /// The table of docs/language.md, "Apple's printed form": `| `written` [with `arg`, …] | `printed` |`.
    @Test func theGuidesExamplesPrintAsShown() throws {
        let text = try String(contentsOf: Repository.url("docs/language.md"), encoding: .utf8)
        let section = try #require(text.range(of: "## Apple's printed form"))
        let end = text.range(of: "\n## ", range: section.upperBound..<text.endIndex)?.lowerBound ?? text.endIndex
        var checked = 0
        for line in text[section.upperBound..<end].split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 2 else { continue }
            let ticks = cells[0].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter {
                $0.offset % 2 == 1
            }.map { String($0.element) }
            let input = ticks[0]
            let arguments = try ticks.dropFirst().map { try Value(json: JSON.parse(Array($0.utf8))) }
            let printed = String(cells[1].dropFirst().dropLast())
            // A predicate, or else an expression (`%@ + %@`).
            let format =
                try (try? FormatParser(input, arguments: arguments).parsePredicate().appleFormat)
                ?? FormatParser(input, arguments: arguments).parseExpression().appleFormat
            #expect(format == printed, "\(line)")
            checked += 1
        }
        #expect(checked >= 6)
    }

    @Test func expressionsPrintTheSameWay() throws {
        #expect(try FormatParser("a + b * 2").parseExpression().appleFormat == "a + (b * 2)")
        #expect(try FormatParser("5 & 3 | 1").parseExpression().appleFormat == "(5 & 3) | 1")
        // The canonical form is unchanged, and it is what parses back.
        #expect(try FormatParser("a + b * 2").parseExpression().description == "a + b * 2")
    }
}
