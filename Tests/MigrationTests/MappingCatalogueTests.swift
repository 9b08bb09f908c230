import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// The catalogue of broken mapping files (Fixtures/broken): each `NN-name.mapping.json`
/// is checked against the two models in Fixtures/broken/models, and what
/// `mapping-migrate check` would print for it must equal `NN-name.expected` exactly.
///
/// After changing a message on purpose, re-record with
/// `REMODEL_RECORD_CATALOGUE=1 swift test --filter MappingCatalogueTests` and read the
/// diff of the `.expected` files as a user would before committing it.
@Suite struct MappingCatalogueTests {
    static let folder = Repository.root.appendingPathComponent("Tests/MigrationTests/Fixtures/broken")
    static let models = folder.appendingPathComponent("models")

    /// The file names of the cases, in order.
    static let cases: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".mapping.json") }.sorted()
    }()

    static func loadModels() throws -> (ObjectModel, ObjectModel) {
        (
            try ObjectModel.load(contentsOf: models.appendingPathComponent("Shop1.model.json")),
            try ObjectModel.load(contentsOf: models.appendingPathComponent("Shop2.model.json"))
        )
    }

    /// One policy is registered, so that a file can name it and another can misspell it.
    static var policies: PolicyRegistry {
        var registry = PolicyRegistry()
        registry.register("KnownPolicy") { DefaultMigrationPolicy() }
        return registry
    }

    /// Every problem of the mapping file at `url`, rendered as `mapping-migrate check`
    /// prints them: structural problems when the file cannot be read as a mapping,
    /// otherwise the problems found against the models.
    static func report(_ url: URL) throws -> String {
        let (shop1, shop2) = try loadModels()
        do throws(MappingErrors) {
            let mapping = try MappingModel.load(contentsOf: url)
            return MappingErrors(MigrationManager.check(mapping, source: shop1, destination: shop2, policies: policies))
                .rendered()
        } catch {
            return error.rendered()
        }
    }

    /// The file as a user names it from inside the folder: messages show the path the
    /// user passed, so the expectations hold on every machine.
    static func relativeURL(_ name: String) -> URL {
        URL(fileURLWithPath: name, relativeTo: folder)
    }

    @Test(arguments: cases) func reportsExactlyWhatIsExpected(_ name: String) throws {
        let report = try Self.report(Self.relativeURL(name)) + "\n"
        let expectedURL = Self.folder.appendingPathComponent(
            name.replacingOccurrences(of: ".mapping.json", with: ".expected"))
        if ProcessInfo.processInfo.environment["REMODEL_RECORD_CATALOGUE"] != nil {
            try report.write(to: expectedURL, atomically: true, encoding: .utf8)
            return
        }
        let expected = try String(contentsOf: expectedURL, encoding: .utf8)
        #expect(report == expected, "\(name)")
        #expect(report != "\n", "\(name) is in the catalogue of broken files, but nothing is wrong with it")
    }

    @Test func theCatalogueHasAtLeast35Cases() {
        #expect(Self.cases.count >= 35)
        for (i, name) in Self.cases.enumerated() {
            #expect(
                name.hasPrefix(String(format: "%02d-", i + 1)), "cases are numbered 01, 02, … without gaps: \(name)")
        }
    }

    @Test func everyCaseHasItsExpectationAndNothingElseLies() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path)
        let expected = Set(names.filter { $0.hasSuffix(".expected") })
        let wanted = Set(Self.cases.map { $0.replacingOccurrences(of: ".mapping.json", with: ".expected") })
        #expect(expected == wanted)
    }

    @Test func theCatalogueReadmeListsEveryCase() throws {
        let readme = try String(contentsOf: Self.folder.appendingPathComponent("README.md"), encoding: .utf8)
        for name in Self.cases { #expect(readme.contains("](\(name))"), "README.md should list \(name)") }
    }

    /// The cases are each one or a few edits away from this file, which checks clean.
    @Test func theBaselineMappingChecksClean() throws {
        let report = try Self.report(URL(fileURLWithPath: "Shop1_to_Shop2.mapping.json", relativeTo: Self.models))
        #expect(report == "")
    }

    /// Messages name the file as the user passed it, relative or absolute.
    @Test func messagesNameTheFileAsItWasGiven() throws {
        let name = Self.cases.first { $0.contains("invalid-json") } ?? Self.cases[0]
        let relative = try Self.report(Self.relativeURL(name))
        #expect(relative.hasPrefix(name + ":"))
        let absolute = try Self.report(Self.folder.appendingPathComponent(name))
        #expect(absolute.hasPrefix(Self.folder.appendingPathComponent(name).path + ":"))
    }
}
