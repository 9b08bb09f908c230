import Foundation
import Testing
import TestSupport

@testable import ExpressionLanguage

// Grammar/format.ebnf is the source of truth (STYLE.md 1): every rule has the parse
// function that implements it, with the rule repeated word for word in its doc comment,
// and the labelled examples of Grammar/corpus/ parse (or fail) exactly as labelled.
// Grammar/precedence.md and Grammar/tokens.md are checked against the lexer's and the
// parser's tables.

private let repository = Repository.root

private func read(_ path: String) -> String {
    (try? String(contentsOf: repository.appendingPathComponent(path), encoding: .utf8)) ?? ""
}

// MARK: - Reading the grammar

/// A rule of the grammar or of a doc comment: `name := right-hand side`, the right-hand
/// side as tokens so that spacing and line breaks do not matter.
struct GrammarRule: Sendable, CustomStringConvertible {
    var name: String
    var tokens: [String]
    /// `Grammar/format.ebnf:42` or `FormatParser.swift:120`.
    var place: String

    var description: String { "\(name) := \(tokens.joined(separator: " "))" }

    /// The names of the rules this one refers to.
    var references: [String] {
        tokens.filter { $0.first.map { $0.isLetter } == true }
    }

    /// The terminals of the rule, unquoted, in order.
    var terminals: [String] {
        tokens.filter { $0.first == "\"" || $0.first == "'" }.map { String($0.dropFirst().dropLast()) }
    }

    /// Splits a right-hand side into terminals (`"a"`, `'a'`), special sequences
    /// (`? text ?`), names, `:=` and single symbols.
    static func tokenize(_ text: String) -> [String] {
        var tokens: [String] = []
        var i = text.startIndex
        while i < text.endIndex {
            let c = text[i]
            if c.isWhitespace {
                i = text.index(after: i)
            } else if c == "\"" || c == "'" || c == "?" {
                let close = text[text.index(after: i)...].firstIndex(of: c) ?? text.index(before: text.endIndex)
                let end = text.index(after: close)
                let token = String(text[i..<end])
                // A special sequence is compared without its inner spacing.
                tokens.append(
                    c == "?"
                        ? "? " + token.dropFirst().dropLast().split(separator: " ").joined(separator: " ") + " ?"
                        : token)
                i = end
            } else if c.isLetter || c == "_" {
                var end = i
                while end < text.endIndex, text[end].isLetter || text[end].isNumber || text[end] == "_" {
                    end = text.index(after: end)
                }
                tokens.append(String(text[i..<end]))
                i = end
            } else if text[i...].hasPrefix(":=") {
                tokens.append(":=")
                i = text.index(i, offsetBy: 2)
            } else {
                tokens.append(String(c))
                i = text.index(after: i)
            }
        }
        return tokens
    }
}

enum GrammarFile {
    /// The rules of Grammar/format.ebnf, in order.
    static let rules: [GrammarRule] = parse(read("Grammar/format.ebnf"), file: "Grammar/format.ebnf")

    /// `(* comments *)` removed (they nest, as in ISO 14977), lines kept so that places
    /// stay right. Outside comments, quoted terminals are skipped so that `"(*"` would be a
    /// terminal; inside comments quotes mean nothing (prose has apostrophes).
    static func withoutComments(_ text: String) -> String {
        var out = ""
        var depth = 0
        var quote: Character?
        var i = text.startIndex
        while i < text.endIndex {
            let c = text[i]
            let rest = text[i...]
            if let q = quote {
                out.append(c)
                if c == q { quote = nil }
            } else if rest.hasPrefix("(*") {
                depth += 1
                i = text.index(after: i)
            } else if depth > 0, rest.hasPrefix("*)") {
                depth -= 1
                i = text.index(after: i)
            } else if depth > 0 {
                if c == "\n" { out.append(c) }
            } else {
                if c == "\"" || c == "'" { quote = c }
                out.append(c)
            }
            i = text.index(after: i)
        }
        return out
    }

