// What every test target shares: the repository's folders, the shared fixtures beside
// it, temporary folders, and a seeded generator.
import Foundation
import Testing

/// The repository's folders, found from this file's place.
public enum Repository {
    /// The folder that holds Package.swift.
    public static let root: URL = {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
                return directory
            }
            directory.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }()

    /// `path` below the repository's root.
    public static func url(_ path: String) -> URL { root.appendingPathComponent(path) }
}

/// The fixtures written by Apple's tools and other projects (`../shared/fixtures` beside
/// the repository, present in CI). Tests that need them are skipped, saying why, when
/// they are absent.
public enum SharedFixtures {
    public static let root = Repository.root.deletingLastPathComponent().appendingPathComponent("shared/fixtures")

    public static var isAvailable: Bool { FileManager.default.fileExists(atPath: root.path) }

    public static let missingMessage: Comment =
        "skipped: needs ../shared/fixtures beside the repository (present in CI)"

    /// The objc.io article's project: a store written by Apple's Core Data (4 books, 3
    /// users), its Xcode model and mapping models.
    public static let bookMigration = root.appendingPathComponent("coredata/objcio-bookmigration")

    /// Skips the running test (or test case), saying why, when the fixtures are absent.
    public static func require() throws {
        if !isAvailable { try Test.cancel(missingMessage) }
    }
}

/// A folder removed when the value goes.
public final class TemporaryDirectory {
    public let url: URL

    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("remodel-\(UUID())")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// SplitMix64: a small seeded generator, so that every run and platform sees the same
/// values, and a failing trial can be run again from its seed.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
