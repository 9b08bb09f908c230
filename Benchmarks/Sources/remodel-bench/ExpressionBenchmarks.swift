import ExpressionLanguage

/// How many operations each phase runs per round, before `--scale`.
enum Iterations {
    static let parse = 20_000
    static let compile = 20_000
    /// The default for evaluate and the closure; a case may ask for fewer when one
    /// evaluation takes microseconds, so that a round stays near a second at most.
    static let evaluate = 2_000_000
    /// For the slow reference baselines (NSRegularExpression, Swift Regex) and the one-shot API.
    static let reference = 100_000
}

/// One expression or predicate and the hand-written closure it is compared with.
struct ExpressionCase {
    enum Kind { case expression, predicate }

    /// A short name for the command line and the table: `price`, `beginswith`, `matches`.
    let id: String
    let kind: Kind
    let text: String
    /// What the hand-written closure does.
    let baselineDetail: String
    let makePhases: (_ inputs: Inputs, _ scale: Double) throws -> [Phase]
    /// Evaluates the expression and the closure on every input; a message when they differ.
    let verify: (_ inputs: Inputs) throws -> String?
}

/// A pattern for a plausible e-mail address, without backslashes so that it reads the same
/// in the format language and in Swift.
let emailPattern = "[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+([.][A-Za-z0-9-]+)+"

var expressionCases: [ExpressionCase] {
    [
        expressionCase(
            id: "price", text: "$source.price * 1.03",
            baselineDetail: "`source[\"price\"]`, `case .double(let p)`, `.double(p * 1.03)`",
            closure: Baseline.price),
        predicateCase(
            id: "beginswith", text: "name BEGINSWITH[cd] 'jo' AND age > 18",
            baselineDetail:
                "`source[\"name\"]`, ASCII byte loop lowercasing (Foundation `folding(options:)` when not ASCII), `source[\"age\"]`, `age > 18`",
            evaluations: 400_000,
            closure: Baseline.beginsWithAndAge),
        predicateCase(
            id: "matches", text: "email MATCHES '\(emailPattern)'",
            baselineDetail:
                "`source[\"email\"]`, `pcre2_match_8` on the same JIT-compiled pattern (anchored, UTF, UCP) with reused match data",
            evaluations: 1_000_000,
            closure: Baseline.matches(emailPattern),
            references: [
                (
                    "NSRegularExpression", "`NSRegularExpression.firstMatch` with `^(?:…)$`, for reference",
                    Baseline.matchesWithNSRegularExpression(emailPattern)
                ),
                ("Swift Regex", "`Regex.wholeMatch(in:)`, for reference", Baseline.matchesWithSwiftRegex(emailPattern))
            ])
    ]
}

private func scaled(_ n: Int, _ scale: Double) -> Int { max(1, Int(Double(n) * scale)) }

/// An expression evaluated with `$source` bound to the row, as the migration engine
/// evaluates attribute mappings.
func expressionCase(
    id: String, text: String, baselineDetail: String, evaluations: Int = Iterations.evaluate,
    closure: @escaping ([String: Value]) -> Value
) -> ExpressionCase {
    ExpressionCase(
        id: id, kind: .expression, text: text, baselineDetail: baselineDetail,
        makePhases: { inputs, scale in
            let compiler = ExpressionCompiler()
            let tree = try FormatParser(text).parseExpression()
            let compiled = try compiler.compile(tree, source: text)
            let context = compiled.makeContext()
            let values = inputs.values
            let dictionaries = inputs.dictionaries
            let closure = opaque(closure)
            return [
                Phase(
                    name: "parse", detail: "`FormatParser(text).parseExpression()`, uncached",
                    iterations: scaled(Iterations.parse, scale)
                ) { n in
                    for _ in 0..<n {
                        do { blackHole(try FormatParser(opaque(text)).parseExpression()) } catch {
                            fatalError("\(error)")
                        }
                    }
                },
                Phase(
                    name: "compile", detail: "`ExpressionCompiler.compile(tree, source:)`, one compiler",
                    iterations: scaled(Iterations.compile, scale)
                ) { n in
                    for _ in 0..<n {
                        do { blackHole(try compiler.compile(opaque(tree), source: text)) } catch {
                            fatalError("\(error)")
                        }
                    }
                },
                Phase(
                    name: "evaluate",
                    detail:
                        "`context[slot: source] = row; compiled.evaluate(in: context)`, one context, the slot resolved once",
                    iterations: scaled(evaluations, scale), comparedWithBaseline: true
                ) { n in
                    let source = context.layout.existingSlot(for: "source")!
                    var row = 0
                    for _ in 0..<n {
                        context[slot: source] = values[row]
                        do { blackHole(try compiled.evaluate(in: context)) } catch { fatalError("\(error)") }
                        row += 1
                        if row == values.count { row = 0 }
                    }
                },
                Phase(
                    name: "evaluate, bind by name",
                    detail: "`context[variable: \"source\"] = row; compiled.evaluate(in: context)`, one context",
                    iterations: scaled(evaluations, scale), comparedWithBaseline: true
                ) { n in
                    var row = 0
                    for _ in 0..<n {
                        context[variable: "source"] = values[row]
                        do { blackHole(try compiled.evaluate(in: context)) } catch { fatalError("\(error)") }
                        row += 1
                        if row == values.count { row = 0 }
                    }
                },
                Phase(
                    name: "evaluate, one-shot",
                    detail: "`compiled.evaluate(variables: [\"source\": row])`: a new context per call",
                    iterations: scaled(Iterations.reference, scale), comparedWithBaseline: true
                ) { n in
                    var row = 0
                    for _ in 0..<n {
                        do { blackHole(try compiled.evaluate(variables: ["source": values[row]])) } catch {
                            fatalError("\(error)")
                        }
                        row += 1
                        if row == values.count { row = 0 }
                    }
                },
                Phase(
                    name: "closure", detail: baselineDetail,
                    iterations: scaled(evaluations, scale), isBaseline: true
                ) { n in
                    var row = 0
                    for _ in 0..<n {
                        blackHole(closure(dictionaries[row]))
                        row += 1
                        if row == dictionaries.count { row = 0 }
                    }
                }
            ]
        },
        verify: { inputs in
            let compiled = try ExpressionCompiler().compile(FormatParser(text).parseExpression(), source: text)
            let context = compiled.makeContext()
            for (value, dictionary) in zip(inputs.values, inputs.dictionaries) {
                context[variable: "source"] = value
                let got = try compiled.evaluate(in: context)
                let expected = closure(dictionary)
                if got != expected { return "\(text) gives \(got), the closure \(expected), for \(dictionary)" }
            }
            return nil
        })
}

