import Foundation
import OrderedCollections
import Testing
import TestSupport

@testable import ExpressionLanguage

// The printer is canonical and round-trips (STYLE.md 7): for every tree the parser can
// produce, parse(print(t)) is t and print(parse(print(t))) is print(t). Thousands of
// seeded random trees check it; a table pins the printed form of every construct.

// MARK: - Structure

/// The tree as an S-expression that tells apart everything `==` does not: a constant's
/// kind (`==` compares numbers by value, so 1 == 1.0 == TRUE) and strings scalar by scalar
/// (`==` on strings is canonical equivalence, so "é" == "e\u{301}"). Round trips compare
/// structures.
enum SyntaxStructure {
    static func write(_ e: FormatExpression, _ out: inout String) {
        switch e.kind {
        case .constant(let v): out += "(const "; write(v, &out); out += ")"
        case .evaluatedObject: out += "SELF"
        case .variable(let name): out += "($ " + escaped(name) + ")"
        case .keyPath(let operand, let path):
            out += "(keyPath "
            if let operand { write(operand, &out) } else { out += "-" }
            for component in path { out += " " + escaped(component) }
            out += ")"
        case .aggregate(let elements): list("aggregate", elements, &out)
        case .arithmetic(let op, let a, let b): list(op.rawValue, [a, b], &out)
        case .negate(let a): list("negate", [a], &out)
        case .function(let selector, let arguments): list("function " + selector, arguments, &out)
        case .index(let base, let specifier):
            out += "(index "
            write(base, &out)
            switch specifier {
            case .first: out += " FIRST"
            case .last: out += " LAST"
            case .size: out += " SIZE"
            case .expression(let i): out += " "; write(i, &out)
            }
            out += ")"
        case .functionCall(let target, let selector, let arguments):
            list("FUNCTION", [target, selector] + arguments, &out)
        case .cast(let a, let type): list("CAST", [a, type], &out)
        case .ternary(let p, let a, let b):
            out += "(TERNARY "; write(p, &out); out += " "; write(a, &out); out += " "; write(b, &out); out += ")"
        case .subquery(let collection, let variable, let p):
            out += "(SUBQUERY "; write(collection, &out); out += " " + escaped(variable) + " "; write(p, &out);
            out += ")"
        case .fetch(let a, let b, let c): list("FETCH", [a, b, c], &out)
        case .assignment(let variable, let value):
            out += "(:= " + escaped(variable) + " "; write(value, &out); out += ")"
        case .anyKey: out += "ANYKEY"
        }
    }

    static func write(_ p: FormatPredicate, _ out: inout String) {
        switch p.kind {
        case .constant(let b): out += b ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let c):
            out += "(\(c.modifier) \(c.op.rawValue) [\(c.options.letters)] "
            write(c.lhs, &out)
            out += " "
            write(c.rhs, &out)
            out += ")"
        case .and(let ps), .or(let ps):
            out += p.isAnd ? "(AND" : "(OR"
            for child in ps { out += " "; write(child, &out) }
            out += ")"
        case .not(let q): out += "(NOT "; write(q, &out); out += ")"
        }
    }

    static func write(_ v: Value, _ out: inout String) {
        switch v {
        case .null: out += "null"
        case .bool(let b): out += "bool \(b)"
        case .integer(let i): out += "integer \(i)"
        case .double(let d): out += "double \(d) \(String(d.bitPattern, radix: 16))"
        case .decimal(let d): out += "decimal \(d)"
        case .string(let s): out += "string " + escaped(s)
        case .date(let d): out += "date \(d.timeIntervalSinceReferenceDate)"
        case .data(let d): out += "data \(d.base64EncodedString())"
        case .array(let a): out += "array"; for x in a { out += " ("; write(x, &out); out += ")" }
        case .set(let a): out += "set"; for x in a { out += " ("; write(x, &out); out += ")" }
        case .dictionary(let d):
            out += "dictionary"
            for key in d.keys.sorted() { out += " " + escaped(key) + ": ("; write(d[key]!, &out); out += ")" }
        case .object(let o): out += "object " + o.object.objectDescription
        }
    }

    private static func list(_ head: String, _ items: [FormatExpression], _ out: inout String) {
        out += "(" + head
        for item in items { out += " "; write(item, &out) }
        out += ")"
    }

    /// Printable ASCII as it is, every other scalar as `\u{hex}`, in quotes.
    static func escaped(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            if scalar.value >= 0x20 && scalar.value < 0x7F && scalar != "\\" && scalar != "\"" {
                out.unicodeScalars.append(scalar)
            } else {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            }
        }
        return out + "\""
    }
}

