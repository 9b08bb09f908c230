import Foundation

// What the store and migration benchmarks print: one table per benchmark, a row per
// variant, medians over rounds, peak memory per variant's process.

/// One way of doing a benchmark's work.
struct Variant {
    enum Role {
        /// The library: what the targets are about.
        case remodel
        /// The raw C-API loop: the baseline for "% of raw".
        case raw
        /// Shown for reference: pure SQL, or the raw loop doing more.
        case reference
    }

    /// The hidden `--variant` name its child process runs.
    let id: String
    /// The row's label in the table.
    let label: String
    let role: Role
}

/// A variant's rounds.
struct VariantRuns {
    let operation: String
    let variant: Variant
    var runs: [Measurement] = []

    var seconds: [Double] { runs.map(\.result.seconds) }
    var medianSeconds: Double { seconds.median }
    var rows: Int { runs.first?.result.rows ?? 0 }
    var bytes: Int { runs.first?.result.bytes ?? 0 }
    var rowsPerSecond: Double { Double(rows) / medianSeconds }
    var megabytesPerSecond: Double { Double(bytes) / 1e6 / medianSeconds }
    /// The highest peak over the rounds.
    var peakRSS: Int { runs.map(\.maxRSS).max() ?? 0 }
    var medianCPU: Double { runs.map(\.cpuSeconds).median }
    /// The median of each named split over the rounds.
    var splits: [(String, Double)] {
        guard let first = runs.first else { return [] }
        return first.result.splits.keys.sorted().map { key in (key, runs.compactMap { $0.result.splits[key] }.median) }
    }
}

/// Runs each variant `rounds` times, interleaved (round 1 of every variant, then round
/// 2, …) so that a burst of load elsewhere hits every variant alike. `arguments` gives a
/// variant's command line for a round; `check` verifies what the round did.
func measureVariants(
    _ operation: String, _ variants: [Variant], rounds: Int, quiet: Bool,
    arguments: (Variant, Int) -> [String], check: (Variant, Int, Measurement) -> Void
) -> [VariantRuns] {
    var results = variants.map { VariantRuns(operation: operation, variant: $0) }
    for round in 0..<rounds {
        for (i, variant) in variants.enumerated() {
            if !quiet { progressLine("\(operation): \(variant.label), round \(round + 1) of \(rounds) …") }
            let measurement = runVariant(variant.id, arguments(variant, round), resultFile: resultFilePath())
            check(variant, round, measurement)
            results[i].runs.append(measurement)
        }
    }
    return results
}

func resultFilePath() -> String { (temporaryDirectory ?? NSTemporaryDirectory()) + "/result.json" }

func progressLine(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// A table of variants: seconds, throughput, % of the raw loop, peak memory, CPU.
struct BenchmarkReport {
    var title: String
    var header: [String]
    var groups: [[VariantRuns]]
    /// Whether throughput is in MB/s of blobs (item-images) rather than rows/s.
    var showsBytes = false
    var footnotes: [String] = []
    var targets: [String] = []

    private static func percent(_ runs: VariantRuns, of group: [VariantRuns]) -> String {
        guard let raw = group.first(where: { $0.variant.role == .raw }) else { return "" }
        return String(format: "%.0f%%", raw.medianSeconds / runs.medianSeconds * 100)
    }

    private func cells(_ runs: VariantRuns, _ group: [VariantRuns]) -> [String] {
        let seconds = runs.seconds
        let range = seconds.count > 1 ? String(format: "%.2f–%.2f", seconds.min()!, seconds.max()!) : ""
        var row = [
            runs.operation, runs.variant.label, String(format: "%.2f", runs.medianSeconds), range,
            formatRate(runs.rowsPerSecond)
        ]
        if showsBytes { row.append(String(format: "%.0f", runs.megabytesPerSecond)) }
        row += [Self.percent(runs, of: group), formatMB(runs.peakRSS), String(format: "%.2f", runs.medianCPU)]
        return row
    }

    private var columns: [String] {
        var c = ["operation", "variant", "s (median)", "s min–max", "rows/s"]
        if showsBytes { c.append("MB/s") }
        return c + ["% of raw", "peak RSS", "CPU s"]
    }

    func printText() { printTable(markdown: false) }

    func printMarkdown() { printTable(markdown: true) }

    private func printTable(markdown: Bool) {
        let rows = groups.flatMap { group in group.map { cells($0, group) } }
        printReportTable(
            title: title, header: header, columns: columns, rows: rows,
            footnotes: footnotes, targets: targets, markdown: markdown)
    }
}

/// Prints a benchmark's report: its title and header lines, a table, footnotes and target
/// lines. As text, the table is aligned (numbers to the right, `**` left out); as Markdown,
/// the title and header are comments and the footnotes and targets lists, for
/// docs/performance.md. The first two columns are labels, the others numbers.
func printReportTable(
    title: String, header: [String], columns: [String], rows: [[String]],
    footnotes: [String], targets: [String] = [], markdown: Bool
) {
    if markdown {
        for line in [title] + header { print("<!-- \(line) -->") }
        print("")
        print("| " + columns.joined(separator: " | ") + " |")
        print("|" + columns.indices.map { $0 < 2 ? "---" : "--:" }.joined(separator: "|") + "|")
        for row in rows { print("| " + row.joined(separator: " | ") + " |") }
    } else {
        print(title)
        for line in header { print(line) }
        print("")
        let all = [columns] + rows.map { $0.map { $0.replacingOccurrences(of: "**", with: "") } }
        let widths = columns.indices.map { c in all.map { $0[c].count }.max()! }
        for (r, row) in all.enumerated() {
            print(row.enumerated().map { c, cell in padded(cell, widths[c], right: c >= 2) }.joined(separator: "  "))
            if r == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
        }
    }
    print("")
    let bullet = markdown ? "- " : ""
    for line in footnotes { print(bullet + line) }
    if !targets.isEmpty { print("") }
    for line in targets { print(bullet + line) }
}

/// Megabytes (10⁶ bytes), as the targets are stated.
func formatMB(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1e6) }

/// "met" or "NOT met", for a target line.
func verdict(_ met: Bool) -> String { met ? "met" : "NOT met" }

/// The machine and load lines every report starts with.
/// The header of a benchmark whose variants run interleaved, each in a process of its own:
/// the machine, the load before and now, the time since `started`, and the rounds, with
/// `more` said after them.
func interleavedHeader(_ options: Options, loadBefore: String, started: Date, more: String = "") -> [String] {
    machineHeader(loadBefore: loadBefore, loadAfter: Machine.loadAverage, seconds: Date().timeIntervalSince(started))
        + ["rounds: \(options.roundCount) per variant, interleaved (median); each variant in its own process" + more]
}

/// "against pure SQL's speed: " and each of `labels` (the first runs of `runs`) as a
/// percentage of the speed of `reference`.
func speedFootnote(_ labels: [String], _ runs: [VariantRuns], against reference: VariantRuns) -> String {
    "against pure SQL's speed: "
        + zip(labels, runs).map {
            String(format: "\($0) %.0f%%", reference.medianSeconds / $1.medianSeconds * 100)
        }.joined(separator: ", ")
}

func machineHeader(loadBefore: String, loadAfter: String, seconds: Double) -> [String] {
    [
        "machine: \(Machine.processors) processors, \(Machine.cpuModel); build: \(Machine.buildConfiguration)",
        "load average before: \(loadBefore); after: \(loadAfter); \(String(format: "%.0f", seconds)) s in all",
        "date: \(ISO8601DateFormatter().string(from: Date()))"
    ]
}