    static func parse(_ text: String, file: String) -> [GrammarRule] {
        let text = withoutComments(text)
        var rules: [GrammarRule] = []
        var current = ""
        var line = 1
        var startLine = 1
        var quote: Character?
        for c in text {
            if c == "\n" { line += 1 }
            if let q = quote {
                current.append(c)
                if c == q { quote = nil }
                continue
            }
            if c == "\"" || c == "'" || c == "?" { quote = c }
            if c == ";" {
                if let rule = rule(current, place: "\(file):\(startLine)") { rules.append(rule) }
                current = ""
                continue
            }
            if current.allSatisfy(\.isWhitespace) { startLine = line }
            current.append(c)
        }
        if !current.allSatisfy(\.isWhitespace) {
            rules.append(GrammarRule(name: "<unterminated>", tokens: [current], place: "\(file):\(startLine)"))
        }
        return rules
    }

    private static func rule(_ text: String, place: String) -> GrammarRule? {
        guard let define = text.range(of: ":=") else {
            return GrammarRule(name: "<not a rule>", tokens: [text], place: place)
        }
        let name = text[..<define.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
        return GrammarRule(name: name, tokens: GrammarRule.tokenize(String(text[define.upperBound...])), place: place)
    }
}

/// The rules that the doc comments of Sources/ExpressionLanguage/Parsing/ state:
/// `/// name := …`, continued on following `///` lines indented by two or more spaces.
enum ParserDocComments {
    static let files = [
        "FormatParser.swift", "FormatParser+Predicates.swift", "FormatParser+Expressions.swift", "Lexer.swift",
        "Token.swift"
    ]

    static let rules: [GrammarRule] = files.flatMap { file in
        rules(in: read("Sources/ExpressionLanguage/Parsing/" + file), file: file)
    }

    static func rules(in text: String, file: String) -> [GrammarRule] {
        var rules: [GrammarRule] = []
        var current: (name: String, text: String, line: Int)?
        func finish() {
            if let c = current {
                rules.append(
                    GrammarRule(name: c.name, tokens: GrammarRule.tokenize(c.text), place: "\(file):\(c.line)"))
            }
            current = nil
        }
        for (n, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix("///") else {
                finish()
                continue
            }
            let content = line.dropFirst(3)
            if content.hasPrefix(" "), let define = content.range(of: " := "),
                content[content.index(after: content.startIndex)..<define.lowerBound].allSatisfy({ $0.isLetter })
            {
                finish()
                let name = String(content[content.index(after: content.startIndex)..<define.lowerBound])
                current = (name, String(content[define.upperBound...]), n + 1)
            } else if current != nil, content.hasPrefix("  "), !content.allSatisfy(\.isWhitespace) {
                current!.text += " " + content
            } else {
                finish()
            }
        }
        finish()
        return rules
    }
}

// MARK: - The grammar and the parser agree

@Suite struct GrammarTests {
    /// The rules that nothing refers to: where reading starts.
    static let roots: Set<String> = ["predicateFormat", "expressionFormat", "token", "whitespace"]

    @Test func grammarFileIsWellFormed() {
        let rules = GrammarFile.rules
        #expect(rules.count >= 50, "Grammar/format.ebnf has \(rules.count) rules")
        for rule in rules {
            #expect(rule.name.allSatisfy { $0.isLetter }, "\(rule.place): not a rule: \(rule.tokens.joined())")
        }
        var seen: [String: String] = [:]
        for rule in rules {
            if let first = seen[rule.name] {
                Issue.record("\(rule.place): \(rule.name) is defined again (first at \(first))")
            }
            seen[rule.name] = rule.place
        }
    }

