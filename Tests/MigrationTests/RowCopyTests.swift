import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// The default policy's row-copy path (RowCopyPlan): taken only where a row cannot be told
/// from an object, and then writing what the object path writes.
@Suite struct RowCopyTests {
    static let attributes: Set<String> = ["name", "sku", "price", "quantity"]

    @Test(
        arguments: [
            ("$source.price * 1.03", ["price"]),
            ("$source.price + $source.quantity * $source.price", ["price", "quantity", "price"]),
            ("FUNCTION($source.name, 'uppercaseString')", ["name"]),
            ("TERNARY($source.sku == nil, $propertyMapping.name, $source.sku)", ["sku", "sku"]),
            ("$entityMapping.name", []),
            ("3", []),
            ("$source", nil),  // the object itself
            ("$source.self", nil),
            ("$source.@count", nil),
            ("$source.missing", nil),
            ("FUNCTION($source, 'valueForKey:', $source.name)", nil),
            ("FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'M', $source)", nil),
            ("$manager.userInfo.rate * $source.price", nil),
            ("$destination.price", nil),
            ("SUBQUERY($source.name, $source, $source == 'x')", nil)  // a local $source
        ] as [(String, [String]?)])
    func readsOfSourceAttributesOnly(expression: String, reads: [String]?) throws {
        let parsed = try FormatExpression(parsing: expression)
        #expect(RowCopyPlan.sourceAttributesRead(by: parsed, among: Self.attributes) == reads)
    }

    /// A Products1 store of `count` generated products, some with NULLs and text that is
    /// not ASCII.
    static func productStore(at path: String, count: Int, model: ObjectModel) throws {
        let store = try Store.create(at: path, model: model)
        let layout = store.layout.entities["Product"]!
        let c = layout.attributeColumns
        try store.database.execute(
            """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count))
            INSERT INTO \(layout.table) (Z_PK, Z_ENT, Z_OPT, \(c["name"]!), \(c["sku"]!), \(c["price"]!), \(c["quantity"]!),
                \(c["weight"]!), \(c["added"]!), \(c["active"]!), \(c["notes"]!))
            SELECT i, \(layout.number), 1, 'product ' || i, CASE WHEN i % 7 = 0 THEN NULL ELSE 'SKU-' || i END, i * 0.25,
                i % 100, CASE WHEN i % 5 = 0 THEN NULL ELSE i / 3.0 END, 700000000 + i, i % 2,
                CASE WHEN i % 3 = 0 THEN 'ünïcode ' || i ELSE NULL END
            FROM n;
            UPDATE Z_PRIMARYKEY SET Z_MAX = \(count) WHERE Z_ENT = \(layout.number);
            """)
    }

    /// The product-price mapping with `expression` for `price` in place of its own.
    static func pricing(_ mapping: MappingModel, _ expression: String) -> MappingModel {
        var mapping = mapping
        mapping.entityMappings[0].attributeMappings = mapping.entityMappings[0].attributeMappings.map { property in
            var property = property
            if property.name == "price" { property.valueExpression = expression }
            return property
        }
        return mapping
    }

    /// The mapping of mappings/product-price runs on rows; with `$manager` in an
    /// expression (which gives the same values) it runs on objects. Same rows, same report.
    @Test func rowsAndObjectsMakeTheSameStore() throws {
        let (v1, v2, standard) = try ProductPriceTests.load()
        let directory = try TemporaryDirectory()
        let source = directory.path("Products.sqlite")
        try Self.productStore(at: source, count: 2_500, model: v1)
        let objects = Self.pricing(standard, "TERNARY($manager == nil, 0, $source.price * 1.03)")

        // Which path each takes, as the runner decides it.
        let context = ObjectContext(store: try Store.open(at: source, model: v1, mode: .readOnly))
        let destination = ObjectContext(store: try Store.create(at: directory.path("keys.sqlite"), model: v2))
        func takesRows(_ mapping: MappingModel) throws -> Bool {
            let prepared = try MigrationManager(mapping: mapping, source: v1, destination: v2).prepared.entityMappings[
                0]
            return RowCopyPlan(
                prepared,
                copiedAttributes: prepared.attributes.map {
                    EntityMappingRunner.copiedAttribute($0.expression.expression)
                },
                destinationAttributes: try prepared.attributes.map {
                    try destination.attributeKey($0.mapping.name, of: "Product")
                },
                source: context) != nil
        }
        #expect(try takesRows(standard))
        #expect(try !takesRows(objects))

        let keys = ["name", "sku", "price", "quantity", "weight", "added", "active", "notes"]
        var stores: [[[String: Value]]] = []
        var reports: [[Int]] = []
        for (i, mapping) in [standard, objects].enumerated() {
            let path = directory.path("out-\(i).sqlite")
            let manager = try MigrationManager(
                mapping: mapping, source: v1, destination: v2, options: MigrationOptions(chunkSize: 1_000))
            var progress: [Int] = []
            let report = try manager.migrateStore(from: source, to: path) { p in
                if p.stage == .createInstances { progress.append(p.rows) }
            }
            stores.append(try rows("Product", at: path, model: v2, keys: keys))
            reports.append([
                report.entityMappings[0].sourceInstances, report.entityMappings[0].destinationInstances,
                progress.last ?? -1
            ])
        }
        #expect(stores[0].count == 2_500)
        #expect(stores[0] == stores[1])
        #expect(stores[0][2]["notes"] == "ünïcode 3" && stores[0][6]["sku"] == .null)
        #expect(reports[0] == [2_500, 2_500, 2_500])
        #expect(reports[0] == reports[1])
    }

    final class ManagerBox: @unchecked Sendable { var manager: MigrationManager? }

    /// Cancelled while copying rows (by a function an expression calls on row 1,500): the
    /// run stops after that row, naming it, and leaves nothing.
    @Test func aCancelledRowCopyStopsAndRemovesTheDestination() throws {
        let (v1, v2, standard) = try ProductPriceTests.load()
        let directory = try TemporaryDirectory()
        let source = directory.path("Products.sqlite"), destination = directory.path("Products-2.sqlite")
        try Self.productStore(at: source, count: 3_000, model: v1)
        let mapping = Self.pricing(standard, "FUNCTION($source.price, 'cancelAt:', 375.0) * 1.03")
        let box = ManagerBox()
        var policies = PolicyRegistry()
        policies.registerFunction("cancelAt:", on: .number) { target, arguments in
            if target == arguments[0] { box.manager?.cancel("stop at 375") }
            return target
        }
        let manager = try MigrationManager(mapping: mapping, source: v1, destination: v2, policies: policies)
        box.manager = manager
        do {
            try manager.migrateStore(from: source, to: destination)
            Issue.record("the run was not cancelled")
        } catch {
            #expect(error.kind == .cancelled)
            #expect(error.entityMapping == "ProductToProduct")
            #expect(error.sourceEntity == "Product" && error.sourceKey == 1_500)
        }
        #expect(!FileManager.default.fileExists(atPath: destination))
    }
}
