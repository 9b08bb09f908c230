import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// A progressive chain over an `.xcdatamodeld` whose versions have Xcode's default names
/// (`Notes`, `Notes 2`, `Notes 3`): it starts from the unnumbered first version, and its
/// inferred steps include a new required to-many relationship, which starts empty.
@Suite struct DefaultVersionNamesChainTests {
    static let versions: [(String, String)] = [
        ("Notes", #"<entity name="Note"><attribute name="title" optional="YES" attributeType="String"/></entity>"#),
        (
            "Notes 2",
            """
            <entity name="Note"><attribute name="title" optional="YES" attributeType="String"/>
            <attribute name="stars" attributeType="Integer 16" defaultValueString="0.0"/></entity>
            """
        ),
        (
            "Notes 3",
            """
            <entity name="Note"><attribute name="title" optional="YES" attributeType="String"/>
            <attribute name="stars" attributeType="Integer 16" defaultValueString="0.0"/>
            <relationship name="tags" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="notes" inverseEntity="Tag"/></entity>
            <entity name="Tag"><attribute name="name" optional="YES" attributeType="String"/>
            <relationship name="notes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="tags" inverseEntity="Note"/></entity>
            """
        )
    ]

    @Test func aChainOverDefaultNamesRunsFromVersionOne() throws {
        let directory = try TemporaryDirectory()
        let bundle = directory.url.appendingPathComponent("Notes.xcdatamodeld")
        // Written newest first, so that nothing depends on the order files are listed in.
        for (name, entities) in Self.versions.reversed() {
            let folder = bundle.appendingPathComponent("\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("<model>\(entities)</model>".utf8).write(to: folder.appendingPathComponent("contents"))
        }
        let models = try ObjectModel.loadVersions(at: bundle)
        #expect(models.map(\.version) == ["Notes", "Notes 2", "Notes 3"])

        let path = directory.path("Notes.sqlite")
        try seededStore(at: path, model: models[0], seed: #"{"Note": [{"title": "a"}, {"title": "b"}]}"#)
        let migrator = StoreMigrator(models: models, mappings: [])
        let plan = try migrator.plan(storeAt: path)
        #expect(
            plan.map { "\($0.source.version) → \($0.destination.version)" } == ["Notes → Notes 2", "Notes 2 → Notes 3"])
        #expect(plan.allSatisfy { $0.isInferred && $0.warnings.isEmpty })
        _ = try migrator.migrate(storeAt: path)
        #expect(try migrator.version(ofStoreAt: path).version == "Notes 3")
        #expect(
            try InferenceTests.dump(path, models[2]) == [
                #"Note/1 title="a" stars=0 tags=[]"#, #"Note/2 title="b" stars=0 tags=[]"#
            ])
    }
}
