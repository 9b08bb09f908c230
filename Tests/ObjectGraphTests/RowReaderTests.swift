import ExpressionLanguage
import Foundation
import Testing
@testable import ObjectGraph

/// Rows read without objects, and copied column to column: the same values a fetched
/// object has, and the same rows as setting those values.
@Suite struct RowReaderTests {
    static let model: ObjectModel = try! ObjectModel(
        json: JSON.parse(
            """
            {"version": "Rows1", "entities": {
              "Row": {"attributes": {"text": "string", "small": "int16", "big": "int64", "flag": "boolean", "d": "double",
                                     "f": "float", "when": "date", "blob": "binary", "id": "uuid", "amount": "decimal"},
                      "relationships": {"owner": {"destination": "Owner", "inverse": "rows"}}},
              "Owner": {"attributes": {"name": "string"},
                        "relationships": {"rows": {"destination": "Row", "inverse": "owner", "toMany": true}}}
            }}
            """))

    /// The destination: the same names, two with narrower types (`big` int16, `d` float).
    static let target: ObjectModel = try! ObjectModel(
        json: JSON.parse(
            """
            {"version": "Rows2", "entities": {
              "Row": {"attributes": {"text": "string", "small": "int32", "big": "int16", "flag": "boolean", "d": "float",
                                     "f": "double", "when": "date", "blob": "transformable", "id": "uuid", "amount": "decimal"}}
            }}
            """))

    static let names = ["text", "small", "big", "flag", "d", "f", "when", "blob", "id", "amount"]

    /// Rows as SQLite stores them, some not as the library would write them: NULLs, empty
    /// text and data, text that is not ASCII or not UTF-8, numbers stored as text, a real
    /// in an integer column, a boolean 5, an integer too big for int16.
    static let rows = [
        "1, 'plain', 7, 9, 1, 2.5, 0.1, 1000.5, X'0102', X'E621E1F8C36C495A93FC0C247A3E6E5F', 4.5",
        "2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL",
        "3, '', 0, 0, 0, 0.0, -0.0, 0.0, X'', '', 0",
        "4, 'café', '42', 1.5, 5, '3.25', 7, 12, 'text as data', 'e621e1f8-c36c-495a-93fc-0c247a3e6e5f', '1.25'",
        "5, CAST(X'61FF62' AS TEXT), -3, 70000, 1, 1e300, 16777217, -1e9, X'00', NULL, NULL"
    ]

    func sourceStore() throws -> TemporaryStore {
        let temporary = try TemporaryStore("memory", model: Self.model)
        let layout = temporary.store.layout.entities["Row"]!
        let columns = Self.names.map { layout.attributeColumns[$0]! }.joined(separator: ", ")
        for row in Self.rows {
            try temporary.store.database.execute(
                "INSERT INTO \(layout.table) (Z_PK, Z_ENT, Z_OPT, \(columns)) VALUES (\(row.replacingOccurrences(of: "^(\\d+), ", with: "$1, \(layout.number), 1, ", options: .regularExpression)))"
            )
        }
        return temporary
    }

