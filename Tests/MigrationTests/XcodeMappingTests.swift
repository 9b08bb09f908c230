import BookMigrationPolicies
import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// Xcode's mapping models (`.xcmappingmodel`) and compiled ones (`.cdm`) from real
/// projects, read into the mapping a JSON file would give, and run.
@Suite(.enabled(if: SharedFixtures.isAvailable, SharedFixtures.missingMessage))
struct XcodeMappingTests {
    static let realworld = SharedFixtures.root.appendingPathComponent("realworld")
    static let coreDataPlus = realworld.appendingPathComponent("alemar11+CoreDataPlus/Tests/Resources/SampleModel")
    static let mwk = realworld.appendingPathComponent("mwkirk+MWKCoreData/Tests")

    static func versions(_ url: URL) throws -> [ObjectModel] { try ObjectModel.loadVersions(at: url) }

    /// What Xcode stores and what its compiler makes of it agree: CoreDataPlus's mapping
    /// model and its `.cdm` give the same mapping, fill-ins and all.
    @Test func theXcodeMappingModelAndItsCompiledFormAgree() throws {
        let models = try Self.versions(Self.coreDataPlus.appendingPathComponent("SampleModel.xcdatamodeld"))
        let xcode = try MappingModel.load(
            xcodeMappingModelAt: Self.coreDataPlus.appendingPathComponent("MappingModels/V2toV3.xcmappingmodel"),
            models: models)
        let compiled = try MappingModel.load(
            compiledMappingModelAt: Self.coreDataPlus.appendingPathComponent("Fixtures/V2toV3.cdm"), models: models)
        #expect(xcode.sourceModel == "SampleModel2" && xcode.destinationModel == "SampleModel3")
        #expect(compiled.sourceModel == "SampleModel2" && compiled.destinationModel == "SampleModel3")
        #expect(xcode.entityMappings == compiled.entityMappings)
        let car = try #require(xcode.entityMapping(named: "CarToCar"))
        #expect(car.type == .custom)
        #expect(car.policy == "REPLACE_AT_RUNTIME.V2to3MakerPolicy")
        #expect(
            car.sourceExpression
                == #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Car", "TRUEPREDICATE"), $manager.sourceContext, FALSE)"#
        )
        #expect(car.propertyMapping(named: "model")?.valueExpression == "$source.model")
        #expect(
            car.propertyMapping(named: "owner")?.valueExpression
                == #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.owner)"#
        )
        #expect(car.propertyMapping(named: "createdBy")?.valueExpression == nil)
        // Cars are migrated by three mappings (Car and its sub-entities): each is found through its own.
        #expect(
            xcode.entityMapping(named: "PersonToPerson")?.propertyMapping(named: "cars")?.valueExpression
                == #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "cars", $source.cars)"#
        )
        #expect(xcode.entityMappings.map(\.type) == [.custom, .custom, .copy, .custom, .add])
    }

    /// The objc.io article's three mapping models, with their names, types, policies and
    /// user info as Xcode's compiler would give them.
    @Test func theArticlesMappingModelsImport() throws {
        let models = try Self.versions(SharedFixtures.bookMigration.appendingPathComponent("Model.xcdatamodeld"))
        func load(_ name: String) throws -> MappingModel {
            try MappingModel.load(
                xcodeMappingModelAt: SharedFixtures.bookMigration.appendingPathComponent("\(name).xcmappingmodel"),
                models: models)
        }
        let first = try load("Model1_to_Model2")
        #expect(first.entityMappings.map(\.name) == ["UserToUser", "Author", "BookToBook"])
        #expect(first.entityMappings.map(\.type) == [.copy, .add, .custom])
        #expect(first.entityMappings[2].policy == "MHWBookToBookPolicy")
        #expect(first.entityMappings[2].userInfo == ["modelVersion": .string("2")])
        #expect(
            first.entityMappings[0].propertyMapping(named: "books")?.valueExpression
                == #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "BookToBook", $source.books)"#
        )
        let second = try load("Model2_to_Model3")
        #expect(second.entityMappings.map(\.name) == ["File", "UserToUser", "BookToBook", "AuthorToAuthor"])
        #expect(second.entityMappings.map(\.policy) == [nil, "MHWUserToUserPolicy", "MHWBookToBookPolicy", nil])
        for mapping in [first, second, try load("Model2_to_Model3_User")] {
            #expect(
                MigrationManager.check(
                    mapping, source: models.first { $0.version == mapping.sourceModel }!,
                    destination: models.first { $0.version == mapping.destinationModel }!,
                    policies: .bookMigration
                ).isEmpty)
        }
    }

    /// The article's store, Model1 → Model3, through its own Xcode mapping models with the
    /// article's policies registered under its class names: what the JSON mappings give.
    @Test func theArticlesStoreMigratesThroughItsXcodeMappingModels() throws {
        let directory = try TemporaryDirectory()
        let path = try BookAuthorsTests.copyOfFixture(in: directory)
        let models = SharedFixtures.bookMigration.appendingPathComponent("Model.xcdatamodeld")
        let reports = try StoreMigrator.migrateStore(
            at: URL(fileURLWithPath: path), models: models, mappings: SharedFixtures.bookMigration,
            to: "Model3", policies: .bookMigration)
        #expect(reports.map(\.destination) == ["Model2", "Model3"])
        let viaXcode = try BookAuthorsTests.context(path, "Model3")

        let jsonPath = directory.path("Json.sqlite")
        try FileManager.default.copyItem(atPath: BookAuthorsTests.fixtureStore.path, toPath: jsonPath)
        try BookAuthorsTests.migrator().migrate(storeAt: jsonPath, to: "Model3")
        let viaJSON = try BookAuthorsTests.context(jsonPath, "Model3")

        #expect(try viaXcode.count(FetchRequest(entityName: "Author", predicate: "name == 'Franz Kafka'")) == 1)
        #expect(
            try viaXcode.count(FetchRequest(entityName: "Book", predicate: "ANY authors.name LIKE 'Franz Kafka'")) == 2)
        for (entity, key) in [("User", "userId"), ("Book", "title"), ("Author", "name"), ("File", "fileURL")] {
            let a = try viaXcode.fetch(FetchRequest(entityName: entity)).map { $0[key] }.sorted(
                by: BookAuthorsTests.order)
            let b = try viaJSON.fetch(FetchRequest(entityName: entity)).map { $0[key] }.sorted(
                by: BookAuthorsTests.order)
            #expect(a == b, "\(entity).\(key)")
        }
        for book in try viaXcode.fetch(FetchRequest(entityName: "Book")) {
            #expect(try book.value(forKey: "authors").collectionElements?.isEmpty == false)
        }
        for file in try viaXcode.fetch(FetchRequest(entityName: "File")) {
            #expect(file["book"].managedObject != nil && file["user"].managedObject != nil)
        }
        #expect(try StoreValidator(store: viaXcode.store).failures().isEmpty)
    }

    /// What `mapping-migrate convert` writes: the JSON mapping reads back to the same
    /// mapping, and a folder of the converted files migrates the store as the Xcode ones do.
    @Test func convertedMappingsRunTheSame() throws {
        let models = try Self.versions(SharedFixtures.bookMigration.appendingPathComponent("Model.xcdatamodeld"))
        let directory = try TemporaryDirectory()
        let folder = directory.url.appendingPathComponent("mappings")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in ["Model1_to_Model2", "Model2_to_Model3", "Model2_to_Model3_User"] {
            let xcode = try MappingModel.load(
                xcodeMappingModelAt: SharedFixtures.bookMigration.appendingPathComponent("\(name).xcmappingmodel"),
                models: models)
            let file = folder.appendingPathComponent("\(name).mapping.json")
            try Data(xcode.json.serialized(pretty: true).utf8).write(to: file)
            #expect(try MappingModel.load(contentsOf: file).entityMappings == xcode.entityMappings, "\(name)")
        }
        let path = try BookAuthorsTests.copyOfFixture(in: directory)
        try StoreMigrator.migrateStore(
            at: URL(fileURLWithPath: path),
            models: SharedFixtures.bookMigration.appendingPathComponent("Model.xcdatamodeld"),
            mappings: folder, to: "Model3", policies: .bookMigration)
        let context = try BookAuthorsTests.context(path, "Model3")
        #expect(try context.count(FetchRequest(entityName: "Author", predicate: "name == 'Franz Kafka'")) == 1)
        #expect(try context.count(FetchRequest(entityName: "File")) == 4)
    }

    /// CoreDataPlus: V1 → V2 inferred, V2 → V3 through its mapping model, with a Swift
    /// stand-in for its Maker policy; what the project's own tests assert. From the sources
    /// (`.xcdatamodeld` and `.xcmappingmodel`) and from the build products (`.momd` and
    /// `.cdm`, the mapping found beside the compiled model).
    @Test(arguments: [("SampleModel.xcdatamodeld", "MappingModels"), ("Fixtures/SampleModel.momd", nil)])
    func coreDataPlusMigratesToVersionThree(modelsPath: String, mappingsPath: String?) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("SampleModel.sqlite")
        try FileManager.default.copyItem(
            atPath: Self.coreDataPlus.appendingPathComponent("Fixtures/SampleModel_V1.sqlite").path, toPath: path)
        var policies = PolicyRegistry()
        policies.register("V2to3MakerPolicy") { MakerPolicy() }
        let models = Self.coreDataPlus.appendingPathComponent(modelsPath)
        let reports = try StoreMigrator.migrateStore(
            at: URL(fileURLWithPath: path), models: models,
            mappings: mappingsPath.map { Self.coreDataPlus.appendingPathComponent($0) },
            to: "SampleModel3", policies: policies)
        #expect(reports.map(\.destination) == ["SampleModel2", "SampleModel3"])
        let model = try #require(try Self.versions(models).first { $0.version == "SampleModel3" })
        let context = ObjectContext(store: try Store.open(at: path, model: model, mode: .readOnly))
        #expect(try context.count(FetchRequest(entityName: "Maker")) == 10)
        #expect(try context.count(FetchRequest(entityName: "Car")) == 125)
        for car in try context.fetch(FetchRequest(entityName: "Car")) {
            #expect(car["createdBy"].managedObject != nil, "\(car.objectID) has no maker")
            let previous = try car.value(forKey: "previousOwners").collectionElements ?? []
            if let owner = car["owner"].managedObject {
                #expect(
                    previous.contains { $0.managedObject?.objectID == owner.objectID },
                    "\(car.objectID)'s owner is not among its previous owners")
                let previousCars = try owner.value(forKey: "previousCars").collectionElements ?? []
                #expect(previousCars.contains { $0.managedObject?.objectID == car.objectID })
            } else {
                #expect(previous.isEmpty, "\(car.objectID) has no owner but previous owners")
            }
        }
        #expect(try StoreValidator(store: context.store).failures().isEmpty)
    }

    /// A compiled mapping model is used only with the versions it was compiled from, as
    /// Core Data checks by the entity version hashes it records.
    @Test func aCompiledMappingModelOfOtherVersionsIsRefused() throws {
        var models = try Self.versions(Self.coreDataPlus.appendingPathComponent("SampleModel.xcdatamodeld"))
        let cdm = Self.coreDataPlus.appendingPathComponent("Fixtures/V2toV3.cdm")
        #expect(try MappingModel.load(compiledMappingModelAt: cdm, models: models).destinationModel == "SampleModel3")
        let car = try #require(models[2].entities.firstIndex { $0.name == "Car" })
        // Sub-entities inherit the change: their hashes differ too.
        models[2].entities[car].attributes[0].isOptional.toggle()
        let error = #expect(throws: MappingErrors.self) {
            try MappingModel.load(compiledMappingModelAt: cdm, models: models)
        }
        #expect(
            error?.errors.map(\.message) == [
                "the compiled mapping model was compiled from other versions of the models: its entity version hashes are not those of SampleModel2 → SampleModel3: Car of SampleModel3 differs; LuxuryCar of SampleModel3 differs; SportCar of SampleModel3 differs; Core Data would not use it either: compile it again from these models, or give the models it was compiled from"
            ])
    }

    /// Without a stand-in for the policy, the mapping fails its check, naming the class.
    @Test func aMissingPolicyNamesTheClass() throws {
        let models = try Self.versions(Self.coreDataPlus.appendingPathComponent("SampleModel.xcdatamodeld"))
        let mapping = try MappingModel.load(
            compiledMappingModelAt: Self.coreDataPlus.appendingPathComponent("Fixtures/V2toV3.cdm"), models: models)
        let problems = MigrationManager.check(
            mapping, source: models[1], destination: models[2], policies: PolicyRegistry())
        #expect(
            problems.first?.message
                == "no policy named 'REPLACE_AT_RUNTIME.V2to3MakerPolicy' is registered; register a Swift stand-in for it: `policies.register(\"V2to3MakerPolicy\") { MyPolicy() }` (docs/engine.md, \"Custom policies\")"
        )
        #expect(problems.count == 3)
        // The plan of the mapping that checks says why its link to those cars is
        // interpreted; with the stand-in, it is SQL.
        let person = { (policies: PolicyRegistry) in
            MigrationManager.plannedExecutions(
                mapping, source: models[1], destination: models[2], policies: policies, options: .init(),
                sourceIsWellTyped: false
            ).first { $0.0 == "PersonToPerson" }?.1
        }
        #expect(
            person(PolicyRegistry())?.relationshipsReason == "'cars': no entity mapping that checks makes its targets")
        var policies = PolicyRegistry()
        policies.register("V2to3MakerPolicy") { MakerPolicy() }
        #expect(person(policies)?.relationshipsAsSQL == true)
    }

    /// MWKCoreData: v1 → v2 inferred, v2 → v3 through its mapping model, with a Swift
    /// stand-in for its policy (which splits `name` into `firstName` and `lastName`).
    @Test func mwkCoreDataMigratesToVersionThree() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("MWK.sqlite")
        try FileManager.default.copyItem(
            atPath: Self.mwk.appendingPathComponent("Stores/MWKCoreDataTests.sqlite").path, toPath: path)
        let models = Self.mwk.appendingPathComponent("Model/MWKCoreDataTests.xcdatamodeld")
        let versions = try Self.versions(models)
        let mapping = try MappingModel.load(
            xcodeMappingModelAt: Self.mwk.appendingPathComponent(
                "Model/MappingModels/MWKCoreDataTestsV2ToV3.xcmappingmodel"), models: versions)
        #expect(mapping.entityMapping(named: "EmployeeToEmployee")?.userInfo == ["destModelVersion": .string("3")])
        var policies = PolicyRegistry()
        policies.register("EmployeeToEmployeePolicy") { EmployeeNamePolicy() }
        let reports = try StoreMigrator.migrateStore(
            at: URL(fileURLWithPath: path), models: models, to: "MWKCoreDataTests3", policies: policies)
        #expect(reports.map(\.destination) == ["MWKCoreDataTests2", "MWKCoreDataTests3"])
        #expect(
            FileManager.default.fileExists(atPath: path + ".MWKCoreDataTests.bak"),
            "the original store is kept as a backup")
        let context = ObjectContext(store: try Store.open(at: path, model: versions[2], mode: .readOnly))
        let names = try context.fetch(FetchRequest(entityName: "Employee")).map {
            "\($0["firstName"].formatDescription) \($0["lastName"].formatDescription)"
        }
        #expect(names.sorted() == ["Adam Smith", "Bob Johnson", "Carla Jones"])
    }
}

