import ExpressionLanguage
import Foundation
import Synchronization
import Testing
import TestSupport
@testable import ObjectGraph

/// A store on disk or in memory, removed when the test ends.
final class TemporaryStore {
    let path: String
    let store: Store

    init(_ place: String, model: ObjectModel) throws {
        path =
            place == "disk"
            ? FileManager.default.temporaryDirectory.appendingPathComponent("context-\(UUID()).sqlite").path
            : ":memory:"
        store = try Store.create(at: path, model: model)
    }

    func reopened() throws -> Store { try Store.open(at: path, model: store.model) }

    deinit {
        if path != ":memory:" { try? FileManager.default.removeItem(atPath: path) }
    }
}

@Suite struct ObjectContextTests {
    static let model: ObjectModel = try! ObjectModel(
        json: JSON.parse(
            """
            {"version": "Library1", "entities": {
              "Book": {"attributes": {"title": {"type": "string", "optional": false}, "pages": "int16", "price": "double",
                                      "published": "date", "cover": "binary", "inPrint": "boolean", "isbn": "uuid", "rating": "decimal"},
                       "relationships": {"user": {"destination": "User", "inverse": "books"},
                                         "authors": {"destination": "Author", "inverse": "books", "toMany": true},
                                         "cover2": {"destination": "Cover", "inverse": "book"}}},
              "User": {"attributes": {"userId": "int32"},
                       "relationships": {"books": {"destination": "Book", "inverse": "user", "toMany": true, "deleteRule": "cascade"}}},
              "Author": {"attributes": {"name": "string"},
                         "relationships": {"books": {"destination": "Book", "inverse": "authors", "toMany": true, "deleteRule": "deny"}}},
              "Cover": {"attributes": {"color": "string"}, "relationships": {"book": {"destination": "Book", "inverse": "cover2"}}}
            }}
            """))

    static func titles(_ objects: [ManagedObject]) -> [String] {
        objects.map { if case .string(let s) = $0["title"] { return s } else { return "?" } }
    }