/// A predicate evaluated with the row as SELF (`context.object`), as a fetch or a
/// SUBQUERY evaluates it.
func predicateCase(
    id: String, text: String, baselineDetail: String, evaluations: Int = Iterations.evaluate,
    closure: @escaping ([String: Value]) -> Bool,
    references: [(String, String, ([String: Value]) -> Bool)] = []
) -> ExpressionCase {
    ExpressionCase(
        id: id, kind: .predicate, text: text, baselineDetail: baselineDetail,
        makePhases: { inputs, scale in
            let compiler = ExpressionCompiler()
            let tree = try FormatParser(text).parsePredicate()
            let compiled = try compiler.compile(tree, source: text)
            let context = compiled.makeContext()
            let values = inputs.values
            let dictionaries = inputs.dictionaries
            func closurePhase(
                _ name: String, _ detail: String, _ iterations: Int, isBaseline: Bool,
                _ closure: @escaping ([String: Value]) -> Bool
            ) -> Phase {
                let closure = opaque(closure)
                return Phase(
                    name: name, detail: detail, iterations: iterations, isBaseline: isBaseline,
                    comparedWithBaseline: !isBaseline
                ) { n in
                    var row = 0
                    for _ in 0..<n {
                        blackHole(closure(dictionaries[row]))
                        row += 1
                        if row == dictionaries.count { row = 0 }
                    }
                }
            }
            return [
                Phase(
                    name: "parse", detail: "`FormatParser(text).parsePredicate()`, uncached",
                    iterations: scaled(Iterations.parse, scale)
                ) { n in
                    for _ in 0..<n {
                        do { blackHole(try FormatParser(opaque(text)).parsePredicate()) } catch {
                            fatalError("\(error)")
                        }
                    }
                },
                Phase(
                    name: "compile", detail: "`ExpressionCompiler.compile(tree, source:)`, one compiler",
                    iterations: scaled(Iterations.compile, scale)
                ) { n in
                    for _ in 0..<n {
                        do { blackHole(try compiler.compile(opaque(tree), source: text)) } catch {
                            fatalError("\(error)")
                        }
                    }
                },
                Phase(
                    name: "evaluate", detail: "`context.object = row; compiled.evaluate(in: context)`, one context",
                    iterations: scaled(evaluations, scale), comparedWithBaseline: true
                ) { n in
                    var row = 0
                    for _ in 0..<n {
                        context.object = values[row]
                        do { blackHole(try compiled.evaluate(in: context)) } catch { fatalError("\(error)") }
                        row += 1
                        if row == values.count { row = 0 }
                    }
                },
                closurePhase("closure", baselineDetail, scaled(evaluations, scale), isBaseline: true, closure)
            ]
                + references.map { name, detail, closure in
                    closurePhase(name, detail, scaled(Iterations.reference, scale), isBaseline: false, closure)
                }
        },
        verify: { inputs in
            let compiled = try ExpressionCompiler().compile(FormatParser(text).parsePredicate(), source: text)
            let context = compiled.makeContext()
            var holds = 0
            for (value, dictionary) in zip(inputs.values, inputs.dictionaries) {
                context.object = value
                let got = try compiled.evaluate(in: context)
                if got { holds += 1 }
                for (name, check) in [("closure", closure)] + references.map({ ($0.0, $0.2) }) {
                    let expected = check(dictionary)
                    if got != expected { return "\(text) gives \(got), the \(name) \(expected), for \(dictionary)" }
                }
            }
            if holds == 0 || holds == inputs.values.count {
                return "\(text) is \(holds == 0 ? "false" : "true") for every input; the inputs do not exercise it"
            }
            return nil
        })
}
