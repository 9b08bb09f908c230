import ExpressionLanguage
import Foundation
import Testing
import TestSupport
@testable import ObjectGraph

@Suite struct ModelJSONTests {
    static let bookModel = """
        {
          "version": "Model2",
          "entities": {
            "Book": {
              "attributes": {
                "title": {"type": "string", "optional": true},
                "price": {"type": "double", "default": 0},
                "pages": "int32",
                "published": {"type": "date", "default": {"$date": "2001-01-02T00:00:00Z"}},
                "code": {"type": "string", "renamingIdentifier": "isbn", "min": 1, "max": 13}
              },
              "relationships": {
                "authors": {"destination": "Author", "inverse": "books", "toMany": true, "deleteRule": "nullify"}
              }
            },
            "Author": {
              "attributes": {"name": {"type": "string", "optional": false}},
              "relationships": {"books": {"destination": "Book", "inverse": "authors", "toMany": true}}
            }
          }
        }
        """

    @Test func readsEveryField() throws {
        let model = try ObjectModel(json: JSON.parse(Self.bookModel))
        try model.validate()
        #expect(model.version == "Model2")
        #expect(model.entities.map(\.name) == ["Book", "Author"])
        let book = try #require(model.entity(named: "Book"))
        #expect(book.attributes.map(\.name) == ["title", "price", "pages", "published", "code"])
        #expect(book.attribute(named: "price")?.defaultValue == .double(0))
        #expect(book.attribute(named: "pages")?.type == .int32)
        #expect(book.attribute(named: "pages")?.isOptional == true)
        #expect(book.attribute(named: "published")?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 86400)))
        #expect(book.attribute(named: "code")?.renamingIdentifier == "isbn")
        #expect(book.attribute(named: "code")?.maxValue == .integer(13))
        let authors = try #require(book.relationship(named: "authors"))
        #expect(authors.isToMany && authors.inverse == "books" && authors.destination == "Author")
        #expect(model.entity(named: "Author")?.attribute(named: "name")?.isOptional == false)
        #expect(model.entityNumbers == ["Author": 1, "Book": 2])
    }

    @Test func writesWhatItReads() throws {
        let model = try ObjectModel(json: JSON.parse(Self.bookModel))
        let again = try ObjectModel(json: JSON.parse(model.json.serialized(pretty: true)))
        #expect(again == model)
    }

