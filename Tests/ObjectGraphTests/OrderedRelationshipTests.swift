import ExpressionLanguage
import Foundation
import Testing
@testable import ObjectGraph

/// Ordered to-many relationships keep their order through save and reopen, in Core Data's
/// `Z_FOK_` columns: beside the to-one column for an ordered one-to-many, in the join table
/// for an ordered many-to-many, beside the hidden key column in the destination's table for an
/// ordered to-many without an inverse.
@Suite struct OrderedRelationshipTests {
    /// Album(1).tracks ⟷ Track(6).albums, both ordered; Folder(2).notes ordered, without an
    /// inverse; Playlist(4).songs ordered one-to-many with Song(5).playlist.
    static let model: ObjectModel = try! ObjectModel(
        json: JSON.parse(
            """
            {"version": "Music1", "entities": {
              "Album": {"attributes": {"title": "string"},
                        "relationships": {"tracks": {"destination": "Track", "inverse": "albums", "toMany": true, "ordered": true}}},
              "Track": {"attributes": {"title": "string"},
                        "relationships": {"albums": {"destination": "Album", "inverse": "tracks", "toMany": true, "ordered": true}}},
              "Folder": {"attributes": {"name": "string"},
                         "relationships": {"notes": {"destination": "Note", "toMany": true, "ordered": true}}},
              "Note": {"attributes": {"text": "string"}},
              "Playlist": {"attributes": {"name": "string"},
                           "relationships": {"songs": {"destination": "Song", "inverse": "playlist", "toMany": true, "ordered": true}}},
              "Song": {"attributes": {"title": "string"},
                       "relationships": {"playlist": {"destination": "Playlist", "inverse": "songs"}}}
            }}
            """))

    /// A store with a context; `reopened()` gives a fresh context over the file reopened
    /// (on disk) or over the same store (in memory).
    final class Fixture {
        let temp: TemporaryStore
        let context: ObjectContext
        init(_ place: String) throws {
            temp = try TemporaryStore(place, model: OrderedRelationshipTests.model)
            context = ObjectContext(store: temp.store)
        }
        func reopened() throws -> ObjectContext {
            ObjectContext(store: temp.path == ":memory:" ? temp.store : try temp.reopened())
        }
        func insert(_ entity: String, _ key: String, _ names: String...) throws -> [ManagedObject] {
            try names.map { name in
                let object = try context.insert(entity)
                try object.setValue(.string(name), forKey: key)
                return object
            }
        }
        func scalars(_ sql: String) throws -> [String] { try temp.store.database.rows(sql) }
    }

    static func array(_ objects: [ManagedObject]) -> Value {
        .array(objects.map { .object(ObjectReference($0)) })
    }

    /// The `key` of each object in `value` (an array of objects), in order.
    static func names(_ value: Value, _ key: String) -> [String] {
        guard case .array(let elements) = value else { return ["not an array: \(value.kind)"] }
        return elements.map { element in
            guard case .object(let reference) = element, let object = reference.object as? ManagedObject,
                case .string(let name) = object[key]
            else { return "?" }
            return name
        }
    }