/// AltStore's 15 and Moody's 4 mapping models: no stores come with them; what their
/// projects ask is that they import and check against their models, with stand-ins for
/// their Swift policies and the functions those policies give expressions.
@Suite(.enabled(if: SharedFixtures.isAvailable, SharedFixtures.missingMessage))
struct RealWorldMappingModelTests {
    /// A stand-in whose functions answer nil: enough to check, not to run.
    final class StandIn: EntityMigrationPolicy {}

    static func registry(policies: [String], functions: [String] = []) -> PolicyRegistry {
        var registry = PolicyRegistry()
        for name in policies { registry.register(name) { StandIn() } }
        for selector in functions { registry.registerFunction(selector, for: StandIn.self) { _, _ in .null } }
        return registry
    }

    @Test func altStoresMappingModelsCheck() throws {
        let model = XcodeMappingTests.realworld.appendingPathComponent("altstoreio+AltStore/AltStoreCore/Model")
        let models = try ObjectModel.loadVersions(at: model.appendingPathComponent("AltStore.xcdatamodeld"))
        #expect(models.count == 17)
        let mappings = try MappingModel.loadAll(in: model.appendingPathComponent("Migrations"), models: models)
        // One file per step, from AltStore → AltStore 2 to AltStore 16 → AltStore 17; the
        // step AltStore 7 → AltStore 8 has none (it is inferred).
        let steps = mappings.map { "\($0.sourceModel) → \($0.destinationModel)" }
        let expected = (1...16).filter { $0 != 7 }.map {
            "\($0 == 1 ? "AltStore" : "AltStore \($0)") → AltStore \($0 + 1)"
        }
        #expect(Set(steps) == Set(expected))
        #expect(steps.count == 15)

        var migrator = StoreMigrator(models: models, mappings: mappings)
        let missing = migrator.check().map(\.message)
        #expect(missing.filter { $0.contains("no policy named") }.count == 5, "\(missing)")
        #expect(missing.filter { $0.contains("unknown selector") }.count == 3, "\(missing)")

        migrator = StoreMigrator(
            models: models, mappings: mappings,
            policies: Self.registry(
                policies: [
                    "InstalledAppToInstalledAppMigrationPolicy", "StoreApp10ToStoreApp11Policy",
                    "Source13To14MigrationPolicy", "StoreAppToStoreAppMigrationPolicy"
                ],
                functions: ["defaultIsActiveForBundleID:team:", "migrateIconURL", "migrateScreenshotURLs"]))
        #expect(migrator.check().map { $0.rendered() } == [])
    }

