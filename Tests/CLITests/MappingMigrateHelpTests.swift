import Foundation
import Testing

/// The examples in `mapping-migrate --help` and each subcommand's `--help` run as shown,
/// from the repository's root, so that they cannot rot.
///
/// An example is a `  $ command` line of the help (a line ending in `\` goes on on the
/// next), followed by the lines it prints, indented the same; a command shown without
/// output only has to succeed. `/tmp/` is a scratch folder of the test, and `cd` changes
/// the folder the next commands run in.
@Suite struct MappingMigrateHelpTests {
    struct Example: CustomStringConvertible {
        var command: String
        var output: [String] = []
        var description: String { "$ " + command }
    }

    static let subcommands = ["", "run", "check", "plan", "infer", "inspect", "seed"]

    let cli = MappingMigrateBinaryTests()

    /// The examples of one help text.
    static func examples(inHelp help: String) -> [Example] {
        var examples: [Example] = []
        var continuing = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("USAGE:") { break }
            guard line.hasPrefix("  ") else {
                continuing = false
                continue
            }
            let text = String(line.dropFirst(2))
            if continuing {
                examples[examples.count - 1].command += " " + text.trimmingCharacters(in: .whitespaces)
            } else if text.hasPrefix("$ ") {
                examples.append(Example(command: String(text.dropFirst(2))))
            } else if !examples.isEmpty {
                examples[examples.count - 1].output.append(text)
                continue
            } else {
                continue
            }
            continuing = examples[examples.count - 1].command.hasSuffix(" \\")
            if continuing { examples[examples.count - 1].command.removeLast(2) }
        }
        return examples
    }

    @Test(arguments: subcommands) func helpExamplesRun(_ subcommand: String) throws {
        let help = try cli.run(subcommand.isEmpty ? "--help" : subcommand, "--help")
        #expect(help.status == 0)
        let examples = Self.examples(inHelp: help.stdout)
        #expect(examples.count >= 2, "\(subcommand) --help has no example")
        let executable = try #require(MappingMigrateBinaryTests.executable)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("help-\(UUID())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        var directory = MappingMigrateBinaryTests.root
        for example in examples {
            let command = example.command.replacingOccurrences(of: "/tmp/", with: scratch.path + "/")
            if command.hasPrefix("cd ") {
                directory = directory.appendingPathComponent(String(command.dropFirst(3)))
                continue
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", command]
            process.currentDirectoryURL = directory
            var environment = ProcessInfo.processInfo.environment
            environment["PATH"] =
                executable.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
            process.environment = environment
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(subcommand) --help: $ \(example.command)\n\(stderr)")
            if !example.output.isEmpty {
                let expected = example.output.map { $0.replacingOccurrences(of: "/tmp/", with: scratch.path + "/") }
                #expect(stdout == expected.joined(separator: "\n") + "\n", "\(subcommand) --help: $ \(example.command)")
            }
        }
    }
}
