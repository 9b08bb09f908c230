import ArgumentParser

/// The exit statuses of `mapping-migrate` and `mapping-eval` (docs/mapping-migrate.md,
/// docs/mapping-eval.md), ordered by severity: a session that meets several ends with
/// the worst.
public enum ExitStatus: Int32, Comparable, Sendable {
    case success = 0
    /// A migration failed (the store is as it was) or an evaluation failed.
    case failed = 1
    /// The input is invalid: usage, a file that cannot be read, a parse or check error.
    case badInput = 2

    public static func < (a: ExitStatus, b: ExitStatus) -> Bool { a.rawValue < b.rawValue }

    /// What argument-parser's commands throw to end with this status.
    var code: ExitCode { ExitCode(rawValue) }
}
