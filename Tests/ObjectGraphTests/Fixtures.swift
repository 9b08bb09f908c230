import Foundation
import Testing

/// Paths to the shared fixtures written by Apple's tools (`../shared/fixtures` beside the
/// repository). Tests that need them are skipped, with this message, when they are absent.
enum SharedFixtures {
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/fixtures")

    static var isAvailable: Bool { FileManager.default.fileExists(atPath: root.path) }

    static let missingMessage = "skipped: ../shared/fixtures is not beside the repository"

    static let bookMigration = root.appendingPathComponent("coredata/objcio-bookmigration")

    /// Skips the running test (or test case), saying why, when the fixtures are absent.
    static func require() throws {
        if !isAvailable { try Test.cancel(Comment(rawValue: missingMessage)) }
    }
}
