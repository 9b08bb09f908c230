import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// docs/mapping-format.md and docs/schemas/mapping.schema.json agree with the reader, and
/// what the guide shows is what the code does.
@Suite struct MappingFormatTests {
    static let guideURL = Repository.root.appendingPathComponent("docs/mapping-format.md")
    static let schemaURL = Repository.root.appendingPathComponent("docs/schemas/mapping.schema.json")

    static func schema() throws -> JSON {
        try JSON.parse(Data(contentsOf: schemaURL))
    }

    /// The names under `properties` of a schema object.
    static func propertyNames(_ json: JSON?) -> Set<String> {
        Set(json?["properties"]?.objectValue?.keys.map { $0 } ?? [])
    }

    @Test func theSchemaHasExactlyTheKeysTheReaderAccepts() throws {
        let schema = try Self.schema()
        let definitions = schema["$defs"]
        #expect(Self.propertyNames(schema) == Set(MappingModel.fileKeys))
        #expect(Self.propertyNames(definitions?["entityMapping"]) == Set(MappingModel.entityMappingKeys))
        #expect(Self.propertyNames(definitions?["propertyMappingObject"]) == Set(MappingModel.propertyMappingKeys))
        // And nothing else: every one of the three is closed.
        for object in [schema, definitions?["entityMapping"], definitions?["propertyMappingObject"]] {
            #expect(object?["additionalProperties"] == .bool(false))
        }
        #expect(schema["$schema"] == .string("https://json-schema.org/draft/2020-12/schema"))
        let types = definitions?["entityMapping"]?["properties"]?["type"]?["enum"]?.arrayValue?.compactMap(
            \.stringValue)
        #expect(types == MappingType.allCases.map(\.rawValue))
    }

