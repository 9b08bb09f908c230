import ExpressionLanguage
import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif
import Testing
@testable import ObjectGraph

/// What fuzzing found (scripts/fuzz, docs/testing.md), each case rebuilt by hand: inputs
/// that crashed a reader now give an error or a value.
@Suite struct FuzzRegressionTests {
    /// Foundation's XMLParser on Linux crashes on a name with bytes that are not UTF-8.
    @Test func xmlThatIsNotUTF8IsRefusedBeforeTheParserSeesIt() throws {
        var data = Data(#"<?xml version="1.0"?>\#n<model><entity name="Item"><attribute name="a"#.utf8)
        data.append(contentsOf: [0xDD, 0xDD])
        data.append(contentsOf: Data(#"" attributeType="String"/></entity></model>"#.utf8))
        let error = #expect(throws: ModelErrors.self) {
            try XcodeModelImporter.parse(data, version: "V", file: "contents")
        }
        #expect(error?.description == "contents: invalid XML at line 2, column 46: a byte that is not UTF-8")
        #expect(XMLInput.invalidUTF8(in: Data("<a>é</a>".utf8)) == nil)
    }

    /// Past an error libxml2 goes on reading, and Foundation on Linux kept memory for each
    /// further error (a process fuzzing Xcode models grew by kilobytes an input, to its
    /// 4 GB limit). The readers stop at the first error, and say where it was.
    @Test func xmlIsReadNoFurtherThanItsFirstError() throws {
        final class Counting: XMLInput.Reader {
            var elementsAfterError = 0
            override func parser(
                _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]
            ) {
                if firstError != nil { elementsAfterError += 1 }
            }
        }
        let broken = String(repeating: "<entity name=\"A\" a b=\"1\"/>\n", count: 50)
        let xml = "<?xml version=\"1.0\"?>\n<model>\n\(broken)</model>"
        let reader = Counting()
        let problem = XMLInput.parse(Data(xml.utf8), with: reader)
        #expect(problem?.line == 3)
        #expect(problem?.message.hasPrefix("invalid XML at line 3, column ") == true)
        #expect(reader.elementsAfterError == 0)
        let error = #expect(throws: ModelErrors.self) {
            try XcodeModelImporter.parse(Data(xml.utf8), version: "V", file: "contents")
        }
        #expect(error?.description.hasPrefix("contents: invalid XML at line 3, column ") == true)
    }

