import Foundation
import Testing
import TestSupport

/// Runs the built `mapping-eval` executable, as a user or a script would.
struct MappingEvalProcess {
    struct Result: Equatable, CustomStringConvertible {
        var status: Int32
        var stdout: String
        var stderr: String

        var description: String { "status \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)---" }
    }

    /// The executable: beside the test bundle (SwiftPM puts products and the test bundle in
    /// one directory), else `.build/debug/mapping-eval` above this file.
    static let executable: URL? = {
        var candidates: [URL] = []
        if let bundle = Bundle.main.executableURL { candidates.append(bundle.deletingLastPathComponent()) }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        for bundle in Bundle.allBundles { candidates.append(bundle.bundleURL.deletingLastPathComponent()) }
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/" {
            candidates.append(directory.appendingPathComponent(".build/debug"))
            directory.deleteLastPathComponent()
        }
        return candidates.map { $0.appendingPathComponent("mapping-eval") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Runs `mapping-eval arguments…` with `stdin` as its standard input (not a terminal)
    /// in `directory`, with HOME in a scratch directory so that no history is touched.
    static func run(_ arguments: [String], stdin: String = "", directory: URL? = nil) throws -> Result {
        let executable = try #require(
            executable,
            "mapping-eval was not found beside the test bundle or in .build/debug; build it with `swift build --product mapping-eval`"
        )
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("mapping-eval-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let files = ["stdin", "stdout", "stderr"].map { scratch.appendingPathComponent($0) }
        try Data(stdin.utf8).write(to: files[0])
        _ = FileManager.default.createFile(atPath: files[1].path, contents: nil)
        _ = FileManager.default.createFile(atPath: files[2].path, contents: nil)

        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory ?? scratch
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = scratch.path
        environment["REMODEL_HISTORY"] = ""
        process.environment = environment
        process.standardInput = try FileHandle(forReadingFrom: files[0])
        process.standardOutput = try FileHandle(forWritingTo: files[1])
        process.standardError = try FileHandle(forWritingTo: files[2])
        try process.run()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: try String(contentsOf: files[1], encoding: .utf8),
            stderr: try String(contentsOf: files[2], encoding: .utf8))
    }
}