    @Test func readsWhatAFetchedObjectHas() throws {
        let temporary = try sourceStore()
        let context = ObjectContext(store: temporary.store)
        let objects = try context.fetch(FetchRequest(entityName: "Row"))
        let reader = try context.makeRowReader(for: "Row", attributes: ["big", "text", "blob"])
        #expect(try reader.count() == Self.rows.count)
        var index = 0
        while try reader.next() {
            let object = objects[index]
            #expect(reader.primaryKey == object.objectID.primaryKey)
            #expect(reader.objectID == object.objectID)
            for name in Self.names {
                // Selected or not ("small" is read on its own), by key and by name.
                let expected = try object.value(forKey: name)
                #expect(
                    try reader.value(for: context.attributeKey(name, of: "Row")) == expected,
                    "\(object.objectID) .\(name)")
                #expect(try reader.value(forKey: name) == expected, "\(object.objectID) .\(name)")
            }
            index += 1
        }
        #expect(index == Self.rows.count)
        #expect(throws: ContextError.self) { try context.makeRowReader(for: "Row", attributes: ["owner"]) }
    }

    @Test func answersExpressionsAboutItsRowOnly() throws {
        let temporary = try sourceStore()
        let context = ObjectContext(store: temporary.store)
        let reader = try context.makeRowReader(for: "Row")
        #expect(try reader.next())
        let compiled = try ExpressionCompiler().compileExpression("$source.small * 2")
        #expect(
            try compiled.evaluate(with: .null, variables: ["source": .object(ObjectReference(reader))]) == .integer(14))
        #expect(try reader.next())
        // The same object, on the next row: `small` is NULL there.
        #expect(throws: ExpressionError.self) {
            try compiled.evaluate(with: .null, variables: ["source": .object(ObjectReference(reader))])
        }
        #expect(
            try ExpressionCompiler().compileExpression("TERNARY($source.small == nil, 'none', $source.small)")
                .evaluate(with: .null, variables: ["source": .object(ObjectReference(reader))]) == "none")
        do {
            _ = try reader.value(forKey: "owner")
            Issue.record("a relationship was read")
        } catch let error as ExpressionError {
            #expect(error.message == "Row/2 is read as a row, which has attributes only; 'owner' is a relationship")
        }
        do {
            _ = try reader.value(forKey: "titel")
            Issue.record("an unknown key was read")
        } catch let error as ExpressionError {
            #expect(
                error.message
                    == "Row/2 has no attribute or relationship 'titel'; Row has amount, big, blob, d, f, flag, id, owner, small, text, when"
            )
        }
    }

    /// Copies and sets of the value read make the same rows and the same errors, whatever
    /// each copy does (binds the column, or falls back to reading and setting), and so
    /// does a pass of `copyStoredValues()` followed by `copy(_:)` of what it left.
    @Test func copyingWritesWhatSettingTheReadValueWrites() throws {
        let temporary = try sourceStore()
        let source = ObjectContext(store: temporary.store)
        var written: [[String]] = []
        var failures: [[String]] = []
        var leftByOnePass = 0
        for way in ["copy", "set", "one pass"] {
            let destination = try TemporaryStore("memory", model: Self.target)
            let context = ObjectContext(store: destination.store)
            let reader = try source.makeRowReader(for: "Row", attributes: Self.names)
            let inserter = try context.makeRowInserter(for: "Row")
            let pairs = try Self.names.map {
                (try source.attributeKey($0, of: "Row"), try context.attributeKey($0, of: "Row"))
            }
            let copier = try RowCopier(from: reader, to: inserter, attributes: pairs)
            var errors: [String] = []
            while try reader.next() {
                let allCopied = way == "one pass" && copier.copyStoredValues()
                for (i, pair) in pairs.enumerated() {
                    do {
                        switch way {
                        case "copy": try copier.copy(i)
                        case "set": try inserter.set(try reader.value(for: pair.0), for: pair.1)
                        default:
                            if allCopied || copier.isDone(i) { continue }
                            leftByOnePass += 1
                            try copier.copy(i)
                        }
                    } catch {
                        errors.append("\(reader.primaryKey) \(error)")
                    }
                }
                try inserter.insertRow()
            }
            try context.save()
            let layout = destination.store.layout.entities["Row"]!
            let quoted = Self.names.map { "quote(\(layout.attributeColumns[$0]!))" }.joined(separator: " || ' ' || ")
            let statement = try destination.store.database.prepare(
                "SELECT \(quoted) FROM \(layout.table) ORDER BY Z_PK")
            var rows: [String] = []
            while try statement.step() { rows.append(statement.string(at: 0) ?? "") }
            written.append(rows)
            failures.append(errors)
        }
        #expect(written[0] == written[1] && written[0] == written[2])
        #expect(failures[0] == failures[1] && failures[0] == failures[2])
        #expect(leftByOnePass > 0, "some values need decoding (the test below says which)")
        // What the copies had to get right.
        #expect(written[0].count == Self.rows.count)
        #expect(
            failures[0] == [
                "3 .id: a uuid attribute cannot hold string ", "5 .big: 70000 is out of range for a int16 attribute"
            ])
        #expect(written[0][0] == "'plain' 7 9 1 2.5 0.1 1000.5 X'0102' X'E621E1F8C36C495A93FC0C247A3E6E5F' 4.5")
        #expect(written[0][1] == "NULL NULL NULL NULL NULL NULL NULL NULL NULL NULL")
        // Text as a number, a real truncated, a boolean 5 as 1, text as data.
        #expect(
            written[0][3]
                == "'café' 42 1 1 3.25 7.0 12 X'746578742061732064617461' X'E621E1F8C36C495A93FC0C247A3E6E5F' 1.25")
        #expect(written[0][4].hasPrefix("'a\u{FFFD}b' -3 NULL 1"), "invalid UTF-8 is repaired as reading repairs it")
    }

    /// Text is copied as it is stored exactly when reading it would give the same bytes:
    /// the check agrees with Swift's UTF-8 decoding on every edge of table 3-7, on each
    /// kind of byte at each place of short text, and on random bytes.
    @Test func copiesTextThatDecodingKeeps() {
        var cases: [[UInt8]] = [
            [], Array("plain ascii, longer than eight bytes".utf8), Array("café Zoë 🚀 Smørrebrød".utf8),
            [0xC2, 0x80], [0xC1, 0xBF], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xE0, 0x9F, 0xBF],
            [0xED, 0x9F, 0xBF], [0xED, 0xA0, 0x80], [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80],
            [0xF0, 0x8F, 0xBF, 0xBF], [0xF4, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80],
            [0x80], [0xBF], [0xC2], [0xE1, 0x80], [0xF1, 0x80, 0x80], [0xE1, 0x80, 0x41], [0xFF], [0x61, 0xFF, 0x62],
            Array("12345678".utf8) + [0xC3, 0xA9] + Array("12345678".utf8), Array("1234567".utf8) + [0xE2, 0x82, 0xAC]
        ]
        // Each kind of byte at each place of ASCII text of every length the check reads
        // in a different way (bytes one by one, four at a time, eight at a time).
        for length in 1...25 {
            for place in 0..<length {
                for inserted: [UInt8] in [[0xFF], [0x80], [0xC3, 0xA9], [0xE2, 0x82], [0xF0, 0x9F, 0x9A, 0x80]] {
                    var bytes = Array(repeating: UInt8(ascii: "a"), count: length)
                    bytes.replaceSubrange(place..<min(length, place + inserted.count), with: inserted)
                    cases.append(bytes)
                }
            }
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            // Mostly ASCII with lead and continuation bytes mixed in, as broken text is.
            cases.append(
                (0..<Int.random(in: 0...20, using: &generator)).map { _ in
                    let r = UInt8.random(in: 0...255, using: &generator)
                    return r < 160 ? r & 0x7F : r
                })
        }
        for bytes in cases {
            let decoded = Array(String(decoding: bytes, as: UTF8.self).utf8)
            let kept = bytes.withUnsafeBufferPointer(UTF8Sequence.isWellFormed)
            #expect(kept == (decoded == bytes), "\(bytes.map { String($0, radix: 16) })")
        }
    }

    /// Which values go column to column, and which take the ordinary path (so that the
    /// test above compares the two).
    @Test func copiesWithoutDecodingWhereNothingChanges() throws {
        let temporary = try sourceStore()
        let source = ObjectContext(store: temporary.store)
        let destination = try TemporaryStore("memory", model: Self.target)
        let context = ObjectContext(store: destination.store)
        let reader = try source.makeRowReader(for: "Row", attributes: Self.names)
        let inserter = try context.makeRowInserter(for: "Row")
        var direct: [[String]] = []
        while try reader.next() {
            direct.append(
                try Self.names.filter { name in
                    let from = try source.attributeKey(name, of: "Row"), to = try context.attributeKey(name, of: "Row")
                    guard let copy = inserter.storedCopy(from: reader.binding, slot: from.slot, to: to.slot) else {
                        return false
                    }
                    return inserter.copyStored(reader.column(ofSlot: from.slot), of: reader.statement.handle, copy)
                })
        }
        #expect(
            direct == [
                ["text", "small", "big", "flag", "d", "f", "when", "blob"],
                ["text", "small", "big", "flag", "d", "f", "when", "blob"],  // NULLs
                ["text", "small", "big", "flag", "d", "f", "when", "blob"],
                ["text", "small", "big", "flag", "d", "f", "when"],  // text as data
                ["small", "flag", "d", "f", "when", "blob"]  // not UTF-8; 70000 is no int16
            ])
    }
}
