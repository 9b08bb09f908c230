import ExpressionLanguage
import Foundation
import Testing
import TestSupport
@testable import ObjectGraph

/// Compiled models (`CompiledModelReader`): every `.momd` under ../shared/fixtures read
/// version by version, and compared with the `.xcdatamodel` it was compiled from and with
/// the version hashes Xcode wrote beside it.
@Suite struct CompiledModelTests {
    /// Every `.momd` under the fixtures, with the `.xcdatamodeld` it was compiled from (the
    /// nearest one with the same version names).
    static func compiledModels() throws -> [(momd: URL, source: [ObjectModel])] {
        try AppleVersionHashTests.fixtureFiles(endingWith: ".momd").map { momd in
            let candidates = try AppleVersionHashTests.nearestModelVersions(to: momd.deletingLastPathComponent())
                .versions
            let names = try FileManager.default.contentsOfDirectory(atPath: momd.path)
                .filter { $0.hasSuffix(".mom") }.map { ($0 as NSString).deletingPathExtension }
            return (momd, candidates.filter { names.contains($0.version) })
        }
    }

    /// A model as JSON, for comparing two readers' results with a readable difference.
    static func json(_ model: ObjectModel) -> String { "\(model.json)" }

    @Test func everyCompiledVersionEqualsItsXcodeSource() throws {
        try SharedFixtures.require()
        let models = try Self.compiledModels()
        #expect(models.count >= 2, "the fixtures hold two .momd folders")
        var compared = 0
        for (momd, sources) in models {
            let (versions, info) = try CompiledModelReader.importVersions(at: momd)
            #expect(info != nil, "\(momd.lastPathComponent) has a VersionInfo.plist")
            for compiled in versions {
                guard let source = sources.first(where: { $0.version == compiled.version }) else {
                    Issue.record("\(AppleVersionHashTests.relative(momd)): no .xcdatamodel for \(compiled.version)")
                    continue
                }
                // Xcode compiles the transformer's class and a string's regular expression
                // into things Remodel does not read back the same way; neither is in the fixtures.
                #expect(
                    Self.json(compiled) == Self.json(source),
                    "\(AppleVersionHashTests.relative(momd))/\(compiled.version).mom")
                compared += 1
            }
        }
        #expect(compared == 6)
    }

    @Test func compiledVersionsHashAsXcodeWrote() throws {
        try SharedFixtures.require()
        for (momd, _) in try Self.compiledModels() {
            let (versions, info) = try CompiledModelReader.importVersions(at: momd)
            let hashes = try #require(info?.versionHashes)
            #expect(Set(hashes.keys) == Set(versions.map(\.version)))
            for model in versions {
                let apple = try #require(hashes[model.version])
                #expect(
                    AppleVersionHashTests.differences(apple, model) == "",
                    "\(momd.lastPathComponent)/\(model.version).mom")
            }
        }
    }

    @Test func versionsInOrderAndTheCurrentOne() throws {
        try SharedFixtures.require()
        let momd = SharedFixtures.root.appendingPathComponent(
            "realworld/alemar11+CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3.momd")
        let versions = try ObjectModel.loadVersions(at: momd)
        #expect(versions.map(\.version) == ["SampleModel3", "SampleModel3_v2", "SampleModel3_v3"])
        // The bundle was built with the first version current, as its .xccurrentversion says.
        #expect(try CompiledModelReader.versionInfo(ofModelAt: momd)?.currentVersion == "SampleModel3")
        let one = try ObjectModel.loadVersions(at: momd.appendingPathComponent("SampleModel3_v2.mom"))
        #expect(one.map(\.version) == ["SampleModel3_v2"])
        #expect(one.map(\.entities) == [versions[1].entities])
        #expect(one[0].declaredVersionHashes == nil && versions[1].declaredVersionHashes?.count == 2)
    }

    @Test func whatACompiledModelCarriesIsWarnedAbout() throws {
        try SharedFixtures.require()
        let mom = SharedFixtures.root.appendingPathComponent(
            "realworld/alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd/SampleModel2.mom")
        let model = try CompiledModelReader.importModel(at: mom)
        let car = try #require(model.entity(named: "Car"))
        #expect(car.uniquenessConstraints == [["numberPlate"]])
        #expect(
            car.fetchIndexes == [
                FetchIndexDescription(name: "byMakerAndNumberPlate", properties: ["maker", "numberPlate"])
            ])
        #expect(model.entity(named: "LuxuryCar")?.renamingIdentifier == "ExpensiveSportCar")
        #expect(model.entity(named: "LuxuryCar")?.parent == "SportCar")
        let owner = try #require(car.relationship(named: "owner"))
        #expect(
            owner.destination == "Person" && owner.inverse == "cars" && !owner.isToMany && owner.deleteRule == .nullify)
        #expect(model.entity(named: "Person")?.relationship(named: "cars")?.isToMany == true)
        let warnings = model.warnings(file: "SampleModel2.mom").map(\.description)
        #expect(
            warnings.contains {
                $0.hasPrefix(
                    "SampleModel2.mom: entities.Car.uniquenessConstraints: (numberPlate) carried, not enforced")
            })
    }

    /// Every fixture `.mom`, truncated at 200 lengths and with each of 300 bytes spread over
    /// the file changed (deterministically, so a failure repeats): each read gives a model
    /// or a ModelErrors, never a crash.
    @Test func damagedCompiledModelsAreErrors() throws {
        try SharedFixtures.require()
        var outcomes = (read: 0, refused: 0)
        func attempt(_ data: Data) {
            do {
                let model = try CompiledModelReader.parse(data, version: "V", file: "V.mom")
                _ = model.appleVersionHashes
                outcomes.read += 1
            } catch {
                outcomes.refused += 1
            }
        }
        for momd in AppleVersionHashTests.fixtureFiles(endingWith: ".momd") {
            for name in try FileManager.default.contentsOfDirectory(atPath: momd.path) where name.hasSuffix(".mom") {
                let data = try Data(contentsOf: momd.appendingPathComponent(name))
                for length in stride(from: 0, to: data.count, by: max(1, data.count / 200)) {
                    attempt(data.prefix(length))
                }
                for i in 0..<300 {
                    var damaged = data
                    let position = (i * 7919) % data.count
                    damaged[position] = damaged[position] &+ UInt8(1 + (i * 37) % 255)
                    attempt(damaged)
                }
            }
        }
        #expect(outcomes.refused > 1000)
        #expect(outcomes.read > 0)
    }

    // MARK: Archives the fixtures do not have, built here

    /// A keyed archive of one model with one entity, `Item`, whose properties are
    /// `properties`: each one's fields, `$class` a class name (an attribute by default),
    /// nested objects as dictionaries with their own `$class`.
    static func archive(properties: [String: [String: Any]]) -> Data {
        var objects: [PlistValue] = [.string("$null")]
        func add(_ object: PlistValue) -> Int { objects.append(object); return objects.count - 1 }
        var classes: [String: Int] = [:]
        func classRef(_ name: String, _ hierarchy: [String]) -> PlistValue {
            let uid =
                classes[name]
                ?? add(
                    .dictionary([
                        ("$classname", .string(name)),
                        ("$classes", .array((hierarchy + ["NSObject"]).map(PlistValue.string)))
                    ]))
            classes[name] = uid
            return .uid(uid)
        }
        func value(_ any: Any) -> PlistValue {
            switch any {
            case let s as String: return .uid(add(.string(s)))
            case let b as Bool where type(of: any) == Bool.self: return .bool(b)
            case let i as Int where type(of: any) == Int.self: return .integer(Int64(i))
            case let d as Double: return .real(d)
            case let d as Data: return .data(d)
            case let fields as [String: Any]:
                let className = fields["$class"] as? String ?? "NSObject"
                let entries = fields.filter { $0.key != "$class" }.sorted { $0.key < $1.key }.map {
                    ($0.key, value($0.value))
                }
                return .uid(add(.dictionary(entries + [("$class", classRef(className, [className]))])))
            default: fatalError("no plist value for \(any)")
            }
        }
        let root = add(.string("placeholder")), entity = add(.string("placeholder"))
        var keys: [PlistValue] = [], values: [PlistValue] = []
        for (name, fields) in properties.sorted(by: { $0.key < $1.key }) {
            let className = fields["$class"] as? String ?? "NSAttributeDescription"
            let superclass = className == "NSRelationshipDescription" ? [] : ["NSAttributeDescription"]
            var entries = fields.filter { $0.key != "$class" }.sorted { $0.key < $1.key }.map {
                ($0.key, value($0.value))
            }
            entries += [
                ("NSPropertyName", value(name)), ("NSEntity", .uid(entity)),
                ("$class", classRef(className, [className] + superclass + ["NSPropertyDescription"]))
            ]
            keys.append(value(name))
            values.append(.uid(add(.dictionary(entries))))
        }
        let dictionaryClass = classRef("NSMutableDictionary", ["NSMutableDictionary", "NSDictionary"])
        let propertiesRef = add(
            .dictionary([("NS.keys", .array(keys)), ("NS.objects", .array(values)), ("$class", dictionaryClass)]))
        objects[entity] = .dictionary([
            ("NSEntityName", value("Item")), ("NSProperties", .uid(propertiesRef)),
            ("$class", classRef("NSEntityDescription", ["NSEntityDescription"]))
        ])
        let entities = add(
            .dictionary([
                ("NS.keys", .array([value("Item")])), ("NS.objects", .array([.uid(entity)])),
                ("$class", dictionaryClass)
            ]))
        objects[root] = .dictionary([
            ("NSEntities", .uid(entities)), ("$class", classRef("NSManagedObjectModel", ["NSManagedObjectModel"]))
        ])
        return BinaryPlistWriter.keyedArchive(objects: objects, root: root)
    }

    @Test func attributeFlagsBoundsAndDefaults() throws {
        let data = Self.archive(properties: [
            "photo": ["NSAttributeType": 1000, "NSIsOptional": true, "NSFlagsKey": 4 | 16],
            "rating": [
                "NSAttributeType": 200, "NSFlagsKey": 1 | 2, "NSMinValueName": 1, "NSMaxValueName": 5,
                "NSDefaultValue": 3
            ],
            "name": [
                "NSAttributeType": 700, "NSIsOptional": true, "NSFlagsKey": 1, "NSMaxValueName": 40,
                "NSDefaultValue": "untitled", "NSRenamingIdentifier": "title"
            ],
            "price": [
                "NSAttributeType": 400, "NSIsOptional": true,
                "NSDefaultValue": [
                    "$class": "NSDecimalNumber", "NS.exponent": -2, "NS.length": 1,
                    "NS.negative": false, "NS.compact": true, "NS.bo": 1,
                    "NS.mantissa": Data([0xE7, 0x03] + [UInt8](repeating: 0, count: 14))
                ]
            ],
            "score": ["NSAttributeType": 500, "NSIsOptional": true, "NSIsTransient": true, "NSDefaultValue": 2]
        ])
        let model = try CompiledModelReader.parse(data, version: "V1", file: "V1.mom")
        let item = try #require(model.entity(named: "Item"))
        let photo = try #require(item.attribute(named: "photo"))
        #expect(
            photo.type == .binary && photo.allowsExternalBinaryDataStorage && photo.preservesValueInHistoryOnDeletion)
        let rating = try #require(item.attribute(named: "rating"))
        #expect(
            !rating.isOptional && rating.minValue == .integer(1) && rating.maxValue == .integer(5)
                && rating.defaultValue == .integer(3))
        let name = try #require(item.attribute(named: "name"))
        #expect(name.maxValue == .integer(40) && name.minValue == nil && name.defaultValue == .string("untitled"))
        #expect(name.renamingIdentifier == "title")
        #expect(item.attribute(named: "price")?.defaultValue == .decimal(Decimal(string: "9.99")!))
        let score = try #require(item.attribute(named: "score"))
        #expect(score.isTransient && score.type == .double && score.defaultValue == .double(2))
    }

    @Test func damagedPropertiesAreLocatedErrors() throws {
        let cases: [([String: Any], String)] = [
            (
                ["NSAttributeType": 4242],
                "entities.Item.attributes.odd: the attribute type 4242 (NSAttributeType) is not one Remodel knows"
            ),
            (
                ["NSAttributeType": 200, "NSDefaultValue": "x"],
                "entities.Item.attributes.odd.default: the default value the string 'x' is not a Integer 32 value"
            ),
            (
                ["$class": "NSRelationshipDescription", "NSDeleteRule": 9, "_NSDestinationEntityName": "Item"],
                "entities.Item.relationships.odd: unknown delete rule 9 (NSDeleteRule)"
            ),
            (["$class": "NSRelationshipDescription"], "entities.Item.relationships.odd: no destination entity")
        ]
        for (fields, message) in cases {
            let data = Self.archive(properties: ["odd": fields])
            #expect {
                try CompiledModelReader.parse(data, version: "V1", file: "V1.mom")
            } throws: { error in
                "\(error)".contains("V1.mom: \(message)")
            }
        }
    }

    @Test func notACompiledModel() throws {
        let plist = try PropertyListSerialization.data(fromPropertyList: ["a": 1], format: .binary, options: 0)
        #expect {
            try CompiledModelReader.parse(plist, version: "V1", file: "V1.mom")
        } throws: { error in
            "\(error)".hasPrefix("V1.mom: not a compiled model Remodel can read:")
        }
        #expect(throws: ModelErrors.self) {
            try CompiledModelReader.parse(Data("garbage".utf8), version: "V1", file: "V1.mom")
        }
    }
}