extension FormatExpression {
    /// See ``SyntaxStructure``.
    var structure: String {
        var out = ""
        SyntaxStructure.write(self, &out)
        return out
    }
}

extension FormatPredicate {
    /// See ``SyntaxStructure``.
    var structure: String {
        var out = ""
        SyntaxStructure.write(self, &out)
        return out
    }
}

// MARK: - Random trees

/// Random syntax trees in the parser's normal form: every node kind, but only trees that
/// parsing some text can produce, since only those can round-trip.
///
/// The normal form:
/// - Constants are null, booleans, integers other than `Int64.min`, finite doubles
///   (`-0.0` included) and strings of any scalars. Dates, decimals, arrays, sets,
///   dictionaries, data, objects, NaN, the infinities and `Int64.min` come only from format
///   arguments; they print as expressions with the same value (pinned below), not as
///   constants.
/// - `negate` never has an integer or double constant operand: the parser folds `-5` into
///   the constant -5 (and `-(-5)` into 5).
/// - A key path's operand is never SELF (`SELF.x` is the key path `x`) nor a key path
///   (`a.b` is one key path of two components), and its path is not empty. Keys are
///   identifiers or `@`-identifiers; after the first component, or after an operand, also
///   reserved words in any case (`a.first`, `$x.UTI-EQUALS`), since after a dot every word
///   is a key. A first component that is a reserved word prints as `#word`.
/// - AND and OR have at least two operands: an empty AND prints as TRUEPREDICATE, an empty
///   OR as FALSEPREDICATE, and one operand prints as itself.
/// - There is no NONE node: `NONE p` is `NOT (ANY p)`.
/// - Variable names (also SUBQUERY's) are identifiers; functions are built-ins with their
///   number of arguments; BETWEEN has no options.
struct TreeGenerator {
    var random: SeededGenerator

    init(seed: UInt64) { random = SeededGenerator(seed: seed) }

