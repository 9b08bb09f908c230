import Foundation

/// The read-evaluate-print loop: reads inputs (joining continuation lines), executes them
/// in an ``EvalSession`` and writes what they print, until `:quit` or the end of input.
public struct EvalREPL {
    public let session: EvalSession
    public let editor: LineEditor
    /// Where output and diagnostics go (standard output and standard error by default).
    public var write: (EvalOutput.Line) -> Void = EvalREPL.writeToStandardStreams

    public static let prompt = "remodel> "
    public static let continuationPrompt = "...> "

    public init(session: EvalSession, editor: LineEditor) {
        self.session = session
        self.editor = editor
        editor.completer = { [unowned session] line, start, word in
            session.completions(line: line, wordStart: start, word: word)
        }
    }

    /// Runs until `:quit` or the end of input. Returns the exit status: interactively 0;
    /// reading a pipe or a file, the worst status of its inputs (1 when one failed to
    /// evaluate, 2 when one was invalid), so that scripts notice.
    public func run() -> ExitStatus {
        var input = InputAccumulator()
        var status = ExitStatus.success
        while true {
            let inputs: [InputAccumulator.Input]
            switch editor.readLine(prompt: input.isEmpty ? Self.prompt : Self.continuationPrompt) {
            case .line(let line):
                inputs = input.add(line)
            case .interrupted:
                input.discard()
                continue
            case .endOfInput:
                if editor.isInteractive {
                    // Ctrl-D leaves on a fresh line; at the continuation prompt it drops the
                    // half-typed input and returns to the main prompt.
                    LineEditor.writeToTerminal("")
                    if input.isEmpty { return .success }
                    input.discard()
                    continue
                }
                // A file that ends inside an input: evaluate it (and report what is missing).
                guard let last = input.finish() else { return status }
                inputs = [last]
            }
            for complete in inputs {
                editor.addHistory(complete.historyEntry)
                let output = session.execute(complete.text)
                for line in output.lines { write(line) }
                status = max(status, output.status)
                if output.quit { return editor.isInteractive ? .success : status }
            }
        }
    }

    /// Writes `line` and a line break to standard output or standard error, unbuffered.
    public static func writeToStandardStreams(_ line: EvalOutput.Line) {
        let handle = line.stream == .output ? FileHandle.standardOutput : FileHandle.standardError
        handle.write(Data((line.text + "\n").utf8))
    }
}
