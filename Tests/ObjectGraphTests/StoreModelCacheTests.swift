import ExpressionLanguage
import Foundation
import Testing
import TestSupport

@testable import ObjectGraph

/// The model Core Data keeps in the stores it writes (`Z_MODELCACHE`): read, it is the
/// version the store was saved with, and hashes as the store's metadata says, except two
/// entities of a model built in code, whose hashes are not yet understood
/// (docs/store-format.md, "The model cache").
@Suite struct StoreModelCacheTests {
    @Test func everyFixtureCacheHashesAsItsStore() throws {
        try SharedFixtures.require()
        let stores = AppleVersionHashTests.fixtureFiles(endingWith: ".sqlite")
        var report: [String] = []
        var read = 0
        var differing: [String: [String]] = [:]
        for store in stores {
            let name = AppleVersionHashTests.relative(store)
            let database = try Database(path: store.path, mode: .readOnly)
            guard let model = try StoreModelCache.model(in: database) else {
                report.append("\(name): no model cache")
                continue
            }
            read += 1
            let metadata = try Store.metadata(at: store.path)
            let computed = model.appleVersionHashes
            #expect(Set(computed.keys) == Set(metadata.versionHashes.keys), "\(name)")
            let different = computed.keys.filter { computed[$0] != metadata.versionHashes[$0] }.sorted()
            if !different.isEmpty { differing[store.lastPathComponent] = different }
            #expect(try model.validate() == (), "\(name)")
            // The store's tables and columns are the ones Remodel lays the model out in.
            let schema = try StoreSchema(database: database)
            #expect(StoreMatcher.mismatches(schema, StoreLayout(model: model)) == [], "\(name)")
            #expect(StoreMatcher.extras(schema, StoreLayout(model: model)) == [], "\(name)")
            report.append(
                "\(name): \(AppleVersionHashTests.entities(model.entities.count)), "
                    + (different.isEmpty ? "hashes as the store's" : "\(different.joined(separator: ", ")) differ"))
        }
        print("model caches:\n  " + report.joined(separator: "\n  "))
        #expect(read >= 5, "the fixtures hold five stores with a model cache")
        // SampleModel2 was built in code; Book (a derived attribute, a decimal, validation
        // predicates, a transformable with an archived default) and its sub-entity
        // GraphicNovel hash otherwise. Its other four entities, and every other cache, agree.
        #expect(
            differing == [
                "SampleModel2_V1.sqlite": ["Book", "GraphicNovel"], "SampleModel2_V2.sqlite": ["Book", "GraphicNovel"]
            ])
    }

    /// A store Remodel writes has the table, empty; damaged contents are an error that says
    /// what the table holds, never a crash.
    @Test func emptyAndDamagedCaches() throws {
        let model = try ObjectModel(
            json: JSON.parse(#"{"version": "V1", "entities": {"A": {"attributes": {"n": "int32"}}}}"#))
        let store = try Store.create(at: ":memory:", model: model)
        #expect(try StoreModelCache.model(in: store.database) == nil)
        for bytes in [Data([1, 2, 3]), Data(repeating: 0xFF, count: 40)] {
            try store.database.execute("DELETE FROM Z_MODELCACHE")
            let insert = try store.database.prepare("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)")
            try insert.bind(bytes, at: 1)
            try insert.run()
            let error = try #require(throws: StoreError.self) { try StoreModelCache.model(in: store.database) }
            #expect(error.message.contains("Z_MODELCACHE"))
        }
    }
}
