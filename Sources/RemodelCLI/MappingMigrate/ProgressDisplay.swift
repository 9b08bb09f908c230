import Foundation
import Remodel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How `run` shows where it is, from the ``MigrationProgress`` the engine reports:
///
/// - on a terminal, one line redrawn in place on standard error —
///   `[2/3] Notes2 → Notes3  NoteToNote  create instances  ███████░░░░░░░  48%  48,128/102,400 rows  51,200 rows/s  ETA 2s`;
/// - elsewhere (a CI log, a pipe), plain lines: one when an entity mapping finishes a
///   stage with rows, one when a step is validated, and in between at most one a second;
/// - with `--json`, JSON lines on standard output (`{"event": "progress", …}`), at most
///   four a second and one at the end of each stage of each entity mapping.
final class ProgressDisplay {
    enum Style: Equatable {
        /// Redrawn in place, cut to `width` columns.
        case bar(width: Int)
        case lines
        case json
        case none
    }

    let style: Style
    private let steps: [StoreMigrator.Step]
    private let write: (String) -> Void
    private let now: () -> Double
    private var lastShown = -Double.infinity
    private var lastDone: String?
    private var barVisible = false

    /// - Parameters:
    ///   - steps: the planned steps, to number them (`[2/3]`).
    ///   - write: where the text goes (standard error, or standard output for JSON).
    ///   - now: seconds on a monotonic clock (tests pass their own).
    init(
        style: Style, steps: [StoreMigrator.Step], write: @escaping (String) -> Void,
        now: @escaping () -> Double = { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
    ) {
        self.style = style
        self.steps = steps
        self.write = write
        self.now = now
    }

    /// The style for this process: a bar when standard error is a terminal (and `TERM` is
    /// not `dumb`), plain lines otherwise.
    static func automatic(json: Bool, quiet: Bool) -> Style {
        if json { return .json }
        if quiet { return .none }
        guard isatty(STDERR_FILENO) == 1, ProcessInfo.processInfo.environment["TERM"] != "dumb" else { return .lines }
        return .bar(width: terminalWidth())
    }

    private static func terminalWidth() -> Int {
        var size = winsize()
        if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return Int(ProcessInfo.processInfo.environment["COLUMNS"] ?? "") ?? 80
    }

    /// Shows `progress` of `step`, or not, as the style decides.
    func update(_ step: StoreMigrator.Step, _ progress: MigrationProgress) {
        let index =
            (steps.firstIndex {
                $0.source.version == step.source.version && $0.destination.version == step.destination.version
            } ?? 0)
        let t = now()
        let done = Self.finishesStage(progress)
        let key = "\(index) \(progress.entityMapping) \(progress.stage.rawValue)"
        switch style {
        case .none:
            return
        case .bar(let width):
            barVisible = true
            write("\r" + Self.bar(index: index, count: steps.count, step: step, progress, width: width) + "\u{1B}[K")
        case .lines:
            if done {
                guard lastDone != key else { return }
                lastDone = key
                if progress.stage == .validate {
                    write(Self.prefix(index, steps.count, step) + ": validated\n")
                } else if progress.rows > 0 {
                    write(
                        Self.prefix(index, steps.count, step)
                            + ": \(progress.entityMapping): \(progress.stage.rawValue): \(Self.grouped(progress.rows)) rows, done\n"
                    )
                }
                lastShown = t
            } else if t - lastShown >= 1, progress.stage != .validate {
                lastShown = t
                write(
                    Self.prefix(index, steps.count, step) + ": \(progress.entityMapping): \(progress.stage.rawValue): "
                        + Self.counts(progress, separator: ", ") + "\n")
            }
        case .json:
            if done {
                guard lastDone != key else { return }
                lastDone = key
            } else if t - lastShown < 0.25 {
                return
            }
            lastShown = t
            write(Self.event(index: index, count: steps.count, step: step, progress, done: done).serialized() + "\n")
        }
    }

    /// Removes the bar, before a summary or an error is printed.
    func finish() {
        if barVisible {
            write("\r\u{1B}[K")
            barVisible = false
        }
    }

    /// Whether `progress` is the report at the end of an entity mapping's stage (for
    /// validation: the end of the whole step).
    static func finishesStage(_ progress: MigrationProgress) -> Bool {
        switch progress.stage {
        case .validate: progress.fraction >= 1
        case .createInstances, .createRelationships: progress.totalRows == progress.rows
        }
    }

    static func prefix(_ index: Int, _ count: Int, _ step: StoreMigrator.Step) -> String {
        "[\(index + 1)/\(count)] \(step.source.version) → \(step.destination.version)"
    }

    /// `48,128/102,400 rows (47%), 51,200 rows/s, ETA 2s`.
    static func counts(_ progress: MigrationProgress, separator: String) -> String {
        var parts: [String] = []
        if let total = progress.totalRows, total > 0 {
            parts.append(
                "\(grouped(progress.rows))/\(grouped(total)) rows (\(Int(Double(progress.rows) / Double(total) * 100))%)"
            )
        } else {
            parts.append("\(grouped(progress.rows)) rows")
        }
        if progress.rowsPerSecond > 0 { parts.append("\(grouped(Int(progress.rowsPerSecond.rounded()))) rows/s") }
        if let eta = eta(progress) { parts.append("ETA \(duration(eta))") }
        return parts.joined(separator: separator)
    }

    /// Seconds left in the current entity mapping's stage, at the current rate.
    static func eta(_ progress: MigrationProgress) -> Double? {
        guard let total = progress.totalRows, progress.rowsPerSecond > 0, total >= progress.rows else { return nil }
        return Double(total - progress.rows) / progress.rowsPerSecond
    }

    /// The bar line, at most `width` columns: the step number, the bar and the overall
    /// percentage always; then, while they fit, the rows, the ETA, the entity mapping, the
    /// rate, the stage and the step's versions (the ETA and the rate are those of the
    /// current entity mapping's stage).
    static func bar(index: Int, count: Int, step: StoreMigrator.Step, _ progress: MigrationProgress, width: Int)
        -> String
    {
        let overall = (Double(index) + min(1, max(0, progress.fraction))) / Double(max(1, count))
        let cells = 12
        let filled = Int((overall * Double(cells)).rounded(.down))
        let percent = String(Int((overall * 100).rounded(.down)))
        let head =
            "[\(index + 1)/\(count)] " + String(repeating: "█", count: filled)
            + String(repeating: "░", count: cells - filled)
            + " " + String(repeating: " ", count: max(0, 3 - percent.count)) + percent + "%"
        let rows =
            progress.totalRows.map { "\(grouped(progress.rows))/\(grouped($0)) rows" }
            ?? "\(grouped(progress.rows)) rows"
        // (text, priority: lower is kept first), in the order they are shown.
        var parts: [(text: String, priority: Int)] = [
            ("\(step.source.version) → \(step.destination.version)", 6),
            (progress.entityMapping, 3),
            (progress.stage.rawValue, 5)
        ]
        if progress.stage != .validate {
            parts.append((rows, 1))
            if progress.rowsPerSecond > 0 {
                parts.append(("\(grouped(Int(progress.rowsPerSecond.rounded()))) rows/s", 4))
            }
            if let eta = eta(progress) { parts.append(("ETA \(duration(eta))", 2)) }
        }
        var shown = Set<Int>()
        var used = head.count
        for i in parts.indices.sorted(by: { parts[$0].priority < parts[$1].priority }) {
            guard used + 2 + parts[i].text.count <= width else { break }
            shown.insert(i)
            used += 2 + parts[i].text.count
        }
        let line = head + parts.indices.filter(shown.contains).map { "  " + parts[$0].text }.joined()
        return line.count <= width ? line : String(line.prefix(max(0, width)))
    }

    /// `{"event": "progress", "step": 1, "steps": 3, …}`.
    static func event(index: Int, count: Int, step: StoreMigrator.Step, _ progress: MigrationProgress, done: Bool)
        -> JSON
    {
        let overall = (Double(index) + min(1, max(0, progress.fraction))) / Double(max(1, count))
        return [
            "event": "progress",
            "step": .integer(Int64(index + 1)),
            "steps": .integer(Int64(count)),
            "source": .string(step.source.version),
            "destination": .string(step.destination.version),
            "entityMapping": .string(progress.entityMapping),
            "stage": .string(progress.stage.rawValue),
            "rows": .integer(Int64(progress.rows)),
            "totalRows": progress.totalRows.map { .integer(Int64($0)) } ?? .null,
            "rowsPerSecond": progress.rowsPerSecond > 0 ? .double(rounded(progress.rowsPerSecond, 1)) : .null,
            "etaSeconds": eta(progress).map { .double(rounded($0, 1)) } ?? .null,
            "fraction": .double(rounded(progress.fraction, 4)),
            "overallFraction": .double(rounded(overall, 4)),
            "done": .bool(done)
        ]
    }

    static func rounded(_ value: Double, _ digits: Int) -> Double {
        let scale = pow(10, Double(digits))
        return (value * scale).rounded() / scale
    }

    /// `102,400`.
    static func grouped(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + out
    }

    /// `45s`, `3m05s`, `1h02m`.
    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m" + String(format: "%02ds", s % 60) }
        return "\(s / 3600)h" + String(format: "%02dm", (s % 3600) / 60)
    }
}