    @Test func moodysMappingModelsCheck() throws {
        let folder = XcodeMappingTests.realworld.appendingPathComponent("objcio+core-data/Migrations/Migrations")
        let models = try ObjectModel.loadVersions(at: folder.appendingPathComponent("Moody.xcdatamodeld"))
        #expect(models.map(\.version) == ["Moody", "Moody 2", "Moody 3", "Moody 4", "Moody 5", "Moody 6"])
        let mappings = try MappingModel.loadAll(in: folder, models: models)
        #expect(
            mappings.map { "\($0.sourceModel) → \($0.destinationModel)" }.sorted()
                == ["Moody 2 → Moody 3", "Moody 3 → Moody 4", "Moody 4 → Moody 5", "Moody 5 → Moody 6"])
        // A relationship's key path with a collection operator, as Xcode stores it.
        let continent = mappings.first { $0.sourceModel == "Moody 2" }?.entityMappings.first {
            $0.name == "ContinentToContinent"
        }
        let moods = continent?.relationshipMappings.first { $0.name == "moods" }
        #expect(
            moods?.valueExpression
                == #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "MoodToMood", $source.countries.@distinctUnionOfSets.moods)"#
        )
        #expect(
            StoreMigrator(models: models, mappings: mappings).check().map(\.message)
                == [
                    "no policy named 'Migrations.Country5ToCountry6Policy' is registered; register a Swift stand-in for it: `policies.register(\"Country5ToCountry6Policy\") { MyPolicy() }` (docs/engine.md, \"Custom policies\")"
                ])
        let migrator = StoreMigrator(
            models: models, mappings: mappings, policies: Self.registry(policies: ["Country5ToCountry6Policy"]))
        #expect(migrator.check().map { $0.rendered() } == [])
    }

    /// Moody 2 → 6 through its four mapping models: 2 → 3 gives each continent the moods
    /// of its countries (`@distinctUnionOfSets`), 4 → 5 removes continents, keeping their
    /// code on the countries, and 5 → 6 brings them back through the country policy (here
    /// a stand-in that does what objc.io's does).
    @Test func moodyRunsFromVersionTwoToSix() throws {
        let folder = XcodeMappingTests.realworld.appendingPathComponent("objcio+core-data/Migrations/Migrations")
        let models = try ObjectModel.loadVersions(at: folder.appendingPathComponent("Moody.xcdatamodeld"))
        let directory = try TemporaryDirectory()
        let path = directory.path("Moody.sqlite")
        let date = #"{"$date": "2015-09-01T12:00:00Z"}"#
        _ = try seededStore(
            at: path, model: models[1],
            seed: """
                {"Continent": [{"$id": "eu", "numericISO3166Code": 150, "updatedAt": \(date)},
                               {"$id": "as", "numericISO3166Code": 142, "updatedAt": \(date)}],
                 "Country": [{"$id": "de", "numericISO3166Code": 276, "updatedAt": \(date), "continent": {"$ref": "eu"}},
                             {"$id": "fr", "numericISO3166Code": 250, "updatedAt": \(date), "continent": {"$ref": "eu"}},
                             {"$id": "jp", "numericISO3166Code": 392, "updatedAt": \(date), "continent": {"$ref": "as"}}],
                 "Mood": [{"rating": 1, "date": \(date), "country": {"$ref": "de"}},
                          {"rating": 2, "date": \(date), "country": {"$ref": "de"}},
                          {"rating": 3, "date": \(date), "country": {"$ref": "fr"}},
                          {"rating": 4, "date": \(date), "country": {"$ref": "jp"}},
                          {"rating": 5, "date": \(date)}]}
                """)
        var policies = PolicyRegistry()
        policies.register("Country5ToCountry6Policy") { ContinentFromCodePolicy() }
        let migrator = StoreMigrator(
            models: models, mappings: try MappingModel.loadAll(in: folder, models: models), policies: policies)
        // Version 3: each continent has its countries' moods.
        let three = directory.path("Moody3.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: three)
        _ = try migrator.migrate(storeAt: three, to: "Moody 3")
        let atThree = ObjectContext(store: try Store.open(at: three, model: models[2], mode: .readOnly))
        var moodsOfContinents: [Int64: Set<Int64>] = [:]
        for continent in try atThree.fetch(FetchRequest(entityName: "Continent")) {
            let moods = try continent.value(forKey: "moods").collectionElements ?? []
            moodsOfContinents[continent["numericISO3166Code"].integerValue ?? 0] = Set(
                moods.compactMap { $0.managedObject?["rating"].integerValue })
        }
        #expect(moodsOfContinents == [150: [1, 2, 3], 142: [4]])

        let reports = try migrator.migrate(storeAt: path)
        #expect(reports.map(\.destination) == ["Moody 3", "Moody 4", "Moody 5", "Moody 6"])

        let context = ObjectContext(store: try Store.open(at: path, model: models[5], mode: .readOnly))
        var byCountry: [Int64: Set<Int64>] = [:]
        for mood in try context.fetch(FetchRequest(entityName: "Mood")) {
            let country = mood["country"].managedObject?["numericISO3166Code"].integerValue ?? 0
            byCountry[country, default: []].insert(mood["rating"].integerValue ?? -1)
        }
        #expect(byCountry == [276: [1, 2], 250: [3], 392: [4], 0: [5]])
        var continents: [Int64: Set<Int64>] = [:]
        for country in try context.fetch(FetchRequest(entityName: "Country")) {
            let continent = try #require(country["continent"].managedObject, "\(country.objectID) has no continent")
            continents[continent["numericISO3166Code"].integerValue ?? 0, default: []].insert(
                country["numericISO3166Code"].integerValue ?? 0)
        }
        #expect(continents == [150: [276, 250], 142: [392]])
        #expect(try context.count(FetchRequest(entityName: "Continent")) == 2)
        #expect(try StoreValidator(store: context.store).failures().isEmpty)
    }
}

