import ExpressionLanguage
import Foundation
import Testing
import TestSupport
@testable import ObjectGraph

/// What Xcode accepts and Remodel once refused: each case is a model's entities in Xcode's
/// XML, and the warnings loading gives (what Remodel does with a feature it carries or
/// skips), or the errors when loading it would lose data.
@Suite struct XcodeOdditiesTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let id: String
        let xml: String
        let warnings: [String]
        let errors: [String]
        var testDescription: String { id }
    }

    static let cases: [Case] = [
        Case(
            id: "transient Undefined",
            xml: #"<entity name="E"><attribute name="scratch" transient="YES" attributeType="Undefined"/></entity>"#,
            warnings: [], errors: []),
        Case(
            id: "stored Undefined",
            xml: #"<entity name="E"><attribute name="scratch" attributeType="Undefined"/></entity>"#,
            warnings: [],
            errors: [
                "V.xcdatamodel/contents: entities.E.attributes.scratch.type: a stored attribute cannot be undefined (Core Data refuses it too: only a transient attribute may have no storable type); make it transient or give it one of the types int16 int32 int64 decimal double float string boolean date binary uuid uri transformable"
            ]),
        Case(
            id: "integer defaults 0.0, 1.0, YES, NO",
            xml: """
                <entity name="E"><attribute name="a" attributeType="Integer 16" defaultValueString="0.0"/>
                <attribute name="b" attributeType="Integer 32" defaultValueString="1.0"/>
                <attribute name="c" attributeType="Integer 64" defaultValueString="YES"/>
                <attribute name="d" attributeType="Integer 64" defaultValueString="NO"/>
                <attribute name="e" attributeType="Boolean" defaultValueString="1.0"/></entity>
                """, warnings: [], errors: []),
        Case(
            id: "integer default 1.5",
            xml:
                #"<entity name="E"><attribute name="a" attributeType="Integer 16" defaultValueString="1.5"/></entity>"#,
            warnings: [],
            errors: [
                "V.xcdatamodel/contents: entity E attribute a defaultValueString: '1.5' is not a valid Integer 16 value"
            ]),
        Case(
            id: "upper-case names",
            xml: """
                <entity name="E"><attribute name="Title" attributeType="String"/><relationship name="Box" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="box" inverseName="Items" inverseEntity="box"/></entity>
                <entity name="box"><relationship name="Items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="E" inverseName="Box" inverseEntity="E"/></entity>
                """, warnings: [], errors: []),
        Case(
            id: "derived attribute",
            xml: """
                <entity name="E"><attribute name="title" attributeType="String"/><attribute name="searchTitle" optional="YES" attributeType="String" derived="YES" derivationExpression="lowercase:(title)"/></entity>
                """,
            warnings: [
                "V.xcdatamodel/contents: entities.E.attributes.searchTitle.derivationExpression: derived from 'lowercase:(title)': Remodel stores and migrates the value like any attribute's, and does not recompute it when objects change"
            ],
            errors: []),
        Case(
            id: "transient composite",
            xml: """
                <entity name="E"><attribute name="place" transient="YES" attributeType="Composite" composite="Place"><element name="city" attributeType="String"/></attribute></entity>
                <composite name="Place"><attribute name="city" attributeType="String"/></composite>
                """, warnings: [], errors: []),
        Case(
            id: "stored composite",
            xml: """
                <entity name="E"><attribute name="place" optional="YES" attributeType="Composite" composite="Place"/></entity>
                <composite name="Place"><attribute name="city" attributeType="String"/></composite>
                """, warnings: [],
            errors: [
                "V.xcdatamodel/contents: entities.E.attributes.place.type: a stored composite attribute is not supported: Core Data keeps its elements in columns of their own that Remodel does not create, so migrating the store would lose its values; make it transient, or split it into attributes"
            ]),
        Case(
            id: "fetched property",
            xml: """
                <entity name="E"><attribute name="kind" attributeType="String"/>
                <fetchedProperty name="similar" optional="YES"><fetchRequest name="fetchedPropertyFetchRequest" entity="E" predicateString="kind == $FETCH_SOURCE.kind"/></fetchedProperty></entity>
                """,
            warnings: [
                "V.xcdatamodel/contents: entities.E.fetchedProperties.similar: a fetched property (E where kind == $FETCH_SOURCE.kind) is not stored: Remodel carries it and does not evaluate it"
            ],
            errors: []),
        Case(
            id: "configuration",
            xml: """
                <entity name="E"/><entity name="F"/>
                <configuration name="Cloud" usedWithCloudKit="YES"><memberEntity name="E"/></configuration>
                """,
            warnings: [
                "V.xcdatamodel/contents: configurations.Cloud: carried (E): Remodel creates and migrates a store with every entity of the model, not with one configuration's"
            ],
            errors: []),
        Case(
            id: "uniqueness constraints",
            xml: """
                <entity name="E"><attribute name="id" attributeType="UUID"/><attribute name="name" attributeType="String"/><attribute name="owner" attributeType="String"/>
                <uniquenessConstraints><uniquenessConstraint><constraint value="id"/></uniquenessConstraint><uniquenessConstraint><constraint value="name"/><constraint value="owner"/></uniquenessConstraint></uniquenessConstraints></entity>
                """,
            warnings: [
                "V.xcdatamodel/contents: entities.E.uniquenessConstraints: (id), (name, owner) carried, not enforced: Remodel neither refuses nor merges duplicates, so a migration that makes duplicates keeps them"
            ],
            errors: []),
        Case(
            id: "fetch and compound indexes",
            xml: """
                <entity name="E"><attribute name="maker" attributeType="String"/><attribute name="plate" attributeType="String"/>
                <fetchIndex name="byMakerAndPlate"><fetchIndexElement property="maker" type="Binary" order="ascending"/><fetchIndexElement property="plate" type="Binary" order="ascending"/></fetchIndex>
                <compoundIndexes><compoundIndex><index value="plate"/></compoundIndex></compoundIndexes></entity>
                """,
            warnings: [
                "V.xcdatamodel/contents: entities.E.fetchIndexes.byMakerAndPlate: skipped: stores Remodel writes have no index on (maker, plate); an index speeds up Core Data's fetches and holds no data",
                "V.xcdatamodel/contents: entities.E.fetchIndexes.(plate): skipped: stores Remodel writes have no index on (plate); an index speeds up Core Data's fetches and holds no data"
            ], errors: []),
        Case(
            id: "preserveAfterDeletion",
            xml: #"<entity name="E"><attribute name="id" attributeType="UUID" preserveAfterDeletion="YES"/></entity>"#,
            warnings: [
                "V.xcdatamodel/contents: entities.E.attributes.id.preservesValueInHistoryOnDeletion: carried: Remodel writes no persistent history, so no tombstone keeps this value when it deletes an object"
            ],
            errors: []),
        Case(
            id: "versionHashModifier",
            xml:
                #"<entity name="E" versionHashModifier="2"><attribute name="a" attributeType="String" versionHashModifier="b"/></entity>"#,
            warnings: [], errors: [])
    ]

    /// The model of a case, as `importModel` loads it (parsed, then validated).
    static func load(_ xml: String) throws(ModelErrors) -> ObjectModel {
        let file = "V.xcdatamodel/contents"
        let model = try XcodeModelImporter.parse(Data("<model>\(xml)</model>".utf8), version: "V", file: file)
        try model.validate(file: file)
        return model
    }

    static func entity(_ id: String) throws -> EntityDescription {
        try #require(try load(cases.first { $0.id == id }!.xml).entity(named: "E"))
    }

    @Test(arguments: cases)
    func loadsWhatXcodeAccepts(_ c: Case) throws {
        do throws(ModelErrors) {
            let model = try Self.load(c.xml)
            #expect(c.errors.isEmpty, "loaded, but expected \(c.errors)")
            #expect(model.warnings(file: "V.xcdatamodel/contents").map(\.description) == c.warnings)
        } catch {
            #expect(error.errors.map(\.description) == c.errors)
        }
    }

    /// What the cases carry, field by field.
    @Test func carriesWhatItWarnsAbout() throws {
        #expect(
            try Self.entity("integer defaults 0.0, 1.0, YES, NO").attributes.map(\.defaultValue)
                == [.integer(0), .integer(1), .integer(1), .integer(0), .bool(true)])
        #expect(try Self.entity("transient Undefined").attributes.map(\.type) == [.undefined])
        #expect(try Self.entity("upper-case names").relationships.map(\.name) == ["Box"])
        #expect(
            try Self.entity("derived attribute").attribute(named: "searchTitle")?.derivationExpression
                == "lowercase:(title)")
        #expect(try Self.entity("transient composite").attributes.map(\.type) == [.composite])
        #expect(
            try Self.entity("fetched property").fetchedProperties
                == [FetchedPropertyDescription(name: "similar", entity: "E", predicate: "kind == $FETCH_SOURCE.kind")])
        #expect(try Self.load(Self.cases.first { $0.id == "configuration" }!.xml).configurations == ["Cloud": ["E"]])
        #expect(try Self.entity("uniqueness constraints").uniquenessConstraints == [["id"], ["name", "owner"]])
        #expect(
            try Self.entity("fetch and compound indexes").fetchIndexes
                == [
                    FetchIndexDescription(name: "byMakerAndPlate", properties: ["maker", "plate"]),
                    FetchIndexDescription(name: nil, properties: ["plate"])
                ])
        #expect(
            try Self.entity("preserveAfterDeletion").attribute(named: "id")?.preservesValueInHistoryOnDeletion == true)
        let modified = try Self.entity("versionHashModifier")
        #expect(modified.versionHashModifier == "2" && modified.attribute(named: "a")?.versionHashModifier == "b")
    }

    /// The JSON model format carries the same fields, reads back what it writes, and warns
    /// the same way; integral doubles and booleans are integer defaults there too.
    @Test func theJSONFormatCarriesTheSame() throws {
        let text = #"""
            {"version": "V", "configurations": {"Cloud": ["E"]}, "entities": {"E": {
              "attributes": {"id": {"type": "uuid", "preservesValueInHistoryOnDeletion": true},
                             "title": "string",
                             "searchTitle": {"type": "string", "derivationExpression": "lowercase:(title)"},
                             "count": {"type": "int16", "default": 1.0}, "flag": {"type": "int32", "default": true},
                             "scratch": {"type": "undefined", "transient": true}},
              "relationships": {"Box": {"destination": "E"}},
              "uniquenessConstraints": [["id"]],
              "fetchedProperties": {"similar": {"entity": "E", "predicate": "title == $FETCH_SOURCE.title"}}}}}
            """#
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("oddities-\(UUID()).model.json")
        try Data(text.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let model = try ObjectModel.load(contentsOf: url)
        let e = try #require(model.entity(named: "E"))
        #expect(e.attribute(named: "count")?.defaultValue == .integer(1))
        #expect(e.attribute(named: "flag")?.defaultValue == .integer(1))
        let file = url.lastPathComponent
        #expect(
            model.warnings(file: file).map(\.description) == [
                "\(file): entities.E.attributes.id.preservesValueInHistoryOnDeletion: carried: Remodel writes no persistent history, so no tombstone keeps this value when it deletes an object",
                "\(file): entities.E.attributes.searchTitle.derivationExpression: derived from 'lowercase:(title)': Remodel stores and migrates the value like any attribute's, and does not recompute it when objects change",
                "\(file): entities.E.uniquenessConstraints: (id) carried, not enforced: Remodel neither refuses nor merges duplicates, so a migration that makes duplicates keeps them",
                "\(file): entities.E.fetchedProperties.similar: a fetched property (E where title == $FETCH_SOURCE.title) is not stored: Remodel carries it and does not evaluate it",
                "\(file): configurations.Cloud: carried (E): Remodel creates and migrates a store with every entity of the model, not with one configuration's"
            ])
        let again = try ObjectModel(json: JSON.parse(model.json.serialized(pretty: true)))
        #expect(again == model)
    }
}

/// Every `.xcdatamodeld` in the shared fixtures (models from real projects, as Xcode wrote
/// them) loads without an error.
@Suite struct XcodeFixtureModelsTests {
    @Test func everyFixtureModelLoads() throws {
        try SharedFixtures.require()
        var failures: [String] = []
        var bundles: [String] = []
        let walker = FileManager.default.enumerator(atPath: SharedFixtures.root.path)
        while let path = walker?.nextObject() as? String {
            guard path.hasSuffix(".xcdatamodeld") else { continue }
            walker?.skipDescendants()
            bundles.append(path)
            do throws(ModelErrors) {
                _ = try XcodeModelImporter.importVersions(at: SharedFixtures.root.appendingPathComponent(path))
            } catch {
                failures.append("\(path):\n\(error.description)")
            }
        }
        #expect(!bundles.isEmpty, "no .xcdatamodeld under \(SharedFixtures.root.path)")
        #expect(
            failures.isEmpty,
            "\(failures.count) of \(bundles.count) models do not load:\n\(failures.joined(separator: "\n"))")
    }
}
