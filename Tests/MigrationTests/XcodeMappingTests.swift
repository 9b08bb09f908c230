import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing

@testable import Migration

/// Xcode's mapping models (`.xcmappingmodel`) and compiled ones (`.cdm`) from real
/// projects, read into the mapping a JSON file would give.
@Suite(.enabled(if: SharedFixtures.isAvailable, SharedFixtures.missingMessage))
struct XcodeMappingTests {
    static let realworld = SharedFixtures.root.appendingPathComponent("realworld")
    static let coreDataPlus = realworld.appendingPathComponent("alemar11+CoreDataPlus/Tests/Resources/SampleModel")

    @Test func dump() throws {
        let models = try ObjectModel.loadVersions(at: Self.coreDataPlus.appendingPathComponent("SampleModel.xcdatamodeld"))
        let xcode = try MappingModel.load(xcodeMappingModelAt: Self.coreDataPlus.appendingPathComponent("MappingModels/V2toV3.xcmappingmodel"), models: models)
        let compiled = try MappingModel.load(compiledMappingModelAt: Self.coreDataPlus.appendingPathComponent("Fixtures/V2toV3.cdm"), models: models)
        print(xcode.json.serialized())
        print(compiled.json.serialized())
        let book = try ObjectModel.loadVersions(at: SharedFixtures.bookMigration.appendingPathComponent("Model.xcdatamodeld"))
        for name in ["Model1_to_Model2", "Model2_to_Model3", "Model2_to_Model3_User"] {
            print(try MappingModel.load(xcodeMappingModelAt: SharedFixtures.bookMigration.appendingPathComponent("\(name).xcmappingmodel"), models: book).json.serialized())
        }
    }
}