    @Test(arguments: ["memory", "disk"])
    func roundTripsEveryType(place: String) throws {
        let temp = try TemporaryStore(place, model: Self.model)
        let context = ObjectContext(store: temp.store)
        let book = try context.insert("Book")
        let values: [String: Value] = [
            "title": "The Trial", "pages": 255, "price": 9.5,
            "published": .date(Date(timeIntervalSinceReferenceDate: -1_000_000)),
            "cover": .data(Data([1, 2, 3])), "inPrint": true, "isbn": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            "rating": .decimal(Decimal(string: "4.5")!)
        ]
        for (key, value) in values { try book.setValue(value, forKey: key) }
        try context.save()
        #expect(book.objectID.description == "Book/1")

        let store = place == "disk" ? try temp.reopened() : temp.store
        let fresh = ObjectContext(store: store)
        let fetched = try fresh.fetch(FetchRequest(entityName: "Book"))
        #expect(fetched.count == 1)
        for (key, value) in values { #expect(try fetched[0].value(forKey: key) == value, "\(key)") }
        #expect(fetched[0].version == 1)
    }

    /// A join table named after the other side (Core Data's choice of side is not
    /// documented) is read under its name: the store opens, and both sides read its rows.
    @Test func readsAJoinTableNamedAfterTheOtherSide() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("join-\(UUID()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let join: StoreLayout.JoinTable
        do {
            let store = try Store.create(at: path, model: Self.model)
            join = try #require(store.layout.joinTables.first)
            let context = ObjectContext(store: store)
            let book = try context.insert("Book"), author = try context.insert("Author")
            try book.setValue("The Trial", forKey: "title")
            try book.setValue(.set([.object(ObjectReference(author))]), forKey: "authors")
            try context.save()
            try store.database.execute("ALTER TABLE \(join.name) RENAME TO Z_99OTHERSIDE")
        }
        let store = try Store.open(at: path, model: Self.model)
        #expect(store.layout.joinTables.map(\.name) == ["Z_99OTHERSIDE"])
        let context = ObjectContext(store: store)
        let books = try context.fetch(FetchRequest(entityName: "Book"))
        let authors = try #require(try books.first?.value(forKey: "authors").collectionElements)
        #expect(authors.count == 1)
        let author = try #require(try context.fetch(FetchRequest(entityName: "Author")).first)
        #expect(try author.value(forKey: "books").collectionElements?.count == 1)
        #expect(try store.tablesOutsideTheModel().isEmpty)
    }

    /// A table whose highest key, or Z_MAX, is at the end of Int64 takes no new row: an
    /// error saying so, not an overflow; one key below it is the last handed out.
    @Test func aTableWithNoKeyLeftRefusesNewRows() throws {
        for (n, sql) in [
            "UPDATE Z_PRIMARYKEY SET Z_MAX = 9223372036854775807 WHERE Z_NAME = 'Book'",
            "INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE) SELECT 9223372036854775807, Z_ENT, 1, 'last' FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book'",
            "UPDATE Z_PRIMARYKEY SET Z_MAX = 9223372036854775805 WHERE Z_NAME = 'Book'"
        ].enumerated() {
            let temp = try TemporaryStore("memory", model: Self.model)
            try temp.store.database.execute(sql)
            let context = ObjectContext(store: temp.store)
            if n < 2 {
                let error = #expect(throws: ContextError.self) { try context.insert("Book") }
                #expect(error?.message.contains("ZBOOK has no key left for a new row") == true, "\(error as Any)")
                #expect(throws: ContextError.self) { try context.insertRows(of: "Book") { _, _ in 0 } }
            } else {
                #expect(try context.insert("Book").objectID.primaryKey == Int64.max - 1)
                #expect(throws: ContextError.self) { try context.insert("Book") }
            }
        }
    }

    /// A Decimal attribute's column holds a double (as Core Data writes it: 19.99 is the
    /// double nearest 19.99). Read, it is the decimal that double's shortest text says;
    /// written back, the double nearest that decimal, which is the same double: a value
    /// read and saved again is not changed by an ulp (it was, through
    /// `NSDecimalNumber.doubleValue`, for two values in three on Linux). What a Decimal
    /// does not hold is not kept, and ``AttributeCoercion/keepsDecimal(_:)`` says so.
    @Test func aDecimalAttributeWritesBackTheDoubleItRead() throws {
        var random = SeededGenerator(seed: 7)
        // (With magnitudes past 1e127, whose text Foundation's parser refuses: 8.7e+144 is
        // read as 87 followed by 16 zeros, times 10^127.)
        let doubles =
            [19.99, 0.1, 1e-5, 860162.112142062, -2.5e-7, 1e20, 123456789.123456789]
            + [1e128, 8.7e144, 2.9e144 * 3, -1.2345678901234567e150, 9.87654321e164, 1.7976931348623157e164]
            + (0..<2000).map { _ in Double.random(in: -1e9...1e9, using: &random) }
        for d in doubles {
            let decimal = try #require(Value.decimal(describing: d))
            #expect(Value.double(decimal).bitPattern == d.bitPattern, "\(d)")
            #expect(AttributeCoercion.keepsDecimal(d), "\(d)")
            #expect(EntityBinding.sqliteValue(.decimal(decimal), as: .decimal) == .real(d), "\(d)")
        }
        #expect(Value.double(Decimal(string: "19.99")!) == 19.99)
        for kept in [Double.nan, .infinity, -0.0, 1e300, 1e166, 1e-130] {
            #expect(!AttributeCoercion.keepsDecimal(kept), "\(kept)")
        }
        // An infinity given to a Decimal attribute is NaN, as NSDecimalNumber makes it
        // (Foundation's Decimal(Double) stopped the program on it).
        for infinity in [Double.infinity, -.infinity] {
            guard
                case .decimal(let d) = try AttributeCoercion.coerce(.double(infinity), to: .decimal, name: "price")
            else {
                Issue.record("not a decimal")
                continue
            }
            #expect(d.isNaN)
        }
    }

    /// ``AttributeCoercion/keepsDecimal(_:)`` tells without converting what its
    /// definition (the two conversions) tells, over doubles of every magnitude: random
    /// bit patterns, random doubles of each decimal exponent, and those at the ends of the
    /// range it takes on trust.
    @Test func whatADecimalKeepsIsToldAsItsDefinitionTellsIt() {
        var random = SeededGenerator(seed: 11)
        var doubles: [Double] = [0, -0.0, 1e-100, -1e-100, 1e100, -1e100, 1e-100.nextDown, 1e100.nextUp, 5e-324]
        for _ in 0..<20_000 {
            let d = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &random))
            if d.isFinite { doubles.append(d) }
        }
        for exponent in -130...170 {
            for _ in 0..<40 {
                doubles.append(Double.random(in: 1..<10, using: &random) * pow(10, Double(exponent)))
            }
        }
        for d in doubles {
            #expect(AttributeCoercion.keepsDecimal(d) == AttributeCoercion.writesBackAsDecimal(d), "\(d)")
        }
    }

    /// What a Decimal or UUID attribute's column holds in each storage class, read as a
    /// context reads it, the same from a row and from a SQL function's argument (as a
    /// migration's SQL hands a row to the interpreter): a decimal from an integer as
    /// itself, from numeric text as its number and other text as 0, from a double as its
    /// shortest text says, past 1e127 too (0 where no Decimal holds it); a UUID from 16 bytes or text, in
    /// capitals, and from other bytes as data.
    @Test func decimalsAndUUIDsAreReadFromEveryStorageClass() throws {
        let database = try Database(path: ":memory:")
        let cases: [(sql: String, type: AttributeType, expected: Value)] = [
            ("NULL", .decimal, .null), ("12", .decimal, .decimal(12)),
            ("9007199254740993", .decimal, .decimal(Decimal(string: "9007199254740993")!)),
            ("19.99", .decimal, .decimal(Decimal(string: "19.99")!)), ("'12.50'", .decimal, .decimal(12.5)),
            ("'twelve'", .decimal, .decimal(0)), ("1e300", .decimal, .decimal(0)), ("x'3132'", .decimal, .decimal(12)),
            // (Past a Decimal's largest exponent, 127, in the digits of its mantissa.)
            ("8.7e144", .decimal, .decimal(Decimal(string: "870000000000000000e127")!)),
            ("'-1.5E+130'", .decimal, .decimal(Decimal(string: "-1500e127")!)),
            ("NULL", .uuid, .null),
            ("'c9f4a6e2-0b1d-4c3e-9f7a-12ab34cd56ef'", .uuid, "C9F4A6E2-0B1D-4C3E-9F7A-12AB34CD56EF"),
            ("x'000102030405060708090a0b0c0d0e0f'", .uuid, "00010203-0405-0607-0809-0A0B0C0D0E0F"),
            ("x'0102'", .uuid, .data(Data([1, 2]))), ("12", .uuid, .data(Data("12".utf8))),
            ("x''", .uuid, .data(Data()))
        ]
        let argument = Mutex<Value?>(nil)
        for (sql, type, expected) in cases {
            try database.registerFunction("read_it", arity: 1) { arguments in
                argument.withLock { $0 = arguments.value(at: 0, as: type) }
                return .null
            }
            let statement = try database.prepare("SELECT \(sql), read_it(\(sql))")
            #expect(try statement.step())
            #expect(EntityBinding.read(statement, 0, as: type) == expected, "\(sql) as a \(type)")
            #expect(argument.withLock { $0 } == expected, "\(sql) as a \(type), an argument")
        }
    }

    @Test func coercesAndRejectsValues() throws {
        let temp = try TemporaryStore("memory", model: Self.model)
        let context = ObjectContext(store: temp.store)
        let book = try context.insert("Book")
        try book.setValue(3, forKey: "price")
        #expect(book["price"] == .double(3))
        try book.setValue(1, forKey: "inPrint")
        #expect(book["inPrint"] == .bool(true))
        let range = #expect(throws: ContextError.self) { try book.setValue(40_000, forKey: "pages") }
        #expect(range?.description == "Book/1 .pages: 40000 is out of range for a int16 attribute")
        let type = #expect(throws: ContextError.self) { try book.setValue("many", forKey: "pages") }
        #expect(type?.description == "Book/1 .pages: a int16 attribute cannot hold string many")
        let unknown = #expect(throws: ContextError.self) { try book.setValue(1, forKey: "weight") }
        #expect(unknown?.description == "Book/1 .weight: Book has no attribute or relationship 'weight'")
        let required = #expect(throws: ContextError.self) { try context.save() }
        #expect(required?.description == "Book/1 .title: 'title' is required")
        #expect(context.hasChanges)
    }

    @Test(arguments: ["memory", "disk"])
    func relationshipsKeepTheirInverses(place: String) throws {
        let temp = try TemporaryStore(place, model: Self.model)
        let context = ObjectContext(store: temp.store)
        let user = try context.insert("User")
        let trial = try context.insert("Book"), castle = try context.insert("Book")
        try trial.setValue("The Trial", forKey: "title")
        try castle.setValue("The Castle", forKey: "title")
        try trial.setValue(.object(ObjectReference(user)), forKey: "user")
        #expect(user["books"] == .set([.object(ObjectReference(trial))]))
        try user.setValue(.set([.object(ObjectReference(trial)), .object(ObjectReference(castle))]), forKey: "books")
        #expect(castle["user"] == .object(ObjectReference(user)))

        let kafka = try context.insert("Author")
        try kafka.setValue("Franz Kafka", forKey: "name")
        try kafka.setValue(.array([.object(ObjectReference(trial)), .object(ObjectReference(castle))]), forKey: "books")
        #expect(trial["authors"] == .set([.object(ObjectReference(kafka))]))

        let cover = try context.insert("Cover")
        try cover.setValue(.object(ObjectReference(trial)), forKey: "book")
        #expect(trial["cover2"] == .object(ObjectReference(cover)))
        try castle.setValue(.object(ObjectReference(cover)), forKey: "cover2")
        #expect(trial["cover2"] == .null, "one-to-one: the old partner lets go")
        try context.save()

        let store = place == "disk" ? try temp.reopened() : temp.store
        let fresh = ObjectContext(store: store)
        let users = try fresh.fetch(FetchRequest(entityName: "User"))
        let books = try #require(users.first?["books"].collectionElements)
        #expect(books.count == 2)
        let kafkas = try fresh.fetch(FetchRequest(entityName: "Author", predicate: "ANY books.title == 'The Castle'"))
        #expect(kafkas.count == 1)
        #expect(
            try fresh.count(
                FetchRequest(entityName: "Book", predicate: "user.books.@count == 2 AND ANY authors.name LIKE 'Franz*'")
            ) == 2)
        #expect(
            try fresh.fetch(FetchRequest(entityName: "Book", predicate: "cover2.color == nil AND cover2 != nil")).map {
                $0.objectID.description
            } == ["Book/2"])

        // Removing from a many-to-many removes only that join row.
        let trialAgain = try #require(
            try fresh.fetch(FetchRequest(entityName: "Book", predicate: "title == 'The Trial'")).first)
        try trialAgain.setValue(.set([]), forKey: "authors")
        try fresh.save()
        let rows = try store.database.scalar("SELECT count(*) FROM Z_1BOOKS")
        #expect(rows == .integer(1))
    }

    @Test func fetchesSeeUnsavedChanges() throws {
        let temp = try TemporaryStore("memory", model: Self.model)
        let context = ObjectContext(store: temp.store)
        for (title, price) in [("A", 5.0), ("B", 15.0), ("C", 25.0)] {
            let book = try context.insert("Book")
            try book.setValue(.string(title), forKey: "title")
            try book.setValue(.double(price), forKey: "price")
        }
        try context.save()
        let expensive = try FetchRequest(entityName: "Book", predicate: "price > 10")
        #expect(Self.titles(try context.fetch(expensive)).sorted() == ["B", "C"])

        let d = try context.insert("Book")
        try d.setValue("D", forKey: "title")
        try d.setValue(99.0, forKey: "price")
        let a = try #require(try context.fetch(FetchRequest(entityName: "Book", predicate: "title == 'A'")).first)
        try a.setValue(50.0, forKey: "price")
        let c = try #require(try context.fetch(FetchRequest(entityName: "Book", predicate: "title == 'C'")).first)
        try context.delete(c)

        var sorted = expensive
        sorted.sortDescriptors = [SortDescriptor("price", ascending: false)]
        #expect(Self.titles(try context.fetch(sorted)) == ["D", "A", "B"])
        #expect(try context.count(expensive) == 3)
        #expect(try context.count(FetchRequest(entityName: "Book")) == 3)
        sorted.fetchLimit = 2
        #expect(Self.titles(try context.fetch(sorted)) == ["D", "A"])
        try context.save()
        #expect(try context.count(FetchRequest(entityName: "Book")) == 3)
        let fresh = ObjectContext(store: temp.store)
        #expect(Self.titles(try fresh.fetch(sorted)) == ["D", "A"])
    }

    @Test func deleteRules() throws {
        let temp = try TemporaryStore("memory", model: Self.model)
        let context = ObjectContext(store: temp.store)
        let user = try context.insert("User")
        let book = try context.insert("Book")
        try book.setValue("T", forKey: "title")
        try book.setValue(.object(ObjectReference(user)), forKey: "user")
        let author = try context.insert("Author")
        try author.setValue(.set([.object(ObjectReference(book))]), forKey: "books")
        try context.save()

        // deny: an author with books cannot go.
        let denied = #expect(throws: ContextError.self) { try context.delete(author) }
        #expect(
            denied?.description == "Author/1 .books: cannot delete: 'books' has the delete rule deny and is not empty")
        // cascade: deleting the user deletes the book; nullify on the book's side clears the join row.
        try context.delete(user)
        #expect(try context.count(FetchRequest(entityName: "Book")) == 0)
        #expect(author["books"] == .set([]))
        try context.save()
        #expect(try temp.store.database.scalar("SELECT count(*) FROM ZBOOK") == .integer(0))
        #expect(try temp.store.database.scalar("SELECT count(*) FROM Z_1BOOKS") == .integer(0))
        try context.delete(author)
        try context.save()
        #expect(try context.count(FetchRequest(entityName: "Author")) == 0)
    }

    @Test func primaryKeysContinueAfterReopening() throws {
        let temp = try TemporaryStore("disk", model: Self.model)
        let context = ObjectContext(store: temp.store)
        for _ in 0..<3 { try context.insert("User").setValue(1, forKey: "userId") }
        try context.save()
        let again = ObjectContext(store: try temp.reopened())
        #expect(try again.insert("User").objectID.primaryKey == 4)
        #expect(try temp.store.database.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'User'") == .integer(3))
    }

    @Test func storedTextReadsAsItsType() throws {
        let temp = try TemporaryStore("disk", model: Self.model)
        let context = ObjectContext(store: temp.store)
        for _ in 0..<3 { _ = try context.insert("Author") }
        try context.save()
        // NULL, an empty blob and an integer in a text column, as other writers leave them:
        // text is read by its pointer, which must be nil only for the NULL.
        try temp.store.database.execute(
            "UPDATE ZAUTHOR SET ZNAME = CASE Z_PK WHEN 1 THEN NULL WHEN 2 THEN x'' ELSE 42 END")
        let reader = ObjectContext(store: try temp.reopened())
        let names = try reader.fetch(FetchRequest(entityName: "Author")).map { $0["name"] }
        #expect(names == [.null, .string(""), .string("42")])
    }

    @Test func binaryValuesAreReadWhenAskedFor() throws {
        let temp = try TemporaryStore("disk", model: Self.model)
        let context = ObjectContext(store: temp.store)
        let book = try context.insert("Book")
        try book.setValue("T", forKey: "title")
        try book.setValue(.data(Data(repeating: 7, count: 100_000)), forKey: "cover")
        try context.save()
        let reader = ObjectContext(store: try temp.reopened())
        let fetched = try #require(try reader.fetch(FetchRequest(entityName: "Book")).first)
        let slot = try #require(fetched.binding.attributeSlots["cover"])
        #expect(fetched.values[slot] == nil, "not read with the row")
        #expect(fetched["cover"] == .data(Data(repeating: 7, count: 100_000)))
        #expect(fetched.values[slot] != nil)
    }

    @Test func cursorsDoNotKeepObjects() throws {
        let temp = try TemporaryStore("disk", model: Self.model)
        let context = ObjectContext(store: temp.store)
        for i in 0..<5_000 {
            let user = try context.insert("User")
            try user.setValue(.integer(Int64(i)), forKey: "userId")
            if i % 1_000 == 999 { try context.save() }
        }
        let reader = ObjectContext(store: try temp.reopened())
        weak var last: ManagedObject?
        var count = 0
        var sum: Int64 = 0
        var distinct = Set<ObjectIdentifier>()
        var kept: [ManagedObject] = []
        do {
            let cursor = try reader.makeCursor(FetchRequest(entityName: "User", predicate: "userId >= 100"))
            while let user = try cursor.next() {
                last = user
                if count % 1_000 == 500 { kept.append(user) }
                distinct.insert(ObjectIdentifier(user))
                if case .integer(let i) = user["userId"] { sum += i }
                count += 1
            }
        }
        #expect(count == 4_900)
        #expect(sum == (100..<5_000).reduce(0, +))
        // Objects nobody kept were refilled with the next row, not made anew.
        #expect(distinct.count <= kept.count + 2, "made \(distinct.count) objects for 4,900 rows")
        // Objects the caller kept are never refilled.
        #expect(kept.map { $0["userId"] } == [600, 1_600, 2_600, 3_600, 4_600].map { Value.integer($0) })
        #expect(kept.map(\.objectID.primaryKey) == [601, 1_601, 2_601, 3_601, 4_601])
        #expect(last == nil, "objects the caller let go are released with the cursor: memory stays flat")
    }

    /// Saved objects changed in different columns are each updated in exactly those
    /// columns (the context prepares one UPDATE per set of changed columns).
    @Test func updatesWriteTheColumnsThatChanged() throws {
        let (temp, _) = try Self.savedBooks()
        let store = try temp.reopened()
        let changes: [[(Int64, String, Value)]] = [
            [(1, "title", "One"), (2, "pages", 222), (3, "price", 3.5), (4, "title", "Four")],
            [(1, "pages", 111), (2, "title", "Two"), (3, "title", "Three"), (3, "pages", 333), (4, "price", 4.5)]
        ]
        // As savedBooks wrote books 1…4.
        var expected: [Int64: [String: Value]] = [:]
        for i in 1...4 {
            let price: Value = i % 3 == 0 ? .null : .double(Double(i) + 0.5)
            expected[Int64(i)] = ["title": .string("Book \(i)"), "pages": .integer(Int64(i * 10)), "price": price]
        }
        for round in changes {
            let context = ObjectContext(store: store)
            for (key, name, value) in round {
                try context.object(entityName: "Book", primaryKey: key).setValue(value, forKey: name)
                expected[key]![name] = value
            }
            try context.save()
            let reader = ObjectContext(store: store)
            for (key, values) in expected {
                let book = try reader.object(entityName: "Book", primaryKey: key)
                for (name, value) in values { #expect(book[name] == value, "Book/\(key) .\(name)") }
            }
        }
    }

    /// Books 1…40 with every kind of attribute, saved and read back by a fresh context.
    static func savedBooks() throws -> (TemporaryStore, ObjectContext) {
        let temp = try TemporaryStore("disk", model: Self.model)
        let context = ObjectContext(store: temp.store)
        for i in 1...40 {
            let book = try context.insert("Book")
            try book.setValue(.string("Book \(i)"), forKey: "title")
            try book.setValue(.integer(Int64(i * 10)), forKey: "pages")
            if i % 3 != 0 { try book.setValue(.double(Double(i) + 0.5), forKey: "price") }
            try book.setValue(.date(Date(timeIntervalSinceReferenceDate: Double(i) * 86_400)), forKey: "published")
            try book.setValue(.bool(i % 2 == 0), forKey: "inPrint")
            try book.setValue(.decimal(Decimal(i) / 4), forKey: "rating")
            try book.setValue(.data(Data(repeating: UInt8(i), count: 10)), forKey: "cover")
        }
        try context.save()
        return (temp, ObjectContext(store: try temp.reopened()))
    }

    static let bookAttributes = ["title", "pages", "price", "published", "inPrint", "rating", "cover"]

    @Test func cursorObjectsReadTheRowUntilTheCursorMovesOn() throws {
        let (temp, reader) = try Self.savedBooks()
        let control = ObjectContext(store: try temp.reopened())
        let expected = try control.fetch(FetchRequest(entityName: "Book")).map { book in
            Self.bookAttributes.map { book[$0] }
        }
        let titleSlot = try reader.attributeKey("title", of: "Book").slot
        var kept: [ManagedObject] = []
        var last: ManagedObject?
        do {
            // A predicate SQL cannot decide is evaluated on the object while it is on its row.
            let cursor = try reader.makeCursor(
                FetchRequest(entityName: "Book", predicate: "title MATCHES 'Book [0-9]*'"))
            while let book = try cursor.next() {
                #expect(book.values[titleSlot] == nil, "values stay in the row until asked for")
                if book.objectID.primaryKey % 7 == 0 { kept.append(book) }  // kept without reading anything
                if book.objectID.primaryKey == 12 {
                    try book.setValue(.string("Changed"), forKey: "title")  // changed, then the cursor moves on
                    kept.append(book)
                }
                last = book
            }
            #expect(try cursor.next() == nil)
        }
        // Kept objects got every value of their own row before the row went, the lazy
        // binary one excepted (read when asked for, as ever); a change stays a change.
        #expect(kept.map(\.objectID.primaryKey) == [7, 12, 14, 21, 28, 35])
        for book in kept {
            #expect(book.values[titleSlot] != nil)
            var values = expected[Int(book.objectID.primaryKey) - 1]
            if book.objectID.primaryKey == 12 { values[0] = .string("Changed") }
            #expect(Self.bookAttributes.map { book[$0] } == values, "\(book.objectID)")
        }
        // The last object, held when the cursor went, kept its values too.
        let final = try #require(last)
        #expect(final.objectID.primaryKey == 40)
        #expect(Self.bookAttributes.map { final[$0] } == expected[39])
        // The change is saved like any other.
        try reader.save()
        let again = ObjectContext(store: try temp.reopened())
        #expect(
            try again.fetch(FetchRequest(entityName: "Book", predicate: "title == 'Changed'")).map(
                \.objectID.primaryKey) == [12])
    }

    @Test func batchesFromACursorKeepTheirValues() throws {
        let (temp, reader) = try Self.savedBooks()
        let control = ObjectContext(store: try temp.reopened())
        let expected = try control.fetch(FetchRequest(entityName: "Book")).map { book in
            Self.bookAttributes.map { book[$0] }
        }
        let cursor = try reader.makeCursor(FetchRequest(entityName: "Book"))
        var read: [[Value]] = []
        while case let batch = try cursor.next(batch: 16), !batch.isEmpty {
            #expect(Set(batch.map(ObjectIdentifier.init)).count == batch.count, "one object per row in a batch")
            read += batch.map { book in Self.bookAttributes.map { book[$0] } }
        }
        #expect(read == expected)
    }

    @Test func appleStoreReadsThroughKeyPaths() throws {
        try SharedFixtures.require()
        let fixture = SharedFixtures.bookMigration
        let model = try XcodeModelImporter.importModel(
            at: fixture.appendingPathComponent("Model.xcdatamodeld/Model1.xcdatamodel"))
        let path = fixture.appendingPathComponent("Model1.sqlite").path
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let context = ObjectContext(store: try Store.open(at: path, model: model, mode: .readOnly))
        #expect(try context.count(FetchRequest(entityName: "Book")) == 4)
        #expect(try context.count(FetchRequest(entityName: "User")) == 3)
        var request = FetchRequest(entityName: "Book")
        request.sortDescriptors = [SortDescriptor("title")]
        let books = try context.fetch(request)
        #expect(Self.titles(books) == ["Cosmos", "Extinction", "Metamorphosis", "The Trial"])
        let compiler = ExpressionCompiler()
        let userId = try compiler.compileExpression("$source.user.userId")
        #expect(try userId.evaluate(variables: ["source": .object(ObjectReference(books[0]))]) == .integer(1))
        guard case .data(let archive) = books[0]["fileURL"] else { Issue.record("fileURL is not data"); return }
        #expect(archive.count == 149 && archive.starts(with: Array("bplist00".utf8)))
        let users = try context.fetch(FetchRequest(entityName: "User", predicate: "books.@count > 0"))
        #expect(users.map(\.objectID.description) == ["User/3"])
        #expect(
            try context.count(FetchRequest(entityName: "User", predicate: "ANY books.authorName LIKE 'Franz*'")) == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }
}