    @Test(arguments: [
        (#"{"entities": {}}"#, "version: missing: a model names its version, such as \"Model1\""),
        (
            #"{"version": "M", "entities": {"Book": {"attributes": {"t": "text"}}}}"#,
            "entities.Book.attributes.t: unknown attribute type 'text'; the types are int16 int32 int64 decimal double float string boolean date binary uuid uri transformable undefined objectID composite (the last three only for transient attributes)"
        ),
        (
            #"{"version": "M", "entities": {"Book": {"atributes": {}}}}"#,
            "entities.Book.atributes: unknown key 'atributes'; expected one of parent, abstract, attributes, relationships, renamingIdentifier, versionHashModifier, userInfo, uniquenessConstraints, fetchedProperties, comment"
        ),
        (
            #"{"version": "M", "entities": {"Book": {"attributes": {"n": {"type": "int16", "optional": "no"}}}}}"#,
            "entities.Book.attributes.n.optional: expected true or false, found string"
        ),
        (
            #"{"version": "M", "entities": {"Book": {"relationships": {"u": {"inverse": "b"}}}}}"#,
            "entities.Book.relationships.u.destination: missing: a relationship has a destination entity"
        ),
        (
            #"{"version": "M", "entities": {"Book": {"relationships": {"u": {"destination": "User", "deleteRule": "explode"}}}}}"#,
            "entities.Book.relationships.u.deleteRule: unknown delete rule 'explode'; the rules are nullify, cascade, deny, noAction"
        ),
        (
            #"{"version": "M", "configurations": {"Cloud": ["Book", "Author"]}, "entities": {"Book": {}}}"#,
            "configurations.Cloud: unknown entity 'Author'; the entities are Book"
        )
    ])
    func structuralErrors(json: String, message: String) throws {
        let error = #expect(throws: ModelErrors.self) { try ObjectModel(json: JSON.parse(json)) }
        #expect(error?.errors.first?.description == message)
    }

    @Test(arguments: [
        (
            #"{"version": "M", "entities": {"Book": {"relationships": {"user": {"destination": "Usr"}}}, "User": {}}}"#,
            "entities.Book.relationships.user.destination: unknown destination entity 'Usr'; the entities are Book, User"
        ),
        (
            #"{"version": "M", "entities": {"Book": {"relationships": {"user": {"destination": "User", "inverse": "books"}}}, "User": {"relationships": {"books": {"destination": "Book", "inverse": "owner", "toMany": true}}}}}"#,
            "entities.Book.relationships.user.inverse: the inverse 'User.books' does not point back: it has destination 'Book' and inverse 'owner'"
        ),
        (
            #"{"version": "M", "entities": {"Book": {"relationships": {"user": {"destination": "User", "inverse": "books"}}}, "User": {}}}"#,
            "entities.Book.relationships.user.inverse: the inverse 'books' is not a relationship of 'User'"
        ),
        (
            #"{"version": "M", "entities": {"Book": {"attributes": {"count": {"type": "int16", "default": 40000}}}}}"#,
            "entities.Book.attributes.count.default: the default value 40000 is out of range for int16"
        ),
        (
            #"{"version": "M", "entities": {"Book": {"attributes": {"title": {"type": "string", "default": 5}}}}}"#,
            "entities.Book.attributes.title.default: the default value 5 does not fit a string attribute"
        ),
        (
            #"{"version": "M", "entities": {"Book": {"parent": "Thing"}}}"#,
            "entities.Book.parent: unknown parent entity 'Thing'; the entities are Book"
        ),
        (
            #"{"version": "M", "entities": {"A": {"parent": "B"}, "B": {"parent": "A"}}}"#,
            "entities.A.parent: the inheritance of 'A' forms a cycle"
        ),
        (
            #"{"version": "M", "entities": {"Base": {"attributes": {"name": "string"}}, "Book": {"parent": "Base", "attributes": {"name": "string"}}}}"#,
            "entities.Book.attributes.name: the property 'name' is already inherited from a parent entity"
        ),
        (
            #"{"version": "M", "entities": {"2Book": {}}}"#,
            "entities.2Book: '2Book' is not a valid entity name; names start with a letter or _ and use ASCII letters, digits and _"
        ),
        (
            #"{"version": "M", "entities": {"Book": {"attributes": {"page-count": "int16"}}}}"#,
            "entities.Book.attributes.page-count: 'page-count' is not a valid property name; names start with a letter or _ and use ASCII letters, digits and _"
        ),
        (
            #"{"version": "M", "entities": {"Book": {}, "BOOK": {}}}"#,
            "entities.BOOK: 'BOOK' and 'Book' differ only in case, so they would share the store table ZBOOK; rename one"
        ),
        (
            #"{"version": "M", "entities": {"Item": {"attributes": {"box": "string"}}, "Book": {"parent": "Item", "relationships": {"Box": {"destination": "Item"}}}}}"#,
            "entities.Book.relationships.Box: 'Box' and 'box' differ only in case, so they would share the store column ZBOX; rename one"
        ),
        (
            #"{"version": "M", "entities": {"Book": {"attributes": {"blob": "undefined"}}}}"#,
            "entities.Book.attributes.blob.type: a stored attribute cannot be undefined (Core Data refuses it too: only a transient attribute may have no storable type); make it transient or give it one of the types int16 int32 int64 decimal double float string boolean date binary uuid uri transformable"
        ),
        (
            #"{"version": "M", "entities": {"Book": {"attributes": {"place": "composite"}}}}"#,
            "entities.Book.attributes.place.type: a stored composite attribute is not supported: Core Data keeps its elements in columns of their own that Remodel does not create, so migrating the store would lose its values; make it transient, or split it into attributes"
        ),
        (
            #"{"version": "M", "entities": {"Book": {"attributes": {"id": "uuid"}, "uniquenessConstraints": [["id", "isbn"]]}}}"#,
            "entities.Book.uniquenessConstraints[0]: 'isbn' is not a property of 'Book'"
        ),
        (
            #"{"version": "M", "entities": {"Book": {"fetchedProperties": {"similar": {"entity": "Bok"}}}}}"#,
            "entities.Book.fetchedProperties.similar.entity: unknown entity 'Bok'; the entities are Book"
        ),

        (
            #"{"version": "M", "entities": {"Book": {"attributes": {"description": "string"}}}}"#,
            "entities.Book.attributes.description: 'description' is reserved (it clashes with an NSManagedObject method or a store column); choose another name"
        ),
        (
            #"{"version": "M", "entities": {"Book": {"relationships": {"tags": {"destination": "Book", "ordered": true}}}}}"#,
            "entities.Book.relationships.tags.ordered: only a to-many relationship can be ordered"
        )
    ])
    func validationErrors(json: String, message: String) throws {
        let model = try ObjectModel(json: JSON.parse(json))
        #expect(model.validationErrors().first?.description == message)
    }

    @Test func inheritance() throws {
        let model = try ObjectModel(
            json: JSON.parse(
                """
                {"version": "M", "entities": {
                  "Item": {"abstract": true, "attributes": {"name": "string"}},
                  "Book": {"parent": "Item", "attributes": {"pages": "int32"}},
                  "Comic": {"parent": "Book", "attributes": {"artist": "string"}}
                }}
                """))
        try model.validate()
        let comic = try #require(model.entity(named: "Comic"))
        #expect(model.allAttributes(of: comic).map(\.name) == ["name", "pages", "artist"])
        #expect(model.rootEntity(of: comic).name == "Item")
        #expect(model.descendants(of: model.entity(named: "Item")!).map(\.name) == ["Item", "Book", "Comic"])
    }

    @Test func loadReportsTheFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(UUID()).model.json")
        try Data(#"{"version": "M", "entities": {"Book": {"attributes": {"t": "text"}}}"#.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let error = #expect(throws: ModelErrors.self) { try ObjectModel.load(contentsOf: url) }
        #expect(
            error?.description
                == "\(url.lastPathComponent): invalid JSON at 1:69: expected ',' or '}' to close '{' at 1:1, found end of input"
        )
    }
}

