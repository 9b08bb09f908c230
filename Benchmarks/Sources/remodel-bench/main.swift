import ExpressionLanguage
import Foundation

// remodel-bench: throughput of the expression language against hand-written Swift.
//
//     swift run -c release --package-path Benchmarks remodel-bench expressions
//     swift run -c release --package-path Benchmarks remodel-bench expressions --markdown
//
// See docs/performance.md.

let usage = """
    usage: remodel-bench expressions [--markdown] [--rounds N] [--scale X] [--only ID,…] [--phases P,…]
           remodel-bench list

    expressions   measure parse, compile and evaluate of each expression and predicate, and
                  the hand-written closure doing the same work over the same rows
    list          the expressions and predicates, by ID

    --markdown    print the results as a Markdown table (for docs/performance.md)
    --rounds N    measured rounds per phase; figures are the median (default 7)
    --scale X     multiply every phase's iteration count by X (default 1)
    --only IDs    only these expressions (comma-separated IDs from `list`)
    --phases P    only these phases (comma-separated: parse, compile, evaluate, closure, …);
                  for profiling one loop under valgrind
    """

struct Options {
    var command = ""
    var markdown = false
    var rounds = 7
    var scale = 1.0
    var only: Set<String>? = nil
    var phases: Set<String>? = nil
}

func parseOptions(_ arguments: [String]) -> Options {
    var options = Options()
    var rest = arguments[...]
    func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("remodel-bench: \(message)\n\n\(usage)\n".utf8))
        exit(2)
    }
    func value(for flag: String) -> String {
        guard let v = rest.popFirst() else { fail("\(flag) needs a value") }
        return v
    }
    while let argument = rest.popFirst() {
        switch argument {
        case "--markdown": options.markdown = true
        case "--rounds":
            guard let n = Int(value(for: argument)), n > 0 else { fail("--rounds needs a positive integer") }
            options.rounds = n
        case "--scale":
            guard let x = Double(value(for: argument)), x > 0 else { fail("--scale needs a positive number") }
            options.scale = x
        case "--only":
            options.only = Set(value(for: argument).split(separator: ",").map(String.init))
        case "--phases":
            options.phases = Set(value(for: argument).split(separator: ",").map(String.init))
        case "-h", "--help", "help":
            print(usage)
            exit(0)
        default:
            guard options.command.isEmpty, !argument.hasPrefix("-") else { fail("unexpected argument '\(argument)'") }
            options.command = argument
        }
    }
    return options
}

// MARK: - Formatting

func formatNanoseconds(_ ns: Double) -> String {
    ns < 10 ? String(format: "%.2f", ns) : ns < 1_000 ? String(format: "%.1f", ns) : String(format: "%.0f", ns)
}

func formatRate(_ perSecond: Double) -> String {
    if perSecond >= 1e6 { return String(format: "%.2f M", perSecond / 1e6) }
    if perSecond >= 1e3 { return String(format: "%.1f k", perSecond / 1e3) }
    return String(format: "%.0f", perSecond)
}

func padded(_ s: String, _ width: Int, right: Bool = false) -> String {
    let pad = String(repeating: " ", count: max(0, width - s.count))
    return right ? pad + s : s + pad
}

struct CaseResult {
    let testCase: ExpressionCase
    let phases: [PhaseResult]

    var baseline: PhaseResult? { phases.first { $0.isBaseline } }

    func ratio(_ phase: PhaseResult) -> Double? {
        guard phase.comparedWithBaseline || phase.isBaseline, let baseline else { return nil }
        return phase.median / baseline.median
    }

    func phase(_ name: String) -> PhaseResult? { phases.first { $0.name == name } }
}

// MARK: - Running

