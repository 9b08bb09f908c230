import Foundation
import Testing
import TestSupport
@testable import ObjectGraph

/// `ObjectModel.loadVersions(at:)`: what `--models` takes.
@Suite struct ModelVersionsTests {
    /// A folder holding `files` (name → contents), removed when the test ends.
    final class Folder {
        let url: URL
        init(_ files: [String: String]) throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("versions-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            for (name, text) in files { try Data(text.utf8).write(to: url.appendingPathComponent(name)) }
        }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    static func model(_ version: String) -> String {
        #"{"version": "\#(version)", "entities": {"Book": {"attributes": {"title": "string"}}}}"#
    }

    @Test func aFolderIsOrderedNaturallyOrByItsManifest() throws {
        let files = [
            "a.model.json": Self.model("Model10"), "b.model.json": Self.model("Model2"),
            "c.model.json": Self.model("Model1"),
            "notes.txt": "not a model"
        ]
        let natural = try Folder(files)
        #expect(try ObjectModel.loadVersions(at: natural.url).map(\.version) == ["Model1", "Model2", "Model10"])
        var withManifest = files
        withManifest["versions.json"] = #"["Model2", "Model10", "Model1"]"#
        let manifest = try Folder(withManifest)
        #expect(try ObjectModel.loadVersions(at: manifest.url).map(\.version) == ["Model2", "Model10", "Model1"])
        // One file is one version.
        #expect(
            try ObjectModel.loadVersions(at: natural.url.appendingPathComponent("b.model.json")).map(\.version) == [
                "Model2"
            ])
    }

    @Test(arguments: [
        (#"["Model1"]"#, "versions.json: does not list 'Model2' (b.model.json); list every version, oldest first"),
        (
            #"["Model1", "Model2", "Model3"]"#,
            "versions.json: [2]: 'Model3' is not the version of any *.model.json file here"
        ),
        (#"["Model1", "Model2", "Model1"]"#, "versions.json: [2]: 'Model1' is listed twice"),
        (
            #"{"Model1": 1}"#,
            #"versions.json: expected an array of version names, oldest first, such as ["Model1", "Model2"]"#
        ),
        (
            #"["Model1", 2]"#,
            #"versions.json: expected an array of version names, oldest first, such as ["Model1", "Model2"]"#
        ),
        (#"["Model1","#, "versions.json: invalid JSON at 1:11: expected a value, found end of input")
    ])
    func manifestErrors(manifest: String, message: String) throws {
        let folder = try Folder([
            "a.model.json": Self.model("Model1"), "b.model.json": Self.model("Model2"), "versions.json": manifest
        ])
        let error = #expect(throws: ModelErrors.self) { try ObjectModel.loadVersions(at: folder.url) }
        #expect(error?.description == message)
    }

    @Test func folderErrors() throws {
        let twice = try Folder(["a.model.json": Self.model("Model1"), "b.model.json": Self.model("Model1")])
        let duplicate = #expect(throws: ModelErrors.self) { try ObjectModel.loadVersions(at: twice.url) }
        #expect(
            duplicate?.description
                == "b.model.json: version: version 'Model1' is also the version of a.model.json; each version needs its own name"
        )

        let empty = try Folder(["readme.txt": ""])
        try FileManager.default.createDirectory(
            at: empty.url.appendingPathComponent("Model.xcdatamodeld"), withIntermediateDirectories: true)
        let none = #expect(throws: ModelErrors.self) { try ObjectModel.loadVersions(at: empty.url) }
        #expect(
            none?.description
                == "\(empty.url.path): no *.model.json files in this folder (it holds Model.xcdatamodeld: give that folder instead)"
        )

        let missing = #expect(throws: ModelErrors.self) {
            try ObjectModel.loadVersions(at: URL(fileURLWithPath: "/nonexistent/models"))
        }
        #expect(
            missing?.description
                == "/nonexistent/models: no such file or folder; give a *.model.json file, a folder of them, an .xcdatamodeld folder or a compiled .momd"
        )

        let broken = try Folder(["a.model.json": #"{"version": "Model1", "entities": {"Book": {"atributes": {}}}}"#])
        let invalid = #expect(throws: ModelErrors.self) { try ObjectModel.loadVersions(at: broken.url) }
        #expect(invalid?.errors.first?.file == "a.model.json")
    }

    /// Xcode names versions `Model`, `Model 2`, … `Model 10`: the unnumbered base name is
    /// the first, then numbers count, whatever the spelling around them.
    @Test(arguments: [
        (["Model 10", "Model", "Model 2", "Model 9"], ["Model", "Model 2", "Model 9", "Model 10"]),
        (["Model_v10", "Model_v2", "Model"], ["Model", "Model_v2", "Model_v10"]),
        (["Model3", "Model10", "Model1"], ["Model1", "Model3", "Model10"]),
        (["Model 2", "Model_v2", "Model2"], ["Model2", "Model 2", "Model_v2"]),
        (["App 1.10", "App 1.9", "App 1.2"], ["App 1.2", "App 1.9", "App 1.10"]),
        (
            ["SampleModel3_v3", "SampleModel3", "SampleModel3_v2"],
            ["SampleModel3", "SampleModel3_v2", "SampleModel3_v3"]
        ),
        (["model 2", "Model"], ["Model", "model 2"])
    ])
    func versionOrder(names: [String], ordered: [String]) throws {
        #expect(names.sorted(by: ObjectModel.versionPrecedes) == ordered)
        // The same order for JSON model files without a manifest, and for an .xcdatamodeld.
        var files: [String: String] = [:]
        for (i, name) in names.enumerated() { files["\(i).model.json"] = Self.model(name) }
        let jsonFolder = try Folder(files)
        #expect(try ObjectModel.loadVersions(at: jsonFolder.url).map(\.version) == ordered)
        let bundle = try Folder([:])
        for name in names {
            let folder = bundle.url.appendingPathComponent("Model.xcdatamodeld/\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(
                #"<model><entity name="Book"><attribute name="title" attributeType="String"/></entity></model>"#.utf8
            )
            .write(to: folder.appendingPathComponent("contents"))
        }
        let (versions, current) = try XcodeModelImporter.importVersions(
            at: bundle.url.appendingPathComponent("Model.xcdatamodeld"))
        #expect(versions.map(\.version) == ordered)
        // Without .xccurrentversion the newest is the current one.
        #expect(current == ordered.last)
    }

    @Test func xcodeModels() throws {
        try SharedFixtures.require()
        let bundle = SharedFixtures.bookMigration.appendingPathComponent("Model.xcdatamodeld")
        #expect(try ObjectModel.loadVersions(at: bundle).map(\.version) == ["Model1", "Model2", "Model3"])
        #expect(
            try ObjectModel.loadVersions(at: bundle.appendingPathComponent("Model2.xcdatamodel")).map(\.version) == [
                "Model2"
            ])
    }
}