    @Test func everyReferenceIsDefinedAndEveryRuleIsUsed() {
        let names = Set(GrammarFile.rules.map(\.name))
        var used: Set<String> = []
        for rule in GrammarFile.rules {
            for reference in rule.references {
                used.insert(reference)
                #expect(
                    names.contains(reference),
                    "\(rule.place): \(rule.name) refers to \(reference), which is not defined")
            }
        }
        for rule in GrammarFile.rules where !used.contains(rule.name) && !Self.roots.contains(rule.name) {
            Issue.record("\(rule.place): nothing refers to \(rule.name)")
        }
    }

    /// Every rule of the grammar has its parse function, whose doc comment states it word
    /// for word (spacing aside).
    @Test func everyRuleIsImplementedAsWritten() {
        let documented = Dictionary(ParserDocComments.rules.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        for rule in GrammarFile.rules {
            guard let doc = documented[rule.name] else {
                Issue.record("\(rule.place): no doc comment in Sources/ExpressionLanguage/Parsing/ states \(rule.name)")
                continue
            }
            #expect(
                doc.tokens == rule.tokens,
                """
                \(rule.name) differs between the grammar and the parser's doc comment
                  \(rule.place): \(rule)
                  \(doc.place): \(doc)
                """)
        }
    }

    /// …and every rule a doc comment states is in the grammar, once.
    @Test func everyDocumentedRuleIsInTheGrammar() {
        let names = Set(GrammarFile.rules.map(\.name))
        var seen: [String: String] = [:]
        for doc in ParserDocComments.rules {
            #expect(names.contains(doc.name), "\(doc.place): \(doc.name) is not a rule of Grammar/format.ebnf")
            if let first = seen[doc.name] {
                Issue.record("\(doc.place): \(doc.name) is documented again (first at \(first))")
            }
            seen[doc.name] = doc.place
        }
        #expect(ParserDocComments.rules.count == GrammarFile.rules.count)
    }

    @Test func reservedWordsAreTheLexers() throws {
        let rule = try #require(GrammarFile.rules.first { $0.name == "reservedWord" })
        #expect(rule.terminals == Keyword.allCases.map(\.rawValue))
    }

    @Test func punctuationIsTheLexers() throws {
        let rule = try #require(GrammarFile.rules.first { $0.name == "punctuation" })
        #expect(Set(rule.terminals) == Set(Token.Punctuation.allCases.map(\.rawValue)))
        #expect(rule.terminals.count == Token.Punctuation.allCases.count)
    }

    @Test func comparisonOperatorsAreTheParsers() throws {
        let rule = try #require(GrammarFile.rules.first { $0.name == "comparisonOperator" })
        for op in ComparisonOperator.allCases {
            #expect(rule.terminals.contains(op.symbol), "comparisonOperator lacks \(op.symbol)")
        }
        // Each alternate spelling parses to one of them.
        for spelling in rule.terminals {
            let parsed = try FormatParser("a \(spelling) b").parsePredicate()
            guard case .comparison(let c) = parsed.kind else {
                Issue.record("a \(spelling) b is not a comparison")
                continue
            }
            #expect(c.op.symbol == spelling || ["=", "<>", "=<", "=>"].contains(spelling))
        }
    }

    /// Grammar/tokens.md names every reserved word and every punctuation token.
    @Test func tokensFileListsEveryToken() {
        let text = read("Grammar/tokens.md")
        for keyword in Keyword.allCases {
            #expect(text.contains("`\(keyword.rawValue)`"), "tokens.md does not list `\(keyword.rawValue)`")
        }
        for p in Token.Punctuation.allCases {
            let spelled = p.rawValue.replacingOccurrences(of: "|", with: "\\|")
            #expect(text.contains("`\(spelled)`"), "tokens.md does not list `\(p.rawValue)`")
        }
    }

