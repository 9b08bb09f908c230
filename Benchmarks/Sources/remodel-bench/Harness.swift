#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation

// MARK: - Sinks

/// Consumes a value so that the optimizer cannot delete the work that produced it.
/// `@_optimize(none)` keeps the optimizer from seeing that the body does nothing; the call
/// costs about a nanosecond and is paid equally by every measured loop.
@inline(never) @_optimize(none)
func blackHole<T>(_ value: T) {}

/// Returns `value` unchanged, through a call the optimizer cannot see into: a closure
/// passed through it is called indirectly, like a compiled expression's closure, instead
/// of being inlined into the measuring loop.
@inline(never) @_optimize(none)
func opaque<T>(_ value: T) -> T { value }

// MARK: - Measuring

/// One measured loop: `body(n)` does `n` operations.
struct Phase {
    /// `parse`, `compile`, `evaluate`, `closure`, …
    var name: String
    /// What the phase does, for the report.
    var detail: String
    var iterations: Int
    /// The phase that `evaluate` and the alternatives are compared with (the hand-written
    /// closure), if any.
    var isBaseline = false
    var comparedWithBaseline = false
    var body: (Int) -> Void
}

/// The per-round results of one phase.
struct PhaseResult {
    var name: String
    var detail: String
    var iterations: Int
    var isBaseline: Bool
    var comparedWithBaseline: Bool
    /// Nanoseconds per operation, one entry per round.
    var nanosecondsPerOperation: [Double]

    var median: Double { nanosecondsPerOperation.median }
    var minimum: Double { nanosecondsPerOperation.min() ?? .nan }
    var maximum: Double { nanosecondsPerOperation.max() ?? .nan }
    var operationsPerSecond: Double { 1e9 / median }
}

extension Array where Element == Double {
    var median: Double {
        guard !isEmpty else { return .nan }
        let sorted = self.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }
}

/// Runs `phases` for `rounds` rounds after a warm-up. Rounds are interleaved (round 1 of
/// every phase, then round 2, …) so that a burst of load from another process on the
/// machine affects the compiled expression and the closure alike instead of one of them.
func measure(_ phases: [Phase], rounds: Int, warmUpFraction: Double = 0.2) -> [PhaseResult] {
    let clock = ContinuousClock()
    for phase in phases {
        phase.body(max(1_000, Int(Double(phase.iterations) * warmUpFraction)))
    }
    var results = phases.map {
        PhaseResult(
            name: $0.name, detail: $0.detail, iterations: $0.iterations, isBaseline: $0.isBaseline,
            comparedWithBaseline: $0.comparedWithBaseline, nanosecondsPerOperation: [])
    }
    for _ in 0..<rounds {
        for (i, phase) in phases.enumerated() {
            let n = phase.iterations
            let elapsed = clock.measure { phase.body(n) }
            results[i].nanosecondsPerOperation.append(elapsed.nanoseconds / Double(n))
        }
    }
    return results
}

extension Duration {
    var nanoseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    }
}

// MARK: - The machine

enum Machine {
    static var cpuModel: String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else {
            return "unknown"
        }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return "unknown"
    }

    static var processors: Int { ProcessInfo.processInfo.activeProcessorCount }

    /// The 1-, 5- and 15-minute load averages, as /proc/loadavg shows them.
    static var loadAverage: String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    static var buildConfiguration: String {
        #if DEBUG
            return "debug (figures are meaningless; build with -c release)"
        #else
            return "release"
        #endif
    }
}
