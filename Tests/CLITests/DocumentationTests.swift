import Foundation
import RemodelCLI
import Testing
import TestSupport

/// The examples of docs/mapping-eval.md and of `mapping-eval --help` run, and print what
/// they show, so that they cannot rot.
///
/// An example is a `$ command` line followed by what it prints (standard output and
/// standard error together). `remodel> ` and `...> ` lines are what the command (a REPL)
/// reads from standard input. `swift run mapping-eval` runs the built executable.
@Suite struct DocumentationTests {
    struct Example: CustomStringConvertible {
        var command: String
        var input = ""
        var output = ""
        var description: String { "$ " + command }
    }

    static func examples(in lines: some Sequence<Substring>) -> [Example] {
        var examples: [Example] = []
        for line in lines {
            if line.hasPrefix("$ ") {
                examples.append(Example(command: String(line.dropFirst(2))))
            } else if examples.isEmpty {
                continue
            } else if line.hasPrefix("remodel> ") {
                examples[examples.count - 1].input += line.dropFirst("remodel> ".count) + "\n"
            } else if line.hasPrefix("...> ") {
                examples[examples.count - 1].input += line.dropFirst("...> ".count) + "\n"
            } else {
                examples[examples.count - 1].output += line + "\n"
            }
        }
        return examples
    }

    /// The examples in the ```console blocks of docs/mapping-eval.md.
    static var guideExamples: [Example] {
        let url = Repository.root.appendingPathComponent("docs/mapping-eval.md")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        var blocks: [[Substring]] = []
        var current: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```console" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!)
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks.flatMap { examples(in: $0) }
    }

    /// The examples in the discussion of `--help`: its lines indented by two spaces.
    static var helpExamples: [Example] {
        let lines = EvalCommand.configuration.discussion.split(separator: "\n")
            .filter { $0.hasPrefix("  ") }.map { $0.dropFirst(2) }
        return examples(in: lines)
    }

    @Test func theGuideHasExamples() {
        #expect(Self.guideExamples.count >= 20)
        #expect(Self.helpExamples.count >= 6)
    }

    @Test(arguments: guideExamples) func guide(_ example: Example) throws {
        try check(example)
    }

    @Test(arguments: helpExamples) func help(_ example: Example) throws {
        try check(example)
    }

    func check(_ example: Example) throws {
        let executable = try #require(MappingEvalProcess.executable, "mapping-eval was not built")
        // Examples that open the store written by Apple's Core Data need ../shared.
        if example.command.contains("../shared/") { try SharedFixtures.require() }
        var command = example.command
        if command.hasPrefix("swift run mapping-eval") { command.removeFirst("swift run ".count) }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("doc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let stdin = scratch.appendingPathComponent("stdin"), output = scratch.appendingPathComponent("output")
        try Data(example.input.utf8).write(to: stdin)
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.currentDirectoryURL = Repository.root
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] =
            executable.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["HOME"] = scratch.path
        environment["REMODEL_HISTORY"] = ""
        process.environment = environment
        process.standardInput = try FileHandle(forReadingFrom: stdin)
        // One file for both streams: the executable writes unbuffered, so their order is kept.
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        process.waitUntilExit()
        #expect(try String(contentsOf: output, encoding: .utf8) == example.output, "$ \(example.command)")
    }
}
