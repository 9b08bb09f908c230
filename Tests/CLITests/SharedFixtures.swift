import Foundation
import Testing

/// Paths to the shared fixtures written by Apple's tools (`../shared/fixtures` beside the
/// repository). Tests that need them are skipped, with ``missingMessage``, when they are
/// absent.
enum SharedFixtures {
    static let root: URL = MappingEvalProcess.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures")

    static var isAvailable: Bool { FileManager.default.fileExists(atPath: root.path) }

    static let missingMessage = "skipped: ../shared/fixtures is not beside the repository"

    /// A store written by Apple's Core Data (4 books, 3 users) and its Xcode model.
    static let bookMigration = root.appendingPathComponent("coredata/objcio-bookmigration")
    static var bookStore: String { bookMigration.appendingPathComponent("Model1.sqlite").path }
    static var bookModels: String { bookMigration.appendingPathComponent("Model.xcdatamodeld").path }

    /// Skips the running test (or test case) when the fixtures are absent.
    static func require() throws {
        if !isAvailable { try Test.cancel(Comment(rawValue: missingMessage)) }
    }
}