@Suite struct XcodeImportTests {
    @Test func importsEveryFixtureVersion() throws {
        try SharedFixtures.require()
        let bundle = SharedFixtures.bookMigration.appendingPathComponent("Model.xcdatamodeld")
        let (versions, current) = try XcodeModelImporter.importVersions(at: bundle)
        #expect(versions.map(\.version) == ["Model1", "Model2", "Model3"])
        #expect(current == "Model3")

        let v1 = versions[0]
        #expect(v1.entities.map(\.name) == ["Book", "User"])
        let book = try #require(v1.entity(named: "Book"))
        #expect(book.attributes.map(\.name) == ["authorName", "fileURL", "title"])
        #expect(book.attribute(named: "fileURL")?.type == .transformable)
        #expect(book.attribute(named: "title")?.isOptional == true)
        let user = try #require(book.relationship(named: "user"))
        #expect(!user.isToMany && user.destination == "User" && user.inverse == "books" && user.deleteRule == .nullify)
        let userEntity = try #require(v1.entity(named: "User"))
        #expect(userEntity.attribute(named: "userId")?.type == .int32)
        #expect(userEntity.attribute(named: "userId")?.defaultValue == .integer(0))
        #expect(userEntity.relationship(named: "books")?.isToMany == true)

        let v3 = versions[2]
        #expect(v3.entities.map(\.name) == ["Author", "Book", "File", "User"])
        #expect(v3.entity(named: "File")?.relationship(named: "user")?.destination == "User")
        #expect(v3.entity(named: "Book")?.relationship(named: "authors")?.inverse == "books")
    }