    /// The first object of `entity` whose `key` is `name`.
    static func find(_ context: ObjectContext, _ entity: String, _ key: String, _ name: String) throws -> ManagedObject
    {
        try #require(
            try context.fetch(FetchRequest(entityName: entity, predicate: "\(key) == %@", arguments: [.string(name)]))
                .first)
    }

    @Test func layout() throws {
        let layout = StoreLayout(model: Self.model)
        let statements = layout.createStatements
        #expect(
            statements.contains(
                "CREATE TABLE ZSONG ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZPLAYLIST INTEGER, Z_FOK_PLAYLIST INTEGER, ZTITLE VARCHAR )"
            ))
        #expect(
            statements.contains(
                "CREATE TABLE Z_1TRACKS ( Z_1ALBUMS INTEGER, Z_6TRACKS INTEGER, Z_FOK_1ALBUMS INTEGER, Z_FOK_6TRACKS INTEGER, PRIMARY KEY (Z_1ALBUMS, Z_6TRACKS) )"
            ))
        // Folder(2).notes has no inverse: each note holds its folder's key and its position.
        #expect(
            statements.contains(
                "CREATE TABLE ZNOTE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, Z2NOTES INTEGER, Z_FOK_2NOTES INTEGER, ZTEXT VARCHAR )"
            ))
        #expect(statements.contains("CREATE INDEX ZNOTE_Z2NOTES_INDEX ON ZNOTE (Z2NOTES)"))
        #expect(!statements.contains { $0.contains("Z_2NOTES") })
        #expect(layout.entities["Folder"]?.toManyInverses["notes"] == "Folder.notes")
        #expect(
            layout.entities["Note"]?.toOneColumns["Folder.notes"]
                == .init(key: "Z2NOTES", entity: nil, order: "Z_FOK_2NOTES"))
        #expect(
            layout.entities["Song"]?.toOneColumns["playlist"]
                == .init(key: "ZPLAYLIST", entity: nil, order: "Z_FOK_PLAYLIST"))
        // An album's tracks are ordered by the column named after the tracks' keys.
        #expect(
            layout.entities["Album"]?.joinTables["tracks"]
                == .init(
                    table: "Z_1TRACKS", sourceColumn: "Z_1ALBUMS", destinationColumn: "Z_6TRACKS",
                    orderColumn: "Z_FOK_6TRACKS"))
        #expect(
            layout.entities["Track"]?.joinTables["albums"]
                == .init(
                    table: "Z_1TRACKS", sourceColumn: "Z_6TRACKS", destinationColumn: "Z_1ALBUMS",
                    orderColumn: "Z_FOK_1ALBUMS"))
    }

    @Test(arguments: ["memory", "disk"])
    func oneToManyKeepsItsOrder(place: String) throws {
        let f = try Fixture(place)
        let playlist = try f.insert("Playlist", "name", "Road")[0]
        let songs = try f.insert("Song", "title", "a", "b", "c", "d")
        try playlist.setValue(Self.array([songs[2], songs[0], songs[3], songs[1]]), forKey: "songs")
        #expect(Self.names(playlist["songs"], "title") == ["c", "a", "d", "b"], "unsaved, in the order set")
        try f.context.save()
        #expect(try f.scalars("SELECT ZTITLE, Z_FOK_PLAYLIST FROM ZSONG ORDER BY Z_PK") == ["a 2", "b 4", "c 1", "d 3"])
        #expect(Self.names(playlist["songs"], "title") == ["c", "a", "d", "b"])

        var context = try f.reopened()
        var road = try Self.find(context, "Playlist", "name", "Road")
        #expect(Self.names(road["songs"], "title") == ["c", "a", "d", "b"], "saved and reopened")
        // Reorder, append from the other side, remove one.
        let songsNow = try #require(road["songs"].collectionElements)
        try road.setValue(.array([songsNow[3], songsNow[2], songsNow[1], songsNow[0]]), forKey: "songs")
        #expect(Self.names(road["songs"], "title") == ["b", "d", "a", "c"])
        let e = try context.insert("Song")
        try e.setValue("e", forKey: "title")
        try e.setValue(.object(ObjectReference(road)), forKey: "playlist")
        try Self.find(context, "Song", "title", "d").setValue(.null, forKey: "playlist")
        #expect(Self.names(road["songs"], "title") == ["b", "a", "c", "e"])
        try context.save()
        #expect(
            try f.scalars(
                "SELECT ZTITLE, Z_FOK_PLAYLIST FROM ZSONG WHERE ZPLAYLIST IS NOT NULL ORDER BY Z_FOK_PLAYLIST")
                == ["b 1", "a 3", "c 4", "e 5"])

        context = try f.reopened()
        road = try Self.find(context, "Playlist", "name", "Road")
        #expect(Self.names(road["songs"], "title") == ["b", "a", "c", "e"])
        // Appending to a saved relationship goes after its last position; moving a song to
        // another playlist puts it last there.
        let f2 = try context.insert("Song")
        try f2.setValue("f", forKey: "title")
        try f2.setValue(.object(ObjectReference(road)), forKey: "playlist")
        let other = try context.insert("Playlist")
        try other.setValue("Other", forKey: "name")
        try other.setValue(
            .array([.object(ObjectReference(try Self.find(context, "Song", "title", "d")))]), forKey: "songs")
        try Self.find(context, "Song", "title", "b").setValue(.object(ObjectReference(other)), forKey: "playlist")
        #expect(Self.names(road["songs"], "title") == ["a", "c", "e", "f"])
        #expect(Self.names(other["songs"], "title") == ["d", "b"])
        try context.save()
        context = try f.reopened()
        #expect(
            Self.names(try Self.find(context, "Playlist", "name", "Road")["songs"], "title") == ["a", "c", "e", "f"])
        #expect(Self.names(try Self.find(context, "Playlist", "name", "Other")["songs"], "title") == ["d", "b"])
        #expect(
            try f.scalars("SELECT ZTITLE, Z_FOK_PLAYLIST FROM ZSONG WHERE ZTITLE IN ('f', 'b') ORDER BY ZTITLE") == [
                "b 2", "f 6"
            ])
    }

    @Test(arguments: ["memory", "disk"])
    func manyToManyKeepsBothOrders(place: String) throws {
        let f = try Fixture(place)
        let albums = try f.insert("Album", "title", "Blue", "Kind")
        let tracks = try f.insert("Track", "title", "t1", "t2", "t3", "t4")
        try albums[0].setValue(Self.array([tracks[2], tracks[0], tracks[1]]), forKey: "tracks")
        try albums[1].setValue(Self.array([tracks[1], tracks[3]]), forKey: "tracks")
        // The other side's order is its own: t2 is on Kind first, then Blue.
        try tracks[1].setValue(Self.array([albums[1], albums[0]]), forKey: "albums")
        #expect(Self.names(albums[0]["tracks"], "title") == ["t3", "t1", "t2"])
        #expect(Self.names(tracks[1]["albums"], "title") == ["Kind", "Blue"])
        #expect(Self.names(tracks[2]["albums"], "title") == ["Blue"])
        try f.context.save()
        #expect(
            try f.scalars(
                "SELECT Z_1ALBUMS, Z_6TRACKS, Z_FOK_6TRACKS, Z_FOK_1ALBUMS FROM Z_1TRACKS ORDER BY Z_1ALBUMS, Z_FOK_6TRACKS"
            )
                == ["1 3 1 1", "1 1 2 1", "1 2 3 2", "2 2 1 1", "2 4 2 1"])

        var context = try f.reopened()
        var blue = try Self.find(context, "Album", "title", "Blue")
        #expect(Self.names(blue["tracks"], "title") == ["t3", "t1", "t2"])
        #expect(Self.names(try Self.find(context, "Album", "title", "Kind")["tracks"], "title") == ["t2", "t4"])
        #expect(Self.names(try Self.find(context, "Track", "title", "t2")["albums"], "title") == ["Kind", "Blue"])

        // Reordering the same members changes positions only; t4 joins Blue from its side,
        // so it goes last on Blue.
        let current = try #require(blue["tracks"].collectionElements)
        try blue.setValue(.array([current[2], current[1], current[0]]), forKey: "tracks")
        let t4 = try Self.find(context, "Track", "title", "t4")
        try t4.setValue(
            .array([
                .object(ObjectReference(try Self.find(context, "Album", "title", "Kind"))),
                .object(ObjectReference(blue))
            ]), forKey: "albums")
        #expect(Self.names(blue["tracks"], "title") == ["t2", "t1", "t3", "t4"])
        try context.save()
        #expect(try f.scalars("SELECT count(*) FROM Z_1TRACKS") == ["6"])
        context = try f.reopened()
        blue = try Self.find(context, "Album", "title", "Blue")
        #expect(Self.names(blue["tracks"], "title") == ["t2", "t1", "t3", "t4"])
        #expect(Self.names(try Self.find(context, "Track", "title", "t4")["albums"], "title") == ["Kind", "Blue"])

        // Removing a member keeps the others' order; deleting one too.
        try blue.setValue(
            .array(
                try #require(blue["tracks"].collectionElements).filter {
                    guard case .object(let r) = $0, let t = r.object as? ManagedObject else { return true }
                    return t["title"] != "t1"
                }), forKey: "tracks")
        try context.delete(try Self.find(context, "Track", "title", "t3"))
        try context.save()
        let last = try f.reopened()
        #expect(Self.names(try Self.find(last, "Album", "title", "Blue")["tracks"], "title") == ["t2", "t4"])
    }

    @Test(arguments: ["memory", "disk"])
    func orderedToManyWithoutAnInverse(place: String) throws {
        let f = try Fixture(place)
        let folder = try f.insert("Folder", "name", "Inbox")[0]
        let notes = try f.insert("Note", "text", "x", "y", "z")
        try folder.setValue(Self.array([notes[1], notes[2], notes[0]]), forKey: "notes")
        try f.context.save()
        let context = try f.reopened()
        let inbox = try Self.find(context, "Folder", "name", "Inbox")
        #expect(Self.names(inbox["notes"], "text") == ["y", "z", "x"])
        try inbox.setValue(.array(Array(try #require(inbox["notes"].collectionElements).reversed())), forKey: "notes")
        try context.save()
        let last = try f.reopened()
        #expect(Self.names(try Self.find(last, "Folder", "name", "Inbox")["notes"], "text") == ["x", "z", "y"])
    }

    /// Positions another writer (Core Data) put in the columns are what reading follows,
    /// whatever their values.
    @Test func readsTheOrderOfTheColumns() throws {
        let f = try Fixture("memory")
        let db = f.temp.store.database
        try db.execute(
            """
            INSERT INTO ZPLAYLIST (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (1, 4, 1, 'P');
            INSERT INTO ZSONG (Z_PK, Z_ENT, Z_OPT, ZPLAYLIST, Z_FOK_PLAYLIST, ZTITLE) VALUES
              (1, 5, 1, 1, 3072, 'third'), (2, 5, 1, 1, 1024, 'first'), (3, 5, 1, 1, 2048, 'second');
            INSERT INTO ZALBUM (Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES (1, 1, 1, 'A');
            INSERT INTO ZTRACK (Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES (1, 6, 1, 'one'), (2, 6, 1, 'two');
            INSERT INTO Z_1TRACKS (Z_1ALBUMS, Z_6TRACKS, Z_FOK_6TRACKS, Z_FOK_1ALBUMS) VALUES (1, 1, 2048, 1024), (1, 2, 1024, 1024);
            UPDATE Z_PRIMARYKEY SET Z_MAX = 3 WHERE Z_ENT = 5;
            """)
        let context = ObjectContext(store: f.temp.store)
        let playlist = try Self.find(context, "Playlist", "name", "P")
        #expect(Self.names(playlist["songs"], "title") == ["first", "second", "third"])
        #expect(Self.names(try Self.find(context, "Album", "title", "A")["tracks"], "title") == ["two", "one"])
        // Appending continues after the largest position there is.
        let fourth = try context.insert("Song")
        try fourth.setValue("fourth", forKey: "title")
        try fourth.setValue(.object(ObjectReference(playlist)), forKey: "playlist")
        try context.save()
        #expect(try f.scalars("SELECT Z_FOK_PLAYLIST FROM ZSONG WHERE ZTITLE = 'fourth'") == ["3073"])
        #expect(Self.names(playlist["songs"], "title") == ["first", "second", "third", "fourth"])
    }
}