    private mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
    private mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &random) < p }
    private mutating func pick<T>(_ items: [T]) -> T { items[int(0...items.count - 1)] }

    static let reservedWords = Keyword.allCases.map(\.rawValue)

    mutating func identifier() -> String {
        if chance(0.5) {
            return pick([
                "a", "b", "name", "_id", "x1", "Record1", "first", "FIRST", "self", "Self", "function",
                "TERNARY", "count", "sqrt", "e5", "E", "in", "uti", "null", "Like", "any", "SUBQUERY"
            ])
        }
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
        let digits = Array("0123456789")
        var s = String(pick(letters))
        for _ in 0..<int(0...6) { s.append(chance(0.25) ? pick(digits) : pick(letters)) }
        return s
    }

    /// A reserved word in a random mix of cases: `first`, `UTI-equals`.
    mutating func reservedWord() -> String {
        String(pick(Self.reservedWords).map { chance(0.5) ? Character($0.lowercased()) : $0 })
    }

    mutating func key(first: Bool) -> String {
        switch int(0...5) {
        case 0: return "@" + identifier()
        case 1 where !first: return reservedWord()
        default: return identifier()
        }
    }

    mutating func string() -> String {
        let pool: [String] = [
            "a", "Z", " ", "'", "\"", "\\", "\n", "\t", "\r", "\r\n", "\u{0}", "\u{7}", "\u{1F}",
            "\u{7F}", "é", "e\u{301}", "\u{301}", "😀", "%", "%@", "@", "$x", "#", "(", ")", "\u{2028}",
            "\u{FEFF}", "字", "\\n"
        ]
        var s = ""
        for _ in 0..<int(0...6) { s += pick(pool) }
        return s
    }

    mutating func double() -> Double {
        if chance(0.5) {
            return pick([
                0.0, -0.0, 1.0, 0.5, 1e16, 1e-5, 123.456, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -1.5,
                2.5e-308, 1e300
            ])
        }
        while true {
            let d = Double(bitPattern: random.next())
            if d.isFinite { return d }
        }
    }

    mutating func constant() -> Value {
        switch int(0...5) {
        case 0: return .null
        case 1: return .bool(chance(0.5))
        case 2: return .integer(pick([0, 1, -1, 42, .max, .min + 1]))
        case 3:
            let i = Int64(bitPattern: random.next())
            return .integer(i == .min ? 0 : i)
        case 4: return .double(double())
        default: return .string(string())
        }
    }

    mutating func leaf() -> FormatExpression {
        switch int(0...6) {
        case 0, 1: return FormatExpression(.constant(constant()))
        case 2: return FormatExpression(.evaluatedObject)
        case 3: return FormatExpression(.variable(identifier()))
        case 4: return FormatExpression(.anyKey)
        default: return FormatExpression(.keyPath(operand: nil, path: keyPath(afterOperand: false)))
        }
    }

    mutating func keyPath(afterOperand: Bool) -> [String] {
        var path = [key(first: !afterOperand)]
        for _ in 0..<int(0...2) { path.append(key(first: false)) }
        return path
    }

    static let functions = BuiltinFunction.table.values.map { ($0.selector, $0.arity) }.sorted { $0.0 < $1.0 }

    mutating func expressions(_ range: ClosedRange<Int>, depth: Int) -> [FormatExpression] {
        (0..<int(range)).map { _ in expression(depth: depth) }
    }

    mutating func expression(depth: Int) -> FormatExpression {
        if depth <= 0 || chance(0.15) { return leaf() }
        let d = depth - 1
        switch int(0...15) {
        case 0: return leaf()
        case 1:
            // A key path read from any value but SELF and another key path.
            var operand = expression(depth: d)
            switch operand.kind {
            case .keyPath, .evaluatedObject: operand = FormatExpression(.variable(identifier()))
            default: break
            }
            return FormatExpression(.keyPath(operand: operand, path: keyPath(afterOperand: true)))
        case 2: return FormatExpression(.aggregate(expressions(0...3, depth: d)))
        case 3, 4:
            return FormatExpression(
                .arithmetic(pick(ArithmeticOperator.allCases), expression(depth: d), expression(depth: d)))
        case 5:
            let operand = expression(depth: d)
            switch operand.kind {
            case .constant(.integer), .constant(.double): return operand
            default: return FormatExpression(.negate(operand))
            }
        case 6:
            let (selector, arity) = pick(Self.functions)
            return FormatExpression(.function(selector: selector, arguments: expressions(arity...arity, depth: d)))
        case 7:
            let specifier: FormatExpression.IndexSpecifier
            switch int(0...4) {
            case 0: specifier = .first
            case 1: specifier = .last
            case 2: specifier = .size
            default: specifier = .expression(expression(depth: d))
            }
            return FormatExpression(.index(expression(depth: d), specifier))
        case 8:
            return FormatExpression(
                .functionCall(
                    target: expression(depth: d), selector: expression(depth: d),
                    arguments: expressions(0...2, depth: d)))
        case 9: return FormatExpression(.cast(expression(depth: d), type: expression(depth: d)))
        case 10: return FormatExpression(.ternary(predicate(depth: d), expression(depth: d), expression(depth: d)))
        case 11:
            return FormatExpression(
                .subquery(
                    collection: expression(depth: d), variable: identifier(),
                    predicate: predicate(depth: d)))
        case 12:
            return FormatExpression(
                .fetch(
                    request: expression(depth: d), context: expression(depth: d),
                    countOnly: expression(depth: d)))
        case 13: return FormatExpression(.assignment(variable: identifier(), value: expression(depth: d)))
        default: return leaf()
        }
    }

    mutating func options(for op: ComparisonOperator) -> ComparisonOptions {
        guard op.acceptsOptions, chance(0.3) else { return [] }
        var options: ComparisonOptions = []
        while options.isEmpty {
            for option in [ComparisonOptions.caseInsensitive, .diacriticInsensitive, .normalized, .localeSensitive]
            where chance(0.4) {
                options.insert(option)
            }
        }
        return options
    }

    mutating func predicate(depth: Int) -> FormatPredicate {
        let d = depth - 1
        switch depth <= 0 ? int(0...1) : int(0...8) {
        case 0: return FormatPredicate(.constant(chance(0.5)))
        case 1, 2, 3, 4:
            let op = pick(ComparisonOperator.allCases)
            let modifier = pick([Comparison.Modifier.direct, .direct, .any, .all])
            return FormatPredicate(
                .comparison(
                    Comparison(
                        expression(depth: d), op, expression(depth: d),
                        modifier: modifier, options: options(for: op))))
        case 5: return FormatPredicate(.and((0..<int(2...4)).map { _ in predicate(depth: d) }))
        case 6: return FormatPredicate(.or((0..<int(2...4)).map { _ in predicate(depth: d) }))
        default: return FormatPredicate(.not(predicate(depth: d)))
        }
    }
}