    @Test func rejectsUnsupportedTypes() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model><entity name="Thing"><attribute name="blob" attributeType="Quaternion"/></entity></model>
            """
        let error = #expect(throws: ModelErrors.self) {
            try XcodeModelImporter.parse(Data(xml.utf8), version: "V", file: "V.xcdatamodel/contents")
        }
        #expect(
            error?.description
                == "V.xcdatamodel/contents: entity Thing attribute blob: the attribute type 'Quaternion' is not supported; Remodel stores Integer 16, Integer 32, Integer 64, Decimal, Double, Float, String, Boolean, Date, Binary, UUID, URI, Transformable"
        )
    }

    @Test func readsOptionsAndUserInfo() throws {
        let xml = """
            <model>
              <entity name="Note" parentEntity="Base" elementID="OldNote" versionHashModifier="2">
                <attribute name="stars" attributeType="Integer 16" defaultValueString="0" minValueString="0" maxValueString="5"/>
                <attribute name="when" optional="YES" attributeType="Date" defaultDateTimeInterval="86400"/>
                <attribute name="done" attributeType="Boolean" defaultValueString="YES" transient="YES"/>
                <relationship name="tags" optional="YES" toMany="YES" ordered="YES" minCount="1" maxCount="3" deletionRule="Cascade" destinationEntity="Tag" inverseName="notes" inverseEntity="Tag"/>
                <userInfo><entry key="k" value="v"/></userInfo>
              </entity>
              <entity name="Base" isAbstract="YES"/>
              <entity name="Tag"><relationship name="notes" optional="YES" toMany="YES" deletionRule="No Action" destinationEntity="Note" inverseName="tags" inverseEntity="Note"/></entity>
            </model>
            """
        let model = try XcodeModelImporter.parse(Data(xml.utf8), version: "V")
        try model.validate()
        let note = try #require(model.entity(named: "Note"))
        #expect(note.parent == "Base" && note.renamingIdentifier == "OldNote" && note.versionHashModifier == "2")
        #expect(note.userInfo == ["k": "v"])
        #expect(note.attribute(named: "stars")?.isOptional == false)
        #expect(note.attribute(named: "stars")?.maxValue == .integer(5))
        #expect(note.attribute(named: "when")?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 86400)))
        #expect(note.attribute(named: "done")?.defaultValue == .bool(true))
        #expect(note.attribute(named: "done")?.isTransient == true)
        let tags = try #require(note.relationship(named: "tags"))
        #expect(tags.isOrdered && tags.minCount == 1 && tags.maxCount == 3 && tags.deleteRule == .cascade)
        #expect(model.entity(named: "Base")?.isAbstract == true)
        #expect(model.entity(named: "Tag")?.relationship(named: "notes")?.deleteRule == .noAction)
    }
}

@Suite struct VersionHashTests {
    static func model(_ entities: String) throws -> ObjectModel {
        try ObjectModel(json: JSON.parse(#"{"version": "M", "entities": {"# + entities + "}}"))
    }

    @Test func hashesWhatTheStoreDependsOn() throws {
        let base = try Self.model(#""Book": {"attributes": {"title": "string", "pages": "int32"}}"#)
        let hash = try #require(base.entityVersionHashes["Book"])
        #expect(hash.count == 32)
        // Declaration order, defaults, renaming identifiers and user info do not change the store.
        let same = try Self.model(
            #""Book": {"attributes": {"pages": "int32", "title": {"type": "string", "default": "x", "renamingIdentifier": "name", "userInfo": {"a": 1}}}}"#
        )
        #expect(same.entityVersionHashes["Book"] == hash)
        // Types, optionality, names and modifiers do.
        for changed in [
            #""Book": {"attributes": {"title": "string", "pages": "int64"}}"#,
            #""Book": {"attributes": {"title": {"type": "string", "optional": false}, "pages": "int32"}}"#,
            #""Book": {"attributes": {"name": "string", "pages": "int32"}}"#,
            #""Book": {"attributes": {"title": {"type": "string", "versionHashModifier": "2"}, "pages": "int32"}}"#,
            #""Book": {"versionHashModifier": "v2", "attributes": {"title": "string", "pages": "int32"}}"#
        ] {
            #expect(try Self.model(changed).entityVersionHashes["Book"] != hash, "\(changed)")
        }
    }

    @Test func modelHashCombinesEntitiesInNameOrder() throws {
        let a = try Self.model(#""A": {}, "B": {}"#)
        let b = try Self.model(#""B": {}, "A": {}"#)
        #expect(a.versionHash == b.versionHash)
        #expect(a.versionHash != (try Self.model(#""A": {}"#)).versionHash)
    }

    @Test func canonicalFormIsPinned() throws {
        let model = try Self.model(
            #""Book": {"attributes": {"title": "string"}, "relationships": {"user": {"destination": "Book"}}}"#)
        #expect(
            model.canonicalForm(of: model.entities[0]) == """
                remodel-entity-hash 1
                entity 4:Book
                abstract 0
                parent -
                modifier -
                attribute 5:title type=700 optional=1 transient=0 external=0 modifier=-
                relationship 4:user destination=4:Book inverse=- toMany=0 ordered=0 optional=1 transient=0 min=0 max=0 modifier=-

                """)
    }
}