/// A stand-in for Moody's `Country5ToCountry6Policy`: each country's `isoContinent` code
/// becomes one Continent per code, linked as the country's `continent`.
final class ContinentFromCodePolicy: EntityMigrationPolicy {
    func createDestinationInstances(
        forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        let country = try defaultCreateDestinationInstances(forSource: source, in: mapping, manager: manager)[0]
        guard case .integer(let code) = try source.value(forKey: "isoContinent") else { return }
        var known: [String: Value] = [:]
        if case .dictionary(let d)? = manager.userInfo["continents"] { known = d }
        let continent: Value
        if let existing = known["\(code)"] {
            continent = existing
        } else {
            let created = try manager.destinationContext.insert("Continent")
            try created.setValue(.integer(code), forKey: "numericISO3166Code")
            continent = .object(ObjectReference(created))
            known["\(code)"] = continent
            manager.userInfo["continents"] = .dictionary(known)
        }
        try country.setValue(continent, forKey: "continent")
    }
}

/// A stand-in for CoreDataPlus's `V2to3MakerPolicy`: each car's `maker` name becomes one
/// Maker per distinct name, linked as the car's `createdBy`.
final class MakerPolicy: EntityMigrationPolicy {
    func createDestinationInstances(
        forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        let car = try defaultCreateDestinationInstances(forSource: source, in: mapping, manager: manager)[0]
        guard case .string(let name) = try source.value(forKey: "maker") else { return }
        var makers: [String: Value] = [:]
        if case .dictionary(let known)? = manager.userInfo["makers"] { makers = known }
        let maker: Value
        if let existing = makers[name] {
            maker = existing
        } else {
            let created = try manager.destinationContext.insert("Maker")
            try created.setValue(.string(name), forKey: "name")
            maker = .object(ObjectReference(created))
            makers[name] = maker
            manager.userInfo["makers"] = .dictionary(makers)
        }
        try car.setValue(maker, forKey: "createdBy")
    }
}

/// A stand-in for MWKCoreData's `EmployeeToEmployeePolicy`: `name` split at its first space
/// into `firstName` and `lastName`, for the destination version its user info names.
final class EmployeeNamePolicy: EntityMigrationPolicy {
    func createDestinationInstances(
        forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        let employee = try defaultCreateDestinationInstances(forSource: source, in: mapping, manager: manager)[0]
        guard mapping.userInfo["destModelVersion"] == .string("3"),
            case .string(let name) = try source.value(forKey: "name")
        else { return }
        let parts = name.split(separator: " ", maxSplits: 1).map(String.init)
        try employee.setValue(.string(parts.first ?? ""), forKey: "firstName")
        try employee.setValue(.string(parts.count > 1 ? parts[1] : ""), forKey: "lastName")
    }
}