    /// The key lists the schema is compared with are the ones the reader enforces: all of
    /// them read without complaint, and one more is refused.
    @Test func theReaderAcceptsEveryKeyOfTheSchemaAndNoOther() throws {
        let complete = """
            {"$schema": "mapping.schema.json", "comment": "all keys", "sourceModel": "A", "destinationModel": "B",
             "entityMappings": [{"comment": "c", "name": "XToX", "type": "transform", "sourceEntity": "X", "destinationEntity": "X",
               "sourceExpression": "FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', 'X', 'TRUEPREDICATE'), $manager.sourceContext, NO)",
               "attributeMappings": {"a": {"comment": "c", "valueExpression": "1", "userInfo": {"k": 1}}},
               "relationshipMappings": {"r": null}, "policy": "P", "userInfo": {"k": 2}}]}
            """
        let read = try mapping(complete)
        #expect(read.entityMappings[0].attributeMappings[0].userInfo == ["k": .integer(1)])
        for (place, extra) in [
            ("top", #"{"sourceModel": "A", "destinationModel": "B", "entityMappings": [], "extra": 1}"#),
            (
                "entity",
                #"{"sourceModel": "A", "destinationModel": "B", "entityMappings": [{"sourceEntity": "X", "extra": 1}]}"#
            ),
            (
                "property",
                #"{"sourceModel": "A", "destinationModel": "B", "entityMappings": [{"sourceEntity": "X", "destinationEntity": "X", "attributeMappings": {"a": {"extra": 1}}}]}"#
            )
        ] {
            #expect(throws: MappingErrors.self, "\(place)") { try mapping(extra) }
        }
    }

    /// The fenced blocks of the guide with their language and the line before them.
    static func blocks() throws -> [(language: String, before: String, text: String)] {
        let lines = try String(contentsOf: guideURL, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        var result: [(String, String, String)] = []
        var current: (String, String, [Substring])?
        var previous = ""
        for line in lines {
            if current == nil, line.hasPrefix("```") {
                current = (String(line.dropFirst(3)), previous, [])
            } else if let open = current, line == "```" {
                result.append((open.0, open.1, open.2.joined(separator: "\n") + "\n"))
                current = nil
            } else if current != nil {
                current!.2.append(line)
            } else if !line.isEmpty {
                previous = String(line)
            }
        }
        return result
    }

    /// The errors the guide shows are what the catalogue's files give, word for word.
    @Test func theGuidesErrorsAreTheCataloguesOwn() throws {
        let shown = try Self.blocks().filter { $0.language == "text" }
        #expect(shown.count >= 3)
        for block in shown {
            let file = String(block.text.prefix { $0 != ":" })
            let expectedURL = MappingCatalogueTests.folder.appendingPathComponent(
                file.replacingOccurrences(of: ".mapping.json", with: ".expected"))
            let expected = try String(contentsOf: expectedURL, encoding: .utf8)
            #expect(expected.contains(block.text), "\(file)")
        }
    }

    /// Its JSON is JSON; whole mapping files read; files it quotes are quoted exactly.
    @Test func theGuidesJSONReadsAndQuotesTheExamplesExactly() throws {
        var quoted = 0
        for block in try Self.blocks() where block.language == "json" {
            let json = try JSON.parse(block.text)
            if json["sourceModel"] != nil { _ = try MappingModel(json: json) }
            // "[`mappings/…`](../mappings/….mapping.json):" introduces a file shown whole.
            if let start = block.before.range(of: "](../mappings/"), block.before.hasSuffix("):") {
                let path = block.before[start.upperBound...].dropLast(2)
                let file = try String(
                    contentsOf: Repository.root.appendingPathComponent("mappings/" + path), encoding: .utf8)
                #expect(file == block.text, "\(path)")
                quoted += 1
            }
        }
        #expect(quoted == 2)
    }

    @Test func theGuideNamesEveryKeyAndLinksTheSchemaAndTheCatalogue() throws {
        let guide = try String(contentsOf: Self.guideURL, encoding: .utf8)
        for key in MappingModel.fileKeys + MappingModel.entityMappingKeys + MappingModel.propertyMappingKeys {
            #expect(guide.contains("`\(key)`"), "\(key)")
        }
        for type in MappingType.allCases { #expect(guide.contains("`\(type.rawValue)`")) }
        for variable in MappingCompiler.variables { #expect(guide.contains("`$\(variable)`")) }
        #expect(guide.contains("(schemas/mapping.schema.json)"))
        #expect(guide.contains("(../Tests/MigrationTests/Fixtures/broken/README.md)"))
    }

    /// Each problem says its kind, so that a program can tell a typo in the file from a
    /// mapping made for other models.
    @Test func errorsSayTheirKind() throws {
        let directory = try TemporaryDirectory()
        func kinds(ofFile text: String) -> [MappingError.Kind] {
            let url = directory.url.appendingPathComponent("m.mapping.json")
            try? Data(text.utf8).write(to: url)
            do {
                _ = try MappingModel.load(contentsOf: url)
                return []
            } catch {
                return error.errors.map(\.kind)
            }
        }
        #expect(kinds(ofFile: "{") == [.syntax])
        #expect(
            kinds(ofFile: #"{"sourceModel": "Shop1", "destinationModel": "Shop2", "entityMapings": []}"#) == [.format])
        #expect((try? MappingModel.load(contentsOf: directory.url.appendingPathComponent("none.mapping.json"))) == nil)
        do {
            _ = try MappingModel.load(contentsOf: directory.url.appendingPathComponent("none.mapping.json"))
        } catch {
            #expect(error.errors.map(\.kind) == [.unreadable])
        }
        func kinds(_ mappings: String, sourceModel: String = "Shop1") throws -> [MappingError.Kind] {
            let m = try mapping(
                #"{"sourceModel": "\#(sourceModel)", "destinationModel": "Shop2", "entityMappings": \#(mappings)}"#)
            return MigrationManager.check(m, source: EngineTests.shop1, destination: EngineTests.shop2).map(\.kind)
        }
        #expect(try kinds(#"[{"type": "copy", "sourceEntity": "Tag", "destinationEntity": "Tags"}]"#) == [.model])
        #expect(
            try kinds(
                #"[{"type": "transform", "sourceEntity": "Tag", "destinationEntity": "Tag", "attributeMappings": {"label": "$source.label +"}}]"#
            )
                == [.expression])
        #expect(
            try kinds(#"[{"type": "copy", "sourceEntity": "Tag", "destinationEntity": "Tag", "policy": "Missing"}]"#)
                == [.policy])
        #expect(
            try kinds(#"[{"type": "copy", "sourceEntity": "Tag", "destinationEntity": "Tag"}]"#, sourceModel: "Shop0")
                == [.step])
    }

    @Test func modelErrorsSayTheirKind() throws {
        func kinds(_ text: String) -> [ModelError.Kind] {
            do {
                _ = try ObjectModel(json: JSON.parse(text))
                return []
            } catch let error as ModelErrors {
                return error.errors.map(\.kind)
            } catch {
                return []
            }
        }
        #expect(kinds(#"{"version": "A", "entities": {"Tag": {"atributes": {}}}}"#) == [.format])
        let dangling = try ObjectModel(
            json: JSON.parse(
                #"{"version": "A", "entities": {"Tag": {"relationships": {"orders": {"destination": "Order"}}}}}"#))
        #expect(dangling.validationErrors().map(\.kind) == [.invalid])
        let directory = try TemporaryDirectory()
        do {
            _ = try ObjectModel.load(contentsOf: directory.url.appendingPathComponent("none.model.json"))
            Issue.record("a missing file loaded")
        } catch {
            #expect(error.errors.map(\.kind) == [.unreadable])
        }
    }

    /// Invalid JSON on a long line (a minified file) is quoted in a window around the
    /// column, as long expressions are: one caret renderer for every error.
    @Test func invalidJSONOnALongLineIsQuotedInAWindow() throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("long.mapping.json")
        let padding = String(repeating: " ", count: 5_000)
        try Data(#"{"sourceModel": "A",\#(padding) "destinationModel": "B",, "entityMappings": []}"#.utf8).write(
            to: url)
        do {
            _ = try MappingModel.load(contentsOf: url)
            Issue.record("invalid JSON loaded")
        } catch {
            let lines = error.rendered().split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.count == 3)
            #expect(
                lines[1].count < 200 && lines[1].contains(#""destinationModel": "B",,"#) && lines[1].hasPrefix("  …"))
            let caret = try #require(lines[2].firstIndex(of: "^"))
            let quoted = lines[1]
            let comma = try #require(quoted.range(of: ",,")?.upperBound)
            #expect(
                lines[2].distance(from: lines[2].startIndex, to: caret) == quoted.distance(
                    from: quoted.startIndex, to: comma) - 1)
        }
    }
}
