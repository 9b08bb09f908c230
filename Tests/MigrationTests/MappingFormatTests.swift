import ExpressionLanguage
import Foundation
import Testing

@testable import Migration

/// docs/mapping-format.md and docs/schemas/mapping.schema.json agree with the reader, and
/// what the guide shows is what the code does.
@Suite struct MappingFormatTests {
    static let guideURL = repositoryRoot.appendingPathComponent("docs/mapping-format.md")
    static let schemaURL = repositoryRoot.appendingPathComponent("docs/schemas/mapping.schema.json")

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
        let types = definitions?["entityMapping"]?["properties"]?["type"]?["enum"]?.arrayValue?.compactMap(\.stringValue)
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
        for (place, extra) in [("top", #"{"sourceModel": "A", "destinationModel": "B", "entityMappings": [], "extra": 1}"#),
                               ("entity", #"{"sourceModel": "A", "destinationModel": "B", "entityMappings": [{"sourceEntity": "X", "extra": 1}]}"#),
                               ("property", #"{"sourceModel": "A", "destinationModel": "B", "entityMappings": [{"sourceEntity": "X", "destinationEntity": "X", "attributeMappings": {"a": {"extra": 1}}}]}"#)] {
            #expect(throws: MappingErrors.self, "\(place)") { try mapping(extra) }
        }
    }

    /// The fenced blocks of the guide with their language and the line before them.
    static func blocks() throws -> [(language: String, before: String, text: String)] {
        let lines = try String(contentsOf: guideURL, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
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
            let expectedURL = MappingCatalogueTests.folder.appendingPathComponent(file.replacingOccurrences(of: ".mapping.json", with: ".expected"))
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
                let file = try String(contentsOf: repositoryRoot.appendingPathComponent("mappings/" + path), encoding: .utf8)
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
}
