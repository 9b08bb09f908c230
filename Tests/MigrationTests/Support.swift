import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// A model from JSON text.
func model(_ text: String) throws -> ObjectModel {
    try ObjectModel(json: JSON.parse(text))
}

/// A mapping from JSON text.
func mapping(_ text: String, file: String? = "test.mapping.json") throws -> MappingModel {
    try MappingModel(json: JSON.parse(text), file: file)
}

/// A new store at `path` holding the objects of `seed` (see ObjectContext.insertSeed).
@discardableResult
func seededStore(at path: String, model: ObjectModel, seed: String) throws -> Store {
    let store = try Store.create(at: path, model: model)
    let context = ObjectContext(store: store)
    try context.insertSeed(JSON.parse(seed))
    try context.save()
    return store
}

/// Every object of `entity` in the store at `path`, as dictionaries of their attributes,
/// in primary-key order.
func rows(_ entity: String, at path: String, model: ObjectModel, keys: [String]) throws -> [[String: Value]] {
    let store = try Store.open(at: path, model: model, mode: .readOnly)
    let context = ObjectContext(store: store)
    var request = FetchRequest(entityName: entity)
    request.sortDescriptors = []
    return try context.fetch(request).map { object in
        Dictionary(uniqueKeysWithValues: keys.map { ($0, object[$0]) })
    }
}

/// The bytes of a file and its side files, to show a source store was not touched.
func storeBytes(_ path: String) -> [String: Data] {
    var result: [String: Data] = [:]
    for suffix in ["", "-journal", "-wal", "-shm"] {
        if let data = FileManager.default.contents(atPath: path + suffix) { result[suffix] = data }
    }
    return result
}

/// The numbers of a value, for comparing doubles loosely.
extension Value {
    var number: Double? { doubleValue }
}