// MARK: - Round trips

@Suite struct PrinterRoundTripTests {
    static let batches = Array(0..<8)
    static let treesPerBatch = 600

    @Test(arguments: batches)
    func expressionsRoundTrip(batch: Int) {
        var generator = TreeGenerator(seed: 0xE0 + UInt64(batch))
        for n in 0..<Self.treesPerBatch {
            let tree = generator.expression(depth: 1 + n % 6)
            let printed = tree.description
            let parser = FormatParser(printed)
            do {
                let reparsed = try parser.parseExpression()
                #expect(reparsed.structure == tree.structure, "batch \(batch) tree \(n): \(printed)")
                #expect(reparsed == tree, "batch \(batch) tree \(n): \(printed)")
                #expect(reparsed.description == printed, "batch \(batch) tree \(n)")
                #expect(parser.warnings.isEmpty, "batch \(batch) tree \(n): \(printed)")
            } catch {
                Issue.record(
                    "batch \(batch) tree \(n): \(printed)\n  does not parse: \(error)\n  tree: \(tree.structure)")
            }
        }
    }

    @Test(arguments: batches)
    func predicatesRoundTrip(batch: Int) {
        var generator = TreeGenerator(seed: 0x9E0 + UInt64(batch))
        for n in 0..<Self.treesPerBatch {
            let tree = generator.predicate(depth: 1 + n % 5)
            let printed = tree.description
            let parser = FormatParser(printed)
            do {
                let reparsed = try parser.parsePredicate()
                #expect(reparsed.structure == tree.structure, "batch \(batch) tree \(n): \(printed)")
                #expect(reparsed == tree, "batch \(batch) tree \(n): \(printed)")
                #expect(reparsed.description == printed, "batch \(batch) tree \(n)")
                #expect(parser.warnings.isEmpty, "batch \(batch) tree \(n): \(printed)")
            } catch {
                Issue.record(
                    "batch \(batch) tree \(n): \(printed)\n  does not parse: \(error)\n  tree: \(tree.structure)")
            }
        }
    }

    /// The generator reaches every node kind (else the round trips prove less than they say).
    @Test func generatorCoversEveryNodeKind() {
        var generator = TreeGenerator(seed: 1)
        var seen: Set<String> = []
        for n in 0..<500 {
            let words = generator.predicate(depth: 1 + n % 5).structure.split { $0 == "(" || $0 == ")" || $0 == " " }
            seen.formUnion(words.map(String.init))
        }
        let kinds =
            [
                "const", "SELF", "$", "keyPath", "aggregate", "+", "-", "*", "/", "**", "negate", "function",
                "index", "FIRST", "LAST", "SIZE", "FUNCTION", "CAST", "TERNARY", "SUBQUERY", "FETCH", ":=",
                "ANYKEY", "TRUEPREDICATE", "FALSEPREDICATE", "AND", "OR", "NOT", "any", "all", "direct",
                "null", "bool", "integer", "double", "string"
            ]
            + ComparisonOperator.allCases.map(\.rawValue)
        let missing = kinds.filter { !seen.contains($0) }
        #expect(missing.isEmpty, "no tree has \(missing)")
    }
}