    /// Grammar/precedence.md has the numbers of ArithmeticOperator's and BitwiseOperator's tables.
    @Test func precedenceFileIsTheTable() throws {
        struct Row { var kind: String, operators: [String], associativity: String, value: Int? }
        let rows: [Row] = read("Grammar/precedence.md").split(separator: "\n").compactMap { line in
            // `\|` is a pipe inside a cell.
            let cells = line.replacingOccurrences(of: "\\|", with: "¦").split(
                separator: "|", omittingEmptySubsequences: false
            )
            .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 7, Int(cells[1]) != nil else { return nil }
            let operators = cells[3].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter {
                $0.offset % 2 == 1
            }
            .map { $0.element.replacingOccurrences(of: "¦", with: "|") }
            return Row(kind: cells[2], operators: operators, associativity: cells[4], value: Int(cells[5]))
        }
        #expect(rows.count == 14)
        var binary: [String] = []
        for row in rows {
            switch row.kind {
            case "binary":
                for symbol in row.operators {
                    let table: (precedence: Int, associativity: ArithmeticOperator.Associativity)
                    if let op = ArithmeticOperator(rawValue: symbol) {
                        table = (op.precedence, op.associativity)
                    } else {
                        let op = try #require(BitwiseOperator(rawValue: symbol), "\(symbol) is not a binary operator")
                        table = (op.precedence, op.associativity)
                    }
                    binary.append(symbol)
                    #expect(
                        row.value == table.precedence,
                        "\(symbol): \(String(describing: row.value)) in the file, \(table.precedence) in the table")
                    #expect(
                        row.associativity == (table.associativity == .left ? "left" : "right"),
                        "\(symbol) associativity")
                }
            case "prefix": #expect(row.value == ArithmeticOperator.unaryPrecedence)
            case "postfix": #expect(row.value == ArithmeticOperator.postfixPrecedence)
            case "assignment": #expect(row.value == ArithmeticOperator.assignmentPrecedence)
            default: #expect(row.value == nil)
            }
        }
        #expect(
            binary.sorted()
                == (ArithmeticOperator.allCases.map(\.rawValue) + BitwiseOperator.allCases.map(\.rawValue)).sorted())
    }
}

// MARK: - The corpus

/// One labelled example of Grammar/corpus/ (the file headers describe the format).
struct CorpusCase: Sendable, Identifiable, CustomTestStringConvertible {
    enum Mode: Sendable { case expression, predicate }
    enum Expectation: Sendable {
        case printed(String, warnings: [String])
        case error(String)
    }

    /// `valid-expressions.txt:42`.
    var id: String
    var mode: Mode
    var source: String
    var arguments: [Value]
    var expectation: Expectation
    /// Why the line could not be read, if it could not.
    var problem: String?

    var testDescription: String { id }

    /// `⏎` is a line break, `⇥` a tab, `⟦text×N⟧` text repeated N times.
    static func expand(_ text: String) -> String {
        var text = text.replacingOccurrences(of: "⏎", with: "\n").replacingOccurrences(of: "⇥", with: "\t")
        while let open = text.range(of: "⟦"),
            let close = text.range(of: "⟧", range: open.upperBound..<text.endIndex),
            let times = text.range(of: "×", options: .backwards, range: open.upperBound..<close.lowerBound),
            let count = Int(text[times.upperBound..<close.lowerBound])
        {
            text.replaceSubrange(
                open.lowerBound..<close.upperBound,
                with: String(repeating: String(text[open.upperBound..<times.lowerBound]), count: count))
        }
        return text
    }

