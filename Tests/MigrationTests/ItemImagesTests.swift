import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// mappings/item-images: large blobs moved from Item to a new Image entity, in chunks.
@Suite struct ItemImagesTests {
    static let folder = Repository.root.appendingPathComponent("mappings/item-images")

    static func load() throws -> (ObjectModel, ObjectModel, MappingModel) {
        (
            try ObjectModel.load(contentsOf: folder.appendingPathComponent("Items1.model.json")),
            try ObjectModel.load(contentsOf: folder.appendingPathComponent("Items2.model.json")),
            try MappingModel.load(contentsOf: folder.appendingPathComponent("Items1_to_Items2.mapping.json"))
        )
    }

    /// A store of `count` items; every fourth has no image, the others images of 20–180 KB.
    static func makeStore(at path: String, model: ObjectModel, count: Int) throws -> [String: Data] {
        let store = try Store.create(at: path, model: model)
        let context = ObjectContext(store: store)
        var generator = SystemRandomNumberGenerator()
        var images: [String: Data] = [:]
        for i in 0..<count {
            let item = try context.insert("Item")
            let name = "item \(i)"
            try item.setValue(.string(name), forKey: "name")
            try item.setValue(.date(Date(timeIntervalSinceReferenceDate: Double(i) * 3600)), forKey: "created")
            if i % 4 != 3 {
                let size = 20_000 + Int(generator.next() % 160_000)
                let data = Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
                images[name] = data
                try item.setValue(.data(data), forKey: "image")
            }
            if i % 10 == 9 { try context.save() }
        }
        try context.save()
        return images
    }

    /// Records how many bytes the destination context holds unsaved before each item.
    final class WatchingPolicy: EntityMigrationPolicy {
        nonisolated(unsafe) static var largest = 0
        func createDestinationInstances(
            forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            try defaultCreateDestinationInstances(forSource: source, in: mapping, manager: manager)
            Self.largest = max(Self.largest, manager.destinationContext.pendingValueBytes)
        }
    }

    @Test func everyImageMovesWithEveryByteInBoundedChunks() throws {
        let (v1, v2, original) = try Self.load()
        let directory = try TemporaryDirectory()
        let source = directory.path("Items.sqlite"), destination = directory.path("Items-2.sqlite")
        let images = try Self.makeStore(at: source, model: v1, count: 48)
        // The example's mapping, with a policy that watches memory on the image mapping.
        var mapping = original
        mapping.entityMappings[1].policy = "Watching"
        var policies = PolicyRegistry()
        policies.register("Watching") { WatchingPolicy() }
        let chunkBytes = 1 << 20
        WatchingPolicy.largest = 0
        let manager = try MigrationManager(
            mapping: mapping, source: v1, destination: v2, policies: policies,
            options: MigrationOptions(chunkSize: 5_000, chunkBytes: chunkBytes))
        let report = try manager.migrateStore(from: source, to: destination)
        #expect(report.entityMappings.map(\.destinationInstances) == [48, 36])

        // Never more than a chunk of blobs (plus the one that ended it) unsaved at once.
        #expect(WatchingPolicy.largest > 0)
        #expect(WatchingPolicy.largest < chunkBytes + 180_000)

        let context = ObjectContext(store: try Store.open(at: destination, model: v2, mode: .readOnly))
        let items = try context.fetch(FetchRequest(entityName: "Item"))
        #expect(items.count == 48)
        for item in items {
            guard case .string(let name) = item["name"] else { Issue.record("an item without a name"); continue }
            if let data = images[name] {
                let image = try #require(item["image"].managedObject, "\(name) lost its image")
                #expect(image["data"] == .data(data), "\(name)'s bytes differ")
                #expect(image["byteCount"] == .integer(Int64(data.count)))
                #expect(image["item"].managedObject?.objectID == item.objectID)
            } else {
                #expect(item["image"] == .null)
            }
        }
        #expect(try context.count(FetchRequest(entityName: "Image")) == images.count)
    }
}