func runExpressions(_ options: Options) {
    let cases = expressionCases.filter { options.only?.contains($0.id) ?? true }
    guard !cases.isEmpty else {
        FileHandle.standardError.write(Data("remodel-bench: no expression matches --only\n".utf8))
        exit(2)
    }
    let inputs = Inputs()
    let loadBefore = Machine.loadAverage
    let started = Date()

    // Same work: every compiled expression must agree with its closures on every row.
    for testCase in cases {
        do {
            if let mismatch = try testCase.verify(inputs) {
                FileHandle.standardError.write(Data("remodel-bench: \(mismatch)\n".utf8))
                exit(1)
            }
        } catch {
            FileHandle.standardError.write(Data("remodel-bench: \(testCase.text): \(error)\n".utf8))
            exit(1)
        }
    }

    var results: [CaseResult] = []
    for testCase in cases {
        let phases: [Phase]
        do {
            phases = try testCase.makePhases(inputs, options.scale).filter { options.phases?.contains($0.name) ?? true }
        } catch {
            FileHandle.standardError.write(Data("remodel-bench: \(testCase.text): \(error)\n".utf8))
            exit(1)
        }
        if !options.markdown {
            FileHandle.standardError.write(Data("measuring \(testCase.text) …\n".utf8))
        }
        results.append(CaseResult(testCase: testCase, phases: measure(phases, rounds: options.rounds)))
    }
    let seconds = Date().timeIntervalSince(started)
    let loadAfter = Machine.loadAverage

    let header = [
        "machine: \(Machine.processors) processors, \(Machine.cpuModel); build: \(Machine.buildConfiguration)",
        "load average before: \(loadBefore); after: \(loadAfter); \(String(format: "%.0f", seconds)) s",
        "rows: \(inputs.values.count) different dictionaries, cycled; rounds: \(options.rounds) (median); scale: \(options.scale)",
    ]
    if options.markdown {
        printMarkdown(results, header: header)
    } else {
        printText(results, header: header)
    }
}

func printText(_ results: [CaseResult], header: [String]) {
    for line in header { print(line) }
    for result in results {
        print("")
        print(result.testCase.text)
        print("  " + padded("phase", 20) + padded("ns/op", 10, right: true) + padded("ops/s", 12, right: true)
              + padded("× closure", 11, right: true) + padded("min–max ns/op", 20, right: true) + padded("iterations", 12, right: true))
        for phase in result.phases {
            let ratio = result.ratio(phase).map { String(format: "%.2f×", $0) } ?? ""
            print("  " + padded(phase.name, 20)
                  + padded(formatNanoseconds(phase.median), 10, right: true)
                  + padded(formatRate(phase.operationsPerSecond), 12, right: true)
                  + padded(ratio, 11, right: true)
                  + padded("\(formatNanoseconds(phase.minimum))–\(formatNanoseconds(phase.maximum))", 20, right: true)
                  + padded("\(phase.iterations)", 12, right: true))
        }
    }
    print("")
    for line in targetLines(results) { print(line) }
}

func printMarkdown(_ results: [CaseResult], header: [String]) {
    for line in header { print("<!-- \(line) -->") }
    print("")
    print("| Expression | Phase | ns/op (median) | ops/s (median) | × closure | ns/op min–max |")
    print("|---|---|--:|--:|--:|--:|")
    for result in results {
        for (i, phase) in result.phases.enumerated() {
            let expression = i == 0 ? "`\(result.testCase.text.replacingOccurrences(of: "|", with: "\\|"))`" : ""
            let ratio = result.ratio(phase).map { String(format: "%.2f×", $0) } ?? ""
            print("| \(expression) | \(phase.name) | \(formatNanoseconds(phase.median)) | \(formatRate(phase.operationsPerSecond)) "
                  + "| \(ratio) | \(formatNanoseconds(phase.minimum))–\(formatNanoseconds(phase.maximum)) |")
        }
    }
    print("")
    for line in targetLines(results) { print("- \(line)") }
}

/// The issue's targets, for `$source.price * 1.03`: compiled evaluation within 10× of the
/// closure and at least 5 million evaluations per second.
func targetLines(_ results: [CaseResult]) -> [String] {
    guard let price = results.first(where: { $0.testCase.id == "price" }),
          let evaluate = price.phase("evaluate"), let ratio = price.ratio(evaluate)
    else { return [] }
    let rate = evaluate.operationsPerSecond
    return [
        "target ≤ 10× closure for `\(price.testCase.text)`: \(String(format: "%.2f×", ratio)) — \(ratio <= 10 ? "met" : "NOT met")",
        "target ≥ 5 M evaluations/s for `\(price.testCase.text)`: \(formatRate(rate))/s — \(rate >= 5e6 ? "met" : "NOT met")",
    ]
}

// MARK: - Main

let options = parseOptions(Array(CommandLine.arguments.dropFirst()))
switch options.command {
case "expressions":
    runExpressions(options)
case "list":
    for c in expressionCases { print("\(padded(c.id, 12)) \(c.text)") }
case "":
    print(usage)
    exit(2)
default:
    FileHandle.standardError.write(Data("remodel-bench: unknown command '\(options.command)'\n\n\(usage)\n".utf8))
    exit(2)
}