    static func load(_ file: String, _ mode: Mode, valid: Bool) -> [CorpusCase] {
        let text = read("Grammar/corpus/" + file)
        guard !text.isEmpty else {
            return [
                CorpusCase(
                    id: file, mode: mode, source: "", arguments: [], expectation: .error(""),
                    problem: "Grammar/corpus/\(file) is missing or empty")
            ]
        }
        var cases: [CorpusCase] = []
        for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.allSatisfy(\.isWhitespace) || line.hasPrefix("#") { continue }
            var item = CorpusCase(
                id: "\(file):\(n + 1)", mode: mode, source: "", arguments: [],
                expectation: .error(""), problem: nil)
            let parts = line.components(separatedBy: " ⟶ ")
            guard parts.count == 2 else {
                item.problem = "expected `input ⟶ outcome`"
                cases.append(item)
                continue
            }
            var input = parts[0]
            if let with = input.range(of: " with [", options: .backwards) {
                do {
                    let json = try JSON.parse(String(input[input.index(with.lowerBound, offsetBy: 6)...]))
                    guard case .array(let arguments) = try Value(json: json) else {
                        throw ExpressionError(.type, "not an array")
                    }
                    item.arguments = arguments
                } catch {
                    item.problem = "the arguments are not a JSON array: \(error)"
                }
                input = String(input[..<with.lowerBound])
            }
            item.source = expand(input)
            if valid {
                let outcome = parts[1].components(separatedBy: " ⚠ ")
                item.expectation = .printed(expand(outcome[0]), warnings: Array(outcome.dropFirst()))
            } else {
                item.expectation = .error(parts[1])
            }
            cases.append(item)
        }
        return cases
    }

    static let valid =
        load("valid-expressions.txt", .expression, valid: true)
        + load("valid-predicates.txt", .predicate, valid: true)
    static let invalid =
        load("invalid-expressions.txt", .expression, valid: false)
        + load("invalid-predicates.txt", .predicate, valid: false)
}

/// A parse as the corpus sees it: the printed tree, its structure, and the warnings.
private struct Parsed {
    var printed: String
    var structure: String
    var warnings: [String]

    init(_ source: String, _ mode: CorpusCase.Mode, arguments: [Value] = []) throws(ExpressionError) {
        let parser = FormatParser(source, arguments: arguments)
        switch mode {
        case .expression:
            let tree = try parser.parseExpression()
            (printed, structure) = (tree.description, tree.structure)
        case .predicate:
            let tree = try parser.parsePredicate()
            (printed, structure) = (tree.description, tree.structure)
        }
        warnings = parser.warnings.map(\.description)
    }
}

extension GrammarTests {
    @Test func corpusIsLargeEnoughAndReadable() {
        #expect(CorpusCase.valid.count >= 150)
        #expect(CorpusCase.invalid.count >= 60)
        for item in CorpusCase.valid + CorpusCase.invalid {
            #expect(item.problem == nil, "\(item.id): \(item.problem ?? "")")
        }
    }

    @Test(arguments: CorpusCase.valid)
    func validExample(_ item: CorpusCase) throws {
        guard case .printed(let expected, let expectedWarnings) = item.expectation, item.problem == nil else {
            Issue.record("\(item.id): \(item.problem ?? "not a valid case")")
            return
        }
        let parsed: Parsed
        do {
            parsed = try Parsed(item.source, item.mode, arguments: item.arguments)
        } catch {
            Issue.record("\(item.id): \(error.kind.rawValue): \(error)")
            return
        }
        #expect(parsed.printed == expected, "\(item.id)")
        #expect(parsed.warnings == expectedWarnings, "\(item.id)")

        // The printed form is canonical: it parses, without warnings, to a tree that prints
        // the same, and (when no argument made a constant without literal syntax) to the
        // same tree.
        let reparsed = try Parsed(parsed.printed, item.mode)
        #expect(reparsed.printed == parsed.printed, "\(item.id): printing is not a fixed point")
        #expect(reparsed.warnings.isEmpty, "\(item.id): the printed form warns")
        if item.arguments.isEmpty {
            #expect(reparsed.structure == parsed.structure, "\(item.id): the printed form parses to another tree")
        }
    }

    @Test(arguments: CorpusCase.invalid)
    func invalidExample(_ item: CorpusCase) {
        guard case .error(let expected) = item.expectation, item.problem == nil else {
            Issue.record("\(item.id): \(item.problem ?? "not an invalid case")")
            return
        }
        do {
            let parsed = try Parsed(item.source, item.mode, arguments: item.arguments)
            Issue.record("\(item.id): parsed as \(parsed.printed), expected \(expected)")
        } catch {
            #expect("\(error.kind.rawValue): \(error)" == expected, "\(item.id)")
        }
    }
}
