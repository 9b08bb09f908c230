import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// Inferred mappings: Core Data's lightweight rules (COREDATA.md B4), what they make of
/// model changes, their errors and warnings, and stores migrated through them.
@Suite struct InferenceTests {
    /// The Library models and seed, files shared with the CLI's inference tests.
    static let libraryFolder = Repository.root.appendingPathComponent("Tests/MigrationTests/Fixtures/library")
    static let library1 = try! ObjectModel.load(contentsOf: libraryFolder.appendingPathComponent("Library1.model.json"))
    /// Library1 with Author renamed Writer, Book.code renamed sku, Book.author made the
    /// to-many authors, int16s made int64s, rating an int → boolean, isbn required with a
    /// default, a new required edition with a default, obsolete and Shelf removed, Review
    /// added and Tag unchanged.
    static let library2 = try! ObjectModel.load(contentsOf: libraryFolder.appendingPathComponent("Library2.model.json"))
    static let librarySeed = try! String(
        contentsOf: libraryFolder.appendingPathComponent("Library1.seed.json"), encoding: .utf8)

    /// A one-entity model `version` whose entity `E` has the attributes and relationships
    /// of `entity` (JSON members text).
    static func oneEntity(_ version: String, _ entity: String, others: String = "") throws -> ObjectModel {
        try model(
            #"{"version": "\#(version)", "entities": {"E": {\#(entity)}\#(others.isEmpty ? "" : ", " + others)}}"#)
    }

    static let fetchE = MappingInference.standardFetch(of: "E")

    // MARK: - What is inferred

    @Test func theLibraryMappingIsInferredExactly() throws {
        let inference = MappingInference(from: Self.library1, to: Self.library2)
        #expect(inference.errors.isEmpty)
        #expect(inference.warnings.isEmpty)
        #expect(
            inference.mapping.json.serialized(pretty: true) == #"""
                {
                  "sourceModel": "Library1",
                  "destinationModel": "Library2",
                  "entityMappings": [
                    {
                      "name": "IEM_Transform_Author",
                      "type": "transform",
                      "sourceEntity": "Author",
                      "destinationEntity": "Writer",
                      "sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Author\", \"TRUEPREDICATE\"), FUNCTION($manager, \"sourceContext\"), NO)",
                      "attributeMappings": {
                        "name": "FUNCTION($source, \"valueForKey:\", \"name\")",
                        "born": "FUNCTION($source, \"valueForKey:\", \"born\")"
                      },
                      "relationshipMappings": {
                        "books": "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"books\", FUNCTION($source, \"valueForKey:\", \"books\"))"
                      }
                    },
                    {
                      "name": "IEM_Transform_Book",
                      "type": "transform",
                      "sourceEntity": "Book",
                      "destinationEntity": "Book",
                      "sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Book\", \"TRUEPREDICATE\"), FUNCTION($manager, \"sourceContext\"), NO)",
                      "attributeMappings": {
                        "title": "FUNCTION($source, \"valueForKey:\", \"title\")",
                        "pages": "FUNCTION($source, \"valueForKey:\", \"pages\")",
                        "rating": "FUNCTION($source, \"valueForKey:\", \"rating\")",
                        "isbn": "FUNCTION($entityPolicy, \"_nonNilValueOrDefaultValueForAttribute:source:destination:\", \"isbn\", $source, $destination)",
                        "sku": "FUNCTION($source, \"valueForKey:\", \"code\")",
                        "edition": null
                      },
                      "relationshipMappings": {
                        "authors": "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"author\", FUNCTION($source, \"valueForKey:\", \"author\"))"
                      }
                    },
                    {
                      "name": "IEM_Add_Review",
                      "type": "add",
                      "destinationEntity": "Review"
                    },
                    {
                      "name": "IEM_Remove_Shelf",
                      "type": "remove",
                      "sourceEntity": "Shelf"
                    },
                    {
                      "name": "IEM_Copy_Tag",
                      "type": "copy",
                      "sourceEntity": "Tag",
                      "destinationEntity": "Tag",
                      "sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Tag\", \"TRUEPREDICATE\"), FUNCTION($manager, \"sourceContext\"), NO)",
                      "attributeMappings": {
                        "label": "FUNCTION($source, \"valueForKey:\", \"label\")"
                      }
                    }
                  ]
                }
                """#)
        #expect(try MappingModel.inferred(from: Self.library1, to: Self.library2) == inference.mapping)
    }

    /// What is inferred passes the same checks as a mapping file, and reads back from its
    /// file form as the same mapping.
    @Test func theInferredMappingPassesCheckingAndReadsBackFromItsFile() throws {
        let inference = MappingInference(from: Self.library1, to: Self.library2)
        #expect(
            MigrationManager.check(inference.mapping, source: Self.library1, destination: Self.library2).map(
                \.description) == [])
        let file = try #require(inference.mappingFile())
        let read = try MappingModel(json: JSON.parse(file.serialized(pretty: true)))
        #expect(read == inference.mapping)
        #expect(
            file["comment"]
                == .string(
                    "Inferred from Library1 to Library2 by Core Data's lightweight rules (docs/engine.md, \"Inferred mappings\"); edit it as you need."
                ))
        // Every destination property is listed, so the engine adds no same-named mappings.
        var compiler = MappingCompiler(
            inference.mapping, source: Self.library1, destination: Self.library2, policies: PolicyRegistry())
        for entityMapping in compiler.prepare().entityMappings {
            let implicit = (entityMapping.mapping.attributeMappings + entityMapping.mapping.relationshipMappings).filter
            { $0.isImplicit }
            #expect(implicit.map(\.name) == [], "\(entityMapping.mapping.name)")
        }
    }

    @Test func anUnchangedModelIsCopiedEntityByEntity() throws {
        let inference = MappingInference(from: Self.library1, to: Self.library1)
        #expect(
            inference.mapping.entityMappings.map(\.name) == [
                "IEM_Copy_Author", "IEM_Copy_Book", "IEM_Copy_Shelf", "IEM_Copy_Tag"
            ])
        #expect(inference.mapping.entityMappings.allSatisfy { $0.type == .copy })
    }

    /// Pairs are found by renaming identifier on both sides, so a rename carried to a
    /// later version (the identifier kept) still pairs with the original name.
    @Test func renamingIdentifiersPairOnBothSides() throws {
        let v1 = try Self.oneEntity("V1", #""attributes": {"color": "string"}"#)
        let v2 = try Self.oneEntity(
            "V2", #""attributes": {"hexColor": {"type": "string", "renamingIdentifier": "color"}}"#)
        let v3 = try Self.oneEntity("V3", #""attributes": {"rgb": {"type": "string", "renamingIdentifier": "color"}}"#)
        for (a, b) in [(v1, v2), (v2, v3), (v1, v3)] {
            let mapping = try MappingModel.inferred(from: a, to: b)
            let old = a.entities[0].attributes[0].name, new = b.entities[0].attributes[0].name
            #expect(
                mapping.entityMappings[0].attributeMappings == [
                    PropertyMapping(name: new, valueExpression: "FUNCTION($source, \"valueForKey:\", \"\(old)\")")
                ])
        }
        // Without the identifier, the later version's attribute is a new one.
        let v4 = try Self.oneEntity("V4", #""attributes": {"hexColor": "string"}"#)
        #expect(
            try MappingModel.inferred(from: v2, to: v4).entityMappings[0].attributeMappings == [
                PropertyMapping(name: "hexColor", valueExpression: nil)
            ])
    }

    @Test func severalAttributesMayComeFromOneSourceAttribute() throws {
        let v1 = try Self.oneEntity("V1", #""attributes": {"name": "string"}"#)
        let v2 = try Self.oneEntity(
            "V2", #""attributes": {"name": "string", "displayName": {"type": "string", "renamingIdentifier": "name"}}"#)
        let mapping = try MappingModel.inferred(from: v1, to: v2)
        #expect(
            mapping.entityMappings[0].attributeMappings.map(\.valueExpression) == [
                "FUNCTION($source, \"valueForKey:\", \"name\")", "FUNCTION($source, \"valueForKey:\", \"name\")"
            ])
    }

    static let numericTypes: [AttributeType] = [.int16, .int32, .int64, .decimal, .double, .float, .boolean]

    @Test(arguments: numericTypes)
    func numbersAndBooleansConvertToEachOther(from: AttributeType) throws {
        for to in Self.numericTypes {
            let v1 = try Self.oneEntity("V1", #""attributes": {"n": "\#(from.rawValue)"}"#)
            let v2 = try Self.oneEntity("V2", #""attributes": {"n": "\#(to.rawValue)"}"#)
            let inference = MappingInference(from: v1, to: v2)
            #expect(inference.errors.isEmpty, "\(from) → \(to)")
            #expect(inference.mapping.entityMappings[0].type == (from == to ? .copy : .transform))
            #expect(
                inference.mapping.entityMappings[0].attributeMappings[0].valueExpression
                    == "FUNCTION($source, \"valueForKey:\", \"n\")")
        }
    }

    /// Core Data's message for other type changes, with the types, the versions and a
    /// conversion to write where there is one.
    @Test(arguments: [
        (
            "string", "double",
            #"E.price: it is a string attribute in V1 and a double attribute in V2, and an inferred mapping converts only between numbers and booleans (int16, int32, int64, decimal, double, float, boolean) (Core Data: "Source and destination attribute types are incompatible"); map it in a mapping file, such as "price": "CAST($source.price, 'NSNumber')""#
        ),
        (
            "int32", "string",
            #"E.price: it is an int32 attribute in V1 and a string attribute in V2, and an inferred mapping converts only between numbers and booleans (int16, int32, int64, decimal, double, float, boolean) (Core Data: "Source and destination attribute types are incompatible"); map it in a mapping file, such as "price": "CAST($source.price, 'NSString')""#
        ),
        (
            "date", "string",
            #"E.price: it is a date attribute in V1 and a string attribute in V2, and an inferred mapping converts only between numbers and booleans (int16, int32, int64, decimal, double, float, boolean) (Core Data: "Source and destination attribute types are incompatible"); map it in a mapping file with an expression that converts it"#
        ),
        (
            "binary", "transformable",
            #"E.price: it is a binary attribute in V1 and a transformable attribute in V2, and an inferred mapping changes binary to transformable only when the destination attribute's userInfo has NSMigrationAllowTypeTransformation (add it to 'price' in V2 to copy the data as it is) (Core Data: "Source and destination attribute types are incompatible"); map it in a mapping file with an expression that converts it"#
        )
    ])
    func otherTypeChangesCannotBeInferred(from: String, to: String, message: String) throws {
        let v1 = try Self.oneEntity("V1", #""attributes": {"price": "\#(from)"}"#)
        let v2 = try Self.oneEntity("V2", #""attributes": {"price": "\#(to)"}"#)
        let error = try #require(throws: InferenceErrors.self) { try MappingModel.inferred(from: v1, to: v2) }
        #expect(error.errors.map(\.kind) == [.incompatibleAttributeTypes])
        #expect(error.errors[0].entity == "E" && error.errors[0].property == "price" && error.errors[0].code == 134190)
        #expect(error.description == message)
    }

    @Test func aRenamedAttributeMustKeepACompatibleType() throws {
        let v1 = try Self.oneEntity("V1", #""attributes": {"cost": "string"}"#)
        let v2 = try Self.oneEntity("V2", #""attributes": {"price": {"type": "float", "renamingIdentifier": "cost"}}"#)
        let error = try #require(throws: InferenceErrors.self) { try MappingModel.inferred(from: v1, to: v2) }
        #expect(
            error.description
                == #"E.price: it is a string attribute in V1 (named 'cost') and a float attribute in V2, and an inferred mapping converts only between numbers and booleans (int16, int32, int64, decimal, double, float, boolean) (Core Data: "Source and destination attribute types are incompatible"); map it in a mapping file, such as "price": "CAST($source.cost, 'NSNumber')""#
        )
    }

    @Test func binaryBecomesTransformableWhenTheDestinationAllowsIt() throws {
        let v1 = try Self.oneEntity("V1", #""attributes": {"photo": "binary"}"#)
        let v2 = try Self.oneEntity(
            "V2",
            #""attributes": {"photo": {"type": "transformable", "userInfo": {"NSMigrationAllowTypeTransformation": "YES"}}}"#
        )
        let v3 = try Self.oneEntity("V3", #""attributes": {"photo": "binary"}"#)
        #expect(
            try MappingModel.inferred(from: v1, to: v2).entityMappings[0].attributeMappings[0].valueExpression
                == "FUNCTION($source, \"valueForKey:\", \"photo\")")
        // The key is read from the destination attribute only.
        let back = try #require(throws: InferenceErrors.self) { try MappingModel.inferred(from: v2, to: v3) }
        #expect(back.errors.map(\.kind) == [.incompatibleAttributeTypes])
    }

    @Test func anAttributePairedWithARelationshipIsNew() throws {
        let v1 = try Self.oneEntity("V1", #""attributes": {"owner": "string"}"#, others: #""P": {}"#)
        let v2 = try Self.oneEntity("V2", #""relationships": {"owner": {"destination": "P"}}"#, others: #""P": {}"#)
        let e = try MappingModel.inferred(from: v1, to: v2).entityMappings.first { $0.destinationEntity == "E" }!
        #expect(e.attributeMappings == [])
        #expect(e.relationshipMappings == [PropertyMapping(name: "owner", valueExpression: nil)])
        let back = try MappingModel.inferred(from: v2, to: v1).entityMappings.first { $0.destinationEntity == "E" }!
        #expect(back.attributeMappings == [PropertyMapping(name: "owner", valueExpression: nil)])
    }

    @Test func transientPropertiesAreLeftOut() throws {
        let v1 = try Self.oneEntity(
            "V1", #""attributes": {"name": "string", "cache": {"type": "string", "transient": true}}"#)
        let v2 = try Self.oneEntity(
            "V2",
            #""attributes": {"name": "string", "cache": {"type": "string", "transient": true}, "scratch": {"type": "int16", "transient": true}}"#
        )
        #expect(try MappingModel.inferred(from: v1, to: v2).entityMappings[0].attributeMappings.map(\.name) == ["name"])
    }

    @Test func relationshipsMayBecomeToManyOrderedUnorderedOptionalOrRequired() throws {
        let v1 = try model(
            """
            {"version": "V1", "entities": {
              "Note": {"relationships": {"folder": {"destination": "Folder", "inverse": "notes"},
                                         "tags": {"destination": "Tag", "inverse": "notes", "toMany": true, "ordered": true}}},
              "Folder": {"relationships": {"notes": {"destination": "Note", "inverse": "folder", "toMany": true}}},
              "Tag": {"relationships": {"notes": {"destination": "Note", "inverse": "tags", "toMany": true}}}}}
            """)
        let v2 = try model(
            """
            {"version": "V2", "entities": {
              "Note": {"relationships": {"folder": {"destination": "Folder", "inverse": "notes", "toMany": true},
                                         "tags": {"destination": "Tag", "inverse": "notes", "toMany": true}}},
              "Folder": {"relationships": {"notes": {"destination": "Note", "inverse": "folder", "toMany": true, "ordered": true, "optional": false, "minCount": 1}}},
              "Tag": {"relationships": {"notes": {"destination": "Note", "inverse": "tags", "toMany": true}}}}}
            """)
        let inference = MappingInference(from: v1, to: v2)
        #expect(inference.errors.isEmpty)
        #expect(
            inference.mapping.entityMappings.map(\.name) == [
                "IEM_Transform_Folder", "IEM_Transform_Note", "IEM_Copy_Tag"
            ])
        #expect(
            inference.warnings.map(\.description) == [
                "Folder.notes: optional in V1 and required in V2, so the migration fails validation if any Folder has none; map it in a mapping file if some may have none"
            ])
        #expect(MigrationManager.check(inference.mapping, source: v1, destination: v2).map(\.description) == [])
    }

    static let lists1 = try! model(
        """
        {"version": "Lists1", "entities": {
          "Item": {"attributes": {"name": "string"}, "relationships": {"list": {"destination": "List", "inverse": "items"},
                                                                        "labels": {"destination": "Label", "inverse": "items", "toMany": true, "ordered": true}}},
          "Label": {"attributes": {"name": "string"}, "relationships": {"items": {"destination": "Item", "inverse": "labels", "toMany": true}}},
          "List": {"relationships": {"items": {"destination": "Item", "inverse": "list", "toMany": true, "ordered": true}}}}}
        """)
    static let lists2 = try! model(
        """
        {"version": "Lists2", "entities": {
          "Item": {"attributes": {"name": "string", "note": "string"},
                   "relationships": {"list": {"destination": "List", "inverse": "items"},
                                     "labels": {"destination": "Label", "inverse": "items", "toMany": true, "ordered": true}}},
          "Label": {"attributes": {"name": "string", "color": "string"}, "relationships": {"items": {"destination": "Item", "inverse": "labels", "toMany": true}}},
          "List": {"attributes": {"title": "string"}, "relationships": {"items": {"destination": "Item", "inverse": "list", "toMany": true, "ordered": true}}}}}
        """)

    /// The unordered side of a relationship whose other side is ordered is set through
    /// that side, so the order survives whichever entity mapping runs first.
    @Test func orderedRelationshipsKeepTheirOrder() throws {
        let inference = MappingInference(from: Self.lists1, to: Self.lists2)
        #expect(
            inference.mapping.entityMappings.map(\.name) == [
                "IEM_Transform_Item", "IEM_Transform_Label", "IEM_Transform_List"
            ])
        #expect(
            inference.mapping.entityMappings.map {
                $0.relationshipMappings.map { "\($0.name): \($0.valueExpression == nil ? "null" : "lookup")" }
            } == [
                ["list: null", "labels: lookup"], ["items: null"], ["items: lookup"]
            ])
        let file = try #require(inference.mappingFile())
        #expect(
            file["entityMappings"]?.arrayValue?[0]["relationshipMappings"]?["list"] == [
                "comment": "set through its inverse, List.items, whose mapping keeps that relationship's order",
                "valueExpression": .null
            ])
        #expect(try MappingModel(json: file) == inference.mapping)

        let directory = try TemporaryDirectory()
        let path = directory.path("Lists.sqlite")
        try seededStore(
            at: path, model: Self.lists1,
            seed: """
                {"Label": [{"$id": "x", "name": "x"}, {"$id": "y", "name": "y"}],
                 "Item": [{"$id": "a", "name": "a", "labels": [{"$ref": "y"}, {"$ref": "x"}]}, {"$id": "b", "name": "b"},
                          {"$id": "c", "name": "c", "labels": [{"$ref": "x"}, {"$ref": "y"}]}],
                 "List": [{"items": [{"$ref": "c"}, {"$ref": "a"}, {"$ref": "b"}]}]}
                """)
        _ = try StoreMigrator(models: [Self.lists1, Self.lists2], mappings: []).migrate(storeAt: path)
        let dumped = try Self.dump(path, Self.lists2, ordered: true)
        #expect(
            dumped == [
                #"Item/1 name="a" note=null list=[List/1] labels=[Label/2,Label/1]"#,
                #"Item/2 name="b" note=null list=[List/1] labels=[]"#,
                #"Item/3 name="c" note=null list=[List/1] labels=[Label/1,Label/2]"#,
                #"Label/1 name="x" color=null items=[Item/1,Item/3]"#,
                #"Label/2 name="y" color=null items=[Item/1,Item/3]"#,
                #"List/1 title=null items=[Item/3,Item/1,Item/2]"#
            ])
    }

    @Test func aToManyCannotBecomeAToOne() throws {
        let v1 = try Self.oneEntity(
            "V1", #""relationships": {"tags": {"destination": "Tag", "toMany": true}}"#, others: #""Tag": {}"#)
        let v2 = try Self.oneEntity(
            "V2", #""relationships": {"tag": {"destination": "Tag", "renamingIdentifier": "tags"}}"#,
            others: #""Tag": {}"#)
        let error = try #require(throws: InferenceErrors.self) { try MappingModel.inferred(from: v1, to: v2) }
        #expect(error.errors.map(\.kind) == [.toManyToToOne])
        #expect(
            error.description
                == #"E.tag: it is a to-many relationship in V1 (named 'tags') and a to-one in V2, and an inferred mapping cannot choose which object to keep (Core Data: "Can not map from a to-many to a to-one relationship"); map it in a mapping file with an expression that chooses one"#
        )
    }

    @Test func entitiesMustHaveUniqueRenamingIdentifiers() throws {
        let v1 = try model(#"{"version": "V1", "entities": {"Book": {}, "Volume": {"renamingIdentifier": "Book"}}}"#)
        let v2 = try model(#"{"version": "V2", "entities": {"Book": {}, "Tome": {"renamingIdentifier": "Book"}}}"#)
        let error = try #require(throws: InferenceErrors.self) { try MappingModel.inferred(from: v1, to: v2) }
        #expect(error.errors.map(\.kind) == [.duplicateRenamingIdentifier, .duplicateRenamingIdentifier])
        #expect(
            error.description == """
                Volume: Book and Volume both have the renaming identifier 'Book' in V1; each source entity must have a unique renaming identifier, since an inferred mapping pairs entities by it
                Tome: Book and Tome both have the renaming identifier 'Book' in V2; each destination entity must have a unique renaming identifier, since an inferred mapping pairs entities by it
                """)
        #expect(MappingInference(from: v1, to: v2).mappingFile() == nil)
    }

    @Test func sourcePropertiesSharingAnIdentifierCannotBePaired() throws {
        let v1 = try Self.oneEntity(
            "V1",
            #""attributes": {"name": "string", "fullName": {"type": "string", "renamingIdentifier": "name"}, "email": "string"}"#
        )
        let v2 = try Self.oneEntity("V2", #""attributes": {"name": "string", "email": "string"}"#)
        let error = try #require(throws: InferenceErrors.self) { try MappingModel.inferred(from: v1, to: v2) }
        #expect(
            error.description
                == "E.name: 'name' and 'fullName' of E all have the renaming identifier 'name' in V1, so an inferred mapping cannot tell which one 'name' comes from; give each source property a unique renaming identifier, or map 'name' in a mapping file"
        )
    }

    @Test func abstractEntitiesGetNoMappings() throws {
        let v1 = try model(
            """
            {"version": "V1", "entities": {"Item": {"abstract": true, "attributes": {"nick": "string"}},
                                           "Old": {"abstract": true}, "Book": {"parent": "Item"}}}
            """)
        let v2 = try model(
            """
            {"version": "V2", "entities": {"Item": {"abstract": true, "attributes": {"alias": {"type": "string", "renamingIdentifier": "nick"}}},
                                           "New": {"abstract": true}, "Book": {"parent": "Item"}}}
            """)
        let mapping = try MappingModel.inferred(from: v1, to: v2)
        #expect(mapping.entityMappings.map(\.name) == ["IEM_Copy_Book"])
        // A sub-entity's mapping lists its inherited properties.
        #expect(
            mapping.entityMappings[0].attributeMappings == [
                PropertyMapping(name: "alias", valueExpression: "FUNCTION($source, \"valueForKey:\", \"nick\")")
            ])
    }

    @Test func anEntityWithInstancesCannotBecomeAbstract() throws {
        let v1 = try model(#"{"version": "V1", "entities": {"Item": {"attributes": {"name": "string"}}}}"#)
        let v2 = try model(
            #"{"version": "V2", "entities": {"Item": {"abstract": true, "attributes": {"name": "string"}}, "Book": {"parent": "Item"}, "Disc": {"parent": "Item"}}}"#
        )
        let error = try #require(throws: InferenceErrors.self) { try MappingModel.inferred(from: v1, to: v2) }
        #expect(error.errors.map(\.kind) == [.abstractDestination])
        #expect(
            error.description
                == "Item: it has instances in V1 but is abstract in V2, so an inferred mapping has nowhere to put them; map them to one of its sub-entities (Book and Disc) in a mapping file"
        )
    }

    // MARK: - Warnings

    @Test func requiredPropertiesThatCanBeLeftEmptyAreFlagged() throws {
        let v1 = try Self.oneEntity(
            "V1",
            #""attributes": {"title": "string", "isbn": "string"}, "relationships": {"shelf": {"destination": "Shelf"}}"#,
            others: #""Shelf": {}"#)
        let v2 = try Self.oneEntity(
            "V2",
            """
            "attributes": {"title": {"type": "string", "optional": false}, "isbn": {"type": "string", "optional": false, "default": "-"},
                           "code": {"type": "string", "optional": false}, "edition": {"type": "int16", "optional": false, "default": 1}},
            "relationships": {"shelf": {"destination": "Shelf", "optional": false}, "home": {"destination": "Shelf", "optional": false}}
            """, others: #""Shelf": {}"#)
        let inference = MappingInference(from: v1, to: v2)
        #expect(inference.errors.isEmpty)
        #expect(
            inference.warnings.map(\.description) == [
                "E.title: optional in V1 and required in V2 without a default value, so the migration fails validation if any E has no 'title'; give it a default value, or map it in a mapping file",
                "E.code: new in V2, required, and without a default value, so nothing gives it a value: checking the mapping fails, and Core Data's migration would fail validation for any E; give it a default value, make it optional, or map it in a mapping file",
                "E.shelf: optional in V1 and required in V2, so the migration fails validation if any E has none; map it in a mapping file if some may have none",
                "E.home: new in V2 and required, so the migration fails validation for any E; make it optional, or map it in a mapping file"
            ])
        let e = try #require(inference.mapping.entityMappings.first { $0.destinationEntity == "E" })
        #expect(
            e.attributeMappings.map(\.valueExpression) == [
                "FUNCTION($entityPolicy, \"_nonNilValueOrDefaultValueForAttribute:source:destination:\", \"title\", $source, $destination)",
                "FUNCTION($entityPolicy, \"_nonNilValueOrDefaultValueForAttribute:source:destination:\", \"isbn\", $source, $destination)",
                nil, nil
            ])
        // Checking says what the new required attribute without a default needs.
        #expect(
            MigrationManager.check(inference.mapping, source: v1, destination: v2).map(\.description) == [
                #"entityMappings[0] "IEM_Transform_E" .attributeMappings.code: E.code is required and has no default, but null maps nothing; map it to an expression"#
            ])
    }

    // MARK: - Drafts

    @Test func aDraftMarksWhatCannotBeInferred() throws {
        let v1 = try Self.oneEntity(
            "V1",
            #""attributes": {"price": "string", "name": "string"}, "relationships": {"tags": {"destination": "Tag", "toMany": true}}"#,
            others: #""Tag": {}"#)
        let v2 = try Self.oneEntity(
            "V2",
            #""attributes": {"price": "double", "name": "string"}, "relationships": {"tags": {"destination": "Tag"}}"#,
            others: #""Tag": {}"#)
        let inference = MappingInference(from: v1, to: v2)
        #expect(inference.errors.map(\.kind) == [.incompatibleAttributeTypes, .toManyToToOne])
        let file = try #require(inference.mappingFile())
        #expect(
            file.serialized(pretty: true) == #"""
                {
                  "comment": "Inferred from V1 to V2 by Core Data's lightweight rules (docs/engine.md, \"Inferred mappings\"); edit it as you need. A draft: 2 things could not be inferred; each has a comment saying why, and `mapping-migrate check` shows what is left to do.",
                  "sourceModel": "V1",
                  "destinationModel": "V2",
                  "entityMappings": [
                    {
                      "name": "IEM_Transform_E",
                      "type": "transform",
                      "sourceEntity": "E",
                      "destinationEntity": "E",
                      "sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"E\", \"TRUEPREDICATE\"), FUNCTION($manager, \"sourceContext\"), NO)",
                      "attributeMappings": {
                        "price": {
                          "comment": "it is a string attribute in V1 and a double attribute in V2, and an inferred mapping converts only between numbers and booleans (int16, int32, int64, decimal, double, float, boolean) (Core Data: \"Source and destination attribute types are incompatible\"); map it in a mapping file, such as \"price\": \"CAST($source.price, 'NSNumber')\"",
                          "valueExpression": "$source.price"
                        },
                        "name": "FUNCTION($source, \"valueForKey:\", \"name\")"
                      },
                      "relationshipMappings": {
                        "tags": {
                          "comment": "it is a to-many relationship in V1 and a to-one in V2, and an inferred mapping cannot choose which object to keep (Core Data: \"Can not map from a to-many to a to-one relationship\"); map it in a mapping file with an expression that chooses one",
                          "valueExpression": "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"tags\", FUNCTION($source, \"valueForKey:\", \"tags\"))"
                        }
                      }
                    },
                    {
                      "name": "IEM_Copy_Tag",
                      "type": "copy",
                      "sourceEntity": "Tag",
                      "destinationEntity": "Tag",
                      "sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Tag\", \"TRUEPREDICATE\"), FUNCTION($manager, \"sourceContext\"), NO)"
                    }
                  ]
                }
                """#)
        // Checking the draft shows the conversion to write.
        let draft = try MappingModel(json: file, file: "draft.mapping.json")
        #expect(
            MigrationManager.check(draft, source: v1, destination: v2).map(\.description) == [
                #"draft.mapping.json: entityMappings[0] "IEM_Transform_E" .attributeMappings.price: 1:1: 'price' is a double attribute, but the expression gives a string; convert it with CAST(…, 'NSNumber') in "$source.price""#
            ])
    }

    // MARK: - Migrations through inferred mappings

    /// A seeded Library1 store in `directory`, and a migrator with no mapping files.
    static func libraryStore(in directory: TemporaryDirectory) throws -> (String, StoreMigrator) {
        let path = directory.path("Library.sqlite")
        try seededStore(at: path, model: library1, seed: librarySeed)
        return (path, StoreMigrator(models: [library1, library2], mappings: []))
    }

    /// Every object of the store, one line each: attributes, then relationships as the
    /// objects they hold.
    static func dump(_ path: String, _ model: ObjectModel, ordered: Bool = false) throws -> [String] {
        let context = ObjectContext(store: try Store.open(at: path, model: model, mode: .readOnly))
        return try model.entities.sorted { $0.name < $1.name }.flatMap { entity in
            var request = FetchRequest(entityName: entity.name)
            request.includesSubentities = false
            return try context.fetch(request).map { object in
                let attributes = model.allAttributes(of: entity).map {
                    "\($0.name)=\(object[$0.name].json.serialized())"
                }
                let relationships = try model.allRelationships(of: entity).map { r in
                    let value = try object.value(forKey: r.name)
                    let targets = (value.collectionElements ?? (value.isNull ? [] : [value])).compactMap {
                        $0.managedObject?.objectID.description
                    }
                    return "\(r.name)=[\((r.isOrdered && ordered ? targets : targets.sorted()).joined(separator: ","))]"
                }
                return ([object.objectID.description] + attributes + relationships).joined(separator: " ")
            }
        }
    }

    @Test func aLibraryStoreMigratesThroughTheInferredMapping() throws {
        let directory = try TemporaryDirectory()
        let (path, migrator) = try Self.libraryStore(in: directory)
        let steps = try migrator.plan(storeAt: path)
        #expect(steps.map(\.isInferred) == [true])
        #expect(steps[0].mapping == (try MappingModel.inferred(from: Self.library1, to: Self.library2)))
        let reports = try migrator.migrate(storeAt: path)
        #expect(
            reports[0].report.entityMappings.map { "\($0.name): \($0.sourceInstances) → \($0.destinationInstances)" }
                == [
                    "IEM_Transform_Author: 2 → 2", "IEM_Transform_Book: 3 → 3", "IEM_Add_Review: 0 → 0",
                    "IEM_Remove_Shelf: 0 → 0", "IEM_Copy_Tag: 1 → 1"
                ])
        #expect(try migrator.version(ofStoreAt: path).version == "Library2")
        let dumped = try Self.dump(path, Self.library2)
        #expect(
            dumped == [
                #"Book/1 title="Emma" pages=300 rating=true isbn="111" sku="E-1" edition=1 authors=[Writer/1]"#,
                #"Book/2 title="Dune" pages=600 rating=false isbn="unknown" sku="D-1" edition=1 authors=[Writer/2]"#,
                #"Book/3 title="Anon" pages=10 rating=false isbn="unknown" sku=null edition=1 authors=[]"#,
                #"Tag/1 label="new""#,
                #"Writer/1 name="Ann" born=1970 books=[Book/1]"#,
                #"Writer/2 name="Bob" born=null books=[Book/2]"#
            ])
    }

    /// The inferred mapping written as a file, read back and run, makes the same store.
    @Test func theInferredMappingSavedAsAFileMigratesIdentically() throws {
        let directory = try TemporaryDirectory()
        let (path, migrator) = try Self.libraryStore(in: directory)
        let copy = directory.path("Copy.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let file = directory.path("Library1_to_Library2.mapping.json")
        try Data(MappingInference(from: Self.library1, to: Self.library2).mappingFile()!.serialized(pretty: true).utf8)
            .write(to: URL(fileURLWithPath: file))
        let withFile = StoreMigrator(models: migrator.models, mappings: try MappingModel.loadAll(in: directory.url))
        #expect(withFile.check().map(\.description) == [])
        #expect(try withFile.plan(storeAt: copy).map(\.isInferred) == [false])
        _ = try migrator.migrate(storeAt: path)
        _ = try withFile.migrate(storeAt: copy)
        #expect(try Self.dump(copy, Self.library2) == Self.dump(path, Self.library2))
    }

    /// A renamed, inherited attribute made required: nil takes the default.
    @Test func anOptionalAttributeMadeRequiredTakesItsDefaultWhenNil() throws {
        let v1 = try model(
            """
            {"version": "V1", "entities": {"Item": {"abstract": true, "attributes": {"nick": "string"}}, "Book": {"parent": "Item"}}}
            """)
        let v2 = try model(
            """
            {"version": "V2", "entities": {
              "Item": {"abstract": true, "attributes": {"alias": {"type": "string", "renamingIdentifier": "nick", "optional": false, "default": "none"}}},
              "Book": {"parent": "Item"}}}
            """)
        let directory = try TemporaryDirectory()
        let path = directory.path("Items.sqlite")
        try seededStore(at: path, model: v1, seed: #"{"Book": [{"nick": "x"}, {"nick": null}]}"#)
        _ = try StoreMigrator(models: [v1, v2], mappings: []).migrate(storeAt: path)
        let dumped = try Self.dump(path, v2)
        #expect(dumped == [#"Book/1 alias="x""#, #"Book/2 alias="none""#])
    }

    @Test func anOptionalAttributeMadeRequiredWithoutADefaultFailsValidation() throws {
        let v1 = try Self.oneEntity("V1", #""attributes": {"title": "string"}"#)
        let v2 = try Self.oneEntity("V2", #""attributes": {"title": {"type": "string", "optional": false}}"#)
        let directory = try TemporaryDirectory()
        let path = directory.path("E.sqlite")
        try seededStore(at: path, model: v1, seed: #"{"E": [{"title": "a"}, {"title": null}]}"#)
        let migrator = StoreMigrator(models: [v1, v2], mappings: [])
        #expect(try migrator.plan(storeAt: path)[0].warnings.map(\.property) == ["title"])
        let error = try #require(throws: MigrationError.self) { try migrator.migrate(storeAt: path) }
        #expect(
            error.description
                == #"entity mapping "IEM_Transform_E": the new store fails validation: E/2: 'title' is required but has no value"#
        )
        #expect(try migrator.version(ofStoreAt: path).version == "V1")
    }

    /// Core Data's lightweight migration adds a required to-many relationship without a
    /// minimum count empty, and makes an optional one required as it is: no warning, and
    /// the step runs. With a minimum count the objects would fail validation: warned.
    @Test(arguments: [
        // (V1 relationships of E, V2 relationships of E, warnings)
        (#""#, #""tags": {"destination": "Tag", "inverse": "items", "toMany": true, "optional": false}"#, [String]()),
        (
            #""tags": {"destination": "Tag", "inverse": "items", "toMany": true}"#,
            #""tags": {"destination": "Tag", "inverse": "items", "toMany": true, "optional": false}"#, []
        ),
        (
            #""#,
            #""tags": {"destination": "Tag", "inverse": "items", "toMany": true, "optional": false, "minCount": 2}"#,
            [
                "E.tags: new in V2 and required with at least 2 destinations, so the migration fails validation for any E; make it optional, or map it in a mapping file"
            ]
        ),
        (
            #""tags": {"destination": "Tag", "inverse": "items", "toMany": true}"#,
            #""tags": {"destination": "Tag", "inverse": "items", "toMany": true, "optional": false, "minCount": 1}"#,
            [
                "E.tags: optional in V1 and required in V2, so the migration fails validation if any E has none; map it in a mapping file if some may have none"
            ]
        )
    ])
    func aRequiredToManyWithoutAMinimumStartsEmpty(v1Relationships: String, v2Relationships: String, warnings: [String])
        throws
    {
        let tag =
            #""Tag": {"attributes": {"name": "string"}, "relationships": {"items": {"destination": "E", "inverse": "tags", "toMany": true}}}"#
        let v1 = try Self.oneEntity(
            "V1", #""attributes": {"title": "string"}, "relationships": {\#(v1Relationships)}"#,
            others: v1Relationships.isEmpty ? "" : tag)
        let v2 = try Self.oneEntity(
            "V2", #""attributes": {"title": "string"}, "relationships": {\#(v2Relationships)}"#, others: tag)
        let inference = MappingInference(from: v1, to: v2)
        #expect(inference.errors.isEmpty)
        #expect(inference.warnings.map(\.description) == warnings)
        guard warnings.isEmpty else { return }
        let directory = try TemporaryDirectory()
        let path = directory.path("E.sqlite")
        try seededStore(at: path, model: v1, seed: #"{"E": [{"title": "a"}, {"title": "b"}]}"#)
        _ = try StoreMigrator(models: [v1, v2], mappings: []).migrate(storeAt: path)
        #expect(try Self.dump(path, v2) == [#"E/1 title="a" tags=[]"#, #"E/2 title="b" tags=[]"#])
    }

    @Test func aValueThatDoesNotFitItsNewTypeFailsTheStep() throws {
        let v1 = try Self.oneEntity("V1", #""attributes": {"flag": "int32"}"#)
        let v2 = try Self.oneEntity("V2", #""attributes": {"flag": "boolean"}"#)
        let directory = try TemporaryDirectory()
        let path = directory.path("E.sqlite")
        try seededStore(at: path, model: v1, seed: #"{"E": [{"flag": 1}, {"flag": 5}]}"#)
        let error = try #require(throws: MigrationError.self) {
            try StoreMigrator(models: [v1, v2], mappings: []).migrate(storeAt: path)
        }
        #expect(
            error.description
                == #"entity mapping "IEM_Transform_E", source E Z_PK 2, 'flag' = "FUNCTION($source, "valueForKey:", "flag")": a boolean attribute cannot hold integer 5"#
        )
    }

    // MARK: - The chain

    @Test func aMappingFileIsUsedRatherThanInference() throws {
        let file = try mapping(
            """
            {"sourceModel": "Library1", "destinationModel": "Library2", "entityMappings": [
              {"name": "TagToTag", "type": "copy", "sourceEntity": "Tag", "destinationEntity": "Tag"}]}
            """)
        let steps = try StoreMigrator(models: [Self.library1, Self.library2], mappings: [file]).plan(
            from: "Library1", to: "Library2")
        #expect(steps.map(\.isInferred) == [false])
        #expect(steps[0].mapping == file)
    }

    static let priceV1 = try! oneEntity("V1", #""attributes": {"price": "string"}"#)
    static let priceV2 = try! oneEntity("V2", #""attributes": {"price": "double"}"#)

    @Test func aStepThatCannotBeInferredSaysWhyAndHowToWriteItsMapping() throws {
        let migrator = StoreMigrator(models: [Self.priceV1, Self.priceV2], mappings: [])
        let error = try #require(throws: MigrationError.self) { try migrator.plan(from: "V1", to: "V2") }
        #expect(error.kind == .invalidMapping)
        #expect(
            error.description == #"""
                no mapping file maps V1 → V2, and a mapping cannot be inferred:
                  E.price: it is a string attribute in V1 and a double attribute in V2, and an inferred mapping converts only between numbers and booleans (int16, int32, int64, decimal, double, float, boolean) (Core Data: "Source and destination attribute types are incompatible"); map it in a mapping file, such as "price": "CAST($source.price, 'NSNumber')"
                write a mapping file for the step ("sourceModel": "V1", "destinationModel": "V2") in the mappings folder; `mapping-migrate infer --models <models> --from V1 --to V2 --draft` starts one with what can be inferred
                """#)
        #expect(migrator.check().map(\.description) == [error.message])
    }

    @Test func anInferredMappingThatCannotRunIsReportedBeforeTheStoreIsTouched() throws {
        let v1 = try Self.oneEntity("V1", #""attributes": {"title": "string"}"#)
        let v2 = try Self.oneEntity(
            "V2", #""attributes": {"title": "string", "code": {"type": "string", "optional": false}}"#)
        let directory = try TemporaryDirectory()
        let path = directory.path("E.sqlite")
        try seededStore(at: path, model: v1, seed: #"{"E": [{"title": "a"}]}"#)
        let before = storeBytes(path)
        let migrator = StoreMigrator(models: [v1, v2], mappings: [])
        #expect(
            migrator.check().map(\.description) == [
                #"inferred V1 → V2: entityMappings[0] "IEM_Transform_E" .attributeMappings.code: E.code is required and has no default, but null maps nothing; map it to an expression"#
            ])
        let error = try #require(throws: MigrationError.self) { try migrator.migrate(storeAt: path) }
        #expect(
            error.description == #"""
                the mapping inferred for V1 → V2 (no mapping file maps it) cannot run:
                inferred V1 → V2: entityMappings[0] "IEM_Transform_E" .attributeMappings.code: E.code is required and has no default, but null maps nothing; map it to an expression
                write a mapping file for the step; `mapping-migrate infer --models <models> --from V1 --to V2` starts one
                """#)
        #expect(storeBytes(path) == before)
    }
}
