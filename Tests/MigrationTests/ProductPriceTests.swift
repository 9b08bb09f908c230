import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// mappings/product-price: the simplest heavyweight migration, Product.price × 1.03.
@Suite struct ProductPriceTests {
    static let folder = Repository.root.appendingPathComponent("mappings/product-price")

    static func load() throws -> (ObjectModel, ObjectModel, MappingModel) {
        let v1 = try ObjectModel.load(contentsOf: folder.appendingPathComponent("Products1.model.json"))
        let v2 = try ObjectModel.load(contentsOf: folder.appendingPathComponent("Products2.model.json"))
        let mapping = try MappingModel.load(
            contentsOf: folder.appendingPathComponent("Products1_to_Products2.mapping.json"))
        return (v1, v2, mapping)
    }

    static func seedStore(at path: String, model: ObjectModel) throws {
        let seed = try String(contentsOf: folder.appendingPathComponent("Products1.seed.json"), encoding: .utf8)
        try seededStore(at: path, model: model, seed: seed)
    }

    /// A run that keeps its results answers lookups from them; released, the manager is
    /// freed and the new store is closed (another connection reads it).
    @Test func keptResultsAnswerLookupsUntilReleased() throws {
        let (v1, v2, mapping) = try Self.load()
        let directory = try TemporaryDirectory()
        let source = directory.path("Products.sqlite"), destination = directory.path("Products-2.sqlite")
        try Self.seedStore(at: source, model: v1)
        weak var freed: MigrationManager?
        do {
            let manager = try MigrationManager(
                mapping: mapping, source: v1, destination: v2, options: MigrationOptions(keepsResults: true))
            freed = manager
            try manager.migrateStore(from: source, to: destination)
            let kettle = try manager.sourceContext.object(entityName: "Product", primaryKey: 1)
            let made = try manager.destinationInstances(
                forEntityMappingNamed: "ProductToProduct", sourceInstances: [kettle])
            #expect(made.map(\.objectID.primaryKey) == [1])
            manager.releaseResults()
        }
        #expect(freed == nil)
        let count = try Database(path: destination, mode: .readOnly).scalar("SELECT count(*) FROM ZPRODUCT")
        #expect(count == .integer(4))
    }

    @Test func pricesRiseByThreePercentAndEverythingElseIsCopied() throws {
        let (v1, v2, mapping) = try Self.load()
        let directory = try TemporaryDirectory()
        let source = directory.path("Products.sqlite"), destination = directory.path("Products-2.sqlite")
        try Self.seedStore(at: source, model: v1)
        let before = storeBytes(source)

        let manager = try MigrationManager(mapping: mapping, source: v1, destination: v2)
        let report = try manager.migrateStore(from: source, to: destination)

        #expect(storeBytes(source) == before)
        let keys = ["name", "sku", "price", "quantity", "weight", "added", "active", "notes"]
        let old = try rows("Product", at: source, model: v1, keys: keys)
        let new = try rows("Product", at: destination, model: v2, keys: keys)
        #expect(new.count == 4)
        for (o, n) in zip(old, new) {
            #expect(n["price"] == .double(o["price"]!.number! * 1.03))
            for key in keys where key != "price" { #expect(n[key] == o[key], "\(key)") }
        }
        #expect(report.entityMappings.map(\.name) == ["ProductToProduct"])
        #expect(report.entityMappings[0].sourceInstances == 4)
        #expect(report.entityMappings[0].destinationInstances == 4)
        let reopened = try Store.open(at: destination, model: v2, mode: .readOnly)
        #expect(reopened.model.version == "Products2")
    }

    @Test func chunksOfOneGiveTheSameStore() throws {
        let (v1, v2, mapping) = try Self.load()
        let directory = try TemporaryDirectory()
        let source = directory.path("Products.sqlite")
        try Self.seedStore(at: source, model: v1)
        let keys = ["name", "price", "added"]
        var results: [[[String: Value]]] = []
        for (i, chunk) in [1, 2, 5_000].enumerated() {
            let destination = directory.path("out-\(i).sqlite")
            let manager = try MigrationManager(
                mapping: mapping, source: v1, destination: v2, options: MigrationOptions(chunkSize: chunk))
            try manager.migrateStore(from: source, to: destination)
            results.append(try rows("Product", at: destination, model: v2, keys: keys))
        }
        #expect(results[0] == results[1])
        #expect(results[1] == results[2])
    }

    @Test func aFailingExpressionNamesItsPlaceAndLeavesNothingBehind() throws {
        let (v1, v2, _) = try Self.load()
        let directory = try TemporaryDirectory()
        let source = directory.path("Products.sqlite"), destination = directory.path("Products-2.sqlite")
        try Self.seedStore(at: source, model: v1)
        let before = storeBytes(source)
        // Division by a zero quantity fails on the fourth product (Z_PK 4).
        let broken = try mapping(
            """
            {"sourceModel": "Products1", "destinationModel": "Products2", "entityMappings": [
              {"name": "ProductToProduct", "type": "transform", "sourceEntity": "Product", "destinationEntity": "Product",
               "attributeMappings": {"price": "100 / $source.quantity"}}]}
            """)
        let manager = try MigrationManager(
            mapping: broken, source: v1, destination: v2, options: MigrationOptions(chunkSize: 2))
        do {
            try manager.migrateStore(from: source, to: destination)
            Issue.record("the migration should fail")
        } catch {
            #expect(error.kind == .expression)
            #expect(error.entityMapping == "ProductToProduct")
            #expect(error.sourceEntity == "Product")
            #expect(error.sourceKey == 4)
            #expect(error.property == "price")
            #expect(error.expression == "100 / $source.quantity")
            // The message docs/engine.md shows.
            #expect(
                error.description
                    == "entity mapping \"ProductToProduct\", source Product Z_PK 4, 'price' = \"100 / $source.quantity\": 1:1: integer division by zero (100 / 0); divide by a double (100 / 0.0) for IEEE infinity"
            )
        }
        #expect(!FileManager.default.fileExists(atPath: destination))
        #expect(storeBytes(source) == before)
    }
}
