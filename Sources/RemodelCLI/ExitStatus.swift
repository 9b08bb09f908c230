import ArgumentParser
import Foundation

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

extension ParsableCommand {
    /// Parses `arguments`, runs the command it names and exits with its status. A usage
    /// error (which argument-parser would end with 64) is bad input, written to standard
    /// error as `styled` makes it; `--help` and `--version` print to standard output and
    /// exit with success.
    static func runAndExit(_ arguments: [String]?, styled: (String) -> String = { $0 }) -> Never {
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
            Foundation.exit(ExitStatus.success.rawValue)
        } catch let code as ExitCode {
            Foundation.exit(code.rawValue)
        } catch {
            let message = fullMessage(for: error)
            if exitCode(for: error) == .success {
                FileHandle.standardOutput.write(Data((message + "\n").utf8))
                Foundation.exit(ExitStatus.success.rawValue)
            }
            FileHandle.standardError.write(Data((styled(message) + "\n").utf8))
            Foundation.exit(ExitStatus.badInput.rawValue)
        }
    }
}
