import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// A step mapped by several files (Core Data's multiple passes): the files combine in
/// order, and a problem names the file and the place its entity mapping was written in.
@Suite struct CombinedStepTests {
    static let models = Repository.root.appendingPathComponent("Tests/MigrationTests/Fixtures/broken/models")

    static let customers = """
        {"sourceModel": "Shop1", "destinationModel": "Shop2", "entityMappings": [
          {"name": "CustomerToCustomer", "sourceEntity": "Customer", "destinationEntity": "Customer",
           "attributeMappings": {"fullName": "$source.name"}}]}
        """
    static let orders = """
        {"sourceModel": "Shop1", "destinationModel": "Shop2", "entityMappings": [
          {"name": "CouponToCoupon", "type": "add", "destinationEntity": "Coupon"},
          {"name": "OrderToOrder", "sourceEntity": "Order", "destinationEntity": "Order",
           "attributeMappings": {
             "status": "FUNCTION($manager, \\"destinationInstancesForEntityMappingNamed:sourceInstances:\\", \\"CustomerToCustomer\\", $source.customer).@count",
             "totl": "$source.total"}}]}
        """

    func folder(order: [String]? = nil) throws -> (TemporaryDirectory, [ObjectModel], [MappingModel]) {
        let directory = try TemporaryDirectory()
        try Data(Self.customers.utf8).write(to: directory.url.appendingPathComponent("1-customers.mapping.json"))
        try Data(Self.orders.utf8).write(to: directory.url.appendingPathComponent("2-orders.mapping.json"))
        if let order {
            try JSON.object(["order": .array(order.map(JSON.string))]).description.write(
                to: directory.url.appendingPathComponent("mapping-order.json"), atomically: true, encoding: .utf8)
        }
        let models = try ObjectModel.loadVersions(at: Self.models)
        return (directory, models, try MappingModel.loadAll(in: directory.url, models: models))
    }

    static func check(_ mappings: [MappingModel], _ models: [ObjectModel]) -> [String] {
        MigrationManager.check(mappings[0], source: models[0], destination: models[1]).map { error in
            error.rendered().split(separator: "\n")[0].replacingOccurrences(
                of: (error.file ?? "") + ": ", with: "\((error.file as NSString?)?.lastPathComponent ?? ""): ")
        }
    }

    @Test func problemsNameTheEntityMappingsOwnFileAndPlace() throws {
        let (directory, models, mappings) = try folder()
        _ = directory
        #expect(mappings.count == 1)
        #expect(mappings[0].entityMappings.map(\.name) == ["CustomerToCustomer", "CouponToCoupon", "OrderToOrder"])
        #expect(mappings[0].entityMappings.map { $0.origin?.index } == [0, 0, 1])
        let problems = Self.check(mappings, models)
        #expect(
            problems.contains {
                $0.hasPrefix(
                    #"2-orders.mapping.json: entityMappings[1] "OrderToOrder" .attributeMappings.totl: the destination entity Order has no attribute 'totl'"#
                )
            }, "\(problems)")
        #expect(!problems.contains { $0.contains("runs after") })
    }

    @Test func aLookupTheFileOrderLeavesEmptyIsAnError() throws {
        let (directory, models, mappings) = try folder(order: ["2-orders.mapping.json", "1-customers.mapping.json"])
        _ = directory
        #expect(mappings[0].entityMappings.map(\.name) == ["CouponToCoupon", "OrderToOrder", "CustomerToCustomer"])
        let problems = Self.check(mappings, models)
        #expect(
            problems.contains {
                $0.hasPrefix(
                    #"2-orders.mapping.json: entityMappings[1] "OrderToOrder" .attributeMappings.status: 1:82: 'CustomerToCustomer' runs after 'OrderToOrder' (entityMappings[0] of "#
                )
                    && $0.hasSuffix(
                        "; in a step of several files, the files run in the order mapping-order.json gives (docs/mapping-migrate.md)"
                    )
            }, "\(problems)")
    }
}
