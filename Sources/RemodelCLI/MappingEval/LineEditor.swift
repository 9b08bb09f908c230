import Foundation
// libedit's state is C globals, which Swift 6 would reject as shared mutable state; only
// the thread that runs the REPL touches them.
@preconcurrency import CEditLine
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the REPL reads its input: libedit's line editing and history when standard input
/// is a terminal, plain lines otherwise (pipes and files: no prompt, no editing).
public final class LineEditor {
    /// What reading a line gave.
    public enum Read: Hashable, Sendable {
        case line(String)
        /// Ctrl-C: the line being typed is abandoned.
        case interrupted
        /// Ctrl-D on an empty line, or the end of the input.
        case endOfInput
    }

    /// True when lines come from a terminal, with editing and history.
    public let isInteractive: Bool
    /// Suggests what Tab completes: given the whole line and where the word being completed
    /// starts (in UTF-8 bytes), the candidates that replace the word. A space follows a
    /// single candidate that ends with one (which is then removed), so that completing a
    /// command leaves room for its argument and completing a key leaves room for `.`.
    public var completer: ((_ line: String, _ wordStart: Int, _ word: String) -> [String])? {
        didSet { if isInteractive { Self.active = self } }
    }
    private let historyFile: String?
    private let plain: LineReader?

    /// The history file of the REPL: `$REMODEL_HISTORY` when set (empty: no history file),
    /// else `~/.remodel_history`.
    public static var defaultHistoryFile: String? {
        let environment = ProcessInfo.processInfo.environment
        if let file = environment["REMODEL_HISTORY"] { return file.isEmpty ? nil : file }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.remodel_history"
    }

    /// Whether standard input is a terminal.
    public static var standardInputIsTerminal: Bool { isatty(0) == 1 }

    /// An editor for standard input; `interactive` defaults to whether it is a terminal.
    public init(
        interactive: Bool = LineEditor.standardInputIsTerminal, historyFile: String? = LineEditor.defaultHistoryFile
    ) {
        self.isInteractive = interactive
        self.historyFile = interactive ? historyFile : nil
        if interactive {
            plain = nil
            Self.setUp(historyFile: self.historyFile)
            if history_length > 0, let entry = history_get(history_base + history_length - 1),
                let line = entry.pointee.line
            {
                lastHistoryEntry = String(cString: line)
            }
        } else {
            plain = LineReader()
        }
    }

    /// Reads one line, showing `prompt` when interactive.
    public func readLine(prompt: String) -> Read {
        guard isInteractive else {
            return plain?.readTextLine().map(Read.line) ?? .endOfInput
        }
        Self.interrupted.store(false, ordering: .relaxed)
        let pointer = readline(prompt)
        defer { free(pointer) }
        if Self.interrupted.exchange(false, ordering: .relaxed) {
            // The terminal does not echo ^C in libedit's raw mode: end the abandoned line.
            Self.writeToTerminal("")
            return .interrupted
        }
        guard let pointer else { return .endOfInput }
        return .line(String(cString: pointer))
    }

    /// Writes `text` and a line break where the user sees the prompt: standard output, or
    /// standard error when standard output is redirected (so that a greeting does not end
    /// up in the file).
    public static func writeToTerminal(_ text: String) {
        let handle = isatty(1) == 0 && isatty(2) == 1 ? FileHandle.standardError : FileHandle.standardOutput
        handle.write(Data((text + "\n").utf8))
    }

    /// Adds an entry to the history, unless it repeats the previous one, and saves the
    /// history file (so that it survives a crash or a kill). A history file that cannot be
    /// written is ignored.
    public func addHistory(_ entry: String) {
        guard isInteractive, !entry.trimmingWhitespace.isEmpty, entry != lastHistoryEntry else { return }
        lastHistoryEntry = entry
        add_history(entry)
        if let historyFile { _ = write_history(historyFile) }
    }

    private var lastHistoryEntry: String?

    // MARK: - libedit

    /// Set by the SIGINT handler; read after `readline` returns.
    private static let interrupted = Atomic<Bool>(false)

    // libedit's completion callbacks are C functions without context: they find the
    // editor and the candidates here. Only the thread that runs the REPL touches these.
    nonisolated(unsafe) private static weak var active: LineEditor?
    nonisolated(unsafe) private static var matches: [String] = []

    private static func setUp(historyFile: String?) {
        // Prompts and editing go to the terminal even when standard output is redirected.
        if isatty(1) == 0, isatty(2) == 1 { rl_outstream = fdopen(dup(2), "w") }
        using_history()
        stifle_history(1000)
        if let historyFile { _ = read_history(historyFile) }
        // Ctrl-C abandons the line being typed instead of ending the session: the handler
        // only records it; without SA_RESTART the terminal read fails and readline returns.
        var action = sigaction()
        #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = { _ in LineEditor.interrupted.store(true, ordering: .relaxed) }
        #else
            action.__sigaction_u.__sa_handler = { _ in LineEditor.interrupted.store(true, ordering: .relaxed) }
        #endif
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(SIGINT, &action, nil)

        // Characters that end the word Tab completes (libedit keeps the pointer). `.` and
        // `/` are not among them, so key paths (`address.ci`) and file names
        // (`mappings/ex`) complete as one word.
        // (`mappings/ex`) complete as one word. libedit reads the "basic" set.
        let breaks = strdup(" \t\n\"'`(),{}[]=<>!+*&|$;:")
        rl_basic_word_break_characters = UnsafePointer(breaks)
        rl_completer_word_break_characters = breaks
        rl_attempted_completion_function = { text, start, _ in
            // Never fall back to libedit's file name completion: the completer decides.
            rl_attempted_completion_over = 1
            guard let text, let completer = LineEditor.active?.completer else { return nil }
            let line = rl_line_buffer.map { String(cString: $0) } ?? ""
            LineEditor.matches = completer(line, Int(start), String(cString: text))
            guard !LineEditor.matches.isEmpty else { return nil }
            let spaced = LineEditor.matches.count == 1 && LineEditor.matches[0].hasSuffix(" ")
            if spaced { LineEditor.matches[0].removeLast() }
            rl_completion_append_character = spaced ? 0x20 : 0
            return rl_completion_matches(text) { _, state in
                let index = Int(state)
                guard index < LineEditor.matches.count else { return nil }
                return strdup(LineEditor.matches[index])
            }
        }
    }
}