// MARK: - Pinned printed forms

private func constant(_ v: Value) -> FormatExpression { FormatExpression(.constant(v)) }
private func key(_ path: String...) -> FormatExpression { FormatExpression(.keyPath(operand: nil, path: path)) }
private func key(_ operand: FormatExpression, _ path: String...) -> FormatExpression {
    FormatExpression(.keyPath(operand: operand, path: path))
}
private func variable(_ name: String) -> FormatExpression { FormatExpression(.variable(name)) }
private func op(_ o: ArithmeticOperator, _ a: FormatExpression, _ b: FormatExpression) -> FormatExpression {
    FormatExpression(.arithmetic(o, a, b))
}
private func negate(_ a: FormatExpression) -> FormatExpression { FormatExpression(.negate(a)) }
private func function(_ selector: String, _ arguments: FormatExpression...) -> FormatExpression {
    FormatExpression(.function(selector: selector, arguments: arguments))
}
private func assign(_ name: String, _ value: FormatExpression) -> FormatExpression {
    FormatExpression(.assignment(variable: name, value: value))
}
private func compare(
    _ a: FormatExpression, _ o: ComparisonOperator, _ b: FormatExpression,
    _ modifier: Comparison.Modifier = .direct, _ options: ComparisonOptions = []
) -> FormatPredicate {
    FormatPredicate(.comparison(Comparison(a, o, b, modifier: modifier, options: options)))
}
private func and(_ ps: FormatPredicate...) -> FormatPredicate { FormatPredicate(.and(ps)) }
private func or(_ ps: FormatPredicate...) -> FormatPredicate { FormatPredicate(.or(ps)) }
private func not(_ p: FormatPredicate) -> FormatPredicate { FormatPredicate(.not(p)) }

private let a = key("a"), b = key("b"), c = key("c")
private let one = constant(1), two = constant(2), three = constant(3)
private let aIs1 = compare(a, .equalTo, one), bIs2 = compare(b, .equalTo, two), cIs3 = compare(c, .equalTo, three)
private let date = Value.date(Date(timeIntervalSinceReferenceDate: 86400))