    /// Stopping the parser at an error libxml2 raises while it switches encodings crashed
    /// it (found by fuzzing `xcode-mapping`: `\0\0\0<`, which libxml2 reads as UCS-4;
    /// then `xcode-model`: a declared UTF-7 in a declaration without its `?>`; and by hand,
    /// a declared UTF-32 or EBCDIC). Such input is refused before the parser sees it: XML
    /// allows no NUL, and model and mapping files are UTF-8.
    @Test func inputThatWouldSwitchEncodingsIsRefusedFirst() throws {
        let cases: [(Data, String)] = [
            (
                Data([0, 0, 0, 0x3C, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x3F, 0x3E]),
                "c: invalid XML at line 1, column 1: a NUL byte, which XML does not allow"
            ),
            (
                Data("<?xml version=\"1.0\"?>\n<model>\n<a\0/></model>".utf8),
                "c: invalid XML at line 3, column 3: a NUL byte, which XML does not allow"
            ),
            (
                Data("<?xml version=\"1.0\" encoding=\"UTF-32\"?>\n<model/>".utf8),
                "c: invalid XML at line 1: the document says it is in UTF-32; model and mapping files are read as UTF-8, as Xcode writes them. Save it as UTF-8 (encoding=\"UTF-8\")"
            ),
            (
                Data("\u{FEFF}<?xml version='1.0' encoding = 'EBCDIC-US'?><model/>".utf8),
                "c: invalid XML at line 1: the document says it is in EBCDIC-US; model and mapping files are read as UTF-8, as Xcode writes them. Save it as UTF-8 (encoding=\"UTF-8\")"
            ),
            // Found by fuzzing `xcode-model`: a declaration without its "?>".
            (
                Data("<?xml version=\"1.0\" encoding=\"UTF-7\" standalone=\"x model type=\"a\">\n<model/>".utf8),
                "c: invalid XML at line 1: the document says it is in UTF-7; model and mapping files are read as UTF-8, as Xcode writes them. Save it as UTF-8 (encoding=\"UTF-8\")"
            )
        ]
        for (data, message) in cases {
            let error = #expect(throws: ModelErrors.self) {
                try XcodeModelImporter.parse(data, version: "V", file: "c")
            }
            #expect(error?.description == message)
        }
        #expect(XMLInput.declaredEncoding(in: Array("<?xml version=\"1.0\" encoding=\"utf-8\"?><a/>".utf8)) == "utf-8")
        #expect(XMLInput.declaredEncoding(in: Array("<a encoding=\"x\"/>".utf8)) == nil)
        #expect(XMLInput.declaredEncoding(in: Array("<?xml version=\"1>0\" encoding=\"UTF-7\"?><a/>".utf8)) == "UTF-7")
        let model = #"<?xml version="1.0" encoding="utf-8" standalone="yes"?><model><entity name="A"/></model>"#
        #expect(try XcodeModelImporter.parse(Data(model.utf8), version: "V", file: "c").entities.map(\.name) == ["A"])
    }

    /// Two entities of one name (an archive can name them so): hashing does not trap, and
    /// a store refuses the model with why.
    @Test func twoEntitiesOfOneName() throws {
        let model = ObjectModel(
            version: "V", entities: [EntityDescription(name: "Item"), EntityDescription(name: "Item")])
        #expect(model.appleVersionHashes.count == 1)
        #expect(model.entityVersionHashes.count == 1)
        let error = #expect(throws: StoreError.self) { try Store.create(at: ":memory:", model: model) }
        #expect(error?.description.contains("the model V is not valid") == true)
        #expect(error?.description.contains("the entity 'Item' is declared twice") == true)
    }

    /// A processing instruction with nothing after its target (`<?xm?>`): Foundation's
    /// XMLParser on Linux read libxml2's missing data as a C string and crashed. It is now
    /// read as libxml2 reads `<?xm ?>`, which is not a model error either way.
    @Test func aProcessingInstructionWithNothingInIt() throws {
        let xml = "<?xm?>\n<model name=\"\" userDef3\"/>\n</elements>\n</\0\u{10}\0model>"
        // The fuzzer's input: before, the process died here; now it is refused for its NUL
        // before the parser sees it, and without it at its first error, the attribute
        // without a value, not at the instruction.
        let error = #expect(throws: ModelErrors.self) {
            try XcodeModelImporter.parse(Data(xml.utf8), version: "V", file: "c")
        }
        #expect(error?.description == "c: invalid XML at line 4, column 3: a NUL byte, which XML does not allow")
        let withoutNUL = #expect(throws: ModelErrors.self) {
            try XcodeModelImporter.parse(
                Data(xml.replacingOccurrences(of: "\0", with: "").utf8), version: "V", file: "c")
        }
        #expect(withoutNUL?.description.hasPrefix("c: invalid XML at line 2, column ") == true)
        let model = """
            <?xml version="1.0" encoding="UTF-8"?>
            <?marker?><model type="com.apple.IDECoreDataModeler.DataModel"><?a?>
                <entity name="Item"><attribute name="n" optional="YES" attributeType="String"/></entity>
            </model>
            """
        let parsed = try XcodeModelImporter.parse(Data(model.utf8), version: "V", file: "contents")
        #expect(parsed.entities.map(\.name) == ["Item"])
        #expect(XMLInput.readable(Data("<?a?><?b c?><?xml?>".utf8)) == Data("<?a ?><?b c?><?xml ?>".utf8))
        #expect(XMLInput.readable(Data("<? ?> <?".utf8)) == Data("<? ?> <?".utf8))
    }

    /// An entity that is its own parent (Xcode's XML can say so): asking the model for its
    /// sub-entities before validating it overflowed the stack; validation refuses it.
    @Test func anEntityThatIsItsOwnParent() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Region" parentEntity="Region">
                    <attribute name="name" optional="YES" attributeType="String"/>
                </entity>
                <entity name="Place" parentEntity="Area"/>
                <entity name="Area" parentEntity="Place"/>
            </model>
            """
        let model = try XcodeModelImporter.parse(Data(xml.utf8), version: "V", file: "contents")
        let region = try #require(model.entity(named: "Region"))
        #expect(model.descendants(of: region).map(\.name) == ["Region"])
        let place = try #require(model.entity(named: "Place"))
        #expect(model.descendants(of: place).map(\.name) == ["Place", "Area"])
        _ = model.warnings()
        let error = #expect(throws: ModelErrors.self) { try model.validate() }
        #expect(error?.description.contains("the inheritance of 'Region' forms a cycle") == true)
    }

    /// Metadata with a set in it (Foundation's bridging of one crashed): read by Remodel's
    /// own reader, kept, written back.
    @Test func metadataWithASet() throws {
        let plist = BinaryPlistWriter.data(
            .dictionary([
                ("NSStoreUUID", .string("U")),
                ("NSStoreModelVersionHashes", .dictionary([("Item", .data(Data(repeating: 1, count: 32)))])),
                ("com.example.tags", .set([.string("a"), .integer(2)]))
            ]))
        let metadata = try StoreMetadata(propertyList: plist, uuid: nil)
        #expect(metadata.uuid == "U")
        #expect(metadata.versionHashes == ["Item": Data(repeating: 1, count: 32)])
        #expect(metadata.otherEntries["com.example.tags"] == .array([.string("a"), .integer(2)]))
        let written = try StoreMetadata(propertyList: try metadata.propertyList(), uuid: nil)
        #expect(written.otherEntries["com.example.tags"] == .array([.string("a"), .integer(2)]))
        let error = #expect(throws: StoreError.self) {
            try StoreMetadata(propertyList: Data("<plist/>".utf8), uuid: nil)
        }
        #expect(
            error?.message
                == "the store's metadata cannot be read: it is not a binary property list, as Core Data writes metadata"
        )
    }
}