extension PrinterRoundTripTests {
    static let expressions: [(FormatExpression, String)] = [
        // Constants
        (constant(.null), "nil"),
        (constant(true), "TRUE"),
        (constant(false), "FALSE"),
        (constant(42), "42"),
        (constant(-7), "-7"),
        (constant(.integer(.max)), "9223372036854775807"),
        (constant(.integer(.min)), "-9223372036854775808"),
        (constant(1.0), "1.0"),
        (constant(0.1), "0.1"),
        (constant(1e16), "1e+16"),
        (constant(1e-7), "1e-07"),
        (constant(-0.0), "-0.0"),
        (constant(.double(.infinity)), "(1.0 / 0.0)"),
        (constant(.double(-.infinity)), "(-1.0 / 0.0)"),
        (constant(.double(.nan)), "(0.0 / 0.0)"),
        (constant("he said \"hi\" \\ 'ok'"), #""he said \"hi\" \\ 'ok'""#),
        (constant("a\nb\tc\r"), #""a\nb\tc\r""#),
        (constant("\u{0}\u{7}\u{1B}\u{7F}"), #""\u0000\u0007\u001b\u007f""#),
        (constant("é😀 %@ $x"), #""é😀 %@ $x""#),
        (constant(""), #""""#),
        (constant(date), #"CAST(86400.0, "NSDate")"#),
        (constant(.decimal(Decimal(string: "12.5")!)), #"CAST("12.5", "NSDecimalNumber")"#),
        (constant([1, "a", .null, [2.5]]), #"{1, "a", nil, {2.5}}"#),
        (constant(.set([1, 2])), "{1, 2}"),
        (constant(.data(Data([1, 2, 3]))), "<data: 3 bytes>"),
        // SELF, variables, ANYKEY
        (FormatExpression(.evaluatedObject), "SELF"),
        (variable("x"), "$x"),
        (variable("SELF"), "$SELF"),
        (FormatExpression(.anyKey), "ANYKEY"),
        // Key paths
        (key("a", "b", "c"), "a.b.c"),
        (key("first"), "#first"),
        (key("SELF", "first", "AND"), "#SELF.first.AND"),
        (key("@count"), "@count"),
        (key("a", "@sum", "b"), "a.@sum.b"),
        (key("function"), "function"),
        (key(variable("x"), "name"), "$x.name"),
        (key(function("sqrt:", constant(4)), "x"), "sqrt(4).x"),
        (key(op(.add, a, b), "c"), "(a + b).c"),
        (key(constant(-1), "x"), "(-1).x"),
        (key(constant(1), "e5"), "1.e5"),
        (key(assign("x", a), "b"), "($x := a).b"),
        (key(constant("abc"), "length"), #""abc".length"#),
        (key(FormatExpression(.anyKey), "x"), "ANYKEY.x"),
        // Aggregates
        (FormatExpression(.aggregate([])), "{}"),
        (FormatExpression(.aggregate([one, variable("x"), FormatExpression(.aggregate([]))])), "{1, $x, {}}"),
        // Arithmetic: the fewest parentheses the table allows
        (op(.add, one, op(.multiply, two, three)), "1 + 2 * 3"),
        (op(.multiply, op(.add, one, two), three), "(1 + 2) * 3"),
        (op(.subtract, op(.subtract, one, two), three), "1 - 2 - 3"),
        (op(.subtract, one, op(.subtract, two, three)), "1 - (2 - 3)"),
        (op(.add, one, op(.add, two, three)), "1 + (2 + 3)"),
        (op(.power, op(.power, two, three), two), "2 ** 3 ** 2"),
        (op(.power, two, op(.power, three, two)), "2 ** (3 ** 2)"),
        (op(.divide, a, op(.multiply, b, c)), "a / (b * c)"),
        (op(.divide, op(.multiply, a, b), c), "a * b / c"),
        (op(.power, constant(-2), two), "-2 ** 2"),
        (op(.power, negate(a), two), "-a ** 2"),
        (op(.subtract, a, constant(-1)), "a - -1"),
        (op(.power, two, constant(-1)), "2 ** -1"),
        (op(.add, assign("x", one), one), "($x := 1) + 1"),
        (op(.add, one, assign("x", two)), "1 + ($x := 2)"),
        // Unary minus
        (negate(a), "-a"),
        (negate(op(.add, a, b)), "-(a + b)"),
        (negate(op(.power, a, b)), "-(a ** b)"),
        (negate(negate(a)), "--a"),
        (negate(negate(op(.add, a, b))), "--(a + b)"),
        (negate(constant(-1)), "-(-1)"),
        (negate(assign("x", one)), "-($x := 1)"),
        (negate(function("sqrt:", constant(4))), "-sqrt(4)"),
        (negate(constant(true)), "-TRUE"),
        // Functions
        (function("sqrt:", two), "sqrt(2)"),
        (function("now"), "now()"),
        (function("modulus:by:", constant(7), two), "modulus:by:(7, 2)"),
        (function("castObject:toType:", one, constant("NSString")), #"castObject:toType:(1, "NSString")"#),
        (function("sqrt:", assign("x", constant(4))), "sqrt($x := 4)"),
        // Index
        (FormatExpression(.index(a, .first)), "a[FIRST]"),
        (FormatExpression(.index(a, .last)), "a[LAST]"),
        (FormatExpression(.index(a, .size)), "a[SIZE]"),
        (FormatExpression(.index(a, .expression(constant(0)))), "a[0]"),
        (FormatExpression(.index(a, .expression(key("first")))), "a[#first]"),
        (FormatExpression(.index(op(.add, a, b), .expression(constant(0)))), "(a + b)[0]"),
        (FormatExpression(.index(constant(-1), .first)), "(-1)[FIRST]"),
        (FormatExpression(.index(FormatExpression(.evaluatedObject), .first)), "SELF[FIRST]"),
        // Special forms and assignment
        (
            FormatExpression(.functionCall(target: a, selector: constant("sel:"), arguments: [one])),
            #"FUNCTION(a, "sel:", 1)"#
        ),
        (
            FormatExpression(
                .functionCall(target: variable("manager"), selector: constant("sourceContext"), arguments: [])),
            #"FUNCTION($manager, "sourceContext")"#
        ),
        (FormatExpression(.cast(one, type: constant("NSString"))), #"CAST(1, "NSString")"#),
        (FormatExpression(.ternary(or(aIs1, bIs2), one, two)), "TERNARY(a == 1 OR b == 2, 1, 2)"),
        (
            FormatExpression(.ternary(or(and(aIs1, bIs2), cIs3), one, two)),
            "TERNARY((a == 1 AND b == 2) OR c == 3, 1, 2)"
        ),
        (
            FormatExpression(
                .subquery(
                    collection: c, variable: "x",
                    predicate: and(compare(key(variable("x"), "a"), .equalTo, one), bIs2))),
            "SUBQUERY(c, $x, $x.a == 1 AND b == 2)"
        ),
        (FormatExpression(.fetch(request: a, context: b, countOnly: constant(false))), "FETCH(a, b, FALSE)"),
        (assign("x", op(.add, one, two)), "$x := 1 + 2"),
        (assign("x", assign("y", one)), "$x := $y := 1")
    ]

    static let predicates: [(FormatPredicate, String)] = [
        (FormatPredicate(.constant(true)), "TRUEPREDICATE"),
        (FormatPredicate(.constant(false)), "FALSEPREDICATE"),
        (compare(a, .equalTo, one), "a == 1"),
        (compare(a, .notEqualTo, one), "a != 1"),
        (compare(a, .lessThan, one), "a < 1"),
        (compare(a, .lessThanOrEqualTo, one), "a <= 1"),
        (compare(a, .greaterThan, one), "a > 1"),
        (compare(a, .greaterThanOrEqualTo, one), "a >= 1"),
        (compare(a, .matches, constant("x")), #"a MATCHES "x""#),
        (compare(a, .like, constant("x")), #"a LIKE "x""#),
        (compare(a, .beginsWith, constant("x")), #"a BEGINSWITH "x""#),
        (compare(a, .endsWith, constant("x")), #"a ENDSWITH "x""#),
        (compare(a, .in, b), "a IN b"),
        (compare(a, .contains, b), "a CONTAINS b"),
        (compare(a, .between, FormatExpression(.aggregate([one, two]))), "a BETWEEN {1, 2}"),
        (compare(a, .utiConformsTo, constant("public.image")), #"a UTI-CONFORMS-TO "public.image""#),
        (compare(a, .utiEquals, constant("x")), #"a UTI-EQUALS "x""#),
        (compare(a, .equalTo, b, .direct, .caseInsensitive), "a ==[c] b"),
        (compare(a, .like, b, .direct, .diacriticInsensitive), "a LIKE[d] b"),
        (compare(a, .contains, b, .direct, [.diacriticInsensitive, .caseInsensitive]), "a CONTAINS[cd] b"),
        (compare(a, .beginsWith, b, .direct, .normalized), "a BEGINSWITH[n] b"),
        (compare(a, .endsWith, b, .direct, .localeSensitive), "a ENDSWITH[l] b"),
        (
            compare(a, .matches, b, .direct, [.localeSensitive, .normalized, .diacriticInsensitive, .caseInsensitive]),
            "a MATCHES[cdnl] b"
        ),
        (compare(key("children", "age"), .lessThan, constant(18), .any), "ANY children.age < 18"),
        (compare(a, .greaterThan, constant(0), .all), "ALL a > 0"),
        (not(compare(a, .equalTo, one, .any)), "NOT ANY a == 1"),
        (compare(assign("x", a), .equalTo, one), "$x := a == 1"),
        (compare(op(.multiply, op(.add, a, one), two), .greaterThan, three), "(a + 1) * 2 > 3"),
        (and(aIs1, bIs2), "a == 1 AND b == 2"),
        (or(aIs1, bIs2, cIs3), "a == 1 OR b == 2 OR c == 3"),
        (and(and(aIs1, bIs2), cIs3), "(a == 1 AND b == 2) AND c == 3"),
        (and(aIs1, or(bIs2, cIs3)), "a == 1 AND (b == 2 OR c == 3)"),
        (or(and(aIs1, bIs2), cIs3), "(a == 1 AND b == 2) OR c == 3"),
        (not(aIs1), "NOT a == 1"),
        (not(and(aIs1, bIs2)), "NOT (a == 1 AND b == 2)"),
        (not(not(aIs1)), "NOT NOT a == 1"),
        (not(FormatPredicate(.constant(true))), "NOT TRUEPREDICATE"),
        (and(aIs1, not(or(bIs2, cIs3))), "a == 1 AND NOT (b == 2 OR c == 3)"),
        // Not in the normal form: they print as what they mean.
        (FormatPredicate(.and([])), "TRUEPREDICATE"),
        (FormatPredicate(.or([])), "FALSEPREDICATE"),
        (FormatPredicate(.and([aIs1])), "a == 1")
    ]

    @Test(arguments: expressions)
    func printedExpression(_ tree: FormatExpression, _ expected: String) {
        #expect(tree.description == expected)
    }

    @Test(arguments: predicates)
    func printedPredicate(_ tree: FormatPredicate, _ expected: String) {
        #expect(tree.description == expected)
    }

    /// Constants without literal syntax (they come from format arguments) print as
    /// expressions that evaluate to the same value; a set comes back as an array.
    static let constantsWithoutLiteralSyntax: [(Value, Value)] = [
        (Value.integer(.min), Value.integer(.min)),
        (.double(.infinity), .double(.infinity)),
        (.double(-.infinity), .double(-.infinity)),
        (date, date),
        (.decimal(Decimal(string: "12.5")!), .decimal(Decimal(string: "12.5")!)),
        ([1, "a", [2.5, .null]], [1, "a", [2.5, .null]]),
        (.set([1, 2]), [1, 2])
    ]

    @Test(arguments: constantsWithoutLiteralSyntax)
    func constantWithoutLiteralSyntax(_ value: Value, _ evaluatesTo: Value) throws {
        let printed = FormatExpression(.constant(value)).description
        let tree = try FormatParser(printed).parseExpression()
        let result = try ExpressionCompiler().compile(tree, source: printed).evaluate()
        #expect(result.structure == evaluatesTo.structure, "\(printed)")
    }

    @Test func notANumberPrintsAsAnExpressionThatIsNotANumber() throws {
        let printed = FormatExpression(.constant(.double(.nan))).description
        let result = try ExpressionCompiler().compile(try FormatParser(printed).parseExpression()).evaluate()
        guard case .double(let d) = result else {
            Issue.record("\(printed) evaluates to \(result)")
            return
        }
        #expect(d.isNaN)
    }

    /// A `%K` key that is not an identifier has no bare spelling: it prints as written and
    /// does not parse back. (Known limit; such keys can only come through %K.)
    @Test func keyFromFormatArgumentThatIsNotAnIdentifier() throws {
        let tree = try FormatParser("%K == 1", arguments: ["ISO 3166-1:2006"]).parsePredicate()
        #expect(tree.description == "ISO 3166-1:2006 == 1")
        #expect(throws: ExpressionError.self) { try FormatParser(tree.description).parsePredicate() }
    }
}

extension Value {
    /// See ``SyntaxStructure``.
    var structure: String {
        var out = ""
        SyntaxStructure.write(self, &out)
        return out
    }
}
